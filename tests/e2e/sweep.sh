#!/bin/sh
# sweep.sh - fusebox sweep and fusebox merge end to end: determinism across
# --jobs and shards, the answer block, and the errors a user meets first.
# tests/e2e/sweep-small.json is a 2-minute scenario that runs in milliseconds.
. tests/tap.sh
T=$E2E_TMP
SC=tests/e2e/sweep-small.json

# same_outputs DIR1 DIR2: the data files and the page are byte-identical
same_outputs() { same_files "$1" "$2" sweep.csv sweep-points.csv sweep.json sweep.html; }

GRID="--grid breaker.failure_rate=0.3,0.5,0.7 --grid breaker.open=5s,20s --seeds 3"
OBJ="--minimize cost_usd --subject-to success_rate>=0.99,latency_p99<=10s"

# shellcheck disable=SC2086
expect_exit 0 "sweep --jobs 1 exits 0" "$FUSEBOX" sweep $SC $GRID $OBJ --jobs 1 -o "$T/j1"
ANSWER=$OUT
writes "$T/j1" "the sweep" sweep.csv sweep-points.csv sweep.json sweep.html charts/heatmap.png \
    charts/pareto.png
rows=$(($(wc -l <"$T/j1/sweep.csv") - 1))
points=$(($(wc -l <"$T/j1/sweep-points.csv") - 1))
[ "$rows" -eq 18 ] && [ "$points" -eq 6 ]
ok $? "one csv row per point x seed ($rows of 18) and one per point ($points of 6)"
python3 -m json.tool "$T/j1/sweep.json" >/dev/null 2>&1
ok $? "sweep.json is valid JSON"
contains "$(cat "$T/j1/sweep.json")" '"variant": "tuned"' "the default variant is the last one"
contains "$ANSWER" "best: point" "--minimize names the best point"
contains "$ANSWER" "runner-up: point" "--minimize compares the runner-up"

# shellcheck disable=SC2086
"$FUSEBOX" sweep $SC $GRID $OBJ --jobs 2 -q -o "$T/j2"
same_outputs "$T/j1" "$T/j2"
ok $? "--jobs 2 writes the same bytes as --jobs 1"
# shellcheck disable=SC2086
"$FUSEBOX" sweep $SC $GRID $OBJ --jobs 3 -q -o "$T/j3"
same_outputs "$T/j1" "$T/j3"
ok $? "--jobs 3 (uneven slices) writes the same bytes"

# shellcheck disable=SC2086
"$FUSEBOX" sweep $SC $GRID $OBJ --shard 1/2 --jobs 2 -q -o "$T/parts" &&
    "$FUSEBOX" sweep $SC $GRID $OBJ --shard 2/2 --jobs 1 -q -o "$T/parts" &&
    [ -s "$T/parts/sweep.part-1-of-2.json" ] && [ -s "$T/parts/sweep.part-2-of-2.json" ] &&
    [ ! -e "$T/parts/sweep.csv" ]
ok $? "--shard K/N writes only its partial file"
expect_exit 0 "merge exits 0" "$FUSEBOX" merge "$T/parts/sweep.part-2-of-2.json" \
    "$T/parts/sweep.part-1-of-2.json" -o "$T/merged"
same_outputs "$T/j1" "$T/merged"
ok $? "shards 1/2 + 2/2 merged == the unsharded run, byte for byte"
[ "$(echo "$OUT" | grep -v '^wrote ')" = "$(echo "$ANSWER" | grep -v '^wrote ')" ]
ok $? "merge prints the same answer as the sweep"

expect_exit 2 "merge with a shard missing exits 2" \
    "$FUSEBOX" merge "$T/parts/sweep.part-1-of-2.json" -o "$T/m1"
contains "$ERR" "missing shard 2 of 2" "merge names the missing shard"
"$FUSEBOX" sweep $SC --grid breaker.failure_rate=0.3,0.5 --seeds 3 --shard 2/2 -q -o "$T/other"
expect_exit 2 "merge of two different sweeps exits 2" "$FUSEBOX" merge \
    "$T/parts/sweep.part-1-of-2.json" "$T/other/sweep.part-2-of-2.json" -o "$T/m2"
