#!/bin/sh
# bench/sweep_bench.sh - wall time of one sweep with --jobs 1 and --jobs 2, on the machine
# as it is and again with an outside busy loop (one more process wanting a CPU).
#
# 100 points (10 breaker failure rates x 10 open durations) x 3 seeds = 300
# runs of the flagship scenario cut to 10 minutes at 200 req/s (its outage
# starts at 5m). Each setting runs twice, alternating, and the faster time
# counts (the machine may be busy with something else). Runs are handed to the
# workers one at a time as they free up (cli/sweep_pool.c), so a worker slowed
# down by the busy loop takes fewer of them. Prints figures, never pass/fail;
# also says whether the runs wrote identical files, which they must.
set -u
BUILD=${BUILD:-build/release}
FUSEBOX=$BUILD/fusebox
[ -x "$FUSEBOX" ] || { echo "no $FUSEBOX (run make first)"; exit 2; }
TMP=$(mktemp -d "${TMPDIR:-/tmp}/fusebox-sweep-bench.XXXXXX")
BUSY=
trap '[ -n "$BUSY" ] && kill "$BUSY"; rm -rf "$TMP"' EXIT INT TERM

now() { date +%s.%N; }

run() { # run JOBS: the sweep into $TMP/jJOBS, prints the wall time in seconds
    t0=$(now)
    "$FUSEBOX" sweep scenarios/retry-storm.json \
        --set duration=10m --set traffic.chat.arrivals.poisson=80/s \
        --set traffic.account.arrivals.poisson=120/s \
        --grid breaker.failure_rate=0.05,0.15,0.25,0.35,0.45,0.55,0.65,0.75,0.85,0.95 \
        --grid breaker.open=5s,10s,15s,20s,25s,30s,35s,40s,45s,50s \
        --seeds 3 --minimize cost_usd --subject-to "success_rate>=0.999" \
        --jobs "$1" --no-charts -q -o "$TMP/j$1"
    rc=$?
    t1=$(now)
    [ $rc -le 1 ] || echo "(sweep --jobs $1 exited $rc)" >&2
    echo "$t0 $t1" | awk '{ printf "%.2f", $2 - $1 }'
}

# measure LABEL: best of two alternating runs per --jobs, and the speedup
measure() {
    a1=$(run 1)
    a2=$(run 2)
    b1=$(run 1)
    b2=$(run 2)
    w1=$(min "$a1" "$b1")
    w2=$(min "$a2" "$b2")
    echo "  $1"
    per=$(echo "$w1" | awk '{ printf "%.1f", $1 * 1000 / 300 }')
    echo "    --jobs 1  $w1 s  (best of $a1, $b1; $per ms per run)"
    echo "    --jobs 2  $w2 s  (best of $a2, $b2)"
    echo "$w1 $w2" | awk '{ printf "    speedup   %.2fx\n", ($2 > 0 ? $1 / $2 : 0) }'
}

echo "sweep: 100 points x 3 seeds = 300 runs of retry-storm, 10 min at 200 req/s"
echo "  $(nproc) CPUs, $(date -u '+%Y-%m-%d %H:%M UTC'), load $(cut -d' ' -f1-3 /proc/loadavg)"
min() { echo "$1 $2" | awk '{ printf "%.2f", ($1 < $2 ? $1 : $2) }'; }
measure "the machine as it is"
sh -c 'while :; do :; done' &
BUSY=$!
measure "with an outside busy loop"
kill "$BUSY"
BUSY=
same=yes
for f in sweep.csv sweep-points.csv sweep.json; do
    cmp -s "$TMP/j1/$f" "$TMP/j2/$f" || same=no
done
echo "  outputs identical across --jobs: $same"
