#!/bin/sh
# tests/e2e/live.sh - `fusebox live` on loopback: the report files, stream failures read off
# the wire in both dialects, bad input, a `fusebox mock` as the target, targets that refuse
# connections, answer nothing, reset every attempt or flood (tests/e2e/flood_server.py), and
# Ctrl-C. TAP output. Every run is a few seconds of real time. A run that exits 3 could not
# keep the scenario's timing (a busy machine): its exit test is a skip with the reason, and the
# checks that follow read what it measured, which holds whatever the timing.
. tests/tap.sh
T=$E2E_TMP
S=tests/e2e/live/small.json

# ---- a small scenario writes what `fusebox run` writes ----
live_exit "$T/a" "live on a small scenario exits 0" "$FUSEBOX" live "$S" --time-scale 5 -o "$T/a"
writes "$T/a" live report.json timeseries.csv events.jsonl report.html live.json \
    charts/outcomes.svg charts/breakers.svg charts/latency.svg
contains "$OUT" "live over HTTP at x5" "live prints how it ran"
[ "$(json "$T/a/report.json" "r['complete']")" = True ]
ok $? "report.json says the run is complete"
[ "$(json "$T/a/report.json" "r['variants']['default']['summary']['success_rate']")" = 1.0 ]
ok $? "every request succeeded, streamed ones included (terminators read)"
[ "$(json "$T/a/report.json" "r['variants']['default']['outcomes']['success_fallback'] > 50")" = True ]
ok $? "the outage sent requests to the fallback"
contains "$OUT" "The disturbance: openai outage 503 from 3.0s to 7.0s." \
    "live prints the run's verdict, as fusebox run does"
rows=$(($(wc -l <"$T/a/timeseries.csv") - 1))
[ "$rows" -eq 10 ]
ok $? "timeseries.csv has a row per simulated second ($rows)"
grep -q '"type":"breaker".*"to":"open"' "$T/a/events.jsonl"
ok $? "events.jsonl has the breaker opening"
[ "$(json "$T/a/live.json" "r['providers']['anthropic']['dialect'] + ' ' + r['providers']['openai']['target']")" = "anthropic mock" ]
ok $? "live.json: the dialect follows the provider's name, mocks in-process"
[ "$(json "$T/a/live.json" "set(['budget_ms', 'cancelled_share', 'cause', 'driver_cpu_share', 'lag_ms', 'lag_real_ms', 'reason', 'shortest', 'shortest_ms', 'tail_budget_ms', 'tail_ms', 'verdict']) <= set(r['variants']['default']['fidelity'])")" = True ]
ok $? "live.json: the fidelity verdict with its numbers"
[ "$(json "$T/a/live.json" "r['variants']['default']['fidelity']['shortest']")" = \
    "providers.openai.latency.error (median)" ]
ok $? "the shortest time that matters is the error latency (20 ms)"
[ "$(json "$T/a/report.json" "(r['interrupted'], r['live']['verdict'] in ('ok', 'inconclusive'))")" = "(False, True)" ]
ok $? "report.json says the run was not interrupted, and gives the verdict"

# ---- a run that cannot keep the timing says so before its verdict ----
run_kept "$FUSEBOX" live "$S" --time-scale 1000 --no-charts -o "$T/fast"
if [ "$got" -eq 3 ]; then
    printf '%s\n' "$OUT" | awk '/^default: INCONCLUSIVE, / && !i { i = NR }
        /^The verdict below is of the run as driven/ && i && !b { b = NR }
        /^The disturbance: / && b { v = NR } END { exit !(i && b && v > b) }'
    ok $? "inconclusive at x1000: the reason, then that the verdict is of the run, then the verdict"
else
    skip "inconclusive at x1000: the reason before the verdict" "the run kept its timing (exit $got)"
fi

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
live_exit "$T/mid" "live with in-band errors, truncated and cut streams" \
    "$FUSEBOX" live "$T/mid.json" --time-scale 2 --no-charts -q -o "$T/mid"
[ "$(json "$T/mid/report.json" "r['variants']['default']['outcomes']['errors']['stream_broken']")" = 120 ]
ok $? "every stream broke after its first token (error, truncate, cut; both dialects)"
[ "$(json "$T/mid/report.json" "r['variants']['default']['providers']['anthropic']['tokens']['out']")" = 180 ]
ok $? "the tokens streamed before each failure are billed (3 per attempt)"

