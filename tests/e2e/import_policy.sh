#!/bin/sh
# import_policy.sh - `fusebox import-policy`, layers that name a file, and
# `fusebox run --policy`, on the configuration the libraries' own examples
# ship (tests/fixtures/import/, each citing where it comes from).
set -u
. tests/tap.sh
T=$E2E_TMP
R4J=tests/fixtures/import/resilience4j-demo.yml

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
finish
