#!/bin/sh
# presets.sh - `fusebox presets`, docs/presets.md, and preset layers in scenarios.
#
# docs/presets.md is the command's own output below its marker; every preset
# loads with its defaults; bad names, keys and values exit 2 naming the path,
# the library's key and a did-you-mean.
set -u
. tests/tap.sh
T=$E2E_TMP

expect_exit 0 "fusebox presets lists the catalog" "$FUSEBOX" presets
names=$(printf '%s\n' "$OUT" | awk '/^[^ ]/ {print $1}')
[ -n "$names" ]
ok $? "the catalog is not empty"
"$FUSEBOX" presets --markdown >"$T/md"
sed -n '/^<!-- generated: fusebox presets --markdown -->$/,$p' docs/presets.md | tail -n +2 >"$T/doc"
cmp -s "$T/md" "$T/doc"
ok $? "docs/presets.md is the output of fusebox presets --markdown (regenerate it if not)"

# every preset, with its defaults only, in a one-layer variant
for p in $names; do
    cat >"$T/$p.json" <<JSON
{"name": "p", "duration": "5s",
 "traffic": [{"class": "chat", "arrivals": {"constant": "2/s"}, "prompt_tokens": 10, "completion_tokens": 5}],
 "providers": [{"name": "a", "latency": {"ttft": "10ms"}}],
 "variants": {"v": {"layers": [{"name": "x", "preset": "$p"}]}}}
JSON
    expect_exit 0 "preset $p loads with its defaults and runs" "$FUSEBOX" run "$T/$p.json" -o "$T/out-$p" --no-charts -q
    expect_exit 0 "fusebox presets $p prints its parameters, rules and what it does not model" "$FUSEBOX" presets "$p"
    contains "$OUT" "not modelled:" "fusebox presets $p: its limits are stated"
done

sed 's/"preset": "openai-python"/"preset": "openai-pyton"/' "$T/openai-python.json" >"$T/bad1.json"
expect_exit 2 "an unknown preset exits 2" "$FUSEBOX" validate "$T/bad1.json"
contains "$ERR" "variants.v.layers[0].preset: no preset named 'openai-pyton' (did you mean 'openai-python'?" "... naming the path, with a did-you-mean"
sed 's/"preset": "openai-python"/"preset": "openai-python", "max_retry": 2/' "$T/openai-python.json" >"$T/bad2.json"
expect_exit 2 "an unknown parameter exits 2" "$FUSEBOX" validate "$T/bad2.json"
contains "$ERR" "variants.v.layers[0].max_retry: openai-python" "... naming the path and the preset"
contains "$ERR" "(did you mean 'max_retries'?)" "... with the library's key as the suggestion"
sed 's/"preset": "openai-python"/"preset": "openai-python", "timeout": "30s"/' "$T/openai-python.json" >"$T/bad3.json"
expect_exit 2 "a value in the wrong unit exits 2" "$FUSEBOX" validate "$T/bad3.json"
contains "$ERR" "variants.v.layers[0].timeout: openai-python: timeout is a number of seconds (a number, not a string), got \"30s\" (did you mean 30?)" "... saying what the library takes, in its unit, with the number meant"
# the SDK family: the library's camelCase key, and its unit (milliseconds in Node)
sed 's/"preset": "openai-python"/"preset": "langchain-js", "max_retries": 2/' "$T/openai-python.json" >"$T/bad-js.json"
expect_exit 2 "langchain-js: a snake_case key exits 2" "$FUSEBOX" validate "$T/bad-js.json"
contains "$ERR" "variants.v.layers[0].max_retries: langchain-js (@langchain/core (npm) 1.2.5" "... naming the path, the preset and its version"
contains "$ERR" "(did you mean 'maxRetries'?)" "... suggesting the library's camelCase key"
sed 's/"preset": "openai-python"/"preset": "openai-node", "timeout": "30s"/' "$T/openai-python.json" >"$T/bad-node.json"
expect_exit 2 "openai-node: a timeout that is not a number exits 2" "$FUSEBOX" validate "$T/bad-node.json"
contains "$ERR" "variants.v.layers[0].timeout: openai-node: timeout is a number of milliseconds (a number, not a string), got \"30s\" (did you mean 30000?)" "... in the library's unit: milliseconds, with the number meant"
sed 's/"preset": "openai-python"/"preset": "langchain-python-retry", "exponential_jitter_params": {"intial": 2}/' "$T/openai-python.json" >"$T/bad-lc.json"
expect_exit 2 "langchain-python-retry: a bad ExponentialJitterParams key exits 2" "$FUSEBOX" validate "$T/bad-lc.json"
contains "$ERR" "exponential_jitter_params has no 'intial' (did you mean 'initial'?)" "... with a did-you-mean"
sed 's/"preset": "resilience4j"/"preset": "resilience4j", "waitDurationInOpenState": "60s", "failureRateTreshold": 40/' \
    "$T/resilience4j.json" >"$T/bad4.json"