contains "$ERR" "different sweeps ('grid' differs)" "merge says what differs"
# shards run by a fusebox of other random streams (docs/rng.md): one, or all of them
sed 's/"rng": "fusebox-5"/"rng": "fusebox-4"/' "$T/parts/sweep.part-2-of-2.json" >"$T/old-part-2.json"
sed 's/"rng": "fusebox-5"/"rng": "fusebox-4"/' "$T/parts/sweep.part-1-of-2.json" >"$T/old-part-1.json"
expect_exit 2 "merge of a shard of another random-stream version exits 2" "$FUSEBOX" merge \
    "$T/parts/sweep.part-1-of-2.json" "$T/old-part-2.json" -o "$T/m3"
contains "$ERR" "old-part-2.json was run with random streams fusebox-4, this fusebox draws fusebox-5, which gives other numbers from a seed" \
    "... and says why"
expect_exit 2 "merge of shards all of another random-stream version exits 2 (not labelled as this one's)" \
    "$FUSEBOX" merge "$T/old-part-1.json" "$T/old-part-2.json" -o "$T/m4"

expect_exit 2 "a misspelt --grid key exits 2" \
    "$FUSEBOX" sweep $SC --grid breaker.failur_rate=0.3,0.5 -o "$T/bad"
contains "$ERR" "--grid breaker.failur_rate" "the error names the --grid key"
contains "$ERR" "did you mean 'failure_rate'" "the error suggests the right key"
expect_exit 2 "a bad value exits 2" "$FUSEBOX" sweep $SC --grid breaker.failure_rate=0.5,1.5 -o "$T/bad"
contains "$ERR" "value '1.5' (point 1)" "the error names the value and the point"
contains "$ERR" "variants.tuned.breaker.failure_rate" "the error names the JSON path"

# The block under "policy (the variants.tuned entry ..." is accepted by fusebox run --set.
echo "$ANSWER" | sed -n '/^policy (the variants.tuned entry/,/^or run it:/p' | sed '1d;$d' >"$T/policy.json"
grep -q '"failure_rate"' "$T/policy.json" &&
    "$FUSEBOX" run $SC --variant tuned --set "variants.tuned=$(cat "$T/policy.json")" \
        --no-charts -q -o "$T/run"
ok $? "the --minimize policy block is accepted by fusebox run --set"

expect_exit 1 "no feasible point exits 1" "$FUSEBOX" sweep $SC --grid breaker.open=5s,20s \
    --minimize cost_usd --subject-to "success_rate>=1.5" --no-charts -o "$T/inf"
contains "$OUT" "no point satisfies" "no feasible point: it says so"
contains "$OUT" "closest: point" "no feasible point: it shows the closest"

# the heatmap: a point that violates the constraints is grey, never a colour of the scale (the
# cheapest cells of a cost heatmap were infeasible and looked the best)
# shellcheck disable=SC2086
"$FUSEBOX" sweep $SC --grid breaker.failure_rate=0.3,0.7 --grid breaker.open=5s,20s --seeds 2 \
    --minimize cost_usd --subject-to "amplification<=1.07" -q -o "$T/grey"
python3 - "$T/grey" <<'PY'
import json, sys
d = sys.argv[1]
sw = json.load(open(d + "/sweep.json"))
feasible = [r["feasible"] for r in sw["results"]]
assert 0 < sum(feasible) < len(feasible), ("want a mix of feasible and infeasible", feasible)
cells = [l.split() for l in open(d + "/charts/heatmap.dat") if l.strip()]
# grid order: x outer, y inner; the points: the first --grid outer too
flags = [c[3] == "1" for c in cells]
assert flags == feasible, (flags, feasible)
gp = open(d + "/charts/heatmap.gp").read()
assert "using 1:2:($4==1?$3:NaN) with image" in gp, "infeasible cells out of the image"
assert "($4==0?$2:NaN):(0.5):(0.5) with boxxyerror" in gp and "#bbbbbb" in gp, "grey boxes"
PY
ok $? "heatmap: infeasible cells are left out of the colour scale and drawn grey"
expect_exit 2 "an unknown objective exits 2" "$FUSEBOX" sweep $SC --grid breaker.open=5s,20s \
    --minimize cost_usdd -o "$T/bad"
