#!/bin/sh
# regimes.sh - the provider-model scenarios hold their lessons for seeds 1 to 20, and
# the regimes their descriptions claim hold too.
#
# A scenario's `expect` lines are checked at its own seed by e2e/check.sh; here every
# seed from 1 to 20 (`fusebox check --seed N`). Then the claims that need another rate
# or no spike, which a scenario's variants cannot vary (traffic is shared by all
# variants), with `--set` on the traffic and `--set expect=[...]` for what must hold
# there, also for every seed:
#   congestive-collapse: below the threshold (40/s) even plain retries recover; without
#     the spike the server stays healthy at 60/s and at 85/s (the good state is stable:
#     bistable); at 85/s backoff with jitter collapses too (an open system stays
#     metastable) while a retry budget recovers;
#   load-shedding: without the spike nobody fails and only CoDel sheds (a few, in bursts);
#   thrashing: without the spike the thrashing server is healthy.
set -u
. tests/tap.sh
SEEDS=$(seq 1 20)
CC=scenarios/congestive-collapse.json
LS=scenarios/load-shedding.json
TH=scenarios/thrashing.json

# check_seeds NAME FILE ARGS...: `fusebox check FILE --seed N ARGS` passes for every seed
check_seeds() {
    name=$1 file=$2
    shift 2
    bad=""
    for s in $SEEDS; do
        "$FUSEBOX" check "$file" --seed "$s" "$@" >"$E2E_TMP/out" 2>&1
        if [ $? -ne 0 ]; then
            bad="$bad $s"
            grep -E '^(FAIL|ERROR)' "$E2E_TMP/out" | head -n 3 | sed "s/^/# seed $s: /"
        fi
    done
    [ -z "$bad" ]
    ok $? "$name (seeds 1-20${bad:+; failed:$bad})"
}

for f in $CC $LS $TH; do
    check_seeds "$(basename "$f" .json): every expectation holds" "$f"
done

check_seeds "congestive-collapse at 40/s: every variant recovers from the spike" $CC \
    --set 'traffic[0].arrivals.poisson=40/s' \
    --set 'expect=["plain-retries.recovered == 1", "backoff-jitter.recovered == 1",
                   "retry-budget.recovered == 1", "fixed-latency.recovered == 1"]'
check_seeds "congestive-collapse at 60/s without the spike: healthy for ever" $CC \
    --set 'traffic[0].spikes=[]' \
    --set 'expect=["plain-retries.success_rate == 1", "backoff-jitter.success_rate == 1",
                   "retry-budget.success_rate == 1", "plain-retries.amplification == 1"]'
check_seeds "congestive-collapse at 85/s without the spike: healthy for ever" $CC \
    --set 'traffic[0].arrivals.poisson=85/s' --set 'traffic[0].spikes=[]' \
    --set 'expect=["plain-retries.success_rate == 1", "backoff-jitter.success_rate == 1"]'
check_seeds "congestive-collapse at 85/s: backoff with jitter collapses too, a budget recovers" $CC \
    --set 'traffic[0].arrivals.poisson=85/s' \
    --set 'expect=["plain-retries.recovered == 0", "backoff-jitter.recovered == 0",
                   "retry-budget.recovered == 1", "fixed-latency.recovered == 1"]'

check_seeds "load-shedding without the spike: every request succeeds, CoDel sheds a few" $LS \
    --set 'traffic[0].spikes=[]' \
    --set 'expect=["fifo.success_rate == 1", "drop-expired.success_rate == 1",
                   "lifo.success_rate == 1", "bounded-529.success_rate == 1",
                   "codel.success_rate == 1", "drop-expired.shed[drop-expired] == 0",
                   "bounded-529.overloaded[bounded-529] == 0", "codel.shed[codel] < 20"]'

check_seeds "thrashing without the spike: the thrashing server is healthy" $TH \
    --set 'traffic[0].spikes=[]' \
    --set 'expect=["long-queue.success_rate == 1", "short-queue.success_rate == 1"]'

finish