# ---- a variant with a gateway tier: the tier runs on the driver's clock, its calls over HTTP ----
cat >"$T/gw.json" <<'JSON'
{"name": "live-gateway", "seed": 5, "duration": "6s",
 "traffic": [{"class": "chat", "arrivals": {"poisson": "20/s"}, "prompt_tokens": 200, "completion_tokens": 20}],
 "pods": {"count": 4, "workers": 16, "queue": 32, "request_timeout": "10s"},
 "providers": [
   {"name": "openai", "latency": {"ttft": "200ms", "per_output_token": "5ms", "error": "20ms"},
    "faults": [{"at": "2s", "for": "2s", "outage": {"status": 503}}]},
   {"name": "anthropic", "latency": {"ttft": "300ms", "per_output_token": "5ms", "error": "20ms"}}],
 "variants": {"tier": {
   "layers": [{"name": "app", "retry": {"attempts": 2, "backoff": {"constant": "100ms"}, "jitter": "none"}}],
   "gateway": {"replicas": 2, "workers": 8, "queue": 16,
     "layers": [{"name": "gw", "breaker": {"consecutive_failures": 5, "open": "1s"},
                 "fallback": ["openai", "anthropic"]}]}}}}
JSON
live_exit "$T/gw" "live runs a variant with a gateway tier" "$FUSEBOX" live "$T/gw.json" \
    --time-scale 5 --no-charts -o "$T/gw"
contains "$OUT" "gateway of tier: 2 replicas x 8 workers, queue 16" \
    "... and prints the tier's table, as fusebox run does"
[ "$(json "$T/gw/report.json" "(r['variants']['tier']['summary']['gateway_calls'] == r['variants']['tier']['summary']['requests'] > 0, len(r['variants']['tier']['gateway']['per_replica']))")" = "(True, 2)" ]
ok $? "report.json: every request called the tier, per replica figures for its 2 replicas"
[ "$(json "$T/gw/report.json" "r['variants']['tier']['outcomes']['success_fallback'] > 0")" = True ]
ok $? "the tier's fallback served the outage over HTTP"

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
live_exit "$T/m" "live --target URL (a fusebox mock) exits 0" \
    "$FUSEBOX" live "$T/plain.json" --target "$URL/v1" --time-scale 5 --no-charts -q -o "$T/m"
[ "$(json "$T/m/report.json" "r['variants']['default']['summary']['success_rate']")" = 1.0 ]
ok $? "every request through the external mock succeeded"
curl -s -m 5 "$URL/__fusebox/stats" >"$T/stats.json"
att=$(json "$T/m/report.json" "r['variants']['default']['summary']['attempts']")
[ "$(json "$T/stats.json" "r['attempts']")" = "$att" ] && [ "$att" -eq 150 ]
ok $? "the mock saw exactly the driver's attempts ($att)"
curl -s -m 5 "$URL/__fusebox/log" >"$T/log.json"
[ "$(json "$T/log.json" "sorted(set(e['path'] for e in r['entries'] if e['method'] == 'POST'))")" = "['/v1/messages']" ]
ok $? "provider 'claude' spoke the Anthropic dialect"
[ "$(json "$T/log.json" "sorted(set((e['method'], e['path']) for e in r['entries'] if e['method'] != 'POST'))")" = "[('GET', '/v1/models')]" ]
ok $? "... after the probe before the clock started (GET /v1/models)"
mock_stop

# ---- the retry count, as the SDKs send it: the mock's retry_fraction tells retries apart ----
# first attempts: half get a 503 (even), none a 429; retries (x-stainless-retry-count above 0):
# never a 503, always a 429. Counts, whatever the timing.
printf '%s\n' '[{"outage":{"status":503,"fraction":0.5,"retry_fraction":0,"sampling":"even"}},
 {"rate_limit":{"fraction":0,"retry_fraction":1,"sampling":"even"}}]' >"$T/retry_faults.json"
cat >"$T/retry.json" <<'JSON'
{"name": "live-retry-count", "seed": 2, "duration": "3s",
 "traffic": [{"class": "chat", "arrivals": {"constant": "20/s"}, "completion_tokens": 8}],
 "providers": [{"name": "openai", "latency": {"ttft": "20ms", "error": "10ms"}}],
 "policy": {"retry": {"attempts": 3, "backoff": {"constant": "50ms"}, "jitter": "none"}}}
