#!/bin/sh
# cli.sh - fusebox run / validate end to end: files, determinism, bad input.
. tests/tap.sh
T=$E2E_TMP

expect_exit 0 "--help exits 0" "$FUSEBOX" --help
contains "$OUT" "run SCENARIO" "--help lists run"
expect_exit 0 "version" "$FUSEBOX" version
contains "$OUT" "fusebox 0." "version prints the version"
expect_exit 2 "an unknown command exits 2" "$FUSEBOX" frobnicate
contains "$ERR" "unknown command 'frobnicate'; the commands: fusebox --help" "an unknown command is named, with where the list is"
expect_exit 2 "a mistyped command exits 2" "$FUSEBOX" runn
contains "$ERR" "unknown command 'runn' (did you mean 'run'?)" "a mistyped command gets a did-you-mean"
expect_exit 2 "a mistyped long command exits 2" "$FUSEBOX" import-polcy
contains "$ERR" "unknown command 'import-polcy' (did you mean 'import-policy'?)" "even a long one"
expect_exit 2 "run without a scenario exits 2" "$FUSEBOX" run
for c in run check validate compare sweep tune merge mock live verdict; do
    expect_exit 0 "$c --help exits 0" "$FUSEBOX" $c --help
done

# the flagship, as the README runs it
expect_exit 0 "the flagship runs" "$FUSEBOX" run scenarios/retry-storm.json -o "$T/a"
FLAGSHIP_RC=$got
writes "$T/a" "the flagship" report.json timeseries.csv events.jsonl report.html \
    charts/outcomes.png charts/outcomes.svg charts/breakers.png charts/load.png charts/latency.png \
    charts/compare.png
check "report.json is valid JSON" python3 -m json.tool "$T/a/report.json"
rows=$(($(wc -l <"$T/a/timeseries.csv") - 1))
[ "$rows" -eq 7200 ]
ok $? "timeseries.csv has one row per second per variant ($rows)"
python3 - "$T/a/events.jsonl" <<'PY'
import json, sys
n = 0
for line in open(sys.argv[1]):
    json.loads(line); n += 1
sys.exit(0 if n > 0 else 1)
PY
ok $? "events.jsonl is one JSON object per line"
contains "$OUT" "tuned.success_rate >= 0.99" "run prints the expectations"
contains "$OUT" "report.html" "run points at report.html"
# the README's excerpt of that run is what the run prints (a changed output makes it stale)
FLAGSHIP_OUT=$OUT
sed -n '/^    retry-storm: 1h 00m simulated/,/^    \.\.\.$/p' README.md | sed '$d' | sed 's/^    //' \
    >"$T/readme-excerpt.txt"
missing=$(while IFS= read -r line; do
    printf '%s\n' "$FLAGSHIP_OUT" | grep -qxF -- "$line" || echo "# not in the run's output: $line"
done <"$T/readme-excerpt.txt")
[ -s "$T/readme-excerpt.txt" ] && [ -z "$missing" ]
r=$?
[ -n "$missing" ] && echo "$missing"
ok $r "README's excerpt of the flagship run is in its output ($(wc -l <"$T/readme-excerpt.txt") lines)"

