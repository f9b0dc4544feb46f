#!/bin/sh
# import_policy.sh - `fusebox import-policy`, layers that name a file, and
# `fusebox run --policy`, on the configuration the libraries' own examples
# ship (tests/fixtures/import/, each citing where it comes from).
set -u
. tests/tap.sh
T=$E2E_TMP
FX=tests/fixtures/import
R4J=$FX/resilience4j-demo.yml
LPROXY=$FX/litellm-proxy-server-config.yaml
LLB=$FX/litellm-load-balancing.yaml
LREL=$FX/litellm-reliability.yaml
LFB=$FX/litellm-fallbacks.yaml
EDEMO=$FX/envoy-demo-resilience.yaml
ECDS=$FX/envoy-dynamic-cds-demo.yaml

# the Spring Boot demo's application.yml: two instances, configs inherited
expect_exit 0 "import-policy reads resilience4j's Spring Boot demo" "$FUSEBOX" import-policy \
    resilience4j "$R4J" -o "$T/r4j.json"
[ "$(json "$T/r4j.json" "' '.join(sorted(r['layers']))")" = "backendA backendB" ]
ok $? "one layer per instance"
[ "$(json "$T/r4j.json" "r['layers']['backendA']['failureRateThreshold'], r['layers']['backendA']['waitDurationInOpenState'], r['layers']['backendA']['maxAttempts']")" = "50 5s 3" ]
ok $? "backendA takes configs.default (baseConfig: default) in resilience4j's own keys"
[ "$(json "$T/r4j.json" "r['layers']['backendB']['minimumNumberOfCalls'], r['layers']['backendB']['automaticTransitionFromOpenToHalfOpenEnabled']")" = "10 True" ]
ok $? "backendB's own minimumNumberOfCalls wins over the default config it inherits"
contains "$ERR" "resilience4j-demo.yml:57:1: resilience4j.bulkhead: not modelled" \
    "a section fusebox does not read is named with its line and column"
contains "$ERR" "resilience4j.circuitbreaker.instances.backendB.recordFailurePredicate: not modelled" \
    "a key the preset does not model is named"
[ "$(printf '%s\n' "$ERR" | grep -c 'configs.default.recordExceptions')" -eq 1 ]
ok $? "a config two instances inherit is noted once"

# bad input: exit 2 with the place
printf 'resilience4j:\n  circuitbreaker:\n    instances: [a, {b\n' >"$T/broken.yml"
expect_exit 2 "broken YAML exits 2" "$FUSEBOX" import-policy resilience4j "$T/broken.yml"
contains "$ERR" "broken.yml:" "... naming the file"
case "$ERR" in *broken.yml:[0-9]*:[0-9]*) ok 0 "... with a line and column" ;; *) ok 1 "... with a line and column" ;; esac
printf 'spring:\n  application:\n    name: x\n' >"$T/none.yml"
expect_exit 2 "a file without resilience4j sections exits 2" "$FUSEBOX" import-policy \
    resilience4j "$T/none.yml"
contains "$ERR" "no resilience4j.circuitbreaker or resilience4j.retry section" "... saying what is missing"
expect_exit 2 "an unknown kind exits 2" "$FUSEBOX" import-policy hystrix "$R4J"
contains "$ERR" "(one of: resilience4j, litellm, envoy)" "... listing the kinds"
expect_exit 0 "import-policy --help lists the kinds" "$FUSEBOX" import-policy --help
contains "$OUT" "  litellm       a LiteLLM proxy config.yaml" "... litellm"
contains "$OUT" "  envoy         an Envoy bootstrap" "... envoy"

# ---- LiteLLM ----------------------------------------------------------------

# the repository's proxy_server_config.yaml: litellm_settings only, secrets, many keys
expect_exit 0 "import-policy reads LiteLLM's proxy_server_config.yaml" "$FUSEBOX" import-policy \
    litellm "$LPROXY" -o "$T/lproxy.json"
