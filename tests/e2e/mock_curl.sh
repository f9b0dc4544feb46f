#!/bin/sh
# tests/e2e/mock_curl.sh - `fusebox mock` driven by the curl command-line tool. TAP output.
. tests/tap.sh
set -u
D=$(logs_dir mock-curl)
need curl "$D/apt.log" curl
plan 35

cat >"$D/faults.json" <<'JSON'
[{"at": "0s", "for": "1h", "rate_limit": {"status": 429, "retry_after": "20s", "fraction": 0}}]
JSON
mock_start "$D/url" "$FUSEBOX" mock --port 0 --faults "$D/faults.json" --quiet
URL=$MOCK_URL
check "prints its URL on stdout" test -n "$URL"
C="curl -s -m 5"
J="Content-Type: application/json"

body=$($C -H "$J" "$URL/v1/chat/completions" \
    -d '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}],"max_tokens":3}')
check "chat completion answers with usage" \
    sh -c 'echo "$1" | grep -q "\"completion_tokens\":3"' _ "$body"

hdrs=$($C -D - -o /dev/null -H "$J" "$URL/v1/chat/completions" \
    -d '{"model":"fb-429-retry-after-2","messages":[]}')
check "model fb-429-retry-after-2 gives 429" sh -c 'echo "$1" | grep -q "^HTTP/1.1 429"' _ "$hdrs"
check "with retry-after: 2" sh -c 'echo "$1" | tr -d "\r" | grep -qi "^retry-after: 2$"' _ "$hdrs"

code=$($C -o "$D/anthropic.json" -w '%{http_code}' -H "$J" -H 'x-fusebox-fault: 529' \
    -H 'anthropic-version: 2023-06-01' "$URL/v1/messages" \
    -d '{"model":"claude","max_tokens":5,"messages":[]}')
check "header fault 529 on /v1/messages" test "$code" = 529
check "Anthropic overloaded_error body" grep -q '"type":"overloaded_error"' "$D/anthropic.json"

$C -N -H "$J" "$URL/v1/messages" \
    -d '{"model":"claude","max_tokens":2,"stream":true,"messages":[]}' >"$D/stream.txt"
check "Anthropic stream ends with message_stop" \
    sh -c 'grep "^event:" "$1" | tail -n 1 | grep -q "message_stop"' _ "$D/stream.txt"

$C -N -H "$J" -H 'x-fusebox-fault: cut-1' "$URL/v1/chat/completions" \
    -d '{"model":"m","stream":true,"messages":[]}' >"$D/cut.txt"
rc=$?
check "cut-1 stream is an abortive close (curl exit 18)" test "$rc" = 18

$C -m 1 -H "$J" -H 'x-fusebox-fault: hang' "$URL/v1/chat/completions" -d '{"model":"m","messages":[]}' >/dev/null
rc=$?
check "hang times the client out (curl exit 28)" test "$rc" = 28

code=$($C -o "$D/bad.json" -w '%{http_code}' -H "$J" "$URL/__fusebox/faults" \
    -d '[{"outage":{"fraction":7}}]')
check "bad fault script is a 400 naming the path" \
    sh -c '[ "$1" = 400 ] && grep -q "faults\[0\].outage.fraction" "$2"' _ "$code" "$D/bad.json"

$C "$URL/__fusebox/log" >"$D/log.json"
check "attempt log lists the attempts" grep -q '"total":6' "$D/log.json"

# retry_fraction: first attempts never, retries (x-stainless-retry-count above 0) always
$C -o /dev/null -H "$J" "$URL/__fusebox/faults" \
    -d '[{"rate_limit":{"fraction":0,"retry_fraction":1,"sampling":"even"}}]'
codes=""
for rc in "" 0 1 2 0 3; do
    h=""
    [ -n "$rc" ] && h="x-stainless-retry-count: $rc"
    codes="$codes $($C -o /dev/null -w '%{http_code}' -H "$J" ${h:+-H "$h"} \
        "$URL/v1/chat/completions" -d '{"model":"m","messages":[],"max_tokens":1}')"
done
check "retry_fraction: a 429 for the requests whose x-stainless-retry-count is above 0 alone" \
    test "$codes" = " 200 200 429 429 200 429"

# a share per retry number: the first retry never, the second and later ones always
$C -o /dev/null -H "$J" "$URL/__fusebox/faults" \
    -d '[{"rate_limit":{"fraction":0,"retry_fraction":[0,1],"sampling":"even"}}]'