JSON
mock_start "$T/url" "$FUSEBOX" mock --port 0 --quiet --ttft 10ms --faults "$T/retry_faults.json"
URL=$MOCK_URL
live_exit "$T/rc" "live against a mock whose faults meet first attempts and retries apart" \
    "$FUSEBOX" live "$T/retry.json" --target "$URL/v1" --time-scale 2 --no-charts -q -o "$T/rc"
curl -s -m 5 "$URL/__fusebox/log" >"$T/rc_log.json"
mock_stop
# (retry_count, status) -> attempts, the driver's POSTs only
by=$(json "$T/rc_log.json" "sorted(__import__('collections').Counter((e['retry_count'], e['status']) for e in r['entries'] if e['method'] == 'POST').items())")
n() { json "$T/rc_log.json" "sum(1 for e in r['entries'] if e['method'] == 'POST' and ($1))"; }
[ "$(n "e['retry_count'] is None")" -eq 0 ] && [ "$(n "e['retry_count'] == 0")" -ge 50 ]
ok $? "every attempt carries x-stainless-retry-count, 0 on a request's first ($by)"
[ "$(n "e['retry_count'] == 0 and e['status'] == 429")" -eq 0 ] &&
    [ "$(n "e['retry_count'] == 0 and e['status'] == 503")" -ge 20 ] &&
    [ "$(n "e['retry_count'] == 0 and e['status'] == 200")" -ge 20 ]
ok $? "first attempts: 503s and 200s, no 429 (fraction 0)"
r1=$(n "e['retry_count'] == 1") r2=$(n "e['retry_count'] == 2")
[ "$(n "e['retry_count'] > 0 and e['status'] != 429")" -eq 0 ] && [ "$r1" -ge 20 ] &&
    [ "$r2" -le "$r1" ] && [ "$r1" -le "$(n "e['retry_count'] == 0 and e['status'] == 503")" ] &&
    [ "$(n "e['retry_count'] > 2")" -eq 0 ]
ok $? "retries: every one a 429 (retry_fraction 1), numbered 1 and 2 (3 attempts at most)"
[ "$(json "$T/rc/report.json" "r['variants']['default']['summary']['attempts']")" = \
    "$(n "True")" ]
ok $? "the mock logged the driver's attempts, no more"

# ---- targets that refuse, say nothing, reset or flood ----
expect_exit 2 "a target that refuses connections exits 2" \
    "$FUSEBOX" live "$T/plain.json" --target http://127.0.0.1:1 --time-scale 5 --no-charts -q \
    -o "$T/refused"
contains "$ERR" "provider openai: http://127.0.0.1:1 refuses connections" "the target is named"
# with a fallback to a mock, every request would succeed: the run must not start at all
expect_exit 2 "a refusing primary exits 2 even with a working fallback" \
    "$FUSEBOX" live "$S" --target openai=http://127.0.0.1:1 --time-scale 5 --no-charts -q \
    -o "$T/refused2"
contains "$ERR" "provider openai: http://127.0.0.1:1 refuses connections" "the primary is named"
[ ! -f "$T/refused2/live.json" ] && [ "$(json "$T/refused2/report.json" "len(r['variants'])")" = 0 ]
ok $? "nothing was run: no 100% success via fallback"

flood_start() {
    rm -f "$T/flood.url"
    python3 tests/e2e/flood_server.py "$@" >"$T/flood.url" &
    FLOOD_PID=$!
    FLOOD_URL=$(wait_url "$T/flood.url" 100)
}
flood_stop() {
    kill "$FLOOD_PID" 2>/dev/null
    wait "$FLOOD_PID" 2>/dev/null
}

flood_start silent 30
expect_exit 2 "a target that answers nothing exits 2" \
    "$FUSEBOX" live "$S" --target "anthropic=$FLOOD_URL" --no-charts -q -o "$T/silent"
contains "$ERR" "provider anthropic: $FLOOD_URL answered nothing within 5.0 s" \
    "the silent target is named"
flood_stop

cat >"$T/flood.json" <<'JSON'
{"name": "live-flood", "seed": 5, "duration": "3s",
 "traffic": [{"class": "c", "arrivals": {"constant": "20/s"}, "completion_tokens": 1000000}],
 "providers": [{"name": "openai", "latency": {"ttft": "50ms"}}],
 "policy": {"retry": {"attempts": 1, "attempt_timeout": "300ms"}}}