L="r['layers']['litellm']"
[ "$(json "$T/lproxy.json" "' '.join(r['layers'])")" = "litellm" ]
ok $? "one layer, named litellm"
[ "$(json "$T/lproxy.json" "$L['num_retries'], $L['timeout'], $L['context_window_fallbacks'], $L['routing_strategy']")" = "5 600 [{'gpt-3.5-turbo': ['gpt-3.5-turbo-large']}] usage-based-routing-v2" ]
ok $? "num_retries and request_timeout from litellm_settings; routing_strategy from router_settings"
[ "$(json "$T/lproxy.json" "len($L['model_list']), $L['model_list'][1], $L['model_list'][3]['litellm_params']")" = "19 {'model_name': 'gpt-3.5-turbo-end-user-test', 'litellm_params': {'model': 'azure/chatgpt-v-2'}} {'model': 'gpt-3.5-turbo-1106', 'rpm': 480}" ]
ok $? "every deployment, with its routing keys only (model, rpm)"
[ "$(json "$T/lproxy.json" "$L['model_list'][0]['model_info'], $L['redis_host'], $L['redis_password'], 'redis_port' in $L")" = "{'id': '1'} os.environ/REDIS_HOST <secret: not copied> False" ]
ok $? "model_info.id kept; redis_password replaced by a placeholder; redis_port from the environment left out"
contains "$ERR" "litellm-proxy-server-config.yaml:15:7: model_list[1].litellm_params.api_key: not modelled (a credential: its value is not copied)" \
    "a deployment's api_key is named with its line and column"
contains "$ERR" "model_list[3].litellm_params.timeout: not modelled" "a deployment's own timeout is named"
contains "$ERR" "router_settings.redis_port: read from the environment when LiteLLM starts" \
    "an os.environ/ value is not guessed"
contains "$ERR" "router_settings.model_group_alias: not modelled" "a Router setting the preset lacks is named"
contains "$ERR" "litellm_settings.default_team_settings: not modelled" "a module setting is named"
contains "$ERR" "general_settings: proxy server settings: not modelled" "the proxy's own settings are named as one section"
cat "$T/lproxy.json" >"$T/lproxy.all"
printf '%s\n' "$ERR" >>"$T/lproxy.all"
for secret in sk-1234 fake-key my-fake-key os.environ/REDIS_PASSWORD LANGFUSE_PROJECT1_SECRET; do
    ! grep -q -- "$secret" "$T/lproxy.all"
    ok $? "no secret in the output or the notes: $secret"
done

# the docs' load-balancing config: router_settings over litellm_settings, as Router.__init__
expect_exit 0 "import-policy reads the docs' load-balancing config" "$FUSEBOX" import-policy \
    litellm "$LLB" -o "$T/llb.json"
[ "$(json "$T/llb.json" "$L['num_retries'], $L['timeout'], $L['fallbacks'], $L['redis_port'], $L['redis_password']")" = "2 30 [{'zephyr-beta': ['gpt-4o']}] 1992 <secret: not copied>" ]
ok $? "router_settings' num_retries and timeout win; litellm_settings' fallbacks fill in"
contains "$ERR" "litellm-load-balancing.yaml:33:3: litellm_settings.num_retries: superseded by router_settings.num_retries at line 42" \
    "the superseded value is named, with the one that wins"
contains "$ERR" "litellm_settings.request_timeout: superseded by router_settings.timeout at line 43 (Router: timeout or litellm.request_timeout)" \
    "... and the rule"
! grep -q "your redis password" "$T/llb.json"
ok $? "redis_password's value is not copied"

# the docs' reliability config: what its comments promise and LiteLLM does not do
expect_exit 0 "import-policy reads the docs' reliability config" "$FUSEBOX" import-policy \
    litellm "$LREL" -o "$T/lrel.json"
