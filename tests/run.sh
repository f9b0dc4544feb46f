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
# The suites' python3 is Debian's, which their packages (python3-yaml, python3-simpy3, ...) are
# installed for, as on a fresh Debian machine: a python3 earlier on PATH (pyenv's shim, a bash
# script that looks up its version on every start: 0.43 s of CPU a start on this 2-core machine
# against Debian's 0.04 s) took schema_fresh, compare, mock_proxy and import_policy 73 s of CPU
# instead of 22 s. FUSEBOX_TEST_PYTHON=path chooses another.
TEST_PYTHON=${FUSEBOX_TEST_PYTHON:-/usr/bin/python3}
if [ -x "$TEST_PYTHON" ] && [ "$(command -v python3)" != "$TEST_PYTHON" ]; then
    mkdir -p "$LOGDIR/.bin"
    ln -sf "$TEST_PYTHON" "$LOGDIR/.bin/python3"
    PATH="$LOGDIR/.bin:$PATH"
    export PATH
fi
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

# times_cpu FILE LINE [FORMAT]: the seconds of user + sys on line LINE of a `times` output
# ("0m1.23s 0m0.45s"), printed with FORMAT (default awk's own).
times_cpu() {
    awk -v n="$2" -v f="${3:-}" 'NR == n { gsub(/[ms]/, " "); c = $1 * 60 + $2 + $3 * 60 + $4
        if (f == "") print c; else printf f, c }' "$1"
}

# cpu: seconds of user + sys used so far by the children this shell has waited for (`times`
# goes through a file: in a $(...) subshell it would count the subshell's children only).
cpu() {
    times >"$LOGDIR/.times.$$"
    times_cpu "$LOGDIR/.times.$$" 2
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
$(failed_lines "$log" "$name")"
        [ "$missing" -gt 0 ] && failures="$failures
  $name: exited $rc before finishing; see $log"
    fi
}