codes=""
for rc in 0 1 2 1 5 0; do
    codes="$codes $($C -o /dev/null -w '%{http_code}' -H "$J" -H "x-stainless-retry-count: $rc" \
        "$URL/v1/chat/completions" -d '{"model":"m","messages":[],"max_tokens":1}')"
done
check "retry_fraction [0, 1]: a 429 for the retries numbered 2 and above alone ($codes)" \
    test "$codes" = " 200 200 429 200 429 200"

mock_stop
check "SIGTERM stops it with exit 0" test "$MOCK_RC" = 0

# A scenario's provider, down from 5m to 23m. At 600x a timeline minute is 100 ms: wait
# 6 timeline minutes with a delayed answer, then expect the 503.
cat >"$D/scenario.json" <<'JSON'
{"name": "mock-e2e", "seed": 1, "duration": "1h",
 "traffic": [{"class": "chat", "arrivals": {"poisson": "1/s"}}],
 "providers": [{"name": "p1", "faults": [{"at": "5m", "for": "18m", "outage": {"status": 503}}]}],
 "policy": {}}
JSON
"$FUSEBOX" mock --scenario "$D/scenario.json" --provider nope >/dev/null 2>"$D/nope.err"
check "unknown scenario provider exits 2" test $? = 2
mock_start "$D/url2" "$FUSEBOX" mock --port 0 --quiet --time-scale 600 --scenario "$D/scenario.json" \
    --provider p1
URL=$MOCK_URL
early=$($C -o /dev/null -w '%{http_code}' -H "$J" "$URL/v1/chat/completions" -d '{"model":"m","messages":[]}')
$C -o /dev/null -H "$J" -H 'x-fusebox-fault: ttft-6m' "$URL/v1/chat/completions" -d '{"model":"m","messages":[]}'
late=$($C -o /dev/null -w '%{http_code}' -H "$J" "$URL/v1/chat/completions" -d '{"model":"m","messages":[]}')
check "scenario provider: healthy before its outage, 503 during it ($early, $late)" \
    test "$early" = 200 -a "$late" = 503
mock_stop

# A slow fault whose factor is a distribution: each attempt draws its own factor (2 or 6
# on a constant 100 ms first token), the same ones for the same seed.
cat >"$D/slowdist.json" <<'JSON'
[{"slow": {"factor": {"empirical": {"values": [2, 6]}}}}]
JSON
for run in 1 2; do
    mock_start "$D/url-slow$run" "$FUSEBOX" mock --port 0 --quiet --time-scale 100 --ttft 100ms \
        --faults "$D/slowdist.json"
    URL=$MOCK_URL
    i=0
    while [ $i -lt 12 ]; do
        $C -o /dev/null -H "$J" "$URL/v1/chat/completions" -d '{"model":"m","messages":[]}'
        i=$((i + 1))
    done
    $C "$URL/__fusebox/log" >"$D/slow$run.json"
    mock_stop
done
check "a slow factor distribution: each attempt 2x or 6x, both seen, the same for the same seed" \
    python3 -c '
import json, sys
lat = [[x["latency_ms"] for x in json.load(open(f))["entries"]] for f in sys.argv[1:]]
sys.exit(not (lat[0] == lat[1] and len(lat[0]) == 12 and set(lat[0]) == {200, 600}))' \
    "$D/slow1.json" "$D/slow2.json"

# The other dialects and APIs, through curl.
mock_start "$D/url3" "$FUSEBOX" mock --port 0 --quiet --time-scale 1000 \
    --ttft '{"uniform":{"min":"1s","max":"2s"}}' --error-latency 5s
URL=$MOCK_URL
$C -N -H "$J" "$URL/v1/responses" -d '{"model":"gpt-4o","input":"hi","stream":true}' >"$D/responses.txt"
check "Responses API stream ends with response.completed" \
    sh -c 'grep "^event:" "$1" | tail -n 1 | grep -q "response.completed"' _ "$D/responses.txt"
code=$($C -o "$D/azure.json" -w '%{http_code}' -H "$J" -H 'api-key: k' \
    "$URL/openai/deployments/gpt4o/chat/completions?api-version=2024-10-21" -d '{"messages":[]}')
check "Azure deployment path answers" test "$code" = 200
$C -N -H "$J" -H 'x-goog-api-key: k' \
    "$URL/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse" \
    -d '{"contents":[{"parts":[{"text":"hi"}]}]}' >"$D/gemini.txt"
check "Gemini stream's last event has its finishReason" \
    sh -c 'tail -c 400 "$1" | grep -q "finishReason"' _ "$D/gemini.txt"