[ "$(json "$T/lrel.json" "$L['num_retries'], $L['timeout'], 'allowed_fails' in $L, 'cooldown_time' in $L")" = "3 10 False False" ]
ok $? "allowed_fails 3 and litellm_settings.cooldown_time do not reach the layer"
contains "$ERR" "litellm-reliability.yaml:31:3: litellm_settings.cooldown_time: the Router takes cooldown_time from router_settings only" \
    "litellm_settings.cooldown_time is named as unread by the Router"
contains "$ERR" "litellm_settings.allowed_fails: LiteLLM's percentage rule applies" \
    "allowed_fails equal to litellm.allowed_fails is named as not counting"

# allowed_fails: the rule LiteLLM applies; PyYAML's scalars
cat >"$T/af.yaml" <<'EOF'
model_list:
  - model_name: g
    litellm_params: {model: gpt-4o, tpm: 20_000}
router_settings:
  allowed_fails: 3
  disable_cooldowns: True
  retry_policy: {RateLimitErrorRetries: 4, NotAField: 1}
litellm_settings:
  allowed_fails: 5
EOF
expect_exit 0 "allowed_fails, retry_policy and YAML 1.1 scalars" "$FUSEBOX" import-policy litellm \
    "$T/af.yaml" -o "$T/af.json"
[ "$(json "$T/af.json" "$L['allowed_fails'], $L['allowed_fails_policy'], $L['disable_cooldowns'], $L['model_list'][0]['litellm_params']['tpm'], $L['retry_policy']")" = "3 {} True 20000 {'RateLimitErrorRetries': 4}" ]
ok $? "router 3 against litellm 5 is the allowed-fails rule (an empty policy turns it on); True, 20_000"
contains "$ERR" "router_settings.retry_policy.NotAField: not modelled" "a retry_policy field the preset lacks is named"

# a file of Router keyword arguments: Router(**yaml.safe_load(f))
printf 'model_list:\n  - model_name: g\n    litellm_params: {model: gpt-4o}\nnum_retries: 4\nallowed_fails: 1\nhealth_check: x\n' >"$T/router.yaml"
expect_exit 0 "a file of Router arguments" "$FUSEBOX" import-policy litellm "$T/router.yaml" -o "$T/router.json"
[ "$(json "$T/router.json" "$L['num_retries'], $L['allowed_fails']")" = "4 1" ]
ok $? "its top-level keys are the Router's"
contains "$ERR" "router.yaml:6:1: health_check: not modelled" "... and the others are named"

# bad input: exit 2 with the place
printf 'model_list:\n  - model_name: a\n    litellm_params: {model: x\n' >"$T/lbroken.yaml"
expect_exit 2 "broken LiteLLM YAML exits 2" "$FUSEBOX" import-policy litellm "$T/lbroken.yaml"
case "$ERR" in *lbroken.yaml:[0-9]*:[0-9]*) ok 0 "... with a line and column" ;; *) ok 1 "... with a line and column" ;; esac
printf 'model_list:\n  - litellm_params: {model: x}\n' >"$T/noname.yaml"
expect_exit 2 "a deployment without model_name exits 2" "$FUSEBOX" import-policy litellm "$T/noname.yaml"
contains "$ERR" "noname.yaml:2:5: model_list[0]: a deployment needs a model_name" "... naming it"
expect_exit 2 "a file that is not a LiteLLM config exits 2" "$FUSEBOX" import-policy litellm "$R4J"
contains "$ERR" "no model_list, router_settings or litellm_settings" "... saying what is missing"

# ---- Envoy ------------------------------------------------------------------

expect_exit 0 "import-policy reads Envoy's demo with the FAQ's settings" "$FUSEBOX" import-policy \
    envoy "$EDEMO" -o "$T/edemo.json"