JSON
# the answer cap is 1 MiB + 1 KiB x 1,000,000 tokens, far more than 300 ms of loopback carries
for mode in body sse; do
    flood_start "$mode" 60
    start=$(date +%s)
    live_exit "$T/flood-$mode" "a flooding target ($mode) ends in time" "$FUSEBOX" live \
        "$T/flood.json" --target "$FLOOD_URL" --no-charts -q -o "$T/flood-$mode"
    took=$(($(date +%s) - start))
    flood_stop
    [ "$took" -le 15 ]
    ok $? "$mode: the run took ${took}s of its 3s, not minutes"
    [ "$(json "$T/flood-$mode/report.json" "(lambda v: (v['outcomes']['errors']['exhausted'], v['summary']['attempts'], v['providers']['openai']['outcomes']['timeout']))(r['variants']['default'])")" = "(60, 60, 60)" ]
    ok $? "$mode: every attempt ended at its 300 ms timeout, whatever the target sent"
done

flood_start body 60
live_exit "$T/cap" "an oversized answer is cut at the cap" "$FUSEBOX" live "$S" \
    --target "openai=$FLOOD_URL" --time-scale 5 --no-charts -q -o "$T/cap"
flood_stop
[ "$(json "$T/cap/live.json" "(lambda v: v['oversized'] > 0 and v['bytes_received'] < v['oversized'] * 1.2e6)(r['variants']['default'])")" = True ]
ok $? "each flooded answer stopped at about 1 MiB (counted as oversized)"
[ "$(json "$T/cap/report.json" "r['variants']['default']['outcomes']['success_fallback'] > 100")" = True ]
ok $? "the oversized answers are broken replies: requests fell back to the mock"

flood_start reset 60
live_exit "$T/reset" "a target that resets every attempt ends every request in an error" \
    "$FUSEBOX" live "$T/plain.json" --target "$FLOOD_URL" --time-scale 5 --no-charts -q \
    -o "$T/reset"
flood_stop
[ "$(json "$T/reset/report.json" "r['variants']['default']['summary']['success_rate']")" = 0.0 ]
ok $? "no request succeeded"
[ "$(json "$T/reset/live.json" "r['variants']['default']['transport_errors'] == r['variants']['default']['transfers'] > 0")" = True ]
ok $? "every transfer was a transport error"

# ---- answers later than the target planned (x-fusebox-plan-us) make the run inconclusive ----
cat >"$T/late.json" <<'JSON'
{"name": "live-late", "seed": 5, "duration": "2s",
 "traffic": [{"class": "c", "arrivals": {"constant": "20/s"}, "completion_tokens": 1}],
 "providers": [{"name": "openai", "latency": {"ttft": "10ms"}}],
 "policy": {"retry": {"attempts": 1}}}
JSON
flood_start late 30
run_kept "$FUSEBOX" live "$T/late.json" --target "$FLOOD_URL" -q -o "$T/late"
flood_stop
[ "$got" -eq 3 ]
ok $? "a target that answers 50 ms later than it planned: inconclusive, exit 3 (got $got)"
[ "$(json "$T/late/live.json" "(lambda v: v['timekeeping']['planned_answers'] == v['transfers'] == 40 and v['fidelity']['answer_late_real_ms'] > 40)(r['variants']['default'])")" = True ]
ok $? "live.json counts the 40 planned answers and their lateness (p99 over 40 ms)"
contains "$(live_reason "$T/late")" "ms later than the target planned" "the reason names the late answers"
contains "$(cat "$T/late/report.html")" '<div class="warn" id="warning">
<p><b>Inconclusive: this live run could not keep' "report.html says first that the run is inconclusive"
contains "$(cat "$T/late/report.html")" "<li>default: " "... and why, per variant"
flood_start ontime 30
live_exit "$T/ontime" "a target that answers as planned keeps the run conclusive" \
    "$FUSEBOX" live "$T/late.json" --target "$FLOOD_URL" -q -o "$T/ontime"
flood_stop
if [ -z "$INCONCLUSIVE" ]; then
    ! grep -q 'id="warning"' "$T/ontime/report.html"
    ok $? "a conclusive run's report.html has no warning"
else
    skip "a conclusive run's report.html has no warning" "inconclusive: $INCONCLUSIVE"
