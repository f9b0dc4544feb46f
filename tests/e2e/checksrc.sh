#!/bin/sh
# checksrc.sh - `make checksrc` catches each rule it enforces, with file:line.
#
# Builds a small tree with one violation of each rule (a layering include, a
# print outside cli/, a clock read in sim/, an allocation in core/, a core
# header including libc, a long function without its excuse) and one of each
# allowed form, runs tests/checksrc.sh on it, and checks every line it prints.
set -u
. tests/tap.sh
T=$E2E_TMP/tree
mkdir -p "$T/core" "$T/sim" "$T/live" "$T/mockserver" "$T/cli"

long_body() { i=0; while [ $i -lt "$1" ]; do echo "    x++;"; i=$((i + 1)); done; }
{
    echo '#include "reports/report.h"'
    echo '#include "scenario/fault.h"'
    echo 'static int f(int x) {'
    long_body 70
    echo '    return (int)time(NULL);'
    echo '}'
    echo '/* long: one table, read in order */'
    echo 'static int g(int x) {'
    long_body 80
    echo '    return x;'
    echo '}'
} >"$T/sim/a.c"
{
    echo '#include "mockserver/mock.h"'
    echo 'void h(void) { printf("x"); }'
    echo 'void k(char *b) { snprintf(b, 4, "printf(%d)", 1); /* puts( in a comment */ }'
} >"$T/live/b.c"
printf '%s\n' '#include "scenario/scenario.h"' '#include "sim/simint.h"' >"$T/mockserver/c.c"
printf '%s\n' '#include <stdlib.h>' '#include <stdint.h>' >"$T/core/d.h"
printf '%s\n' 'void *m(void) { return malloc(4); }' >"$T/core/e.c"
printf '%s\n' '#include "mockserver/mock.h"' 'void p(void) { puts("fine here"); }' >"$T/cli/f.c"

# rule 6: an object exporting a symbol without its module's prefix (and one with it)
B=${BUILD:-build/release}
mkdir -p "$T/$B/sim"
printf '%s\n' 'int stray(void) { return 1; }' 'int sim__fine(void) { return 2; }' >"$T/sim/g.c"
${CC:-cc} -c "$T/sim/g.c" -o "$T/$B/sim/g.o"

sh tests/checksrc.sh "$T" >"$T.out" 2>&1
rc=$?
OUT=$(cat "$T.out")
ok $([ $rc -eq 1 ] && echo 0 || echo 1) "a tree with violations fails"
contains "$OUT" "sim/a.c:1: sim/ may not include reports/report.h" "an include across the table, with file:line"
contains "$OUT" "sim/a.c:3: function of 73 lines" "a long function, at its first line"
contains "$OUT" "sim/a.c:74: reads the OS clock" "a clock read in sim/"
contains "$OUT" "live/b.c:1: live/ may not include mockserver/mock.h" "live/ may not include the mock"
contains "$OUT" "live/b.c:2: prints to the terminal" "printing outside cli/"
contains "$OUT" "mockserver/c.c:2: mockserver/ may not include sim/simint.h" "the mock may use the loader, not the simulator"
contains "$OUT" "core/d.h:1: core headers include only" "a core header including libc"
contains "$OUT" "core/e.c:1: allocates" "allocation in core/"
contains "$OUT" "$B/sim/g.o: exports stray without the module prefix sim_" "an unprefixed exported symbol, from nm"
contains "$OUT" "checksrc: 9 violation(s)" "exactly the nine violations, nothing allowed is flagged"
sh tests/checksrc.sh >"$T.real" 2>&1
ok $? "the repository itself passes: $(tail -n 1 "$T.real")"
finish
