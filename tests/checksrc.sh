#!/bin/sh
# tests/checksrc.sh [ROOT] - the house rules a compiler does not enforce. Each
# violation prints as FILE:LINE: what; the exit status is 1 when there is one.
#
#   1. Layering (docs/architecture.md): which folder may include which (util/,
#      the leaf, includes nothing of the project; core/ only itself).
#   2. Only cli/ talks to the terminal: no stdout, stderr, printf, puts, perror
#      elsewhere (libraries return messages or take a log callback).
#   3. Determinism: no OS clock, sleep or libc random in util/, core/, sim/, reports/, sweep/.
#   4. core/ allocates nothing, and its headers include only <stdint.h>,
#      <stdbool.h>, <stddef.h> (and other core headers).
#   5. No function over 70 lines, unless the line just above its first line
#      is a comment starting "/* long:" that says why.
#   6. Every symbol a module's objects export carries the module's prefix
#      (util_, fb_, scn_, sim_, imp_, live_, mock_, rep_, sweep_, cli_; a private
#      cross-file function its double-underscore form, libuv's uv__). Read with
#      nm from the objects under $BUILD (default build/release; `make checksrc`
#      builds first); a tree without objects says so and is not checked. The
#      libraries loaded at first use (util/curl_dl.c, mockserver/mhd_dl.c) define
#      their functions under the library's names (curl_, MHD_).
cd "${1:-$(dirname "$0")/..}" || exit 2
# bytes, not characters: a source's stray byte or letter beyond ASCII reads the same everywhere
export LC_ALL=C
BUILD=${BUILD:-build/release}
LIMIT=70
out=$(mktemp)
trap 'rm -f "$out"' EXIT

# The include table: a folder, then the project headers it may include
# (a folder name allows the whole folder; a path allows one header).
allowed() {
    case $1 in
    util) echo "util" ;;
    core) echo "core" ;;
    scenario) echo "util core scenario" ;;
    sim) echo "util core scenario sim" ;;
    import) echo "util core scenario import" ;;
    live) echo "util core scenario sim live" ;;
    mockserver) echo "util core scenario mockserver" ;;
    reports) echo "util core scenario sim reports" ;;
    sweep) echo "util core scenario sim reports sweep" ;;
    cli) echo "*" ;;
    esac
}

MODULES="util core scenario sim import live mockserver reports sweep cli"

