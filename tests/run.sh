#!/bin/sh
# tests/run.sh BUILD_DIR [SUITE...] - run the test suites and count every test.
#
# Suites: "unit" (each cmocka binary BUILD_DIR/tests/test_*) and one per
# tests/e2e/NAME.sh. Every suite speaks TAP ("ok N - name" / "not ok N - name"
# and a "1..N" plan); a suite that crashes or stops short of its plan has
# the missing tests counted as failed. The last line is "N passed, N failed".
set -u
BUILD=${1:?usage: tests/run.sh BUILD_DIR [SUITE...]}
shift
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 2
FUSEBOX="$ROOT/$BUILD/fusebox"
export FUSEBOX BUILD ROOT
LOGDIR="$ROOT/out/test-logs/$(basename "$BUILD")"
mkdir -p "$LOGDIR"
passed=0
failed=0
failures=""

# want NAME [SELECTED...]: true when no suite was selected or NAME was.
want() {
    name=$1
    shift
    [ $# -eq 0 ] && return 0
    for w in "$@"; do [ "$w" = "$name" ] && return 0; done
    return 1
}

# count NAME LOG RC: add a finished TAP log to the totals.
count() {
    name=$1 log=$2 rc=$3
    ok=$(grep -c '^ok ' "$log")
    bad=$(grep -c '^not ok ' "$log")
    plan=$(sed -n 's/^1\.\.\([0-9][0-9]*\).*/\1/p' "$log" | head -n 1)
    missing=0
    if [ -n "$plan" ] && [ $((ok + bad)) -lt "$plan" ]; then missing=$((plan - ok - bad)); fi
    if [ "$rc" -ne 0 ] && [ "$bad" -eq 0 ] && [ "$missing" -eq 0 ]; then missing=1; fi
    passed=$((passed + ok))
    failed=$((failed + bad + missing))
    printf '%-28s %4d passed, %d failed%s\n' "$name" "$ok" $((bad + missing)) \
        "$([ "$missing" -gt 0 ] && echo " (exit $rc, $missing missing)")"
    if [ $((bad + missing)) -gt 0 ]; then
        failures="$failures
$(grep '^not ok ' "$log" | sed "s|^|  $name: |")"
        [ "$missing" -gt 0 ] && failures="$failures
  $name: exited $rc before finishing; see $log"
    fi
}

if want unit "$@"; then
    for bin in "$BUILD"/tests/test_*; do
        [ -x "$bin" ] || continue
        name=$(basename "$bin")
        log="$LOGDIR/$name.tap"
        CMOCKA_MESSAGE_OUTPUT=TAP "$bin" >"$log" 2>&1
        count "unit/$name" "$log" $?
    done
fi

for script in tests/e2e/*.sh; do
    [ -f "$script" ] || continue
    name=$(basename "$script" .sh)
    [ $# -gt 0 ] && ! want "$name" "$@" && continue
    log="$LOGDIR/$name.tap"
    sh "$script" >"$log" 2>&1
    count "e2e/$name" "$log" $?
done

if [ -n "$failures" ]; then
    printf '\nfailures:%s\n' "$failures"
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
