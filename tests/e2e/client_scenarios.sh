#!/bin/sh
# client_scenarios.sh - the client-side scenarios (adaptive-concurrency, hedging,
# connection-pool) hold their lessons for seeds 1 to 20, and the regimes the hedging
# scenario's description claims hold too.
#
# A scenario's `expect` lines are checked at its own seed by e2e/check.sh; here every
# seed from 1 to 20 (`fusebox check --seed N`). Then what needs another rate or another
# provider, which a scenario's variants cannot vary (traffic and providers are shared by
# all variants), with `--set` and `--set expect=[...]`, as e2e/regimes.sh does:
#   hedging at 80/s (near capacity): the fixed 2 s delay collapses the provider, the
#     percentile delay and no hedging serve everything; at 90/s the percentile collapses
#     too, no hedging still serves everything; at 80/s against a provider that drops
#     cancelled calls (keeps_working false) both hedges are harmless.
set -u
. tests/tap.sh
SEEDS=$(all_seeds)
AC=scenarios/adaptive-concurrency.json
HD=scenarios/hedging.json
CP=scenarios/connection-pool.json

for f in $AC $HD $CP; do
    check_seeds "$(basename "$f" .json): every expectation holds" "$f"
done

check_seeds "hedging at 80/s: a fixed delay collapses the provider, a percentile delay does not" $HD \
    --set 'traffic[0].arrivals.poisson=80/s' \
    --set 'expect=["none.success_rate > 0.99", "hedge-p95.success_rate > 0.99",
                   "hedge-fixed.success_rate < 0.5", "hedge-fixed.amplification > 3",
                   "hedge-p95.hedges < hedge-fixed.hedges / 10"]'
check_seeds "hedging at 90/s: both collapse, no hedging serves everything" $HD \
    --set 'traffic[0].arrivals.poisson=90/s' \
    --set 'expect=["none.success_rate > 0.99", "hedge-p95.success_rate < 0.5",
                   "hedge-fixed.success_rate < 0.5"]'
check_seeds "hedging at 80/s against a provider that drops cancelled calls: harmless" $HD \
    --set 'traffic[0].arrivals.poisson=80/s' --set 'providers.api.keeps_working=false' \
    --set 'expect=["hedge-fixed.success_rate > 0.99", "hedge-p95.success_rate > 0.99",
                   "hedge-fixed.latency_p99 < none.latency_p99 * 0.7"]'

finish
