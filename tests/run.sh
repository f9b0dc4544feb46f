#!/bin/sh
# tests/run.sh BUILD_DIR [SUITE...] - run the test suites and count every test.
#
# Suites: "unit" (each cmocka binary BUILD_DIR/tests/test_*), "test_NAME" (one
# of them), "e2e" (every tests/e2e/*.sh) and "NAME" (tests/e2e/NAME.sh); none
# selected runs them all. Every suite speaks TAP ("ok N - name"
# / "not ok N - name" and a "1..N" plan); a test with a "# SKIP" directive is
# counted as skipped, whether cmocka prints it as "ok" or (1.1.x) "not ok", and so is one
# with "# TODO" (a known failure, e2e/import_corpus's known misses). A
# suite that crashes or stops short of its plan has the missing tests counted
# as failed. Each suite's line ends with its wall time and its CPU time (user + sys of
# everything it ran and waited for) in seconds; the same two figures close its log
# ("# time: ...") and are listed in LOGDIR/times.tsv. The last line is "N passed, N failed,
# N skipped", after the run's total wall time.
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
skipped=0
failures=""
run_t0=$(date +%s)
# a run inside a suite's run (docs_commands runs `make unit T=breaker`) adds to the outer
# run's times.tsv instead of starting it again
if [ -z "${FUSEBOX_RUN_NESTED:-}" ]; then : >"$LOGDIR/times.tsv"; fi
FUSEBOX_RUN_NESTED=1
export FUSEBOX_RUN_NESTED

# cpu: seconds of user + sys used so far by the children this shell has waited for (`times`
# goes through a file: in a $(...) subshell it would count the subshell's children only).
cpu() {
    times >"$LOGDIR/.times.$$"
    awk 'NR == 2 { gsub(/[ms]/, " "); print $1 * 60 + $2 + $3 * 60 + $4 }' "$LOGDIR/.times.$$"
}

# The e2e suites a sanitizer build (BUILD .../asan) leaves to the release run unless they are
# named: they re-run long simulations, timing or orchestration that the release run checks, on
# code whose memory the unit tests and the other e2e suites exercise under ASan and UBSan
# (tests/README.md: what each buys in the release run, and why asan adds nothing). The run
# lists them in one line; they count neither as passed nor as skipped.
#   more seeds of the library's scenarios (e2e/check runs each once under asan), and tune's
#   full grid over five of them (e2e/tune runs tune's code under asan):
#     seeds regimes fleet_scenarios client_scenarios tune_library
#   timing and agreement, not memory (e2e/live, live_otlp, mock_* run the same code):
#     live_busy live_compare diff_gateway diff_sdk import_corpus
#   the docs' commands and the pages in a browser (the other suites run the same code under
#   asan), batch-engine recipes and the npm helper (orchestration), valgrind (cannot run an
#   asan binary), the CI recipes (shell steps; their install step builds the release binary),
#   the suites' own failure paths (their shell, with stand-ins):
#     docs_commands report_pages sweep_parallel sweep_slurm sweep_k8s tap_npm mock_valgrind ci_recipes
#     failfast
RELEASE_ONLY="seeds regimes fleet_scenarios client_scenarios tune_library live_busy live_compare diff_gateway
diff_sdk docs_commands report_pages sweep_parallel sweep_slurm sweep_k8s tap_npm mock_valgrind
ci_recipes import_corpus failfast"
case "$(basename "$BUILD")" in
*asan*) SANITIZED=1 ;;
*) SANITIZED= ;;
esac
release_only=""

# named NAME [SELECTED...]: true when NAME was selected by name.
named() {
    _named=$1
    shift
    for _w in "$@"; do [ "$_w" = "$_named" ] && return 0; done
    return 1
}

# want NAME [SELECTED...]: true when no suite was selected or NAME was.
want() {
    _want=$1
    shift
    [ $# -eq 0 ] && return 0
    for _w in "$@"; do [ "$_w" = "$_want" ] && return 0; done
    return 1
}

# Every selected name must be a suite: a typo is an error, not "0 passed".
for w in "$@"; do
    case "$w" in
    unit | e2e) continue ;;
    test_*) [ -x "$BUILD/tests/$w" ] && continue ;;
    *) [ -f "tests/e2e/$w.sh" ] && continue ;;
    esac
    echo "tests/run.sh: no suite named '$w' (unit, e2e, test_NAME in $BUILD/tests/, NAME in tests/e2e/)"
    exit 2
done

# The SKIP or TODO directive of a TAP result line (case-insensitive, after the description):
# a skipped test, or a known failure kept as a TODO; both count as skipped.
SKIP_RE='^(not )?ok\b[^#]*#[[:space:]]*(skip|todo)'