# every library scenario runs with its charts (the columns of the features it uses come last)
for s in scenarios/*.json; do
    n=$(basename "$s" .json)
    d=$T/lib-$n
    if [ "$n" = retry-storm ]; then
        # the flagship's run above is this one (without -q): not run a second time
        d=$T/a r=$FLAGSHIP_RC
    else
        "$FUSEBOX" run "$s" -q -o "$d" >/dev/null 2>"$d.err"
        r=$?
        [ $r -ne 0 ] && sed 's/^/# /' "$d.err"
    fi
    [ $r -eq 0 ] && [ -s "$d/charts/outcomes.svg" ] && [ -s "$d/report.html" ]
    ok $? "$n runs with its charts and page (exit 0)"
done

# determinism: same scenario and seed, byte-identical files
SHORT="--set duration=10m"
"$FUSEBOX" run scenarios/retry-storm.json $SHORT -q -o "$T/b" 2>/dev/null
"$FUSEBOX" run scenarios/retry-storm.json $SHORT -q -o "$T/c" 2>/dev/null
for f in report.json timeseries.csv events.jsonl report.html charts/outcomes.svg; do
    cmp -s "$T/b/$f" "$T/c/$f"
    ok $? "two runs give a byte-identical $f"
done
# a slow fault whose factor is a distribution draws per attempt from the request's own stream:
# the same bytes for the same seed, and a tail unlike the constant factor's of the same mean
SLOWD='providers.openai.faults=[{"at":"2m","for":"5m","slow":{"factor":{"empirical":{"values":[2,30]}}}}]'
SLOWC='providers.openai.faults=[{"at":"2m","for":"5m","slow":{"factor":16}}]'
"$FUSEBOX" run scenarios/retry-storm.json $SHORT --set "$SLOWD" -q --no-charts -o "$T/sd1" 2>/dev/null
"$FUSEBOX" run scenarios/retry-storm.json $SHORT --set "$SLOWD" -q --no-charts -o "$T/sd2" 2>/dev/null
"$FUSEBOX" run scenarios/retry-storm.json $SHORT --set "$SLOWC" -q --no-charts -o "$T/sc" 2>/dev/null
[ -s "$T/sd1/report.json" ] && cmp -s "$T/sd1/report.json" "$T/sd2/report.json" &&
    cmp -s "$T/sd1/events.jsonl" "$T/sd2/events.jsonl" && ! cmp -s "$T/sd1/report.json" "$T/sc/report.json"
ok $? "a slow factor distribution: two runs byte-identical, and unlike the constant factor of its mean"
"$FUSEBOX" run scenarios/retry-storm.json $SHORT --seed 7 -q --no-charts -o "$T/d" 2>/dev/null
cmp -s "$T/b/timeseries.csv" "$T/d/timeseries.csv"
[ $? -ne 0 ]
ok $? "another seed gives another run"
grep -q '"seed": 7' "$T/d/report.json"
ok $? "the seed is written into report.json"
grep -q '"duration_s": 600.000000' "$T/b/report.json"
ok $? "--set changes the scenario as run"

# bad input: exit 2, the file and the JSON path named
printf '{"name":"x","duraton":"1m"}' >"$T/typo.json"
expect_exit 2 "an unknown key exits 2" "$FUSEBOX" run "$T/typo.json"
contains "$ERR" "typo.json: duraton: unknown key 'duraton' (did you mean 'duration'?)" \
    "an unknown key is named with a suggestion"
sed 's/"at": "5m"/"at": "-5m"/' scenarios/retry-storm.json >"$T/neg.json"
expect_exit 2 "a negative duration exits 2" "$FUSEBOX" run "$T/neg.json"
contains "$ERR" "providers[0].faults[0].at: duration \"-5m\" is negative" \
    "a negative duration names its path"
printf '{\n "name": "x",\n "duration": \n' >"$T/broken.json"
expect_exit 2 "malformed JSON exits 2" "$FUSEBOX" run "$T/broken.json"
contains "$ERR" "invalid JSON at line" "malformed JSON gives a line number"
expect_exit 2 "a missing file exits 2" "$FUSEBOX" run "$T/nope.json"
contains "$ERR" "nope.json: cannot open" "a missing file is named"
expect_exit 2 "a bad --set path exits 2" "$FUSEBOX" run scenarios/retry-storm.json \
    --set providers.nope.capacity.rpm=1
contains "$ERR" "no element named 'nope'" "a bad --set path is explained"
expect_exit 2 "a bad --set value exits 2" "$FUSEBOX" run scenarios/retry-storm.json \
    --set variants.tuned.breaker.open=-3s
contains "$ERR" "variants.tuned.breaker.open" "a bad --set value names its path"
expect_exit 2 "an unknown option exits 2" "$FUSEBOX" run scenarios/retry-storm.json --colour

# --set of a key whose reading needs more than its value, or whose hook allocates: each bad
# value is named by its --set (exit 2) before anything runs, read in the document as every
# --set leaves it
cat >"$T/ctx.json" <<'EOF_CTX'
{"name": "ctx", "duration": "1m",
 "traffic": [{"class": "chat", "arrivals": {"poisson": 2}},
             {"class": "rep", "arrivals": {"replay": {"at_ms": [1, 2, 3]}}}],
 "providers": [{"name": "openai", "faults": [{"at": "1s", "for": "5s", "outage": {}}]},
               {"name": "search", "kind": "tool"}],
 "variants": {"a": {"autoscale": {"metric": "utilization", "target": 0.5, "max": 3}}, "b": {}},
 "observed": {"variant": "a", "requests": 10, "attempts": 12}}
EOF_CTX
for c in 'providers.openai.faults[0].outage.status=200|200 is not an error status (use 400 to 599)' \
    'providers.openai.capacity.overload_status=ok|expected an integer, got a string' \
    'traffic.chat.target=serch|no provider named "serch" (did you mean "search"?)' \
    'traffic.chat.target=3|expected "llm", "none" or a provider name' \
    'traffic.rep.arrivals.replay.at_ms=[5,3]|[1]: replayed arrivals must be in time order' \
    'traffic.rep.arrivals.replay.at_ms=[90000]|[0]: an arrival at 90s is at or after the end of traffic' \
    'observed.variant=c|no variant "c" in the scenario' \
    'observed.latency_p50=-2|-2 is out of range [0, 1e+09]' \
    'observed.status={"99":1}|99: an answer is an HTTP status' \
    'variants.a.autoscale.target=2|2 is out of range [1e-06, 1]'; do
    set=${c%%|*} msg=${c#*|}
    expect_exit 2 "--set $set exits 2" "$FUSEBOX" validate "$T/ctx.json" --set "$set"
    contains "$ERR" "--set $set: $msg" "--set $set is named with the loader's message"
done
expect_exit 0 "those keys' checks read the document as every --set leaves it" \
    "$FUSEBOX" validate "$T/ctx.json" --set 'traffic.rep.arrivals.replay.at_ms=[5,90000]' \
    --set duration=2m --set traffic.chat.target=search --set observed.variant=b \
    --set variants.a.autoscale.target=2 --set variants.a.autoscale.metric=in_flight

# a variant added on the command line: on purpose only, a stack of its own when asked
expect_exit 0 "--set +variants.NAME adds a variant" "$FUSEBOX" run scenarios/retry-storm.json \
    --set duration=1m --set 'providers.openai.faults[0].at=10s' --no-charts -q -o "$T/plus" \
    --set '+variants.sdk={"inherit_policy": false, "layers": [{"name": "sdk", "preset": "openai-python"}]}'
[ "$(json "$T/plus/report.json" "' '.join(r['variants'])")" = "naive tuned sdk" ]
ok $? "the added variant runs after the file's own"
[ "$(json "$T/plus/report.json" "r['variants']['sdk']['summary']['fallback_rate'] == 0 and r['variants']['sdk']['summary']['attempts'] > 0")" = True ]
ok $? "a preset layer alone calls one provider: the top-level fallback chain stays out"
expect_exit 2 "--set +variants of an existing name exits 2" "$FUSEBOX" run \
    scenarios/retry-storm.json --set '+variants.tuned={"retry": {"attempts": 2}}'
contains "$ERR" "already has a variant named 'tuned'" "the clash is named"
expect_exit 2 "--set +providers exits 2" "$FUSEBOX" run scenarios/retry-storm.json \
    --set '+providers.x={}'
contains "$ERR" "only a variant can be added" "what can be added is said"
expect_exit 2 "--policy without a file exits 2" "$FUSEBOX" run scenarios/retry-storm.json \
    --policy resilience4j
contains "$ERR" "expected [NAME=]KIND:FILE[#INSTANCE]" "--policy's form is shown"
expect_exit 2 "--policy with a missing file exits 2" "$FUSEBOX" run scenarios/retry-storm.json \
    --policy resilience4j:"$T/none.yml"
contains "$ERR" "cannot read $T/none.yml" "the missing file is named"
expect_exit 2 "an unknown variant exits 2" "$FUSEBOX" run scenarios/retry-storm.json --variant x

# a cap stops the run: exit 2, the reason, and the files of the work done
expect_exit 2 "a cap stops the run with exit 2" "$FUSEBOX" run scenarios/retry-storm.json \
    --set limits.in_flight=300 --no-charts -q -o "$T/cap"
contains "$ERR" "in-flight cap reached" "the cap is named"
grep -q '"complete": false' "$T/cap/report.json"
ok $? "report.json of a capped run says complete: false"
[ "$(wc -l <"$T/cap/timeseries.csv")" -gt 10 ]
ok $? "a capped run keeps the time series it simulated"

# the mock refuses a time scale it cannot honour
expect_exit 2 "mock rejects an absurd --time-scale" "$FUSEBOX" mock --time-scale 1e-300
contains "$ERR" "--time-scale" "the bad --time-scale is named"

# validate
expect_exit 0 "validate accepts the flagship" "$FUSEBOX" validate scenarios/retry-storm.json
expect_exit 2 "validate rejects a typo" "$FUSEBOX" validate "$T/typo.json"
expect_exit 0 "validate accepts a folder, as check does" "$FUSEBOX" validate scenarios/
[ "$(printf '%s\n' "$OUT" | grep -c '^ok scenarios/')" -eq "$(ls scenarios/*.json | wc -l)" ]
ok $? "validate DIR says ok for every .json file in it"
mkdir -p "$T/vdir" && cp scenarios/retry-storm.json "$T/typo.json" "$T/vdir/"
expect_exit 2 "validate DIR with one bad file exits 2" "$FUSEBOX" validate "$T/vdir"
contains "$OUT" "ok $T/vdir/retry-storm.json" "the good file of the folder is still validated"
contains "$ERR" "$T/vdir/typo.json" "the bad file is named"
expect_exit 0 "validate FILE --set applies the override" \
    "$FUSEBOX" validate scenarios/retry-storm.json --set duration=10m
[ -z "$ERR" ] && [ "$OUT" = "ok scenarios/retry-storm.json (2 variants, 5 expectations)" ]
ok $? "validate --set prints only its ok line (got: $OUT / $ERR)"
expect_exit 2 "validate --set with an unknown key exits 2" \
    "$FUSEBOX" validate scenarios/retry-storm.json --set durtion=10m
contains "$ERR" "unknown key 'durtion' (did you mean 'duration'?)" "the bad --set key is named"
[ -z "$OUT" ]
ok $? "validate prints no ok line for a file its --set makes invalid"
expect_exit 2 "validate with an unknown option exits 2 before validating" \
    "$FUSEBOX" validate scenarios/retry-storm.json --sed 1
[ -z "$OUT" ]
ok $? "no ok line before the unknown option error"
cat >"$T/multi.json" <<'EOF'
{"name": "m", "duration": "10s", "bogus1": 1,
 "providers": [{"name": "openai", "capacity": 10, "typo_key": 2}], "bogus2": true}
EOF
expect_exit 2 "validate rejects a file with three unknown keys" "$FUSEBOX" validate "$T/multi.json"
contains "$ERR" "bogus1: unknown key 'bogus1'" "validate names the first unknown key"
contains "$ERR" "bogus2: unknown key 'bogus2'" "validate names the second, in the same pass"
contains "$ERR" "providers[0].typo_key: unknown key 'typo_key'" "and the third, with its JSON path"
[ "$(printf '%s\n' "$ERR" | grep -c 'unknown key')" -eq 3 ]
ok $? "each unknown key is named once"

# help CMD is CMD --help
for c in run check validate compare sweep tune merge mock live presets import import-policy export-policy verdict; do
    "$FUSEBOX" $c --help >"$T/h1" 2>&1
    "$FUSEBOX" help $c >"$T/h2" 2>&1
    r=$?
    cmp -s "$T/h1" "$T/h2" && [ $r -eq 0 ]
    ok $? "fusebox help $c prints what fusebox $c --help prints"
done
expect_exit 2 "help for an unknown command exits 2" "$FUSEBOX" help frobnicate
contains "$ERR" "unknown command 'frobnicate'" "help names the unknown command"

# docs stay true to the code: every metric is documented (the fault moved inside the shorter run)
documented=0
for m in $("$FUSEBOX" run scenarios/retry-storm.json --set duration=1m \
        --set 'providers.openai.faults[0].at=10s' -q --no-charts -o "$T/m" 2>/dev/null;
    python3 -c "import json,sys; print(' '.join(json.load(open(sys.argv[1]))['variants']['tuned']['summary']))" "$T/m/report.json"); do
    grep -q "\`$m\`" docs/metrics.md
    ok $? "docs/metrics.md documents $m"
    documented=$((documented + 1))
done
[ "$documented" -gt 40 ]
ok $? "the metric names were read from a report ($documented of them)"
finish