expect_exit 2 "a misspelt Spring Boot property exits 2" "$FUSEBOX" validate "$T/bad4.json"
contains "$ERR" "variants.v.layers[0].failureRateTreshold: resilience4j" "... naming the path and the preset"
contains "$ERR" "(did you mean 'failureRateThreshold'?)" "... suggesting resilience4j's own key"
sed 's/"preset": "polly"/"preset": "polly", "BreakDuration": "30s"/' "$T/polly.json" >"$T/bad5.json"
expect_exit 2 "a Polly TimeSpan written as a Spring duration exits 2" "$FUSEBOX" validate "$T/bad5.json"
contains "$ERR" "variants.v.layers[0].BreakDuration: polly: BreakDuration is a TimeSpan" "... saying what Polly takes"
# a gateway preset: a nested key of the library's, and a provider its config names
sed 's/"preset": "openai-python"/"preset": "envoy", "outlier_detection": {"consecutive5xx": 3}/' "$T/openai-python.json" >"$T/bad4.json"
expect_exit 2 "a bad nested gateway key exits 2" "$FUSEBOX" validate "$T/bad4.json"
contains "$ERR" "variants.v.layers[0].outlier_detection.consecutive5xx: envoy" "... naming the nested path and the preset"
contains "$ERR" "has no parameter 'outlier_detection.consecutive5xx' (did you mean 'consecutive_5xx'?)" "... with Envoy's field name as the suggestion"
sed 's/"preset": "openai-python"/"preset": "litellm", "model_list": [{"model_name": "gpt-4o", "provider": "b"}]/' "$T/openai-python.json" >"$T/bad5.json"
expect_exit 2 "a LiteLLM deployment naming no provider exits 2" "$FUSEBOX" validate "$T/bad5.json"
contains "$ERR" "variants.v.layers[0]: litellm: model_list[0]: no provider named 'b' in the scenario (did you mean 'a'?)" "... naming the entry and the providers"
# LiteLLM, one deployment per model group (gpt-4o -> openai, claude-sonnet -> anthropic) in an
# OpenAI 429 storm with Retry-After 30 s from 30 s on. docs/presets.md's rule: a 429 cools at once
# only in a group of several; a group of one cools at 100% failures of >= 1000 counted requests,
# and the successes' count expires 60 s after its first increment (the pod's first success, at
# 0.2 s): so at the first failure after 60.2 s (>= 1000 failures by then: 50 requests/s a pod),
# for the Retry-After, 30 s. A second deployment in the unrelated claude-sonnet group changes
# nothing (the "429 at once" rule was once for every provider when no group had several).
ll_variant() {
    printf '"%s": {"layers": [{"name": "litellm", "preset": "litellm", "num_retries": 2,
      "fallbacks": [{"gpt-4o": ["claude-sonnet"]}], "model_list": [
      {"model_name": "gpt-4o", "provider": "openai", "litellm_params": {"model": "gpt-4o"}},
      {"model_name": "claude-sonnet", "provider": "anthropic", "litellm_params": {"model": "anthropic/claude-sonnet-4-5"}}%s]}]}' \
        "$1" "$2"
}
cat >"$T/ll-storm.json" <<JSON
{"name": "ll-storm", "seed": 1, "duration": "100s",
 "traffic": [{"class": "chat", "arrivals": {"constant": "100/s"}, "prompt_tokens": 100, "completion_tokens": 10}],
 "pods": {"count": 2, "workers": 4096, "queue": 64, "request_timeout": "120s"},
 "providers": [
  {"name": "openai", "latency": {"ttft": "200ms"},
   "faults": [{"at": "30s", "for": "20m", "rate_limit": {"fraction": 1.0, "retry_after": "30s"}}]},
  {"name": "anthropic", "latency": {"ttft": "200ms"}},
  {"name": "bedrock", "latency": {"ttft": "200ms"}}],
 "variants": {$(ll_variant alone ''),
  $(ll_variant claude-two ', {"model_name": "claude-sonnet", "provider": "bedrock", "litellm_params": {"model": "bedrock/claude-sonnet"}}')}}
JSON
expect_exit 0 "litellm: the one-deployment-per-group 429 storm runs" "$FUSEBOX" run "$T/ll-storm.json" -o "$T/ll-storm" --no-charts -q
first_cool() {
    grep '"type":"breaker"' "$T/ll-storm/events.jsonl" | grep "\"variant\":\"$1\",\"provider\":\"openai\"" |
        grep '"to":"open"' | head -1 | sed 's/.*"t_s":\([0-9.]*\).*"cause":"\([a-z_]*\)".*"open_until_s":\([0-9.]*\).*/\1 \2 \3/'
}
a=$(first_cool alone)
b=$(first_cool claude-two)
check "litellm: openai's first cooldown is the same with or without claude-sonnet's second deployment ($a / $b)" test -n "$a" -a "$a" = "$b"
set -- $a
check "litellm: a group of one is not cooled at its first 429 (cause ${2:-none}, not immediate)" test "${2:-}" = failure_rate
check "litellm: ... but at the first failure after the successes' count expired (60.2 s < ${1:-none} <= 61 s)" \
    awk -v t="${1:-0}" 'BEGIN { exit !(t > 60.2 && t <= 61) }'