E="r['layers']['service_envoyproxy_io']"
[ "$(json "$T/edemo.json" "' '.join(r['layers'])")" = "service_envoyproxy_io" ]
ok $? "one layer per routed cluster, named after it"
[ "$(json "$T/edemo.json" "$E['retry_on'], $E['num_retries'], $E['max_retries'], $E['outlier_detection']")" = "connect-failure,gateway-error,refused-stream,reset 1 10 {'consecutive_5xx': 5, 'base_ejection_time': '30s', 'max_ejection_percent': 50}" ]
ok $? "the route's retry policy, the cluster's DEFAULT threshold and outlier detection, flat"
contains "$ERR" "retry_policy.retry_on: gRPC conditions cancelled,resource-exhausted,unavailable: not modelled" \
    "gRPC retry conditions are named"
contains "$ERR" "envoy-demo-resilience.yaml:64:10: static_resources.clusters[0].outlier_detection.consecutive_gateway_failure: not modelled" \
    "an outlier setting the preset lacks is named with its line and column"
contains "$ERR" "static_resources.clusters[0].load_assignment: the cluster's endpoints are not scenario providers" \
    "the endpoints are said to stay the preset's hosts"
contains "$ERR" "route.retry_policy.retry_host_predicate: not modelled" "a retry plugin is named"
expect_exit 0 "import-policy reads Envoy's quick-start CDS file" "$FUSEBOX" import-policy envoy "$ECDS" \
    -o "$T/ecds.json"
[ "$(json "$T/ecds.json" "r['layers']")" = "{'example_proxy_cluster': {'preset': 'envoy'}}" ]
ok $? "a cluster alone: its layer, with the preset's defaults"
contains "$ERR" "resources[0].typed_extension_protocol_options: not modelled" "... and its keys named"
cat >"$T/rds.yaml" <<'EOF'
name: local_route
virtual_hosts:
- name: llm
  domains: ["*"]
  retry_policy: {retry_on: 5xx, num_retries: 3}
  routes:
  - match: {prefix: "/v1/chat"}
    route: {cluster: primary, timeout: 30s}
  - match: {prefix: "/"}
    route:
      cluster: secondary
      retry_policy: {retry_on: "reset, connect-failure", retry_back_off: {base_interval: 0.1s, jitter: x}}
EOF
expect_exit 0 "a route configuration alone" "$FUSEBOX" import-policy envoy "$T/rds.yaml" -o "$T/rds.json"
[ "$(json "$T/rds.json" "r['layers']")" = "{'primary': {'preset': 'envoy', 'timeout': '30s', 'retry_on': '5xx', 'num_retries': 3}, 'secondary': {'preset': 'envoy', 'retry_on': 'reset,connect-failure', 'retry_back_off': {'base_interval': '0.1s'}}}" ]
ok $? "the virtual host's retry policy for a route without one; a route's own inherits nothing"
contains "$ERR" "virtual_hosts[0].routes[0].route.cluster: the cluster is not in the file" \
    "a cluster the file lacks is named"
contains "$ERR" "retry_back_off.jitter: not modelled" "a back-off key the preset lacks is named"
printf 'admin:\n  address: x\n' >"$T/notenvoy.yaml"
expect_exit 2 "a file without routes or clusters exits 2" "$FUSEBOX" import-policy envoy "$T/notenvoy.yaml"
contains "$ERR" "no static_resources, resources, virtual_hosts or cluster" "... saying what it reads"
printf 'static_resources:\n  clusters:\n  - {connect_timeout: 1s}\n' >"$T/noname.yaml"
expect_exit 2 "a cluster without a name exits 2" "$FUSEBOX" import-policy envoy "$T/noname.yaml"
contains "$ERR" "noname.yaml:3:5: static_resources.clusters[0]: a cluster is a map with a name" \
    "... with its line and column"

# a scenario's layer names the file, relative to the scenario
cp "$R4J" "$T/application.yml"
python3 - "$T/with-import.json" <<'EOF'
import json, sys
d = json.load(open("scenarios/retry-storm.json"))
d["duration"] = "10m"
d["providers"][0]["faults"][0]["at"] = "1m"
d["providers"][0]["faults"][0]["for"] = "3m"
d["variants"]["mine"] = {"inherit_policy": False, "layers": [
    {"name": "cb", "import": "resilience4j", "file": "application.yml", "instance": "backendA"}]}