# count NAME LOG RC: add a finished TAP log to the totals.
count() {
    name=$1 log=$2 rc=$3
    skip=$(grep -ciE "$SKIP_RE" "$log")
    ok=$(grep -E '^ok ' "$log" | grep -civE "$SKIP_RE")
    bad=$(grep -E '^not ok ' "$log" | grep -civE "$SKIP_RE")
    plan=$(sed -n 's/^1\.\.\([0-9][0-9]*\).*/\1/p' "$log" | head -n 1)
    ran=$((ok + bad + skip))
    missing=0
    if [ -n "$plan" ] && [ "$ran" -lt "$plan" ]; then missing=$((plan - ran)); fi
    if [ "$rc" -ne 0 ] && [ "$bad" -eq 0 ] && [ "$missing" -eq 0 ]; then missing=1; fi
    passed=$((passed + ok))
    failed=$((failed + bad + missing))
    skipped=$((skipped + skip))
    wall=$(($(date +%s) - t0))
    cpu >"$LOGDIR/.c1.$$"
    cpus=$(awk -v a="$c0" 'BEGIN { getline b; printf "%.1f", b - a }' <"$LOGDIR/.c1.$$")
    printf '# time: %ds wall, %ss cpu\n' "$wall" "$cpus" >>"$log"
    printf '%s\t%d\t%s\n' "$name" "$wall" "$cpus" >>"$LOGDIR/times.tsv"
    printf '%-28s %4d passed, %d failed, %d skipped  %ds (cpu %ss)%s\n' "$name" "$ok" $((bad + missing)) \
        "$skip" "$wall" "$cpus" "$([ "$missing" -gt 0 ] && echo " (exit $rc, $missing missing)")"
    if [ $((bad + missing)) -gt 0 ]; then
        failures="$failures
$(grep '^not ok ' "$log" | grep -viE "$SKIP_RE" | sed "s|^|  $name: |")"
        [ "$missing" -gt 0 ] && failures="$failures
  $name: exited $rc before finishing; see $log"
    fi
}

# Suites that mostly wait run in the background beside the others: started first, counted
# last (their lines come at the end). sweep_slurm spends about 90 s waiting on Slurm's
# scheduling for 2 s of CPU; its jobs are small, and the real-time suites it meets say
# inconclusive, not failed, when the machine is busy.
BACKGROUND="sweep_slurm"

# The e2e suites that only compute (no real time, no server's timing, no build of their own):
# two run at once, one per core, before the others (each of them takes one core: cli, report_pages,
# check, ...); their lines come first, longest first.
PAIRED="cli report_pages sweep_k8s ci_recipes check import_policy outputs schema checksrc
conformance schema_fresh compare presets export_policy sweep strict install golden failfast
sweep_parallel client_scenarios tune_library"
# Then the suites of the mock, the differential tests and import, two at a time as well: most
# of their time is waiting on servers, loopback and timers (import 60 s of wall time for 35 s of
# CPU, mock_load 22 s for 17 s), and each passes or says inconclusive beside two busy loops
# (tests/README.md), more than one other suite of these. Those that share an npm folder
# (mock_sdk, mock_verdict, mock_gemini: out/sdk) install under tap.sh's lock, apt-get under
# another. Longest first. The live driver's suites (live, live_compare, live_otlp, live_busy)
# run alone after these: paired with them, 10 of their checks said inconclusive (the machine
# busy) in one run, alone 3 to 5. So do the suites that already use both cores (docs_commands, tune,
# import_corpus, fuzz, regimes, seeds, fleet_scenarios, sweep_interrupt).
PAIRED_WAIT="import mock_verdict mock_load diff_sdk stress mock_sdk mock_gemini diff_gateway
mock_proxy mock_valgrind mock_curl tap_npm"

