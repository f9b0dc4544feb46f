#!/bin/sh
# import_policy.sh - `fusebox import-policy`, layers that name a file, and
# `fusebox run --policy`, on the configuration the libraries' own examples
# ship (tests/fixtures/import/, each citing where it comes from).
set -u
. tests/tap.sh
# lay FILE EXPR: json, with import-policy's layer list ({"layers": [{"name": N, ...}]}) as
# r['layers'][N] (the name taken out), so that a layer is looked up by its name
lay() {
    python3 -c "import json,sys; d=json.load(open(sys.argv[1])); r={'layers': {l.pop('name'): l for l in d['layers']}}; print($2)" "$1"
}
T=$E2E_TMP
FX=tests/fixtures/import
R4J_DEMO=$FX/resilience4j-demo.yml
# the demo's application exception (io.github.robwin.exception.BusinessException) is no class
# fusebox can place; this copy ignores 4xx answers in its place (4 lines of comment first)
R4J=$FX/resilience4j-demo-http.yml
LPROXY=$FX/litellm-proxy-server-config.yaml
LLB=$FX/litellm-load-balancing.yaml
LREL=$FX/litellm-reliability.yaml
LFB=$FX/litellm-fallbacks.yaml
EDEMO=$FX/envoy-demo-resilience.yaml
ECDS=$FX/envoy-dynamic-cds-demo.yaml

# the Spring Boot demo's application.yml: two instances, configs inherited
expect_exit 0 "import-policy reads resilience4j's Spring Boot demo" "$FUSEBOX" import-policy \
    resilience4j "$R4J" -o "$T/r4j.json"
[ "$(lay "$T/r4j.json" "' '.join(sorted(r['layers']))")" = "backendA backendB" ]
ok $? "one layer per instance"
[ "$(lay "$T/r4j.json" "r['layers']['backendA']['failureRateThreshold'], r['layers']['backendA']['waitDurationInOpenState'], r['layers']['backendA']['maxAttempts']")" = "50 5s 3" ]
ok $? "backendA takes configs.default (baseConfig: default) in resilience4j's own keys"
[ "$(lay "$T/r4j.json" "r['layers']['backendB']['minimumNumberOfCalls'], r['layers']['backendB']['automaticTransitionFromOpenToHalfOpenEnabled']")" = "10 True" ]
ok $? "backendB's own minimumNumberOfCalls wins over the default config it inherits"
contains "$ERR" "resilience4j-demo-http.yml:61:1: resilience4j.bulkhead: not modelled" \
    "a section fusebox does not read is named with its line and column"
contains "$ERR" "resilience4j.circuitbreaker.instances.backendB.recordFailurePredicate: not modelled" \
    "a key the preset does not model is named"
[ "$(printf '%s\n' "$ERR" | grep -c 'configs.default.eventConsumerBufferSize')" -eq 1 ]
ok $? "a config two instances inherit is noted once"
[ "$(lay "$T/r4j.json" "r['layers']['backendA']['recordExceptions'], r['layers']['backendA']['retryExceptions'], r['layers']['backendA']['retryIgnoreExceptions']")" = "['org.springframework.web.client.HttpServerErrorException', 'java.util.concurrent.TimeoutException', 'java.io.IOException'] ['org.springframework.web.client.HttpServerErrorException', 'java.util.concurrent.TimeoutException', 'java.io.IOException'] ['org.springframework.web.client.HttpClientErrorException']" ]
ok $? "recordExceptions, retryExceptions and the Retry's ignoreExceptions (retryIgnoreExceptions) are read"
[ "$(lay "$T/r4j.json" "r['layers']['backendA']['ignoreExceptions']")" = "['org.springframework.web.client.HttpClientErrorException']" ]
ok $? "the CircuitBreaker's ignoreExceptions is its own"

# an exception class fusebox cannot place: exit 2 naming it, where it stands, and the known ones
expect_exit 2 "the demo's own BusinessException exits 2" "$FUSEBOX" import-policy resilience4j \
    "$R4J_DEMO" -o "$T/r4j-demo.json"
contains "$ERR" "resilience4j-demo.yml:20:19: resilience4j.circuitbreaker.configs.default.ignoreExceptions: fusebox cannot place 'io.github.robwin.exception.BusinessException'" \
    "... naming the class, its line and column"
contains "$ERR" "it knows Throwable, Exception, RuntimeException, RestClientException" "... and listing the classes it knows"
contains "$ERR" "HttpClientErrorException.TooManyRequests, HttpServerErrorException" "... Spring's too"