d["expect"] = []
json.dump(d, open(sys.argv[1], "w"))
EOF
expect_exit 0 "a layer that names a file runs" "$FUSEBOX" run "$T/with-import.json" -q \
    --no-charts -o "$T/imp"
contains "$ERR" "note: " "the keys not modelled are printed as notes"
[ "$(json "$T/imp/report.json" "r['variants']['mine']['summary']['breaker_opens'] > 0")" = True ]
ok $? "the imported breaker opens in the outage"

# layers that name a LiteLLM config and an Envoy bootstrap, beside the scenario
cp "$LFB" "$T/config.yaml"
cp "$EDEMO" "$T/envoy.yaml"
python3 - "$T/with-gateways.json" <<'EOF'
import json, sys
d = json.load(open("scenarios/retry-storm.json"))
d["duration"] = "10m"
d["providers"][0]["faults"][0]["at"] = "1m"
d["providers"][0]["faults"][0]["for"] = "3m"
d["variants"]["gw"] = {"inherit_policy": False, "layers": [
    {"name": "proxy", "import": "litellm", "file": "config.yaml"}]}
d["variants"]["mesh"] = {"inherit_policy": False, "layers": [
    {"name": "route", "import": "envoy", "file": "envoy.yaml", "instance": "service_envoyproxy_io"}]}
d["expect"] = []
json.dump(d, open(sys.argv[1], "w"))
EOF
expect_exit 0 "layers that name a LiteLLM and an Envoy file run" "$FUSEBOX" run "$T/with-gateways.json" \
    -q --no-charts -o "$T/gw"
contains "$ERR" "config.yaml:16:7: model_list[1].litellm_params.api_key: not modelled" "their notes are printed"
[ "$(json "$T/gw/report.json" "r['variants']['gw']['summary']['fallback_rate'] > 0, r['variants']['mesh']['summary']['breaker_opens'] > 0")" = "True True" ]
ok $? "the LiteLLM layer falls back to anthropic-claude, the Envoy layer ejects the failing host"

# a complex key ("? [a]") or a duplicate key: exit 2 at the key, never a crash or a silent drop
printf 'litellm_settings: {}\n? [a]\n: b\n' >"$T/k.yml"
printf 'static_resources:\n  ? {a: 1}\n  : b\n' >"$T/ke.yml"
printf 'resilience4j:\n  circuitbreaker:\n    instances:\n      ? [backendA]\n      : {slidingWindowSize: 5}\n' >"$T/kr.yml"
for kf in "litellm k.yml 2:3" "envoy ke.yml 2:5" "resilience4j kr.yml 4:9"; do
    set -- $kf
    expect_exit 2 "$1: a complex key exits 2" "$FUSEBOX" import-policy "$1" "$T/$2"
    contains "$ERR" "$2:$3: a key must be a scalar" "... naming the file, line and column"
done
cp "$T/k.yml" "$T/config.yaml"
for cmd in validate check; do
    expect_exit 2 "$cmd on a scenario whose layer imports a complex key exits 2" "$FUSEBOX" $cmd \
        "$T/with-gateways.json"
    contains "$OUT$ERR" "config.yaml:2:3: a key must be a scalar" "... naming the imported file"
done
printf 'router_settings:\n  num_retries: 3\n  timeout: 5\n  num_retries: 1\n' >"$T/dk.yaml"
expect_exit 2 "a duplicate key exits 2" "$FUSEBOX" import-policy litellm "$T/dk.yaml"
contains "$ERR" 'dk.yaml:4:3: duplicate key "num_retries" at lines 2 and 4 (LiteLLM itself keeps the last' \
    "... naming both lines and what LiteLLM does"