# failed_lines LOG NAME: each failed test of a TAP log with the diagnostics under it (up to
# three "#" lines: cmocka's assertion and its line), so that a failure in CI, where only the
# summary is kept, says what went wrong.
failed_lines() {
    awk -v name="$2" '
        /^not ok / { n = 0; if (tolower($0) ~ /^not ok[^#]*#[ \t]*(skip|todo)/) next
                     print "  " name ": " $0; n = 3; next }
        n > 0 && /^#/ { print "      " $0; n--; next }
        { n = 0 }' "$1"
}

# Suites that mostly wait run in the background beside the others: started first, counted
# last (their lines come at the end). sweep_slurm spends about 90 s waiting on Slurm's
# scheduling for 2 s of CPU; its jobs are small, and the real-time suites it meets say
# inconclusive, not failed, when the machine is busy.
BACKGROUND="sweep_slurm"

# The e2e suites that only compute (no real time, no server's timing, no build of their own),
# longest first, on two lanes (each of them takes about one core: cli, report_pages, check, ...),
# and beside them, on a third lane, the suites of the mock, the differential tests and import
# (PAIRED_WAIT): most of their time is waiting on servers, loopback and timers (import 66 s of
# wall time for 36 s of CPU, mock_load 15 s for 8 s), and each passes or says inconclusive beside
# two busy loops (tests/README.md). A lane whose list is done takes the other's. Their lines come
# first. Those that share an npm folder (mock_sdk, mock_verdict, mock_gemini: out/sdk) install
# under tap.sh's lock, apt-get under another. The live driver's suites (live, live_compare,
# live_otlp, live_busy) run alone after these (QUIET): beside others, 10 of their checks said
# inconclusive (the machine busy) in one run, alone 3 to 5. docs_commands, import_corpus, fuzz
# and sweep_interrupt run after the lanes too, beside BESIDE's suites alone.
PAIRED="cli report_pages sweep_k8s ci_recipes check import_policy outputs schema checksrc
conformance schema_fresh compare presets export_policy sweep strict install golden failfast
sweep_parallel client_scenarios tune_library ahead"
PAIRED_WAIT="import mock_verdict mock_load diff_sdk stress mock_sdk mock_gemini diff_gateway
mock_proxy mock_valgrind mock_curl tap_npm"
# Of the suites after the lanes, those that only compute (no real time, both cores each) run
# one after the other at the lowest priority (SCHED_IDLE) beside docs_commands, fuzz,
# import_corpus and sweep_interrupt, which take the CPU back the moment they wake (one group
# after the other, with the live driver's, they took 340 s: ccfead1's run). The live driver's
# (QUIET) run last, once those have ended (the chain back at the usual priority before the
# first of them: beside_wait): beside them live's first check said inconclusive (the run
# stalled) where alone it passed.
BESIDE="tune regimes seeds fleet_scenarios"
QUIET="live live_busy live_compare live_otlp"

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
    b=$(times_cpu "$LOGDIR/.bgtimes.$_bg.$$" 2)
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

# The fuzz targets' build (clang, ASan and UBSan: 47 s of wall time, 80 s of CPU on 2 cores)
# runs beside the unit binaries, which leave most of a core free; docs_commands and e2e/fuzz then
# find it up to date (each runs `make V=fuzz CC=clang fuzz-build` as written, after the lanes
# below have waited for it). Without clang it is left to e2e/fuzz, which installs it; a build that
# fails here (no libFuzzer runtime yet) is e2e/fuzz's to finish the same way.
# It is not this shell's child (a subshell starts it and exits): reaped by this shell, its CPU
# would be counted in whichever suite was running then; it leaves its exit code, end and CPU in
# LOGDIR/.fuzz-build.PID, which the lanes wait for.
fuzz_done=""
if command -v clang >/dev/null 2>&1 && { want e2e "$@" || want fuzz "$@" || want docs_commands "$@"; }; then
    fuzz_done="$LOGDIR/.fuzz-build.$$"
    fuzz_t0=$(date +%s)
    rm -f "$fuzz_done" "$fuzz_done.tmp"
    (
        (
            make --no-print-directory V=fuzz CC=clang -j2 fuzz-build >"$LOGDIR/fuzz-build.log" 2>&1
            echo "$? $(date +%s)" >"$fuzz_done.tmp"
            times >>"$fuzz_done.tmp"
            mv "$fuzz_done.tmp" "$fuzz_done"
        ) &
    )
fi

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

# chosen SUITE...: those of the e2e suites named that this run runs, in that order.
chosen() {
    for _c in "$@"; do
        [ -f "tests/e2e/$_c.sh" ] || continue
        want e2e $selected || want "$_c" $selected || continue
        [ -n "$SANITIZED" ] && named "$_c" $RELEASE_ONLY && ! named "$_c" $selected && continue
        printf '%s ' "$_c"
    done
}

# take LANE: the next suite for a lane that is free: lanes 1 and 2 take PAIRED's first, lane 3
# PAIRED_WAIT's; either takes the other list's once its own is done. Sets `pname` (empty: none).
take() {
    pname=""
    if [ "$1" = 3 ]; then _order="wait paired"; else _order="paired wait"; fi
    for _k in $_order; do
        eval "_q=\$q_$_k"
        [ -n "$_q" ] || continue
        # shellcheck disable=SC2086
        set -- $_q
        pname=$1
        shift
        eval "q_$_k=\$*"
        return
    done
}

# the lanes wait for it: beside it, import's live run said inconclusive (the machine held)
# (at most FUZZ_BUILD_WAIT seconds, default 1800: a build killed before it could say so is
# e2e/fuzz's to redo, said here)
if [ -n "$fuzz_done" ]; then
    fwait=$(($(date +%s) + ${FUZZ_BUILD_WAIT:-1800}))
    while [ ! -f "$fuzz_done" ] && [ "$(date +%s)" -lt "$fwait" ]; do sleep 0.2; done
    if [ -f "$fuzz_done" ]; then
        read -r frc fend <"$fuzz_done"
        fcpu=$(times_cpu "$fuzz_done" 3 "%.1f")
        echo "(the fuzz targets' build beside the unit binaries: exit $frc, $((fend - fuzz_t0))s wall, ${fcpu}s cpu, not in the total below; $LOGDIR/fuzz-build.log)"
        rm -f "$fuzz_done"
    else
        echo "(the fuzz targets' build beside the unit binaries did not finish in ${FUZZ_BUILD_WAIT:-1800}s: e2e/fuzz builds them; $LOGDIR/fuzz-build.log)"
    fi
fi

# The paired suites on three lanes: a lane that ends is counted and given the next suite. Each
# one run joins pair_names. (count sets `name`: this loop's suite is `pname`.)
selected="$*"
# shellcheck disable=SC2086
q_paired=$(chosen $PAIRED) q_wait=$(chosen $PAIRED_WAIT)
pair_names="$q_paired $q_wait"
# shellcheck disable=SC2034 # read through eval
pid1="" pid2="" pid3="" lane1="" lane2="" lane3=""
while :; do
    busy=0
    for lane in 1 2 3; do
        p="" n=""
        eval "p=\$pid$lane n=\$lane$lane"
        if [ -n "$p" ] && ! kill -0 "$p" 2>/dev/null; then
            wait "$p"
            count_background "$n"
            eval "pid$lane='' lane$lane=''"
            p=""
        fi
        if [ -z "$p" ]; then
            take "$lane"
            [ -n "$pname" ] || continue
            in_background "$pname"
            eval "pid$lane=\$! lane$lane=\$pname"
        fi
        busy=1
    done
    [ "$busy" = 1 ] || break
    sleep 0.2
done

# The BESIDE suites beside the others when some of those run (alone, a suite needs no lower
# priority). Like the fuzz build, the chain is not this shell's child: reaped by this shell
# while another suite runs, its CPU would be counted in that suite's; each of its suites leaves
# its exit code and CPU as in_background's do, counted when the chain has ended (before the
# QUIET suites, or after the others), and their CPU is added to the total (beside_cpu).
# The suites left for one after the other, the QUIET ones last (a sanitizer's release-only ones
# are listed in release_only instead).
beside_names=$(chosen $BESIDE) beside_done="" beside_cpu=0 alone=""
for script in $(ls tests/e2e/*.sh | while read -r f; do
    named "$(basename "$f" .sh)" $QUIET || echo "$f"
done) $(for q in $QUIET; do echo "tests/e2e/$q.sh"; done); do
    [ -f "$script" ] || continue
    name=$(basename "$script" .sh)
    want e2e "$@" || want "$name" "$@" || continue
    named "$name" $bg_names $pair_names $beside_names && continue
    if [ -n "$SANITIZED" ] && named "$name" $RELEASE_ONLY && ! named "$name" "$@"; then
        release_only="$release_only $name"
        continue
    fi
    alone="$alone $name"
done
if [ -n "$beside_names" ] && [ -n "$alone" ]; then
    # SCHED_IDLE: a task of any other policy that wakes takes the CPU at once (under the kernel's
    # EEVDF, nice 19 let the running task finish its slice first: beside it the live driver's
    # threads waited 0.71 s for a CPU per second, and two more of live's checks said
    # inconclusive); nice 19 where chrt cannot set it
    if chrt --idle 0 true 2>/dev/null; then idle="chrt --idle 0"; else idle="nice -n 19"; fi
    beside_done="$LOGDIR/.beside.$$"
    rm -f "$beside_done" "$beside_done.pid" "$beside_done.now"
    (
        (
            sh -c 'echo $PPID' >"$beside_done.pid" # this subshell: beside_wait's root
            for _n in $beside_names; do
                # once the others are done, the rest at the usual priority (beside_wait)
                [ -f "$beside_done.now" ] && idle=""
                (
                    b0=$(date +%s)
                    $idle sh "tests/e2e/$_n.sh" >"$LOGDIR/$_n.tap" 2>&1
                    echo "$? $b0 $(date +%s)" >"$LOGDIR/.bg.$_n.$$"
                    times >"$LOGDIR/.bgtimes.$_n.$$"
                )
            done
            : >"$beside_done"
        ) &
    )
else
    alone="$beside_names$alone" beside_names=""
fi

# beside_wait: the BESIDE chain back to the usual priority (its suite running now, every process
# of it, and those after it), then once it has ended, count its suites (then a no-op). Waited
# for at the lowest priority, it would not end while anything else wants the CPU: another job on
# the machine, a user's build.
beside_wait() {
    [ -n "$beside_done" ] || return 0
    : >"$beside_done.now"
    if [ -s "$beside_done.pid" ]; then
        # the chain's processes now (pid, parent, policy: /proc/PID/stat's fields 1, 4 and 41,
        # counted after the command's name, which may hold spaces); 5 is SCHED_IDLE
        cat /proc/[0-9]*/stat 2>/dev/null | awk -v root="$(cat "$beside_done.pid")" '
            { pid = $1; sub(/^.*\) /, ""); parent[pid] = $2; policy[pid] = $39 }
            END { for (p in parent) { q = p
                    while (q != "" && q != root && q != 1 && q != 0) q = parent[q]
                    if (q == root && policy[p] == 5) print p } }' |
            while read -r p; do chrt --other -a -p 0 "$p" >/dev/null 2>&1; done
    fi
    while [ ! -f "$beside_done" ]; do sleep 0.2; done
    # count sets `name`, which the loop that calls this is on: kept
    _keep=$name
    for _bn in $beside_names; do
        beside_cpu=$(awk -v a="$beside_cpu" -v b="$(times_cpu "$LOGDIR/.bgtimes.$_bn.$$" 2)" \
            'BEGIN { print a + b }')
        count_background "$_bn"
    done
    name=$_keep
    rm -f "$beside_done" "$beside_done.pid" "$beside_done.now"
    beside_done=""
}

# The rest one after the other, the QUIET ones once the BESIDE chain has ended.
for name in $alone; do
    named "$name" $QUIET && beside_wait
    script=tests/e2e/$name.sh
    log="$LOGDIR/$name.tap"
    t0=$(date +%s)
    cpu >"$LOGDIR/.c0.$$"
    c0=$(cat "$LOGDIR/.c0.$$")
    sh "$script" >"$log" 2>&1
    count "e2e/$name" "$log" $?
done

beside_wait
wait
for name in $bg_names; do count_background "$name"; done

[ -n "$release_only" ] && echo "release run only (not run under the sanitizers, tests/README.md says why):$release_only"
if [ -n "$failures" ]; then
    printf '\nfailures:%s\n' "$failures"
fi
cpu >"$LOGDIR/.c1.$$"
echo "time: $(($(date +%s) - run_t0))s wall, $(awk -v b="$beside_cpu" '{ printf "%.1f", $1 + b }' "$LOGDIR/.c1.$$")s cpu ($LOGDIR/times.tsv)"
echo "$passed passed, $failed failed, $skipped skipped"
rm -f "$LOGDIR/.times.$$" "$LOGDIR/.c0.$$" "$LOGDIR/.c1.$$"
[ "$failed" -eq 0 ]