# circuit-breaker and retry keys in their own namespaces
cat >"$T/ns.yml" <<'EOF2'
resilience4j:
  circuitbreaker:
    instances:
      api:
        waitDurationInOpenState: 10s
        enableExponentialBackoff: true
        exponentialBackoffMultiplier: 4
        exponentialMaxWaitDurationInOpenState: 5m
        enableRandomizedWait: true
        randomizedWaitFactor: 0.3
        maxAttempts: 9
  retry:
    instances:
      api:
        maxAttempts: 4
        waitDuration: 200ms
        enableExponentialBackoff: true
        exponentialBackoffMultiplier: 2
        slidingWindowSize: 7
EOF2
expect_exit 0 "circuit-breaker and retry keys each in their own section" "$FUSEBOX" import-policy \
    resilience4j "$T/ns.yml" -o "$T/ns.json"
[ "$(lay "$T/ns.json" "r['layers']['api']['exponentialBackoffMultiplier'], r['layers']['api']['maxAttempts'], 'enableRandomizedWait' in r['layers']['api'], 'slidingWindowSize' in r['layers']['api'], r['layers']['api']['waitDurationInOpenState']")" = "2 4 False False 10s" ]
ok $? "the breaker's backoff keys are not read as the Retry's; each section's keys stay in it"
contains "$ERR" "resilience4j.circuitbreaker.instances.api.exponentialMaxWaitDurationInOpenState: not modelled: the CircuitBreaker's growing open period" \
    "exponentialMaxWaitDurationInOpenState is accepted and noted"
contains "$ERR" "resilience4j.circuitbreaker.instances.api.maxAttempts: not a CircuitBreaker key (resilience4j reads it under resilience4j.retry)" \
    "a Retry key under circuitbreaker is named as such"
contains "$ERR" "resilience4j.retry.instances.api.slidingWindowSize: not a Retry key" \
    "a CircuitBreaker key under retry too"

# issue 20: ignoreExceptions HttpClientErrorException (every 4xx, 429 too) keeps the breaker
# closed through a 429 storm; without it the same breaker opens
printf 'resilience4j:\n  circuitbreaker:\n    instances:\n      openai:\n        ignoreExceptions: org.springframework.web.client.HttpClientErrorException\n  retry:\n    instances:\n      openai:\n        maxAttempts: 3\n' >"$T/ign.yml"
printf 'resilience4j:\n  retry:\n    instances:\n      openai:\n        maxAttempts: 3\n' >"$T/noign.yml"
expect_exit 0 "rate-limit-storm with ignoreExceptions: HttpClientErrorException" "$FUSEBOX" run \
    scenarios/rate-limit-storm.json -q --no-charts -o "$T/ign" --policy "resilience4j:$T/ign.yml" \
    --policy "plain=resilience4j:$T/noign.yml"
[ "$(json "$T/ign/report.json" "r['variants']['resilience4j']['summary']['breaker_opens'] == 0, r['variants']['plain']['summary']['breaker_opens'] > 0")" = "True True" ]
ok $? "ignored 429s never open the breaker; recorded ones do"

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
[ "$(lay "$T/lproxy.json" "' '.join(r['layers'])")" = "litellm" ]
ok $? "one layer, named litellm"
[ "$(lay "$T/lproxy.json" "$L['num_retries'], $L['timeout'], $L['context_window_fallbacks'], $L['routing_strategy']")" = "5 600 [{'gpt-3.5-turbo': ['gpt-3.5-turbo-large']}] usage-based-routing-v2" ]
ok $? "num_retries and request_timeout from litellm_settings; routing_strategy from router_settings"
[ "$(lay "$T/lproxy.json" "len($L['model_list']), $L['model_list'][1], $L['model_list'][3]['litellm_params']")" = "19 {'model_name': 'gpt-3.5-turbo-end-user-test', 'litellm_params': {'model': 'azure/chatgpt-v-2'}} {'model': 'gpt-3.5-turbo-1106', 'rpm': 480}" ]
ok $? "every deployment, with its routing keys only (model, rpm)"
[ "$(lay "$T/lproxy.json" "$L['model_list'][0]['model_info'], $L['redis_host'], $L['redis_password'], 'redis_port' in $L")" = "{'id': '1'} os.environ/REDIS_HOST <secret: not copied> False" ]
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

# the docs' load-balancing config: router_settings over litellm_settings, as Router.__init__,
# except num_retries: a set litellm.num_retries rides on every exception and wins (router.py)
expect_exit 0 "import-policy reads the docs' load-balancing config" "$FUSEBOX" import-policy \
    litellm "$LLB" -o "$T/llb.json"
