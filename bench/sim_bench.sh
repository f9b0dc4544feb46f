#!/bin/sh
# sim_bench.sh - simulator speed and memory on the flagship scaled to 1,000
# requests/s (400/s chat + 600/s no-LLM, 200 pods, provider capacity x10),
# for one and for four simulated hours, each variant in its own process.
# An event is one popped and handled (docs/engine.md, "What an event is");
# answers handled ahead (of the handled ones), stale, cancelled and scheduled ones are printed
# apart.
# Prints figures; never fails on a stopwatch. Wall time moves with the load on
# the machine; instructions per handled event, counted with valgrind's
# callgrind (tuned: 10 simulated minutes; naive: SIM_BENCH_CG_NAIVE, default
# 6m, as in docs/performance.md), do not. SIM_BENCH_CALLGRIND=0 leaves
# callgrind out. The peak RSS of 4 h against 1 h is printed as a ratio
# (memory flat in simulated time).
set -u
FUSEBOX=${BUILD:-build/release}/fusebox
SCALE="--set traffic.chat.arrivals.poisson=400/s --set traffic.account.arrivals.poisson=600/s
 --set pods.count=200 --set providers.openai.capacity.concurrency=3200
 --set providers.openai.capacity.queue=20000 --set providers.openai.capacity.rpm=300000
 --set providers.anthropic.capacity.concurrency=6000 --set providers.anthropic.capacity.queue=20000"
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
echo "flagship (scenarios/retry-storm.json) at 1,000 requests/s; wall time, events/s, peak RSS"
for dur in 60m 240m; do
    for v in tuned naive; do
        # shellcheck disable=SC2086
        "$FUSEBOX" run scenarios/retry-storm.json $SCALE --set duration=$dur --variant $v \
            --no-charts -q --stats -o "$OUT/$v-$dur" >"$OUT/$v-$dur.log" 2>&1
        sed "s/^stats: /  $dur: /" "$OUT/$v-$dur.log"
    done
done
echo "(naive simulates its retry storm: ~80x the attempts of tuned, hence the event count)"
# Memory stays flat in simulated time: the simulator keeps only what is in flight.
for v in tuned naive; do
    a=$(sed -n 's/.*peak RSS \([0-9]*\) MiB.*/\1/p' "$OUT/$v-60m.log")
    b=$(sed -n 's/.*peak RSS \([0-9]*\) MiB.*/\1/p' "$OUT/$v-240m.log")
    if [ -n "$a" ] && [ -n "$b" ] && [ "$a" -gt 0 ]; then
        echo "  peak RSS, variant $v: $a MiB for 1 h, $b MiB for 4 h: 4 h / 1 h = $(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", b / a }')"
    fi
done
[ "${SIM_BENCH_CALLGRIND:-1}" = 1 ] || exit 0
if ! command -v valgrind >/dev/null 2>&1; then
    echo "callgrind: valgrind is not installed (apt-get install valgrind)"
    exit 0
fi
# naive's storm starts at minute 5 and costs ~9 G instructions a simulated minute under
# callgrind's ~50x slowdown: its run is cut short (SIM_BENCH_CG_NAIVE) to keep `make bench` short.
CG_NAIVE=${SIM_BENCH_CG_NAIVE:-6m}
echo "instructions per handled event (callgrind: tuned 10 simulated minutes, naive $CG_NAIVE; startup included)"
for v in tuned naive; do
    dur=10m
    [ "$v" = naive ] && dur=$CG_NAIVE
    # shellcheck disable=SC2086
    valgrind --tool=callgrind --callgrind-out-file="$OUT/cg.$v" "$FUSEBOX" run \
        scenarios/retry-storm.json $SCALE --set duration=$dur --variant $v --no-charts -q \
        --stats -o "$OUT/cg-$v" >"$OUT/cg-$v.log" 2>&1
    ir=$(sed -n 's/.*refs: *//p' "$OUT/cg-$v.log" | tr -d ,)
    ev=$(sed -n 's/.* requests, \([0-9]*\) events in.*/\1/p' "$OUT/cg-$v.log")
    if [ -n "$ir" ] && [ -n "$ev" ] && [ "$ev" -gt 0 ]; then
        echo "  $dur: variant $v: $ir instructions, $ev events: $((ir / ev)) per event"
    else
        echo "  $dur: variant $v: callgrind failed: $(tail -n 1 "$OUT/cg-$v.log")"
    fi
done
