#!/bin/sh
# diff_resilience.sh - the resilience libraries themselves against fusebox's presets.
#
# cockatiel and opossum (npm, pinned, in-process under @sinonjs/fake-timers) and
# tenacity (Debian's python3-tenacity) run the cases of
# tests/diff/resilience/cases.json; fusebox's side of each case is the preset's
# layer fed to core/ by tests/diff/resilience/driver.c. Each case is one test:
# the same calls admitted and rejected, the same transitions at the same times,
# the same retries with the same delays. Everything runs on fake or virtual
# clocks, so a busy machine cannot change a result.
set -u
. tests/tap.sh
DIR=tests/diff/resilience
CASES=$DIR/cases.json
DRIVER=$ROOT/$BUILD/tests/diff/resilience/driver
NPM_DIR=$ROOT/out/npm-resilience
LOGS=$(logs_dir diff_resilience)

# run_cases NAME CMD...: one TAP test per "ok NAME" / "not ok NAME: why" line CMD prints.
run_cases() {
    _lib=$1
    shift
    "$@" >"$LOGS/$_lib.out" 2>"$LOGS/$_lib.err"
    _rc=$?
    _n=0
    while IFS= read -r _line; do
        _n=$((_n + 1))
        case "$_line" in
        "ok "*) ok 0 "$_lib: ${_line#ok }" ;;
        *)
            echo "# $_line"
            ok 1 "$_lib: ${_line#not ok }"
            ;;
        esac
    done <"$LOGS/$_lib.out"
    [ "$_rc" -eq 0 ] && [ "$_n" -gt 0 ]
    _r=$?
    [ $_r -ne 0 ] && sed 's/^/# /' "$LOGS/$_lib.err"
    ok $_r "$_lib: the comparison ran to the end ($_n cases)"
}

if [ ! -x "$DRIVER" ]; then
    ok 1 "the driver $DRIVER is built (make build)"
    finish
    exit 1
fi

if ! command -v node >/dev/null 2>&1; then
    skip "cockatiel and opossum against their presets" "node is not installed"
elif ! npm_pinned "$NPM_DIR" cockatiel@4.0.0 opossum@10.0.0 @sinonjs/fake-timers@15.5.0; then
    skip "cockatiel and opossum against their presets" \
        "npm could not install cockatiel@4.0.0 opossum@10.0.0 @sinonjs/fake-timers@15.5.0 (see $NPM_DIR/npm.log)"
else
    run_cases cockatiel node "$DIR/run.mjs" cockatiel "$NPM_DIR/node_modules" "$DRIVER" "$CASES"
    run_cases opossum node "$DIR/run.mjs" opossum "$NPM_DIR/node_modules" "$DRIVER" "$CASES"
fi

# Debian's package, for Debian's python (/usr/bin/python3).
PY=/usr/bin/python3
TENACITY=8.2.1
if ! $PY -c 'import tenacity' >/dev/null 2>&1; then
    # need() looks for a command; a Python module has none, so install it the same way.
    sudo_=$([ "$(id -u)" = 0 ] || echo sudo)
    { $sudo_ apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
        $sudo_ apt-get install -y -qq --no-install-recommends python3-tenacity; } >"$LOGS/apt.log" 2>&1
fi
have=$($PY -c 'import importlib.metadata as m; print(m.version("tenacity"))' 2>/dev/null)
if [ -z "$have" ]; then
    skip "tenacity against its preset" "apt-get install python3-tenacity failed (see $LOGS/apt.log)"
elif [ "$have" != "$TENACITY" ]; then
    skip "tenacity against its preset" "python3-tenacity is $have; the preset follows $TENACITY"
else
    run_cases tenacity $PY "$DIR/tenacity_diff.py" "$DRIVER" "$CASES"
fi
finish