[ "$(lay "$T/llb.json" "$L['num_retries'], $L['timeout'], $L['fallbacks'], $L['redis_port'], $L['redis_password']")" = "3 30 [{'zephyr-beta': ['gpt-4o']}] 1992 <secret: not copied>" ]
ok $? "litellm_settings' num_retries and router_settings' timeout win; litellm_settings' fallbacks fill in"
contains "$ERR" "litellm-load-balancing.yaml:42:3: router_settings.num_retries: superseded by litellm_settings.num_retries at line 33" \
    "the superseded value is named, with the one that wins"
contains "$ERR" "litellm_settings.request_timeout: superseded by router_settings.timeout at line 43 (Router: timeout or litellm.request_timeout)" \
    "... and the rule"
! grep -q "your redis password" "$T/llb.json"
ok $? "redis_password's value is not copied"

# the docs' reliability config: what its comments promise and LiteLLM does not do
expect_exit 0 "import-policy reads the docs' reliability config" "$FUSEBOX" import-policy \
    litellm "$LREL" -o "$T/lrel.json"
[ "$(lay "$T/lrel.json" "$L['num_retries'], $L['timeout'], 'allowed_fails' in $L, 'cooldown_time' in $L")" = "3 10 False False" ]
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
[ "$(lay "$T/af.json" "$L['allowed_fails'], $L['allowed_fails_policy'], $L['disable_cooldowns'], $L['model_list'][0]['litellm_params']['tpm'], $L['retry_policy']")" = "3 {} True 20000 {'RateLimitErrorRetries': 4}" ]
ok $? "router 3 against litellm 5 is the allowed-fails rule (an empty policy turns it on); True, 20_000"
contains "$ERR" "router_settings.retry_policy.NotAField: not modelled" "a retry_policy field the preset lacks is named"

# a file of Router keyword arguments: Router(**yaml.safe_load(f))
printf 'model_list:\n  - model_name: g\n    litellm_params: {model: gpt-4o}\nnum_retries: 4\nallowed_fails: 1\nhealth_check: x\n' >"$T/router.yaml"
expect_exit 0 "a file of Router arguments" "$FUSEBOX" import-policy litellm "$T/router.yaml" -o "$T/router.json"
[ "$(lay "$T/router.json" "$L['num_retries'], $L['allowed_fails']")" = "4 1" ]
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
[ "$(lay "$T/edemo.json" "' '.join(r['layers'])")" = "service_envoyproxy_io" ]
ok $? "one layer per routed cluster, named after it"
[ "$(lay "$T/edemo.json" "$E['retry_on'], $E['num_retries'], $E['max_retries'], $E['outlier_detection']")" = "connect-failure,gateway-error,refused-stream,reset 1 10 {'consecutive_5xx': 5, 'base_ejection_time': '30s', 'max_ejection_percent': 50}" ]
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
[ "$(lay "$T/ecds.json" "r['layers']")" = "{'example_proxy_cluster': {'preset': 'envoy'}}" ]
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
[ "$(lay "$T/rds.json" "r['layers']")" = "{'primary': {'preset': 'envoy', 'timeout': '30s', 'retry_on': '5xx', 'num_retries': 3}, 'secondary': {'preset': 'envoy', 'retry_on': 'reset,connect-failure', 'retry_back_off': {'base_interval': '0.1s'}}}" ]
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

# the one command: the user's file next to the scenario's own variants. The runs that simulate
# stop the flagship at 25 minutes: its outage (5m to 23m) and two minutes after, where all they
# check happens (e2e/docs_commands runs docs/import-policy.md's whole hour; 64 of this suite's 76 s
# under asan were these three hours)
CUT="--set duration=25m"
# shellcheck disable=SC2086
expect_exit 0 "run --policy adds the file's policy as a variant" "$FUSEBOX" run \
    scenarios/retry-storm.json $CUT --no-charts -q -o "$T/pol" \
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
# shellcheck disable=SC2086
expect_exit 0 "run --policy litellm and envoy: the gateways next to naive and tuned" "$FUSEBOX" run \
    scenarios/retry-storm.json $CUT --no-charts -q -o "$T/gwpol" --policy "litellm:$LFB" \
    --policy "envoy:$EDEMO#service_envoyproxy_io"