fi
[ "$(json "$T/ontime/live.json" "(lambda v: v['timekeeping']['planned_answers'] == v['transfers'] == 40 and v['timekeeping']['answer_late_p50_ms'] < 40)(r['variants']['default'])")" = True ]
ok $? "the on-time answers are counted, 10 ms each as planned (median late under 40 ms)"

# ---- Ctrl-C stops cleanly and keeps what was measured ----
echo '{"an earlier": "trace"}' >"$T/int.otlp"
"$FUSEBOX" live tests/e2e/live/outage-fallback.json --variant breaker --time-scale 2 --no-charts \
    -q -o "$T/int" --otlp "$T/int.otlp" 2>"$T/int.err" &
LPID=$!
for _ in $(seq 1 200); do
    _ts=$T/int/.fusebox-new/timeseries.csv
    [ -f "$_ts" ] && [ "$(wc -l <"$_ts")" -ge 3 ] && break
    sleep 0.05
done
kill -INT "$LPID"
wait "$LPID"
rc=$?
[ $rc -eq 130 ]
ok $? "Ctrl-C exits 130, as fusebox run (got $rc)"
contains "$(cat "$T/int.err")" "fusebox live: interrupted (SIGINT); $T/int/ holds what was measured" \
    "Ctrl-C: one line says the folder holds what was measured"
[ ! -d "$T/int/.fusebox-new" ] && [ -f "$T/int/live.json" ]
ok $? "Ctrl-C: the staged files are moved in, live.json among them"
[ "$(json "$T/int.otlp" "len(r['resourceSpans']) > 0")" = True ] && [ ! -e "$T/int.otlp.fusebox-new" ]
ok $? "Ctrl-C: the OTLP file holds the spans of what was driven, renamed over the earlier one"
[ "$(json "$T/int/live.json" "'The simulation makes' in r['variants']['breaker']['fidelity']['reason']")" = False ]
ok $? "Ctrl-C: the cut run is not judged against the whole simulation's attempts"
[ "$(json "$T/int/report.json" "r['variants']['breaker']['complete']")" = False ]
ok $? "report.json is written and says the run is incomplete"
grep -q '"stopped": "interrupted at t=' "$T/int/report.json" &&
    [ "$(json "$T/int/live.json" "r['interrupted']")" = True ]
ok $? "the reason is given"
[ "$(json "$T/int/report.json" "r['interrupted']")" = True ]
ok $? "report.json says interrupted: true"

# ---- Ctrl-C while a target floods: the signal still gets through ----
flood_start sse 60
"$FUSEBOX" live "$T/flood.json" --set duration=60s --target "$FLOOD_URL" --no-charts -q \
    -o "$T/int2" 2>"$T/int2.err" &
LPID=$!
sleep 1
start=$(date +%s)
kill -INT "$LPID"
wait "$LPID"
rc=$?
took=$(($(date +%s) - start))
flood_stop
[ $rc -eq 130 ] && [ "$took" -le 5 ]
ok $? "Ctrl-C during a flood exits 130 within 5 s (exit $rc after ${took}s)"
[ "$(json "$T/int2/report.json" "(r['interrupted'], r['complete'])")" = "(True, False)" ]
ok $? "report.json says interrupted: true, complete: false"

# ---- a write that fails leaves the earlier run, prints no summary and no wrote line ----
cp -R "$T/a" "$T/full"
(
    trap '' XFSZ
    ulimit -f 10 # 5 KiB a file: report.json (7 KiB) is larger, the data files and live.json not
    exec "$FUSEBOX" live "$S" --time-scale 5 --no-charts -o "$T/full" >"$T/full.out" 2>"$T/full.err"
)
rc=$?
[ $rc -eq 2 ]
ok $? "a file too large: exit 2 (got $rc)"
contains "$(cat "$T/full.err")" "fusebox live: cannot write $T/full/report.json: File too large" \
    "a file too large: the message names report.json and the reason"
grep -q -e wrote -e 'success rate' -e 'live over HTTP' "$T/full.out"
ok $((!$?)) "a file too large: no summary, no wrote line (stdout: $(head -c 200 "$T/full.out"))"
same_files "$T/a" "$T/full" report.json live.json timeseries.csv events.jsonl report.html &&
    [ ! -d "$T/full/.fusebox-new" ]
ok $? "a file too large: the earlier run is left whole, live.json included"

finish
