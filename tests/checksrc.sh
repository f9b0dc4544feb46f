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

# The symbol prefix of each module (rule 6).
prefix() {
    case $1 in
    core) echo fb_ ;;
    util) echo util_ ;;
    scenario) echo scn_ ;;
    import) echo imp_ ;;
    mockserver) echo mock_ ;;
    reports) echo rep_ ;;
    *) echo "$1_" ;;
    esac
}

# Source without comments and string literals (line numbers kept), for the greps.
strip() {
    sed -e 's|//.*||' -e 's|/\*.*\*/||g' -e 's#"\([^"\\]\|\\.\)*"#""#g' \
        -e 's/__attribute__((format(printf[^)]*)))//g' "$1" |
        awk '{ if (c) { if (sub(/.*\*\//, "")) c = 0; else $0 = "" }
               if (!c && match($0, /\/\*/)) { $0 = substr($0, 1, RSTART - 1); c = 1 }
               print }'
}

for dir in $MODULES; do
    [ -d "$dir" ] || continue
    ok=$(allowed "$dir")
    for f in "$dir"/*.[ch]; do
        [ -f "$f" ] || continue
        # 1. includes
        if [ "$ok" != "*" ]; then
            grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f" |
                sed 's|^\([0-9]*\):.*"\(.*\)".*|\1 \2|' |
                while read -r line inc; do
                    top=${inc%%/*}
                    [ "$top" = "$inc" ] && continue # a header beside the file
                    pass=0
                    for a in $ok; do [ "$a" = "$top" ] || [ "$a" = "$inc" ] && pass=1; done
                    [ $pass = 1 ] || echo "$f:$line: $dir/ may not include $inc (allowed: $ok)"
                done >>"$out"
        fi
        # 2. printing
        if [ "$dir" != cli ]; then
            strip "$f" | grep -nE '\b(stdout|stderr|printf|puts|putchar|perror|vprintf)\b' |
                sed "s|^\([0-9]*\):.*|$f:\1: prints to the terminal (only cli/ may)|" >>"$out"
        fi
        # 3. clocks, sleeps, randomness
        case $dir in util | core | scenario | sim | import | reports | sweep)
            strip "$f" | grep -nE '\b(clock_gettime|gettimeofday|time|clock|sleep|usleep|nanosleep|rand|srand|random|srandom|drand48|lrand48|rand_r|arc4random|getrandom)[[:space:]]*\(' |
                sed "s|^\([0-9]*\):.*|$f:\1: reads the OS clock, sleeps or uses libc random|" >>"$out"
            ;;
        esac
        # 4. core purity
        if [ "$dir" = core ]; then
            strip "$f" | grep -nE '\b(malloc|calloc|realloc|free|strdup|strndup|aligned_alloc)[[:space:]]*\(' |
                sed "s|^\([0-9]*\):.*|$f:\1: allocates (core/ never does)|" >>"$out"
            case $f in *.h)
                grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*<' "$f" |
                    grep -vE '<(stdint|stdbool|stddef)\.h>' |
                    sed "s|^\([0-9]*\):.*|$f:\1: core headers include only stdint.h, stdbool.h, stddef.h|" >>"$out"
                ;;
            esac
        fi
        # 5. function length: a definition starts at column 0 and ends at the first "}" there
        case $f in *.c)
            awk -v f="$f" -v limit=$LIMIT '
                start == 0 && sig == 0 && /^[A-Za-z_][^;=]*\(/ && !/^(typedef|struct|enum|union|#)/ {
                    sig = FNR; above = prev }
                sig && start == 0 && /;[[:space:]]*$/ { sig = 0 }
                sig && start == 0 && /\{[[:space:]]*$/ { start = sig }
                start && /^}/ {
                    n = FNR - start + 1
                    if (n > limit && above !~ /^\/\* long:/)
                        printf "%s:%d: function of %d lines (over %d; a \"/* long: why */\" line above excuses it)\n", f, start, n, limit
                    start = 0; sig = 0 }
                { prev = $0 }' "$f" >>"$out"
            ;;
        esac
    done
done

# 6. exported symbols
if ls "$BUILD"/*/*.o >/dev/null 2>&1; then
    for dir in $MODULES; do
        p=$(prefix "$dir")
        for o in "$BUILD/$dir"/*.o; do
            [ -f "$o" ] || continue
            [ -f "$dir/$(basename "$o" .o).c" ] || continue # an object whose source is gone
            nm -g --defined-only "$o" | awk -v o="$o" -v p="$p" -v d="$dir" '
                $3 ~ /^__(odr_asan|asan|ubsan|sancov|tsan)/ { next } # what a sanitizer adds
                # a library loaded at first use defines its own functions under their names
                o ~ /\/curl_dl\.o$/ && $3 ~ /^curl_/ { next }
                o ~ /\/mhd_dl\.o$/ && $3 ~ /^MHD_/ { next }
                NF == 3 && index($3, p) != 1 && !(d == "cli" && $3 == "main") {
                    printf "%s: exports %s without the module prefix %s (a private function: %s_ form, or static)\n", o, $3, p, p }'
        done
    done >>"$out"
else
    echo "checksrc: symbols not checked: no objects under $BUILD (run make first)"
fi

if [ -s "$out" ]; then
    sed 's/^/checksrc: /' "$out"
    echo "checksrc: $(wc -l <"$out") violation(s)"
    exit 1
fi
echo "checksrc: ok"