# Every source file of every module, in the modules' order: rules 1 to 5 read them in one awk
# (a process a file and a rule cost 27 s of a 2-core VM's time; one pass, under a second).
set --
for dir in $MODULES; do
    [ -d "$dir" ] || continue
    for f in "$dir"/*.[ch]; do [ -f "$f" ] && [ -r "$f" ] && set -- "$@" "$f"; done
done
table=""
for dir in $MODULES; do table="$table$dir=$(allowed "$dir");"; done

# In awk: strip() is the source without comments and string literals (line numbers kept) that
# rules 2 to 4 read; rules 1, 4's headers and 5 read the line as written. W is a word's edge
# (grep's \b). A file's lines are printed rule by rule when it ends.
[ $# -gt 0 ] && awk -v table="$table" -v limit=$LIMIT '
function strip(s) {
    sub(/\/\/.*/, "", s)
    gsub(/\/\*.*\*\//, "", s)
    gsub(/"([^"\\]|\\.)*"/, "\"\"", s)
    gsub(/__attribute__\(\(format\(printf[^)]*\)\)\)/, "", s)
    if (c) { if (sub(/.*\*\//, "", s)) c = 0; else s = "" }
    if (!c && match(s, /\/\*/)) { s = substr(s, 1, RSTART - 1); c = 1 }
    return s
}
function flush(  r) {
    for (r = 1; r <= 6; r++) if (buf[r] != "") { printf "%s", buf[r]; buf[r] = "" }
}
function add(r, msg) { buf[r] = buf[r] FILENAME ":" FNR ": " msg "\n" }
BEGIN {
    n = split(table, rows, ";")
    for (i = 1; i <= n; i++) if ((k = index(rows[i], "=")) > 0) ok[substr(rows[i], 1, k - 1)] = substr(rows[i], k + 1)
    W = "(^|[^A-Za-z0-9_])"
    PRINTS = W "(stdout|stderr|printf|puts|putchar|perror|vprintf)([^A-Za-z0-9_]|$)"
    CLOCKS = W "(clock_gettime|gettimeofday|time|clock|sleep|usleep|nanosleep|rand|srand|random|srandom|drand48|lrand48|rand_r|arc4random|getrandom)[[:space:]]*\\("
    ALLOCS = W "(malloc|calloc|realloc|free|strdup|strndup|aligned_alloc)[[:space:]]*\\("
}
FNR == 1 {
    flush()
    dir = FILENAME; sub(/\/.*/, "", dir)
    c = 0; sig = 0; start = 0; prev = ""
    isc = FILENAME ~ /\.c$/; ish = FILENAME ~ /\.h$/
}
{
    # 1. includes: a project header from a folder the table does not allow
    if (ok[dir] != "*" && $0 ~ /^[[:space:]]*#[[:space:]]*include[[:space:]]*"/) {
        inc = $0; sub(/"[^"]*$/, "", inc); sub(/.*"/, "", inc); gsub(/^[ \t]+|[ \t]+$/, "", inc)
        top = inc; sub(/\/.*/, "", top)
        if (top != inc) {
            pass = 0; m = split(ok[dir], al, " ")
            for (i = 1; i <= m; i++) if (al[i] == top || al[i] == inc) pass = 1
            if (!pass) add(1, dir "/ may not include " inc " (allowed: " ok[dir] ")")
        }
    }
    s = strip($0)
    # 2. printing
    if (dir != "cli" && s ~ PRINTS) add(2, "prints to the terminal (only cli/ may)")
    # 3. clocks, sleeps, randomness
    if (dir ~ /^(util|core|scenario|sim|import|reports|sweep)$/ && s ~ CLOCKS)
        add(3, "reads the OS clock, sleeps or uses libc random")
    # 4. core purity
    if (dir == "core") {
        if (s ~ ALLOCS) add(4, "allocates (core/ never does)")
        if (ish && $0 ~ /^[[:space:]]*#[[:space:]]*include[[:space:]]*</ && $0 !~ /<(stdint|stdbool|stddef)\.h>/)
            add(5, "core headers include only stdint.h, stdbool.h, stddef.h")
    }
    # 5. function length: a definition starts at column 0 and ends at the first "}" there
    if (isc) {
        if (start == 0 && sig == 0 && /^[A-Za-z_][^;=]*\(/ && !/^(typedef|struct|enum|union|#)/) {
            sig = FNR; above = prev }
        if (sig && start == 0 && /;[[:space:]]*$/) sig = 0
        if (sig && start == 0 && /\{[[:space:]]*$/) start = sig
        if (start && /^}/) {
            n = FNR - start + 1
            if (n > limit && above !~ /^\/\* long:/)
                buf[6] = buf[6] sprintf("%s:%d: function of %d lines (over %d; a \"/* long: why */\" line above excuses it)\n", FILENAME, start, n, limit)
            start = 0; sig = 0 }
        prev = $0
    }
}
END { flush() }' "$@" >>"$out"

# 6. exported symbols: one nm over every object whose source is still there
set --
for dir in $MODULES; do
    for o in "$BUILD/$dir"/*.o; do
        b=${o##*/}
        [ -f "$o" ] && [ -f "$dir/${b%.o}.c" ] && set -- "$@" "$o"
    done
done
if ls "$BUILD"/*/*.o >/dev/null 2>&1; then
    [ $# -gt 0 ] && nm -A -g --defined-only "$@" | awk -v build="$BUILD" '
        function prefix(d) {
            if (d == "core") return "fb_"; if (d == "util") return "util_"
            if (d == "scenario") return "scn_"; if (d == "import") return "imp_"
            if (d == "mockserver") return "mock_"; if (d == "reports") return "rep_"
            return d "_" }
        # "OBJECT:VALUE TYPE NAME": the object is all before the last colon (a symbol has none)
        { match($0, /:[^:]*$/); o = substr($0, 1, RSTART - 1); $0 = substr($0, RSTART + 1) }
        $3 ~ /^__(odr_asan|asan|ubsan|sancov|tsan)/ { next } # what a sanitizer adds
        # a library loaded at first use defines its own functions under their names
        o ~ /\/curl_dl\.o$/ && $3 ~ /^curl_/ { next }
        o ~ /\/mhd_dl\.o$/ && $3 ~ /^MHD_/ { next }
        { d = substr(o, length(build) + 2); sub(/\/.*/, "", d); p = prefix(d) }
        NF == 3 && index($3, p) != 1 && !(d == "cli" && $3 == "main") {
            printf "%s: exports %s without the module prefix %s (a private function: %s_ form, or static)\n", o, $3, p, p }' >>"$out"
else
    echo "checksrc: symbols not checked: no objects under $BUILD (run make first)"
fi

if [ -s "$out" ]; then
    sed 's/^/checksrc: /' "$out"
    echo "checksrc: $(wc -l <"$out") violation(s)"
    exit 1
fi
echo "checksrc: ok"