[ "$(json "$T/gwpol/report.json" "' '.join(r['variants'])")" = "naive tuned litellm envoy" ]
ok $? "the variants: the scenario's, then litellm and envoy"
ll="r['variants']['litellm']['summary']"
ev="r['variants']['envoy']['summary']"
[ "$(json "$T/gwpol/report.json" "$ll['fallback_rate'] > 0.05, $ll['success_rate'] > $naive['success_rate'], $ll['amplification'] < $naive['amplification']")" = "True True True" ]
ok $? "LiteLLM falls back to anthropic-claude and beats naive"
# gpt-4 is a group of one deployment: cooled only at 100% failures of >= 1000 requests counted
# by a pod within 60 s of the count's first increment; the 18-minute outage brings each of the 20
# pods fewer failures than that a minute, so LiteLLM never cools it (docs/presets.md)
[ "$(json "$T/gwpol/report.json" "$ll['breaker_opens'] == 0, r['variants']['litellm']['providers']['openai']['outcomes']['transient'] / 20 / 18 < 1000")" = "True True" ]
ok $? "... and never cools gpt-4, a group of one, at fewer than 1000 failures a minute a pod"
[ "$(json "$T/gwpol/report.json" "$ev['fallback_rate'] == 0, $ev['breaker_opens'] > 0, $ev['success_rate'] > $naive['success_rate'], $ev['amplification'] < 2")" = "True True True True" ]
ok $? "Envoy round-robins its hosts (no fallback chain), ejects the failing one, and beats naive"
expect_exit 2 "--policy litellm on a config whose deployments are no scenario provider exits 2" \
    "$FUSEBOX" run scenarios/retry-storm.json -q --no-charts -o "$T/gwpol2" --policy "litellm:$LREL"
contains "$ERR" "model_list[0] (model_name 'zephyr-beta'): no scenario provider for this deployment" \
    "... naming the entry"
contains "$ERR" "the scenario's providers: openai, anthropic" "... and the providers there are"
# a config for Azure against a scenario that names its provider openai: --map-provider runs it
# without editing the config, and the error without it says how
printf 'model_list:\n  - model_name: gpt-4\n    litellm_params: {model: azure/chatgpt-v-2}\n  - model_name: claude\n    litellm_params: {model: anthropic/claude-3-opus-20240229}\nlitellm_settings:\n  fallbacks: [{"gpt-4": ["claude"]}]\n' >"$T/azure.yaml"
expect_exit 2 "--policy litellm with an azure deployment and no azure provider exits 2" \
    "$FUSEBOX" run scenarios/retry-storm.json -q --no-charts -o "$T/gwaz" --policy "litellm:$T/azure.yaml"
contains "$ERR" "or --map-provider azure=openai with --policy" "... and shows the --map-provider that maps it"
# shellcheck disable=SC2086
expect_exit 0 "--map-provider azure=openai runs the config's azure deployment as openai" \
    "$FUSEBOX" run scenarios/retry-storm.json $CUT -q --no-charts -o "$T/gwaz" --policy "litellm:$T/azure.yaml" \
    --map-provider azure=openai
[ "$(json "$T/gwaz/report.json" "r['variants']['litellm']['providers']['openai']['attempts'] > 0, r['variants']['litellm']['summary']['fallback_rate'] > 0.05")" = "True True" ]
ok $? "... gpt-4 calls openai and falls back to claude in the outage"
expect_exit 2 "--map-provider without a --policy litellm layer exits 2" \
    "$FUSEBOX" run scenarios/retry-storm.json -q --no-charts -o "$T/gwaz2" --map-provider azure=openai
contains "$ERR" "set its \"map_provider\"" "... and says how to map a scenario's own layer"
printf 'model_list:\n  - model_name: a\n    litellm_params: {model: gpt-4o}\n  - model_name: b\n    litellm_params: {model: openai/gpt-4o-mini}\n' >"$T/dup.yaml"
expect_exit 2 "two deployments on one provider exit 2" "$FUSEBOX" run scenarios/retry-storm.json -q \
    --no-charts -o "$T/gwpol3" --policy "litellm:$T/dup.yaml"
contains "$ERR" "model_list[1] (model_name 'b'): deploys provider 'openai' like model_list[0]" "... naming both"
expect_exit 2 "--policy envoy naming a cluster the file lacks exits 2" "$FUSEBOX" run \
    scenarios/retry-storm.json -q --no-charts -o "$T/gwpol4" --policy "envoy:$EDEMO#nope"
contains "$ERR" "no instance named 'nope'" "... naming it"

