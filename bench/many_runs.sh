#!/bin/sh
# many_runs.sh - what a sweep or a tune of small scenarios costs: CPU time (user and system)
# and minor page faults of whole processes, from wait4's rusage. A run of a small scenario
# takes a fraction of a millisecond, so what a process does between runs weighs: until the
# commands that simulate many runs kept the memory they free (util_mem_keep_freed), each run
# faulted its pools in again, and system time was as large as user time (docs/performance.md,
# "A ninth pass"). Each command runs MANY_RUNS_ROUNDS times (default 3), alternating; the
# medians are printed. Prints figures; never fails on a stopwatch.
set -u
FUSEBOX=${BUILD:-build/release}/fusebox
ROUNDS=${MANY_RUNS_ROUNDS:-3}
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
S=tests/e2e/tune
GRIDS="retry.attempts=1,2,3 breaker.failure_rate=0.3,0.5,0.7 breaker.open=5s,10s,20s
breaker.minimum_calls=5,10,20 retry.backoff.exponential.base=100ms,200ms,400ms"
SWEEP="" KNOBS=""
for g in $GRIDS; do
    SWEEP="$SWEEP --grid $g"
    KNOBS="$KNOBS --knob $g"
done
echo "small scenarios (tests/e2e/tune/, each a minute simulated): CPU and minor faults, $ROUNDS rounds, medians"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
# shellcheck disable=SC2086
"$PY" - "$ROUNDS" "$OUT" \
    "sweep of $S/outage.json, 243 points x 3 seeds (729 runs), --jobs 1" \
    "$FUSEBOX sweep $S/outage.json $SWEEP --seeds 3 --jobs 1 -q --no-charts -o $OUT/sweep" \
    "tune over the 5 scenarios, 5 knobs (its search and report: about 490 runs), --jobs 1" \
    "$FUSEBOX tune $S $KNOBS --minimize cost_usd --subject-to success_rate>=0.97 --jobs 1 -q --no-charts -o $OUT/tune" <<'EOF'
import os, statistics, subprocess, sys
rounds, out = int(sys.argv[1]), sys.argv[2]
cmds = [(sys.argv[i], sys.argv[i + 1].split()) for i in range(3, len(sys.argv), 2)]
got = {name: [] for name, _ in cmds}
for _ in range(rounds):
    for name, argv in cmds:
        with open(os.path.join(out, "log"), "w") as f:
            p = subprocess.Popen(argv, stdout=f, stderr=subprocess.STDOUT)
            _, status, ru = os.wait4(p.pid, 0)
        code = os.waitstatus_to_exitcode(status)
        if code > 1:
            sys.exit("%s exited %d: %s" % (argv[0], code, open(os.path.join(out, "log")).read()[-300:]))
        got[name].append((ru.ru_utime, ru.ru_stime, ru.ru_minflt))
for name, _ in cmds:
    u = statistics.median(x[0] for x in got[name])
    s = statistics.median(x[1] for x in got[name])
    f = statistics.median(x[2] for x in got[name])
    print("  %s: %.2f s user, %.2f s system, %d minor faults" % (name, u, s, f))
EOF
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
