#!/bin/sh
# export_policy.sh - `fusebox export-policy`: layers written back as the library's own
# configuration, read back by `fusebox import-policy` to the same layers (the libraries'
# example files of tests/fixtures/import/), a scenario's layer after --set, an imported
# layer's own keys over its file's, and the LiteLLM output loaded by `run --policy`.
# tests/unit/test_export.c runs the round trip for every preset parameter.
set -u
. tests/tap.sh
T=$E2E_TMP
FX=tests/fixtures/import

# same JSON A B: the layers A and B of two import-policy outputs are equal
# (import-policy prints {"layers": [{"name": N, ...}]}: a layer is looked up by its name)
same_layer() {
    python3 -c "import json,sys
L = lambda f: {l['name']: l for l in json.load(open(f))['layers']}
sys.exit(0 if L(sys.argv[1])[sys.argv[3]] == L(sys.argv[2])[sys.argv[3]] else 1)" "$@"
}

# round trip: import the fixture, export each layer, import again, compare
for pair in resilience4j:resilience4j-demo-http.yml litellm:litellm-fallbacks.yaml \
    litellm:litellm-load-balancing.yaml litellm:litellm-proxy-server-config.yaml \
    envoy:envoy-demo-resilience.yaml envoy:envoy-dynamic-cds-demo.yaml; do
    kind=${pair%%:*} file=${pair#*:}
    "$FUSEBOX" import-policy "$kind" "$FX/$file" -o "$T/$file.json" 2>/dev/null
    for layer in $(json "$T/$file.json" "' '.join(l['name'] for l in r['layers'])"); do
        expect_exit 0 "export-policy $kind writes $file's layer $layer" "$FUSEBOX" export-policy \
            "$kind" "$T/$file.json" --layer "$layer" -o "$T/$file.$layer.yaml"
        "$FUSEBOX" import-policy "$kind" "$T/$file.$layer.yaml" -o "$T/$file.$layer.json" 2>/dev/null
        same_layer "$T/$file.json" "$T/$file.$layer.json" "$layer"
        ok $? "... and import-policy reads it back to the same layer"
    done
done

# what is written: the library's keys and units, only the layer's keys
grep -q '^        waitDurationInOpenState: 5s$' "$T/resilience4j-demo-http.yml.backendB.yaml"
ok $? "resilience4j: the instance's duration as Spring writes it (5s)"
contains "$(cat "$T/envoy-demo-resilience.yaml.service_envoyproxy_io.yaml")" \
    "      base_ejection_time: 30s" "envoy: a proto duration as the file had it"
expect_exit 0 "export-policy reads one layer ({\"preset\": ...})" "$FUSEBOX" export-policy litellm \
    /dev/stdin <<'EOF'
{"preset": "litellm", "cooldown_time": 12, "num_retries": 0}
EOF
[ "$(printf '%s\n' "$OUT" | grep -v '^#')" = "router_settings:
  cooldown_time: 12
  num_retries: 0" ]
ok $? "... writing only its keys, under router_settings"

# a scenario's layer, after --set; the LiteLLM output loads back through run --policy
S=scenarios/litellm-cooldown.json
expect_exit 0 "export-policy litellm SCENARIO --layer tuned.litellm" "$FUSEBOX" export-policy \
    litellm "$S" --layer tuned.litellm -o "$T/tuned.yaml"
contains "$ERR" "model_list[].provider: written as the deployment's model_info.id" \
    "... noting where a deployment's provider went"
expect_exit 0 "run --policy litellm:EXPORTED loads it" "$FUSEBOX" run "$S" \
    --policy "litellm:$T/tuned.yaml" -o "$T/run" --no-charts
python3 -c "import json,sys; v=json.load(open(sys.argv[1]))['variants']; \
sys.exit(0 if v['tuned'] == v['litellm'] else 1)" "$T/run/report.json"
ok $? "... and the imported variant runs exactly as the scenario's layer (report.json, same seed)"
expect_exit 0 "--set is applied before the export" "$FUSEBOX" export-policy litellm "$S" \
    --layer tuned.litellm --set variants.tuned.layers.litellm.cooldown_time=45
contains "$OUT" "  cooldown_time: 45" "... the overridden value is written"

# a layer of a variant's gateway tier ("gateway": {"layers": [...]}) is found by the same address
expect_exit 0 "export-policy of a gateway tier's layer" "$FUSEBOX" export-policy litellm \
    scenarios/litellm-proxy.json --layer shared.proxy
contains "$OUT" "redis_host" "... with its keys (the replicas' Redis)"
expect_exit 2 "an unknown layer lists the tier's layers too" "$FUSEBOX" export-policy litellm \
    scenarios/litellm-proxy.json --layer shared.nope
contains "$ERR" "shared.sdk shared.proxy" "... after the pods' layers"

# an imported layer: the file's keys with the layer's own on top (as the loader reads it)
python3 -c "import json,sys; s=json.load(open('scenarios/retry-storm.json')); \
s['variants']['proxied']={'inherit_policy': False, 'layers': [{'name': 'proxy', \
'import': 'litellm', 'file': sys.argv[1], 'cooldown_time': 5}]}; \
json.dump(s, open(sys.argv[2], 'w'), indent=1)" "$(pwd)/$FX/litellm-fallbacks.yaml" "$T/imported.json"
ok $? "(a scenario with a layer that imports LiteLLM's fallbacks example)"
expect_exit 0 "export-policy of a layer that imports a file" "$FUSEBOX" export-policy litellm \
    "$T/imported.json" --layer proxied.proxy --set variants.proxied.layers.proxy.num_retries=4
contains "$OUT" "  cooldown_time: 5" "... the layer's own key overrides the file's"
contains "$OUT" "  num_retries: 4" "... and --set reaches it by the library's key"
contains "$OUT" "        - anthropic-claude" "... the file's own fallbacks kept"

# the file and its export run alike (run --policy, same seed: the variants' figures equal)
"$FUSEBOX" export-policy litellm "$T/litellm-fallbacks.yaml.json" -o "$T/lfb.yaml" 2>/dev/null
"$FUSEBOX" export-policy envoy "$T/envoy-demo-resilience.yaml.json" -o "$T/envoy.yaml" 2>/dev/null
expect_exit 0 "run --policy FILE and --policy EXPORTED, LiteLLM and Envoy" "$FUSEBOX" run \
    scenarios/retry-storm.json --variant l1 --variant l2 --variant e1 --variant e2 \
    -o "$T/both" --no-charts \
    --policy "l1=litellm:$FX/litellm-fallbacks.yaml" --policy "l2=litellm:$T/lfb.yaml" \
    --policy "e1=envoy:$FX/envoy-demo-resilience.yaml" --policy "e2=envoy:$T/envoy.yaml"
python3 -c "import json,sys; v=json.load(open(sys.argv[1]))['variants']; \
[l.pop('name') for x in v.values() for l in x['layers']]; \
sys.exit(0 if v['l1'] == v['l2'] and v['e1'] == v['e2'] and v['l1'] != v['e1'] else 1)" \
    "$T/both/report.json"
ok $? "... the exported config runs exactly as the original (report.json, layer names aside)"

# resilience4j and Envoy from a scenario; --name
expect_exit 0 "export-policy resilience4j of library-defaults' layer, --name" "$FUSEBOX" \
    export-policy resilience4j scenarios/library-defaults.json --layer resilience4j.resilience4j \
    --set 'variants.resilience4j.layers.resilience4j.waitDurationInOpenState=PT20S' --name payments
contains "$OUT" "      payments:
        waitDurationInOpenState: PT20S" "... under the instance --name gives, the value as given"

# --into: the values written into the user's own file, nothing else changed
cp "$FX/resilience4j-demo-http.yml" "$T/app.yml"
expect_exit 0 "--into application.yml" "$FUSEBOX" export-policy resilience4j \
    scenarios/library-defaults.json --layer resilience4j.resilience4j --name backendB \
    --set variants.resilience4j.layers.resilience4j.minimumNumberOfCalls=7 \
    --set variants.resilience4j.layers.resilience4j.maxAttempts=5 --into "$T/app.yml"
[ "$(diff "$FX/resilience4j-demo-http.yml" "$T/app.yml" | grep -c '^[<>]')" -eq 3 ]
ok $? "... changes one line and adds one, the rest of the file as it was"
"$FUSEBOX" import-policy resilience4j "$T/app.yml" -o "$T/app.json" 2>/dev/null
[ "$(python3 -c "import json,sys; L={l['name']: l for l in json.load(open(sys.argv[1]))['layers']}; print(L['backendB']['minimumNumberOfCalls'], L['backendB']['maxAttempts'], L['backendA']['maxAttempts'])" "$T/app.json")" = "7 5 3" ]
ok $? "... and import-policy reads the new values on that instance only"
cp "$FX/litellm-fallbacks.yaml" "$T/cfg.yaml"
expect_exit 0 "--into config.yaml with -o" "$FUSEBOX" export-policy litellm "$S" \
    --layer tuned.litellm --into "$T/cfg.yaml" -o "$T/cfg-tuned.yaml"
cmp -s "$FX/litellm-fallbacks.yaml" "$T/cfg.yaml"
ok $? "... leaves the file as it was"
contains "$ERR" "model_list: not written into the file" "... and says the deployments are not rewritten"
grep -q "id: my-specific-model-id # 👈 KEY CHANGE" "$T/cfg-tuned.yaml" && grep -q "^  cooldown_time: 30$" "$T/cfg-tuned.yaml"
ok $? "... OUT keeps the file's comments and has the layer's router_settings"
# a Router argument the file sets as a litellm module global is written where it takes effect
printf '%s\n' 'model_list:' '  - model_name: gpt-4o' '    litellm_params:' \
    '      model: openai/gpt-4o' 'litellm_settings:' '  num_retries: 5' \
    '  fallbacks: [{"gpt-4o": ["claude"]}]' 'router_settings:' '  cooldown_time: 60' >"$T/mod.yaml"
echo '{"preset": "litellm", "num_retries": 2, "fallbacks": [{"gpt-4o": ["claude-3"]}], "cooldown_time": 30}' >"$T/mod.json"
expect_exit 0 "--into a config whose litellm_settings sets num_retries and fallbacks" \
    "$FUSEBOX" export-policy litellm "$T/mod.json" --into "$T/mod.yaml"
"$FUSEBOX" import-policy litellm "$T/mod.yaml" -o "$T/mod-back.json" 2>"$T/mod-notes.txt"
[ "$(python3 -c "import json,sys; L=json.load(open(sys.argv[1]))['layers'][0]; print(L['num_retries'], L['fallbacks'][0]['gpt-4o'][0], L['cooldown_time'])" "$T/mod-back.json")" = "2 claude-3 30" ] &&
    ! grep -q superseded "$T/mod-notes.txt" && [ "$(grep -c 'num_retries' "$T/mod.yaml")" -eq 1 ]
ok $? "... the values the proxy runs with are the layer's (litellm_settings wins num_retries), written once"
contains "$ERR" "litellm_settings.num_retries: written here, where the file sets it" "... and says so"
expect_exit 2 "--into an Envoy file exits 2" "$FUSEBOX" export-policy envoy \
    "$T/envoy-demo-resilience.yaml.json" --into "$FX/envoy-demo-resilience.yaml" -o "$T/x.yaml"
contains "$ERR" "paste" "... saying to paste the block"

# bad input: exit 2, named
expect_exit 2 "a scenario without --layer exits 2" "$FUSEBOX" export-policy litellm "$S"
contains "$ERR" "the scenario's layers: as-written.litellm unset.litellm tuned.litellm" \
    "... listing the layers"
expect_exit 2 "no such layer exits 2" "$FUSEBOX" export-policy litellm "$S" --layer tuned.nope
contains "$ERR" "has no layer tuned.nope" "... naming it"
expect_exit 2 "a layer of another preset exits 2" "$FUSEBOX" export-policy envoy "$S" \
    --layer tuned.litellm
contains "$ERR" "not of the preset envoy" "... saying so"
expect_exit 2 "a bad --set exits 2" "$FUSEBOX" export-policy litellm "$S" --layer tuned.litellm \
    --set variants.tuned.layers.litellm.cooldown_tim=3
contains "$ERR" "cooldown_tim" "... naming the key"
expect_exit 2 "an unknown kind exits 2" "$FUSEBOX" export-policy hystrix "$S"
expect_exit 2 "--set on layers (not a scenario) exits 2" "$FUSEBOX" export-policy litellm \
    "$T/litellm-fallbacks.yaml.json" --set x=1
expect_exit 0 "export-policy --help" "$FUSEBOX" export-policy --help
contains "$OUT" "--layer ADDR" "... describes --layer"

finish