# ---- an imported layer's own keys: the preset's parameters on top of the file (--set, --grid) ----
mkdir -p "$T/over"
cat >"$T/over/config.yaml" <<'YAML'
model_list:
  - model_name: gpt-4o
    litellm_params: {model: openai/gpt-4o}
  - model_name: claude-sonnet
    litellm_params: {model: anthropic/claude-sonnet-4}
router_settings:
  num_retries: 2
  cooldown_time: 60
  fallbacks: [{"gpt-4o": ["claude-sonnet"]}]
YAML
cat >"$T/over/s.json" <<'JSON'
{"name": "over", "duration": "2m", "seed": 3,
 "traffic": [{"class": "chat", "arrivals": {"poisson": "5/s"}}],
 "providers": [{"name": "openai", "faults": [{"at": "20s", "for": "40s", "outage": {"status": 503}}]},
               {"name": "anthropic"}],
 "variants": {"proxied": {"layers": [{"name": "proxy", "import": "litellm", "file": "config.yaml"}]}}}
JSON
"$FUSEBOX" validate "$T/over/s.json" >/dev/null 2>"$T/over/err"
ok $? "a scenario whose layer names a LiteLLM file loads ($(head -c 200 "$T/over/err"))"
"$FUSEBOX" validate "$T/over/s.json" --set variants.proxied.layers.proxy.cooldown_time=5 >/dev/null 2>&1
ok $? "--set layers.NAME.KEY sets an imported layer's key by the library's name"
expect_exit 2 "an imported layer's key that is no parameter exits 2" "$FUSEBOX" validate "$T/over/s.json" \
    --set variants.proxied.layers.proxy.cooldown_tim=5
contains "$ERR" "variants.proxied.layers[0].cooldown_tim: litellm" "... naming the path"
contains "$ERR" "(did you mean 'cooldown_time'?)" "... with the preset's parameter as the suggestion"
contains "$ERR" "this layer's own keys override the file's" "... and what such a key is"
expect_exit 2 "an imported layer's key in the wrong unit exits 2" "$FUSEBOX" validate "$T/over/s.json" \
    --set variants.proxied.layers.proxy.cooldown_time=30s
contains "$ERR" "cooldown_time is a number of seconds (a number, not a string), got \"30s\" (did you mean 30?)" \
    "... saying the library's unit"
"$FUSEBOX" sweep "$T/over/s.json" --grid layers.proxy.num_retries=0,3 --seeds 1 \
    --minimize cost_usd -o "$T/over/sw" --no-charts >"$T/over/sw.out" 2>&1
ok $? "sweep --grid layers.NAME.KEY on a layer that names its file runs"
[ "$(json "$T/over/sw/sweep.json" "len(r['results'])")" = "2" ]
ok $? "... one point per value"

# ---- the output pastes: a variant's "layers", or a whole variant with --as-variant ----
"$FUSEBOX" import-policy litellm "$T/over/config.yaml" -o "$T/over/layers.json" 2>/dev/null
[ "$(json "$T/over/layers.json" "type(r['layers']).__name__, r['layers'][0]['name'], r['layers'][0]['preset']")" = "list litellm litellm" ]
ok $? "import-policy prints {\"layers\": [{\"name\": ..., \"preset\": ...}]}, what a variant takes"
[ "$(tail -c 1 "$T/over/layers.json" | od -An -c | tr -d ' ')" = '\n' ]
ok $? "... ending with a newline"
"$FUSEBOX" import-policy litellm "$T/over/config.yaml" --as-variant pasted >"$T/over/variant.json" 2>/dev/null
python3 - "$T/over/s.json" "$T/over/variant.json" "$T/over/pasted.json" <<'PY'
import json, sys
sc = json.load(open(sys.argv[1]))
sc["variants"].update(json.load(open(sys.argv[2])))
json.dump(sc, open(sys.argv[3], "w"))
PY
(cd "$T/over" && "$FUSEBOX" run pasted.json -q --no-charts -o out-pasted >/dev/null 2>"$T/over/pasted.err")
ok $? "--as-variant's output pasted into a scenario's variants runs ($(head -c 200 "$T/over/pasted.err"))"
[ "$(json "$T/over/out-pasted/report.json" "' '.join(r['variants'])")" = "proxied pasted" ]
ok $? "... as a variant of its own beside the one that names the file"
[ "$(json "$T/over/out-pasted/report.json" "r['variants']['proxied']['summary']['success_rate'] == r['variants']['pasted']['summary']['success_rate']")" = "True" ]
ok $? "... with the same results as the layer that imports the file"
finish