contains "$ERR" "did you mean 'cost_usd'" "an unknown objective gets a did-you-mean"
"$FUSEBOX" sweep $SC --grid breaker.open=5s,20s --minimize cost_usd \
    --subject-to "success_rate>=0.9" --strict --no-charts -q -o "$T/strict"
contains "$(cat "$T/strict/sweep.json")" '"judged_on": "ci95"' "--strict judges on the interval"

LHS="--grid retry.backoff.exponential.base=log:50ms..2s --grid breaker.failure_rate=0.2..0.8 --sample 8 --seeds 2"
# shellcheck disable=SC2086
"$FUSEBOX" sweep $SC $LHS --jobs 2 -q -o "$T/lhs1" && "$FUSEBOX" sweep $SC $LHS --jobs 1 -q -o "$T/lhs2" &&
    same_outputs "$T/lhs1" "$T/lhs2"
ok $? "--sample writes the same bytes on every run"
distinct=$(cut -d, -f2 "$T/lhs1/sweep-points.csv" | sed 1d | sort -u | wc -l)
[ "$distinct" -eq 8 ]
ok $? "--sample 8 gives 8 distinct values of a range ($distinct)"

expect_exit 2 "more runs than the cap exits 2" "$FUSEBOX" sweep $SC \
    --grid breaker.open=1s,2s,3s,4s,5s,6s,7s,8s,9s,10s \
    --grid breaker.minimum_calls=1,2,3,4,5,6,7,8,9,10 \
    --grid breaker.window=10s,20s,30s,40s,50s,60s,70s,80s,90s,100s --seeds 101 -o "$T/cap"
contains "$ERR" "the cap is 100000 runs" "the cap error gives the cap"

expect_exit 2 "runs stopped by a cap make the sweep exit 2" "$FUSEBOX" sweep $SC \
    --grid breaker.open=5s,20s --set limits.in_flight=5 --no-charts -o "$T/capped"
contains "$ERR" "in-flight cap reached" "the first failed run's reason is shown"
[ "$(cut -d, -f4 "$T/capped/sweep.csv" | sed 1d | sort -u)" = "0" ]
ok $? "failed runs are written with complete=0"

# a knob with no effect: said so, and the runner-up that differs only in it is not "try more seeds"
# (5 seeds: with 4 or fewer, breaker.open's effect on the cost is within their noise; with
# random streams fusebox-2 it was 3 and 2)
NOEFF=$("$FUSEBOX" sweep tests/e2e/sweep-small.json --grid breaker.open=5s,20s \
    --grid providers.anthropic.capacity.concurrency=500,1000 --seeds 5 --minimize cost_usd \
    -o "$T/noeff" --no-charts 2>&1)
contains "$NOEFF" "providers.anthropic.capacity.concurrency has no effect in this scenario" \
    "a dimension that changes no result is said to have no effect"
ok $(echo "$NOEFF" | grep -q "breaker.open has no effect" && echo 1 || echo 0) \
    "a dimension that changes results is not said to have no effect"
contains "$NOEFF" "differs from the best only in settings that have no effect" \
    "the runner-up that differs only in it is the same, not 'try more seeds'"
ok $(echo "$NOEFF" | grep -q "try more --seeds" && echo 1 || echo 0) "no 'try more --seeds' then"
ok $(echo "$NOEFF" | grep -q "breaker.open has no measurable effect" && echo 1 || echo 0) \
    "... nor to have no measurable effect (its changes of cost are outside the seeds' noise)"
# a knob whose every change stays within the seeds' noise: no measurable effect, never "try more"
NOISE=$("$FUSEBOX" sweep tests/e2e/sweep-small.json --variant tuned \
    --grid breaker.half_open_probes=1,2,4 --seeds 5 --maximize success_rate -o "$T/noise" \
    --no-charts 2>&1)
contains "$NOISE" "breaker.half_open_probes has no measurable effect on success_rate in this scenario: each of its 3 changes, the other settings held, stayed within the 5 seeds' noise" \
    "a dimension whose every change is within the seeds' paired 95% CI: no measurable effect"
contains "$NOISE" "(the first point: no dimension has a measurable effect on success_rate" \
    "... and the best point is said to be the first of equals within the noise"
contains "$NOISE" "differs from the best only in settings with no measurable effect (above): pick either on other grounds" \
    "... and the runner-up that differs only in it is said to be as good within the noise"
