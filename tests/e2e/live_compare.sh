#!/bin/sh
# tests/e2e/live_compare.sh - simulated vs live agreement (`fusebox live --compare`) on the two
# scenarios of tests/e2e/live/: an outage with a breaker and a fallback, and a 429 storm with
# Retry-After, each with two variants, at x20 (3 s of real time per variant). The default
# tolerances are stated and justified in docs/live.md. TAP output.
. tests/tap.sh
T=$E2E_TMP

for s in outage-fallback storm-retry-after; do
    expect_exit 0 "$s: simulated and live agree within the tolerances" \
        "$FUSEBOX" live --compare "tests/e2e/live/$s.json" --time-scale 20 --no-charts -o "$T/$s"
    [ "$got" -eq 0 ] || sed 's/^/# /' "$T/$s/compare.md"
    writes "$T/$s" "$s:" compare.md compare.json report.json sim/report.json sim/timeseries.csv
    [ "$(json "$T/$s/compare.json" "r['ok'] and all(x['ok'] for x in r['rows'])")" = True ]
    ok $? "$s: compare.json says every row is within its tolerance"
    contains "$OUT" "| success_rate |" "$s: the table is printed"
done

S=tests/e2e/live/outage-fallback.json
rows=$(json "$T/outage-fallback/compare.json" "' '.join(sorted(set(x['metric'] for x in r['rows'])))")
for m in success_rate success_fallback "attempts[openai]" "attempts[anthropic]" \
    "breaker_opens[openai]" "breaker_transitions[openai]" latency_p50 latency_p99; do
    contains "$rows" "$m" "the table compares $m"
done
[ "$(json "$T/outage-fallback/compare.json" "[x['sim'] for x in r['rows'] if x['metric'] == 'breaker_opens[openai]' and x['variant'] == 'breaker'][0] >= 4")" = True ]
ok $? "the outage opens the breakers (a comparison with something to compare)"
[ "$(json "$T/storm-retry-after/compare.json" "[x['sim'] for x in r['rows'] if x['metric'] == 'latency_p99' and x['variant'] == 'honour'][0] > 4")" = True ]
ok $? "honouring Retry-After shows in the p99 (waits of 2 s)"

# A comparison can fail: no latency slack at all
expect_exit 1 "a metric outside its tolerance exits 1" "$FUSEBOX" live --compare "$S" \
    --variant breaker --set duration=5s --set providers.openai.faults[0].at=1s \
    --time-scale 20 --no-charts -q -o "$T/tight" \
    --tolerance latency=0 --tolerance latency_min_ms=0
[ "$(json "$T/tight/compare.json" "r['ok']")" = False ]
ok $? "compare.json says so"
finish
