#!/bin/sh
# bench/sweep_bench.sh - wall time of sweeps with --jobs 1, --jobs 2 and two fixed
# halves, on the machine as it is and with outside busy loops.
#
# Runs are handed to the workers one at a time as they free up (cli/sweep_pool.c).
# "fixed halves" runs the same sweep as two --shard processes at once: each takes
# every other run, as the workers did before (build 15d71ed), so a worker slowed
# down, or given the heavier runs, holds up the end.
#
# Two sweeps:
#   even:   100 points (10 failure rates x 10 open durations) x 3 seeds = 300 runs of
#           the flagship cut to 10 minutes at 200 req/s; every run costs about the same.
#   uneven: 40 points (20 open durations x 2 traffic levels, 20/s and 400/s) x 1 seed
#           of the flagship cut to 20 minutes;
#           the traffic level is the last axis, so every other run is ~5x heavier.
#
# Under load the speedup has a ceiling that no assignment can pass: with L outside
# busy loops on C CPUs each of R runnable processes gets min(1, C/R) of a CPU, so
# --jobs 1 gets min(1, C/(L+1)) and --jobs 2 gets 2 min(1, C/(L+2)). The bench prints
# that ceiling next to each speedup, and, under load, how many CPUs' worth of work
# --jobs 2 got done (the quiet --jobs 1 time over its time) against that fair share. Each setting runs twice, alternating, and the
# faster time counts. Prints figures, never pass/fail; also says whether --jobs 1 and
# --jobs 2 wrote identical files, which they must.
set -u
BUILD=${BUILD:-build/release}
FUSEBOX=$BUILD/fusebox
[ -x "$FUSEBOX" ] || { echo "no $FUSEBOX (run make first)"; exit 2; }
TMP=$(mktemp -d "${TMPDIR:-/tmp}/fusebox-sweep-bench.XXXXXX")
BUSY=
trap '[ -n "$BUSY" ] && kill $BUSY; rm -rf "$TMP"' EXIT INT TERM
CPUS=$(nproc)

now() { date +%s.%N; }
min() { echo "$1 $2" | awk '{ printf "%.2f", ($1 < $2 ? $1 : $2) }'; }

sweep() { # sweep KIND OUT ARGS...: one sweep of KIND (even|uneven) into OUT
    kind=$1 out=$2
    shift 2
    if [ "$kind" = even ]; then
        "$FUSEBOX" sweep scenarios/retry-storm.json \
            --set duration=10m --set traffic.chat.arrivals.poisson=80/s \
            --set traffic.account.arrivals.poisson=120/s \
            --grid breaker.failure_rate=0.05,0.15,0.25,0.35,0.45,0.55,0.65,0.75,0.85,0.95 \
            --grid breaker.open=5s,10s,15s,20s,25s,30s,35s,40s,45s,50s \
            --seeds 3 --minimize cost_usd --subject-to "success_rate>=0.999" \
            --no-charts -q -o "$out" "$@"
    else
        "$FUSEBOX" sweep scenarios/retry-storm.json --set duration=20m \
            --grid breaker.open=2s,4s,6s,8s,10s,12s,14s,16s,18s,20s,22s,24s,26s,28s,30s,32s,34s,36s,38s,40s \
            --grid traffic.chat.arrivals.poisson=20/s,400/s \
            --seeds 1 --minimize cost_usd --no-charts -q -o "$out" "$@"
    fi
}

run() { # run KIND HOW: HOW is 1, 2 (--jobs) or fixed; prints the wall time in seconds
    t0=$(now)
    if [ "$2" = fixed ]; then
        sweep "$1" "$TMP/$1-f1" --jobs 1 --shard 1/2 &
        p1=$!
        sweep "$1" "$TMP/$1-f2" --jobs 1 --shard 2/2
        rc=$?
        wait "$p1" || rc=$?
    else
        sweep "$1" "$TMP/$1-j$2" --jobs "$2"
        rc=$?
    fi
    t1=$(now)
    [ $rc -le 1 ] || echo "(sweep $1 $2 exited $rc)" >&2
    echo "$t0 $t1" | awk '{ printf "%.2f", $2 - $1 }'
}

# measure KIND LOOPS LABEL: best of two alternating rounds of each setting
measure() {
    kind=$1 loops=$2
    a1=$(run "$kind" 1) a2=$(run "$kind" 2) af=$(run "$kind" fixed)
    b1=$(run "$kind" 1) b2=$(run "$kind" 2) bf=$(run "$kind" fixed)
    w1=$(min "$a1" "$b1") w2=$(min "$a2" "$b2") wf=$(min "$af" "$bf")
    echo "  $3"
    echo "    --jobs 1      $w1 s  (best of $a1, $b1)"
    echo "    --jobs 2      $w2 s  (best of $a2, $b2)"
    echo "    fixed halves  $wf s  (best of $af, $bf)"
    [ "$loops" = 0 ] && eval "QUIET_$kind=$w1"
    eval "q=\$QUIET_$kind"
    echo "$w1 $w2 $wf $loops $CPUS $q" | awk '{
        s1 = ($4 + 1 > $5) ? $5 / ($4 + 1) : 1
        s2 = ($4 + 2 > $5) ? 2 * $5 / ($4 + 2) : 2
        printf "    speedup       %.2fx with --jobs 2, %.2fx with fixed halves", $1 / $2, $1 / $3
        printf " (CPU-share ceiling %.2fx)\n", s2 / s1
        if ($4 > 0)
            printf "    CPUs of work  %.2f with --jobs 2, %.2f with fixed halves, of a fair share of %.2f\n", \
                $6 / $2, $6 / $3, s2
    }'
}

busy() { # busy N: start N outside busy loops
    i=0
    while [ $i -lt "$1" ]; do
        sh -c 'while :; do :; done' &
        BUSY="$BUSY $!"
        i=$((i + 1))
    done
}

unbusy() {
    [ -n "$BUSY" ] && kill $BUSY
    BUSY=
}

echo "sweep: $CPUS CPUs, $(date -u '+%Y-%m-%d %H:%M UTC'), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo " even runs: 100 points x 3 seeds = 300 runs of retry-storm, 10 min at 200 req/s"
measure even 0 "the machine as it is"
busy 1
measure even 1 "with an outside busy loop"
unbusy
busy 2
measure even 2 "with two outside busy loops"
unbusy
echo " uneven runs: 40 points x 1 seed of retry-storm, 20 min, every other run at 400 req/s instead of 20"
measure uneven 0 "the machine as it is"
busy 1
measure uneven 1 "with an outside busy loop"
unbusy
same=yes
for k in even uneven; do
    for f in sweep.csv sweep-points.csv sweep.json; do
        cmp -s "$TMP/$k-j1/$f" "$TMP/$k-j2/$f" || same=no
    done
done
echo "  outputs identical across --jobs: $same"