ok $(echo "$NOISE" | grep -q "try more --seeds\|gives these results" && echo 1 || echo 0) \
    "... not 'try more --seeds', nor 'the same results'"
SAMPLE=$("$FUSEBOX" sweep tests/e2e/sweep-small.json --grid breaker.open=5s..20s \
    --grid providers.anthropic.capacity.concurrency=500..1000 --sample 4 --seeds 1 \
    --minimize cost_usd -o "$T/noeff-sample" --no-charts 2>&1)
ok $(echo "$SAMPLE" | grep -q "has no effect" && echo 1 || echo 0) "a sample makes no such claim"

# issue 22: LiteLLM's cooldown_time in a 429 storm whose every 429 carries Retry-After: 30 has no
# effect (the cooldown is the header's), and the answer names the library's rule
LL=$("$FUSEBOX" sweep scenarios/litellm-proxy.json --variant per-pod \
    --grid layers.proxy.cooldown_time=5,30,60,120,300 --seeds 2 --maximize success_rate \
    -o "$T/litellm" --no-charts 2>&1)
contains "$LL" "layers.proxy.cooldown_time has no effect in this scenario: each of its 5 values" \
    "LiteLLM's cooldown_time in a storm of 429s with Retry-After: no effect"
contains "$LL" "why: every error of openai carries a Retry-After in whole seconds" \
    "... because of what the scenario holds"
contains "$LL" "LiteLLM's rule (fusebox presets litellm): \"a cooldown lasts the deployment's litellm_params.cooldown_time, else the response's Retry-After" \
    "... and of the library's rule, quoted from the preset"
ok $(echo "$LL" | grep -q "try more --seeds" && echo 1 || echo 0) "... never 'try more --seeds'"
contains "$LL" "(the first point: every dimension has no effect, so any of their values gives these results)" \
    "... and the best point is said to be only the first of equals"
ok $(echo "$NOEFF" | grep -q "the first point: every dimension" && echo 1 || echo 0) \
    "not when another dimension has an effect"
NORA=$("$FUSEBOX" sweep scenarios/litellm-proxy.json --variant per-pod \
    --set 'providers.openai.faults=[{"at":"5m","for":"20m","rate_limit":{"fraction":0.9}}]' \
    --grid layers.proxy.cooldown_time=5,60 --seeds 1 --maximize success_rate -o "$T/litellm-nora" \
    --no-charts 2>&1)
ok $(echo "$NORA" | grep -q "has no effect\|why:" && echo 1 || echo 0) \
    "without Retry-After the cooldown is cooldown_time: it has an effect, and no rule is named"
LLS=$("$FUSEBOX" sweep scenarios/litellm-proxy.json --variant shared \
    --grid gateway.layers.proxy.cooldown_time=5..300 --sample 3 --seeds 1 --maximize success_rate \
    -o "$T/litellm-sample" --no-charts 2>&1)
contains "$LLS" "gateway.layers.proxy.cooldown_time has no effect in this scenario, by the library's rule below" \
    "a sample says it by the rule alone (a gateway tier's layer too)"
LLT=$("$FUSEBOX" tune scenarios/litellm-proxy.json --variant per-pod \
    --knob layers.proxy.cooldown_time=5,60,300 --maximize success_rate --seeds 1 --exhaustive \
    -o "$T/litellm-tune" 2>&1)
contains "$LLT" "why (scenarios/litellm-proxy.json): every error of openai carries a Retry-After" \
    "tune names the rule beside a knob with no effect"

# a provider's name of 63 characters (the most a name may have) in a per-provider metric: the
# metric's whole name is kept (it was cut to 64 bytes, and the sweep refused its own objective)
LONG=$(printf 'p%.0s' $(seq 1 63))
sed "s/\"anthropic\"/\"$LONG\"/g" scenarios/anthropic-529.json >"$T/long.json"
expect_exit 0 "a per-provider objective of a 63-character provider name" "$FUSEBOX" sweep \
    "$T/long.json" --grid retry.attempts=1,2 --minimize "errors[$LONG]" --seeds 1 -o "$T/long" -q
grep -q "errors\[$LONG\]" "$T/long/sweep.json"
ok $? "sweep.json names that metric whole"

finish