# the one command: the user's file next to the scenario's own variants
expect_exit 0 "run --policy adds the file's policy as a variant" "$FUSEBOX" run \
    scenarios/retry-storm.json --no-charts -q -o "$T/pol" \
    --policy "resilience4j:$R4J#backendA" --policy "b=resilience4j:$R4J#backendB"
[ "$(json "$T/pol/report.json" "' '.join(r['variants'])")" = "naive tuned resilience4j b" ]
ok $? "the variants: the scenario's, then resilience4j and b"
mine="r['variants']['resilience4j']['summary']"
naive="r['variants']['naive']['summary']"
[ "$(json "$T/pol/report.json" "$mine['fallback_rate'] == 0, $mine['breaker_opens'] > 0, $mine['amplification'] < $naive['amplification']")" = "True True True" ]
ok $? "resilience4j alone calls one provider, opens its breaker and amplifies less than naive"
expect_exit 2 "--policy on a file of two instances without #INSTANCE exits 2" "$FUSEBOX" run \
    scenarios/retry-storm.json -q --no-charts -o "$T/pol2" --policy "resilience4j:$R4J"
contains "$ERR" "variants.resilience4j.layers[0]: the file has 2 instances" "... naming them"

# the one command for a LiteLLM config, and for an Envoy cluster
expect_exit 0 "run --policy litellm and envoy: the gateways next to naive and tuned" "$FUSEBOX" run \
    scenarios/retry-storm.json --no-charts -q -o "$T/gwpol" --policy "litellm:$LFB" \
    --policy "envoy:$EDEMO#service_envoyproxy_io"
[ "$(json "$T/gwpol/report.json" "' '.join(r['variants'])")" = "naive tuned litellm envoy" ]
ok $? "the variants: the scenario's, then litellm and envoy"
ll="r['variants']['litellm']['summary']"
ev="r['variants']['envoy']['summary']"
[ "$(json "$T/gwpol/report.json" "$ll['fallback_rate'] > 0.05, $ll['breaker_opens'] > 0, $ll['success_rate'] > $naive['success_rate'], $ll['amplification'] < $naive['amplification']")" = "True True True True" ]
ok $? "LiteLLM falls back to anthropic-claude, cools gpt-4 down, and beats naive"
[ "$(json "$T/gwpol/report.json" "$ev['fallback_rate'] == 0, $ev['breaker_opens'] > 0, $ev['success_rate'] > $naive['success_rate'], $ev['amplification'] < 2")" = "True True True True" ]
ok $? "Envoy round-robins its hosts (no fallback chain), ejects the failing one, and beats naive"
expect_exit 2 "--policy litellm on a config whose deployments are no scenario provider exits 2" \
    "$FUSEBOX" run scenarios/retry-storm.json -q --no-charts -o "$T/gwpol2" --policy "litellm:$LREL"
contains "$ERR" "model_list[0] (model_name 'zephyr-beta'): no scenario provider for this deployment" \
    "... naming the entry"
contains "$ERR" "the scenario's providers: openai, anthropic" "... and the providers there are"
printf 'model_list:\n  - model_name: a\n    litellm_params: {model: gpt-4o}\n  - model_name: b\n    litellm_params: {model: openai/gpt-4o-mini}\n' >"$T/dup.yaml"
expect_exit 2 "two deployments on one provider exit 2" "$FUSEBOX" run scenarios/retry-storm.json -q \
    --no-charts -o "$T/gwpol3" --policy "litellm:$T/dup.yaml"
contains "$ERR" "model_list[1] (model_name 'b'): deploys provider 'openai' like model_list[0]" "... naming both"
expect_exit 2 "--policy envoy naming a cluster the file lacks exits 2" "$FUSEBOX" run \
    scenarios/retry-storm.json -q --no-charts -o "$T/gwpol4" --policy "envoy:$EDEMO#nope"
contains "$ERR" "no instance named 'nope'" "... naming it"
finish