check "litellm: ... for the Retry-After, 30 s (open until ${3:-none})" \
    awk -v t="${1:-0}" -v u="${3:-0}" 'BEGIN { d = u - t; exit !(d > 29.999 && d < 30.001) }'
grep '"variant":"alone","provider":"openai","type":"breaker"' "$T/ll-storm/events.jsonl" | head -1 >"$T/ll-first"
contains "$(cat "$T/ll-first")" '"litellm":"LiteLLM cools openai for 30.0s (the error'"'"'s Retry-After): every one of at least 1000 requests it counted in a minute failed"' \
    "litellm: events.jsonl tells the cooldown in LiteLLM's words"
grep -q '"cause":"immediate"' "$T/ll-storm/events.jsonl"
ok $((!$?)) "litellm: no cooldown at once in either variant"
# The report in the library's words (docs/presets.md, "What the report says of a preset layer"):
# every breaker preset, in a short outage, with settings other than its defaults. Its settings in
# effect (report.json, report.html) name the library's parameters with those values; its
# transitions in events.jsonl carry the library's state names and name the parameter that
# governs them; and nothing says a half-open state where the library has none.
python3 - "$T/vocab.json" <<'PY'
import json, sys
layers = {
    "resilience4j": {"waitDurationInOpenState": "20s", "slidingWindowSize": 20, "minimumNumberOfCalls": 10,
                     "permittedNumberOfCallsInHalfOpenState": 3},
    "polly": {"BreakDuration": "00:00:07", "MinimumThroughput": 10, "FailureRatio": 0.3},
    "gobreaker": {"Timeout": "15s", "ReadyToTrip": {"ConsecutiveFailures": 3}},
    "pybreaker": {"fail_max": 4, "reset_timeout": 12},
    "opossum": {"resetTimeout": 9000, "errorThresholdPercentage": 40},
    "cockatiel": {"halfOpenAfter": 11000, "consecutive": 3, "maxAttempts": 1},
    "envoy": {"outlier_detection": {"consecutive_5xx": 3, "base_ejection_time": "13s"}},
}
s = {"name": "vocab", "seed": 3, "duration": "3m",
     "traffic": [{"class": "c", "arrivals": {"constant": "5/s"}, "prompt_tokens": 10, "completion_tokens": 10}],
     "pods": {"count": 1, "workers": 64, "queue": 64, "request_timeout": "60s"},
     "providers": [{"name": "api", "latency": {"ttft": "100ms"},
                    "faults": [{"at": "20s", "for": "90s", "outage": {"status": 503}}]}],
     "variants": {k: {"layers": [dict(name="lib", preset=k, **v)]} for k, v in layers.items()}}
json.dump(s, open(sys.argv[1], "w"))
PY
expect_exit 0 "vocab: every breaker preset in an outage runs" "$FUSEBOX" run "$T/vocab.json" -o "$T/vocab" -q
# preset: the settings' words, the library's open and recovered states, the words of its open period
while read -r v settings opened back period; do
    settings=$(printf %s "$settings" | sed 's/~/ /g')
    period=$(printf %s "$period" | sed 's/~/ /g')
    lib=$(json "$T/vocab/report.json" "r['variants']['$v']['layers'][0]['library']['breakers']['api']")
    contains "$lib" "$settings" "vocab: $v's settings in effect say '$settings' (report.json)"
    grep -q -F "$(printf %s "$settings" | sed 's/>/\&gt;/g')" "$T/vocab/report.html"
    ok $? "vocab: ... and report.html says it too (escaped)"
    ev=$(grep "\"variant\":\"$v\"" "$T/vocab/events.jsonl" | grep '"type":"breaker"')
    contains "$ev" "\"library_to\":\"$opened\"" "vocab: $v's opening says its state $opened (events.jsonl)"
    contains "$ev" "\"library_from\":\"$opened\",\"library_to\":\"$back\"" "vocab: ... and its end $opened -> $back"
    contains "$ev" "$opened -> $back after $period" "vocab: ... after $period"
