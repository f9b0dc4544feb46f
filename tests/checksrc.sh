#!/bin/sh
# tests/checksrc.sh - enforce the house rules a compiler does not.
#   core/, sim/, reports/, sweep/: no OS clock, no sleep, no libc random.
#   core/: no allocation; headers include only <stdint.h> <stdbool.h> <stddef.h>
#          (and other core headers).
cd "$(dirname "$0")/.." || exit 2
status=0
fail() { echo "checksrc: $*"; status=1; }

banned='\b(clock_gettime|gettimeofday|time|clock|sleep|usleep|nanosleep|rand|srand|random|srandom|drand48|lrand48|rand_r|arc4random|getrandom)[[:space:]]*\('
for f in core/*.[ch] sim/*.[ch] reports/*.[ch] sweep/*.[ch]; do
    [ -f "$f" ] || continue
    # Strip // and /* */ comments and string literals before matching.
    hits=$(sed -e 's|//.*||' -e 's|/\*.*\*/||g' -e 's|"[^"]*"|""|g' "$f" |
        grep -nE "$banned" | grep -vE '^[0-9]+:[[:space:]]*\*')
    [ -n "$hits" ] && fail "$f: banned clock/sleep/random call: $hits"
done
for f in core/*.[ch]; do
    [ -f "$f" ] || continue
    hits=$(sed -e 's|//.*||' -e 's|"[^"]*"|""|g' "$f" | grep -nE '\b(malloc|calloc|realloc|free|strdup|strndup|aligned_alloc)[[:space:]]*\(')
    [ -n "$hits" ] && fail "$f: allocation in core: $hits"
done
for f in core/*.h; do
    [ -f "$f" ] || continue
    hits=$(grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*<' "$f" |
        grep -vE '<(stdint|stdbool|stddef)\.h>')
    [ -n "$hits" ] && fail "$f: core headers may include only stdint/stdbool/stddef: $hits"
done
if [ $status -eq 0 ]; then echo "checksrc: ok"; fi
exit $status
