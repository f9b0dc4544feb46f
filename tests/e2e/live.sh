#!/bin/sh
# tests/e2e/live.sh - `fusebox live` on loopback: the report files, stream failures read off
# the wire in both dialects, bad input, a `fusebox mock` as the target, a target that refuses
# connections, and Ctrl-C. TAP output. Every run is a few seconds of real time.
. tests/tap.sh
T=$E2E_TMP
S=tests/e2e/live/small.json

# ---- a small scenario writes what `fusebox run` writes ----
expect_exit 0 "live on a small scenario exits 0" "$FUSEBOX" live "$S" --time-scale 5 -o "$T/a"
writes "$T/a" live report.json timeseries.csv events.jsonl report.html live.json \
    charts/outcomes.svg charts/breakers.svg charts/latency.svg
contains "$OUT" "live over HTTP at x5" "live prints how it ran"
[ "$(json "$T/a/report.json" "r['complete']")" = True ]
ok $? "report.json says the run is complete"
[ "$(json "$T/a/report.json" "r['variants']['default']['summary']['success_rate']")" = 1.0 ]
ok $? "every request succeeded, streamed ones included (terminators read)"
[ "$(json "$T/a/report.json" "r['variants']['default']['outcomes']['success_fallback'] > 50")" = True ]
ok $? "the outage sent requests to the fallback"
rows=$(($(wc -l <"$T/a/timeseries.csv") - 1))
[ "$rows" -eq 10 ]
ok $? "timeseries.csv has a row per simulated second ($rows)"
grep -q '"type":"breaker".*"to":"open"' "$T/a/events.jsonl"
ok $? "events.jsonl has the breaker opening"
[ "$(json "$T/a/live.json" "r['providers']['anthropic']['dialect'] + ' ' + r['providers']['openai']['target']")" = "anthropic mock" ]
ok $? "live.json: the dialect follows the provider's name, mocks in-process"

# ---- stream failures, read off the wire, in both dialects ----
cat >"$T/mid.json" <<'JSON'
{"name": "live-midstream", "seed": 4, "duration": "3s",
 "traffic": [
   {"class": "oa", "arrivals": {"constant": "20/s"}, "completion_tokens": 10, "stream": true, "target": "openai"},
   {"class": "an", "arrivals": {"constant": "20/s"}, "completion_tokens": 10, "stream": true, "target": "anthropic"}],
 "providers": [
   {"name": "openai", "latency": {"ttft": "50ms", "per_output_token": "5ms"},
    "faults": [{"at": "0s", "for": "1s", "midstream": {"after_tokens": 3, "mode": "error"}},
               {"at": "1s", "for": "1s", "midstream": {"after_tokens": 3, "mode": "truncate"}},
               {"at": "2s", "for": "1h", "midstream": {"after_tokens": 3, "mode": "cut"}}]},
   {"name": "anthropic", "latency": {"ttft": "50ms", "per_output_token": "5ms"},
    "faults": [{"at": "0s", "for": "1s", "midstream": {"after_tokens": 3, "mode": "error"}},
               {"at": "1s", "for": "1s", "midstream": {"after_tokens": 3, "mode": "truncate"}},
               {"at": "2s", "for": "1h", "midstream": {"after_tokens": 3, "mode": "cut"}}]}],
 "policy": {"stream": "fail"}}
JSON
expect_exit 0 "live with in-band errors, truncated and cut streams" \
    "$FUSEBOX" live "$T/mid.json" --time-scale 2 --no-charts -q -o "$T/mid"
[ "$(json "$T/mid/report.json" "r['variants']['default']['outcomes']['errors']['stream_broken']")" = 120 ]
ok $? "every stream broke after its first token (error, truncate, cut; both dialects)"
[ "$(json "$T/mid/report.json" "r['variants']['default']['providers']['anthropic']['tokens']['out']")" = 180 ]
ok $? "the tokens streamed before each failure are billed (3 per attempt)"

# ---- bad input ----
expect_exit 2 "live without a scenario exits 2" "$FUSEBOX" live
expect_exit 2 "an unknown option exits 2" "$FUSEBOX" live "$S" --frobnicate
contains "$ERR" "unknown option '--frobnicate'" "the unknown option is named"
expect_exit 2 "a missing scenario exits 2" "$FUSEBOX" live "$T/nope.json"
expect_exit 2 "--target for an unknown provider exits 2" "$FUSEBOX" live "$S" --target gemini=http://x
contains "$ERR" "no provider named 'gemini'" "the unknown provider is named"
expect_exit 2 "a bad dialect exits 2" "$FUSEBOX" live "$S" --dialect openai=grpc
expect_exit 2 "--time-scale 0 exits 2" "$FUSEBOX" live "$S" --time-scale 0
expect_exit 2 "a bad tolerance exits 2" "$FUSEBOX" live "$S" --compare --tolerance speed=1
expect_exit 2 "a target that is not a URL exits 2" "$FUSEBOX" live "$S" --target ftp://127.0.0.1:1 \
    --no-charts -q -o "$T/bad"