code=$($C -o "$D/gemini-v1.json" -w '%{http_code}' -H "$J" -H 'x-goog-api-key: k' \
    "$URL/v1/models/gemini-2.5-flash:generateContent" -d '{"contents":[{"parts":[{"text":"hi"}]}]}')
check "Gemini under API version v1 (@google/genai's default) answers" \
    sh -c '[ "$1" = 200 ] && grep -q "\"candidates\"" "$2"' _ "$code" "$D/gemini-v1.json"
$C -N -H "$J" -H 'x-goog-api-key: k' \
    "$URL/v1/models/gemini-2.5-flash:streamGenerateContent?alt=sse" -d '{"contents":[]}' >"$D/gemini-v1.txt"
check "... and streams with its finishReason" sh -c 'tail -c 400 "$1" | grep -q "finishReason"' _ "$D/gemini-v1.txt"
$C -H "$J" "$URL/v1/chat/completions" -d '{"model":"m","messages":[]}' >/dev/null
$C -H "$J" -H 'x-fusebox-fault: 500' "$URL/v1/chat/completions" -d '{"model":"m","messages":[]}' >/dev/null
$C "$URL/__fusebox/log" >"$D/log3.json"
check "--ttft draws from its distribution, --error-latency times the errors" python3 -c '
import json, sys
e = json.load(open(sys.argv[1]))["entries"]
ok = [x["latency_ms"] for x in e if x["status"] == 200 and x["path"] == "/v1/chat/completions"]
bad = [x["latency_ms"] for x in e if x["status"] == 500]
sys.exit(not (ok and 1000 <= ok[0] <= 2000 and bad == [5000]))' "$D/log3.json"
mock_stop

# The control plane answers the mock's own user: not a web page (a text/plain POST needs no
# CORS preflight), not a DNS-rebound name; --control-token for remote use.
mock_start "$D/url4" "$FUSEBOX" mock --port 0 --quiet
URL=$MOCK_URL
PORT=${URL##*:}
code=$($C -o "$D/evil.json" -w '%{http_code}' -H 'Content-Type: text/plain' \
    -H 'Origin: http://evil.example' "$URL/__fusebox/faults" -d '[{"outage":{"status":503}}]')
check "a POST from another origin cannot load faults (403)" test "$code" = 403
code=$($C -o /dev/null -w '%{http_code}' -H "$J" "$URL/v1/chat/completions" -d '{"model":"m","messages":[]}')
check "... and none were loaded" test "$code" = 200
code=$($C -o /dev/null -w '%{http_code}' -H "Host: rebound.example:$PORT" -X POST "$URL/__fusebox/reset")
check "a request under another Host name cannot reset the log (403)" test "$code" = 403
code=$($C -o /dev/null -w '%{http_code}' -H "Origin: http://127.0.0.1:$PORT" "$URL/__fusebox/log")
check "the mock's own origin is answered" test "$code" = 200
code=$($C -o /dev/null -w '%{http_code}' -H "Host: localhost:$PORT" "$URL/__fusebox/stats")
check "localhost:PORT is answered" test "$code" = 200
mock_stop
mock_start "$D/url5" "$FUSEBOX" mock --port 0 --quiet --control-token s3cret
URL=$MOCK_URL
code=$($C -o "$D/notoken.json" -w '%{http_code}' "$URL/__fusebox/log")
check "with --control-token a request without it is refused (403)" \
    sh -c '[ "$1" = 403 ] && grep -q "x-fusebox-control-token" "$2"' _ "$code" "$D/notoken.json"
code=$($C -o /dev/null -w '%{http_code}' -H 'x-fusebox-control-token: s3cre' "$URL/__fusebox/log")
check "... and one with a wrong token" test "$code" = 403
code=$($C -o /dev/null -w '%{http_code}' -H 'x-fusebox-control-token: s3cret' \
    -H 'Host: mock.internal:1234' "$URL/__fusebox/log")
check "... the right token is answered under any Host name" test "$code" = 200
mock_stop

head -c 1100000 /dev/zero | tr '\0' ' ' >"$D/huge-faults.json"
expect_exit 2 "--faults over 1 MiB exits 2" "$FUSEBOX" mock --faults "$D/huge-faults.json"
contains "$ERR" "larger than 1 MiB" "and says why"
expect_exit 2 "--ttft with a bad distribution exits 2" "$FUSEBOX" mock \
    --ttft '{"lognormal":{"median":"2s","p99":"1s"}}'
contains "$ERR" "--ttft: lognormal: p99 must be >= median" "naming the option and the rule"
finish
