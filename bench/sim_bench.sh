#!/bin/sh
# sim_bench.sh - simulator speed and memory on the flagship scaled to 1,000
# requests/s (400/s chat + 600/s no-LLM, 200 pods, provider capacity x10),
# for one and for four simulated hours, each variant in its own process.
# Prints figures; never fails on a stopwatch.
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
            --no-charts -q --stats -o "$OUT/$v-$dur" 2>&1 | sed "s/^stats: /  $dur: /"
    done
done
echo "(naive simulates its retry storm: ~80x the attempts of tuned, hence the event count)"
