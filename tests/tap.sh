# tap.sh - a tiny TAP helper for the end-to-end suites (sourced).
#   ok COND_EXIT_CODE NAME      record a result
#   finish                      print the plan; exit non-zero if anything failed
# Each suite runs from the repository root with $FUSEBOX set (tests/run.sh).
TAP_N=0
TAP_FAILED=0
: "${FUSEBOX:?run the suites through tests/run.sh (make test)}"
E2E_TMP=$(mktemp -d "${TMPDIR:-/tmp}/fusebox-e2e.XXXXXX")
trap 'rm -rf "$E2E_TMP"' EXIT

ok() {
    TAP_N=$((TAP_N + 1))
    if [ "$1" -eq 0 ]; then
        echo "ok $TAP_N - $2"
    else
        echo "not ok $TAP_N - $2"
        TAP_FAILED=$((TAP_FAILED + 1))
    fi
}

# expect_exit CODE NAME CMD...: run CMD, keep stdout/stderr in $OUT/$ERR.
expect_exit() {
    want=$1 name=$2
    shift 2
    "$@" >"$E2E_TMP/out" 2>"$E2E_TMP/err"
    got=$?
    OUT=$(cat "$E2E_TMP/out")
    ERR=$(cat "$E2E_TMP/err")
    [ "$got" -eq "$want" ]
    r=$?
    [ $r -ne 0 ] && echo "# exit $got, wanted $want; stderr: $ERR"
    ok $r "$name"
}

# contains TEXT FRAGMENT NAME
contains() {
    case "$1" in
    *"$2"*) ok 0 "$3" ;;
    *)
        echo "# '$2' not found in: $1"
        ok 1 "$3"
        ;;
    esac
}

finish() {
    echo "1..$TAP_N"
    [ "$TAP_FAILED" -eq 0 ]
}