done <<'CASES'
resilience4j waitDurationInOpenState~20s OPEN HALF_OPEN waitDurationInOpenState~20s
polly BreakDuration~00:00:07 Open HalfOpen BreakDuration~00:00:07
gobreaker ReadyToTrip.ConsecutiveFailures~>~3 StateOpen StateHalfOpen Timeout~15s
pybreaker fail_max~4,~reset_timeout~12~s open half-open reset_timeout~12~s
opossum errorThresholdPercentage~40% open halfOpen resetTimeout~9000~ms
cockatiel consecutive~3,~halfOpenAfter~11000~ms CircuitState.Open CircuitState.HalfOpen halfOpenAfter~11000~ms
envoy outlier_detection.consecutive_5xx~3,~outlier_detection.base_ejection_time~13s ejected healthy outlier_detection.base_ejection_time~13s
CASES
grep '"variant":"envoy"' "$T/vocab/events.jsonl" | grep -q '"library_to":"half_open"'
ok $((!$?)) "vocab: Envoy's ejection has no half-open state in events.jsonl"
grep -q 'half-open probe' "$T/vocab/report.html"
ok $((!$?)) "vocab: report.html says no fusebox 'half-open probe' of a preset's breaker"
# LiteLLM: cooling down and healthy, never a half-open; its settings say its cooldown
contains "$(cat "$T/ll-first")" '"library_from":"healthy","library_to":"cooling down"' \
    "litellm: events.jsonl's library states are LiteLLM's (healthy -> cooling down)"
grep '"type":"breaker"' "$T/ll-storm/events.jsonl" | grep -v -q '"library_to":"\(cooling down\|healthy\)"'
ok $((!$?)) "litellm: no transition to any other library state (no half-open)"
contains "$(json "$T/ll-storm/report.json" "r['variants']['alone']['layers'][0]['library']['breakers']['openai']")" \
    "ends by itself (no half-open)" "litellm: report.json's settings say the cooldown ends by itself"
expect_exit 2 "fusebox presets NAME for an unknown name exits 2" "$FUSEBOX" presets nope

# resilience4j's scheduled transitions happen at their due time in a run: OPEN -> HALF_OPEN at
# waitDurationInOpenState (automaticTransitionFromOpenToHalfOpenEnabled), HALF_OPEN -> OPEN at
# maxWaitDurationInHalfOpenState after entering it, whether or not a call comes then
python3 - scenarios/library-defaults.json "$T/r4j-timers.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
s.pop("expect", None)
s["variants"] = {"r4j": {"layers": [{"name": "r", "preset": "resilience4j",
    "automaticTransitionFromOpenToHalfOpenEnabled": True, "maxWaitDurationInHalfOpenState": "7s",
    "slidingWindowSize": 20, "minimumNumberOfCalls": 10}]}}
json.dump(s, open(sys.argv[2], "w"))
PY
expect_exit 0 "resilience4j with the automatic transition and a half-open limit runs" "$FUSEBOX" run \
    "$T/r4j-timers.json" -q --no-charts -o "$T/r4j-timers"
python3 - "$T/r4j-timers/events.jsonl" <<'PY'
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1]) if '"breaker"' in l]
open_until, entered, n_open, n_max = {}, {}, 0, 0
for e in ev:
    pod = e["pod"]
    if e["from"] == "open" and e["to"] == "half_open":
        assert abs(e["t_s"] - open_until[pod]) < 1e-9, e
        n_open += 1
    if e["from"] == "half_open" and e["cause"] == "half_open_max_wait":
        assert abs(e["t_s"] - (entered[pod] + 7)) < 1e-6, e
        n_max += 1
    if e["to"] == "open":
        open_until[pod] = e["open_until_s"]
    if e["to"] == "half_open":
        entered[pod] = e["t_s"]
assert n_open > 0 and n_max > 0, (n_open, n_max)
t = [json.loads(l)["t_s"] for l in open(sys.argv[1])]
assert all(a <= b for a, b in zip(t, t[1:])), "events out of time order"
PY
ok $? "every OPEN -> HALF_OPEN at its open_until, every half-open expiry 7 s after entry, each logged when it happens (in time order)"

# a fraction where the library means a percentage: a warning, an error with --strict
sed 's/"preset": "opossum"/"preset": "opossum", "errorThresholdPercentage": 0.5/' "$T/opossum.json" >"$T/frac.json"
expect_exit 0 "opossum's errorThresholdPercentage 0.5 runs" "$FUSEBOX" run "$T/frac.json" -o "$T/out-frac" --no-charts -q
contains "$ERR" "warning: variants.v.layers[0].errorThresholdPercentage: opossum's errorThresholdPercentage is a percentage: 0.5 means half a percent; did you mean 50?" "... with a warning"
expect_exit 2 "... and exits 2 with --strict" "$FUSEBOX" run "$T/frac.json" -o "$T/out-frac2" --no-charts -q --strict
contains "$ERR" "did you mean 50? (an error with --strict)" "... saying why"
[ ! -e "$T/out-frac2/report.json" ]
ok $? "... writing no report"
finish
