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
contains "$ERR" "variants.v.layers[0].timeout: openai-python: timeout is a number" "... saying what the library takes"
# the SDK family: the library's camelCase key, and its unit (milliseconds in Node)
sed 's/"preset": "openai-python"/"preset": "langchain-js", "max_retries": 2/' "$T/openai-python.json" >"$T/bad-js.json"
expect_exit 2 "langchain-js: a snake_case key exits 2" "$FUSEBOX" validate "$T/bad-js.json"
contains "$ERR" "variants.v.layers[0].max_retries: langchain-js (@langchain/core (npm) 1.2.5" "... naming the path, the preset and its version"
contains "$ERR" "(did you mean 'maxRetries'?)" "... suggesting the library's camelCase key"
sed 's/"preset": "openai-python"/"preset": "openai-node", "timeout": "30s"/' "$T/openai-python.json" >"$T/bad-node.json"
expect_exit 2 "openai-node: a timeout that is not a number exits 2" "$FUSEBOX" validate "$T/bad-node.json"
contains "$ERR" "variants.v.layers[0].timeout: openai-node: timeout is a number" "... in the library's unit"
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
expect_exit 2 "fusebox presets NAME for an unknown name exits 2" "$FUSEBOX" presets nope
# a fraction where the library means a percentage: a warning, an error with --strict
sed 's/"preset": "opossum"/"preset": "opossum", "errorThresholdPercentage": 0.5/' "$T/opossum.json" >"$T/frac.json"
expect_exit 0 "opossum's errorThresholdPercentage 0.5 runs" "$FUSEBOX" run "$T/frac.json" -o "$T/out-frac" --no-charts -q
contains "$ERR" "warning: variants.v.layers[0].errorThresholdPercentage: opossum's errorThresholdPercentage is a percentage: 0.5 means half a percent; did you mean 50?" "... with a warning"
expect_exit 2 "... and exits 2 with --strict" "$FUSEBOX" run "$T/frac.json" -o "$T/out-frac2" --no-charts -q --strict
contains "$ERR" "did you mean 50? (an error with --strict)" "... saying why"
[ ! -e "$T/out-frac2/report.json" ]
ok $? "... writing no report"
finish