contains "$ERR" "not an http:// or https:// URL" "the bad URL is named"

# ---- caps are reported errors ----
expect_exit 2 "the transfer cap stops the run with exit 2" \
    "$FUSEBOX" live "$S" --max-transfers 2 --time-scale 5 --no-charts -q -o "$T/cap"
contains "$ERR" "transfers in flight, the cap (--max-transfers)" "the cap is named"
[ "$(json "$T/cap/report.json" "r['complete']")" = False ]
ok $? "report.json is written and says the run stopped early"
expect_exit 2 "the scenario's in-flight cap stops the run with exit 2" \
    "$FUSEBOX" live "$S" --set limits.in_flight=3 --time-scale 5 --no-charts -q -o "$T/cap2"
contains "$ERR" "in-flight cap reached" "the scenario cap is named"

# ---- a `fusebox mock` started here as the target ----
cat >"$T/plain.json" <<'JSON'
{"name": "live-plain", "seed": 2, "duration": "5s",
 "traffic": [{"class": "chat", "arrivals": {"constant": "20/s"}, "completion_tokens": 8},
             {"class": "chat-stream", "arrivals": {"constant": "10/s"}, "completion_tokens": 8, "stream": true}],
 "providers": [{"name": "openai", "latency": {"ttft": "100ms"}},
               {"name": "claude", "latency": {"ttft": "100ms"}}],
 "policy": {"fallback": ["claude", "openai"]}}
JSON
mock_start "$T/url" "$FUSEBOX" mock --port 0 --quiet --ttft 10ms
URL=$MOCK_URL
[ -n "$URL" ]
ok $? "fusebox mock prints its URL"
expect_exit 0 "live --target URL (a fusebox mock) exits 0" \
    "$FUSEBOX" live "$T/plain.json" --target "$URL/v1" --time-scale 5 --no-charts -q -o "$T/m"
[ "$(json "$T/m/report.json" "r['variants']['default']['summary']['success_rate']")" = 1.0 ]
ok $? "every request through the external mock succeeded"
curl -s -m 5 "$URL/__fusebox/stats" >"$T/stats.json"
att=$(json "$T/m/report.json" "r['variants']['default']['summary']['attempts']")
[ "$(json "$T/stats.json" "r['attempts']")" = "$att" ] && [ "$att" -eq 150 ]
ok $? "the mock saw exactly the driver's attempts ($att)"
curl -s -m 5 "$URL/__fusebox/log" >"$T/log.json"
[ "$(json "$T/log.json" "sorted(set(e['path'] for e in r['entries']))")" = "['/v1/messages']" ]
ok $? "provider 'claude' spoke the Anthropic dialect"
mock_stop

# ---- a target that refuses connections ----
expect_exit 0 "a refusing target ends every request in an error, not a hang" \
    "$FUSEBOX" live "$T/plain.json" --target http://127.0.0.1:1 --time-scale 5 --no-charts -q \
    -o "$T/refused"
[ "$(json "$T/refused/report.json" "r['variants']['default']['summary']['success_rate']")" = 0.0 ]
ok $? "no request succeeded"
[ "$(json "$T/refused/live.json" "r['variants']['default']['transport_errors'] == r['variants']['default']['transfers'] > 0")" = True ]
ok $? "every transfer was a transport error"

# ---- Ctrl-C stops cleanly and keeps what was measured ----
"$FUSEBOX" live tests/e2e/live/outage-fallback.json --variant breaker --time-scale 2 --no-charts \
    -q -o "$T/int" 2>"$T/int.err" &
LPID=$!
for _ in $(seq 1 200); do
    [ -f "$T/int/timeseries.csv" ] && [ "$(wc -l <"$T/int/timeseries.csv")" -ge 3 ] && break
    sleep 0.05
done
kill -INT "$LPID"
wait "$LPID"
[ $? -eq 2 ]
ok $? "Ctrl-C exits 2"
[ "$(json "$T/int/report.json" "r['variants']['breaker']['complete']")" = False ]
ok $? "report.json is written and says the run is incomplete"
grep -q '"stopped": "interrupted at t=' "$T/int/report.json" &&
    [ "$(json "$T/int/live.json" "r['interrupted']")" = True ]
ok $? "the reason is given"

finish
