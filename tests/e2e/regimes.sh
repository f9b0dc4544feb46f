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
#   thrashing: without the spike the thrashing server is healthy;
#   the public incidents (docs/incidents.md): anthropic-529's agent loop recovers under
#     the SDK's 600 s timeout (the collapse needs the short one); gcp-2025-06-12 is healthy
#     without the crash loop, and exponential backoff without jitter recovers too;
#     aws-2025-10-20 is healthy without the trigger (the collapse is a state, not a load).
set -u
. tests/tap.sh
SEEDS=$(all_seeds)
CC=scenarios/congestive-collapse.json
LS=scenarios/load-shedding.json
TH=scenarios/thrashing.json
AN=scenarios/anthropic-529.json
GC=scenarios/gcp-2025-06-12.json
AW=scenarios/aws-2025-10-20.json
PUBLIC="scenarios/openai-2024-12-11.json scenarios/openai-2025-06-10.json $AN $GC $AW"

for f in $CC $LS $TH $PUBLIC; do
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

check_seeds "anthropic-529: the agent's eleven attempts under the SDK's 600 s timeout recover" $AN \
    --set 'variants.agent-retries.retry.attempt_timeout=600s' \
    --set 'expect=["agent-retries.recovered == 1", "agent-retries.cost_wasted_usd == 0"]'

check_seeds "gcp-2025-06-12 without the crash loop: every variant is healthy" $GC \
    --set 'providers.policy-db.faults=[]' \
    --set 'expect=["fixed-retry.success_rate == 1", "randomized-backoff.success_rate == 1",
                   "backoff-budget.success_rate == 1", "fixed-retry.amplification < 1.01"]'
check_seeds "gcp-2025-06-12: exponential backoff without jitter recovers too" $GC \
    --set 'variants.fixed-retry.retry={"backoff":{"exponential":{"base":"1s","max":"60s"}},"jitter":"none"}' \
    --set 'expect=["fixed-retry.recovered == 1", "fixed-retry.spillover <= 5m"]'

check_seeds "aws-2025-10-20 without the trigger: every variant is healthy" $AW \
    --set 'providers.dwfm.faults=[]' --set 'providers.dwfm-fixed.faults=[]' \
    --set 'expect=["retry-until-done.success_rate == 1", "throttled.success_rate == 1",
                   "retry-budget.success_rate == 1", "fixed-latency.success_rate == 1",
                   "retry-until-done.amplification < 1.01"]'

finish