# in_background NAME [CMD...]: run CMD (by default e2e suite NAME) in a subshell of its own,
# which leaves its exit code, start and end (date +%s) in LOGDIR/.bg.NAME.PID and its CPU
# (`times`) in .bgtimes.NAME.PID; counted by count_background.
in_background() {
    _n=$1
    shift
    [ $# -eq 0 ] && set -- sh "tests/e2e/$_n.sh"
    (
        b0=$(date +%s)
        "$@" >"$LOGDIR/$_n.tap" 2>&1
        echo "$? $b0 $(date +%s)" >"$LOGDIR/.bg.$_n.$$"
        times >"$LOGDIR/.bgtimes.$_n.$$"
    ) &
}

# count_background NAME [KIND]: count a suite in_background ran (KIND/NAME: e2e unless given),
# once its subshell has been waited for.
count_background() {
    _bg=$1
    read -r rc b0 b1 <"$LOGDIR/.bg.$_bg.$$"
    t0=$(($(date +%s) - (b1 - b0))) # its own wall time, not the run's until now
    # the suite's own CPU: its subshell's children, taken from this shell's count now
    cpu >"$LOGDIR/.c0.$$"
    b=$(awk 'NR == 2 { gsub(/[ms]/, " "); print $1 * 60 + $2 + $3 * 60 + $4 }' \
        "$LOGDIR/.bgtimes.$_bg.$$")
    c0=$(awk -v b="$b" '{ printf "%.1f", $1 - b }' "$LOGDIR/.c0.$$")
    count "${2:-e2e}/$_bg" "$LOGDIR/$_bg.tap" "$rc"
    rm -f "$LOGDIR/.bg.$_bg.$$" "$LOGDIR/.bgtimes.$_bg.$$"
}

bg_names=""
for name in $BACKGROUND; do
    want e2e "$@" || want "$name" "$@" || continue
    # under a sanitizer the loop below leaves it to the release run, saying so
    [ -n "$SANITIZED" ] && named "$name" $RELEASE_ONLY && ! named "$name" "$@" && continue
    [ $# -eq 1 ] && break # the only suite asked for: it runs in the loop below
    bg_names="$bg_names $name"
    in_background "$name"
done

# test_mock_limits spends its 17 s waiting on loopback timeouts (0.2 s of CPU): it runs beside
# the other unit binaries (one core each) and is counted after them. Its real-time upper bounds
# are skips with the reason on a busy machine (th_late); it passed 20 of 20, none skipped, twice
# beside two busy loops at a load of 5 on 2 cores.
BACKGROUND_UNIT="test_mock_limits"
bg_unit=""
for name in $BACKGROUND_UNIT; do
    [ -x "$BUILD/tests/$name" ] || continue
    want unit "$@" || want "$name" "$@" || continue
    [ $# -eq 1 ] && [ "$1" = "$name" ] && break # the only suite asked for: the loop below
    bg_unit="$bg_unit $name"
    in_background "$name" env CMOCKA_MESSAGE_OUTPUT=TAP "$BUILD/tests/$name"
    eval "bg_pid_$name=\$!"
done

for bin in "$BUILD"/tests/test_*; do
    [ -x "$bin" ] || continue
    name=$(basename "$bin")
    want unit "$@" || want "$name" "$@" || continue
    named "$name" $bg_unit && continue
    log="$LOGDIR/$name.tap"
    t0=$(date +%s)
    cpu >"$LOGDIR/.c0.$$"
    c0=$(cat "$LOGDIR/.c0.$$")
    CMOCKA_MESSAGE_OUTPUT=TAP "$bin" >"$log" 2>&1
    count "unit/$name" "$log" $?
done

for name in $bg_unit; do
    eval "wait \$bg_pid_$name"
    count_background "$name" unit
done

# lanes SUITE...: the e2e suites named, in that order, two at a time: a lane that ends is counted
# and given the next suite. Each one run joins pair_names. (count sets `name`: this loop's suite is
# `pname`.)
pair_names=""
lanes() {
    lane1="" lane2="" pid1="" pid2=""
    for pname in "$@"; do
        [ -f "tests/e2e/$pname.sh" ] || continue
        want e2e $selected || want "$pname" $selected || continue
        [ -n "$SANITIZED" ] && named "$pname" $RELEASE_ONLY && ! named "$pname" $selected && continue
        pair_names="$pair_names $pname"
        while [ -n "$pid1" ] && [ -n "$pid2" ]; do
            if ! kill -0 "$pid1" 2>/dev/null; then
                wait "$pid1"
                count_background "$lane1"
                pid1="" lane1=""
            elif ! kill -0 "$pid2" 2>/dev/null; then
                wait "$pid2"
                count_background "$lane2"
                pid2="" lane2=""
            else
                sleep 0.2
            fi
        done
        in_background "$pname"
        if [ -z "$pid1" ]; then pid1=$! lane1=$pname; else pid2=$! lane2=$pname; fi
    done
    for lane in 1 2; do
        eval "p=\$pid$lane n=\$lane$lane"
        [ -n "$p" ] || continue
        wait "$p"
        count_background "$n"
    done
}
selected="$*"
# shellcheck disable=SC2086
lanes $PAIRED
# shellcheck disable=SC2086
lanes $PAIRED_WAIT

for script in tests/e2e/*.sh; do
    [ -f "$script" ] || continue
    name=$(basename "$script" .sh)
    want e2e "$@" || want "$name" "$@" || continue
    named "$name" $bg_names $pair_names && continue
    if [ -n "$SANITIZED" ] && named "$name" $RELEASE_ONLY && ! named "$name" "$@"; then
        release_only="$release_only $name"
        continue
    fi
    log="$LOGDIR/$name.tap"
    t0=$(date +%s)
    cpu >"$LOGDIR/.c0.$$"
    c0=$(cat "$LOGDIR/.c0.$$")
    sh "$script" >"$log" 2>&1
    count "e2e/$name" "$log" $?
done

wait
for name in $bg_names; do count_background "$name"; done

[ -n "$release_only" ] && echo "release run only (not run under the sanitizers, tests/README.md says why):$release_only"
if [ -n "$failures" ]; then
    printf '\nfailures:%s\n' "$failures"
fi
cpu >"$LOGDIR/.c1.$$"
echo "time: $(($(date +%s) - run_t0))s wall, $(awk '{ printf "%.1f", $1 }' "$LOGDIR/.c1.$$")s cpu ($LOGDIR/times.tsv)"
echo "$passed passed, $failed failed, $skipped skipped"
rm -f "$LOGDIR/.times.$$" "$LOGDIR/.c0.$$" "$LOGDIR/.c1.$$"
[ "$failed" -eq 0 ]
