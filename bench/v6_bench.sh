#!/bin/sh
# v6_bench.sh - fusebox side by side with SimPy on the same model (bench/v6/):
# the V6 healthy case, Poisson arrivals at 50/s for 1,200 simulated seconds,
# a provider with 100 slots, timeouts and immediate retries. Whole processes,
# one at a time, alternating (fusebox, SimPy keeping fusebox's figures, SimPy
# counting only, fusebox, ...), V6_PAIRS rounds (default 5); CPU time (user +
# system, wait4's rusage: bench/v6/pairs.py) of each, the medians and the
# medians of the pairwise ratios SimPy / fusebox, the last line the ratio with
# the same figures on both sides. CPU time, not wall time: the machine may be
# shared. Prints figures; never fails on a stopwatch.
set -u
FUSEBOX=${BUILD:-build/release}/fusebox
PAIRS=${V6_PAIRS:-5}
PY=/usr/bin/python3 # Debian's, where python3-simpy3 installs
if ! "$PY" -c 'import simpy' 2>/dev/null; then
    echo "SimPy is not installed (apt-get install python3-simpy3): skipped"
    exit 0
fi
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
echo "V6 healthy case (bench/v6/v6.json; bench/v6/v6_simpy.py): 50 requests/s, 1,200 s simulated"
echo "SimPy $("$PY" -c 'import simpy; print(simpy.__version__)'), $("$PY" --version); $PAIRS pairs, alternating"
# The ratio moves with the machine and its load (docs/performance.md, "A sixth pass"): quote it
# with the load it was measured at.
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
"$PY" bench/v6/pairs.py "$PAIRS" "$OUT" "$FUSEBOX"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
