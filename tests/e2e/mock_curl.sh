#!/bin/sh
# tests/e2e/mock_curl.sh - `fusebox mock` driven by the curl command-line tool. TAP output.
. tests/wait_url.sh
set -u
FUSEBOX=${FUSEBOX:?FUSEBOX is set by tests/run.sh}
OUT=${ROOT:-.}/out/e2e-mock-curl
mkdir -p "$OUT"
if ! command -v curl >/dev/null 2>&1; then
    SUDO=$([ "$(id -u)" = 0 ] || echo sudo)
    { $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
        $SUDO apt-get install -y -qq --no-install-recommends curl; } >"$OUT/apt.log" 2>&1
fi

n=0
fails=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
notok() { n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $1"; [ $# -gt 1 ] && echo "# $2"; }
check() { name=$1; shift; if "$@"; then ok "$name"; else notok "$name"; fi; }

echo "1..14"
PID=
cleanup() { [ -n "$PID" ] && kill "$PID" 2>/dev/null && wait "$PID" 2>/dev/null; }
trap cleanup EXIT INT TERM

cat >"$OUT/faults.json" <<'JSON'
[{"at": "0s", "for": "1h", "rate_limit": {"status": 429, "retry_after": "20s", "fraction": 0}}]
JSON
"$FUSEBOX" mock --port 0 --faults "$OUT/faults.json" --quiet >"$OUT/url" 2>"$OUT/stderr" &
PID=$!
URL=$(wait_url "$OUT/url")
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

code=$($C -o "$OUT/anthropic.json" -w '%{http_code}' -H "$J" -H 'x-fusebox-fault: 529' \
    -H 'anthropic-version: 2023-06-01' "$URL/v1/messages" \
    -d '{"model":"claude","max_tokens":5,"messages":[]}')
check "header fault 529 on /v1/messages" test "$code" = 529
check "Anthropic overloaded_error body" grep -q '"type":"overloaded_error"' "$OUT/anthropic.json"

$C -N -H "$J" "$URL/v1/messages" \
    -d '{"model":"claude","max_tokens":2,"stream":true,"messages":[]}' >"$OUT/stream.txt"
check "Anthropic stream ends with message_stop" \
    sh -c 'grep "^event:" "$1" | tail -n 1 | grep -q "message_stop"' _ "$OUT/stream.txt"

$C -N -H "$J" -H 'x-fusebox-fault: cut-1' "$URL/v1/chat/completions" \
    -d '{"model":"m","stream":true,"messages":[]}' >"$OUT/cut.txt"
rc=$?
check "cut-1 stream is an abortive close (curl exit 18)" test "$rc" = 18

$C -m 1 -H "$J" -H 'x-fusebox-fault: hang' "$URL/v1/chat/completions" -d '{"model":"m","messages":[]}' >/dev/null
rc=$?
check "hang times the client out (curl exit 28)" test "$rc" = 28

code=$($C -o "$OUT/bad.json" -w '%{http_code}' -H "$J" "$URL/__fusebox/faults" \
    -d '[{"outage":{"fraction":7}}]')
check "bad fault script is a 400 naming the path" \
    sh -c '[ "$1" = 400 ] && grep -q "faults\[0\].outage.fraction" "$2"' _ "$code" "$OUT/bad.json"

$C "$URL/__fusebox/log" >"$OUT/log.json"
check "attempt log lists the attempts" grep -q '"total":6' "$OUT/log.json"

kill "$PID"
wait "$PID"
rc=$?
PID=
check "SIGTERM stops it with exit 0" test "$rc" = 0

# A scenario's provider, down from 5m to 23m. At 600x a timeline minute is 100 ms: wait
# 6 timeline minutes with a delayed answer, then expect the 503.
cat >"$OUT/scenario.json" <<'JSON'
{"name": "mock-e2e", "seed": 1, "duration": "1h",
 "traffic": [{"class": "chat", "arrivals": {"poisson": "1/s"}}],
 "providers": [{"name": "p1", "faults": [{"at": "5m", "for": "18m", "outage": {"status": 503}}]}],
 "policy": {}}
JSON
"$FUSEBOX" mock --scenario "$OUT/scenario.json" --provider nope >/dev/null 2>"$OUT/nope.err"
check "unknown scenario provider exits 2" test $? = 2
"$FUSEBOX" mock --port 0 --quiet --time-scale 600 --scenario "$OUT/scenario.json" --provider p1 >"$OUT/url2" 2>"$OUT/stderr2" &
PID=$!
URL=$(wait_url "$OUT/url2")
early=$($C -o /dev/null -w '%{http_code}' -H "$J" "$URL/v1/chat/completions" -d '{"model":"m","messages":[]}')
$C -o /dev/null -H "$J" -H 'x-fusebox-fault: ttft-6m' "$URL/v1/chat/completions" -d '{"model":"m","messages":[]}'
late=$($C -o /dev/null -w '%{http_code}' -H "$J" "$URL/v1/chat/completions" -d '{"model":"m","messages":[]}')
check "scenario provider: healthy before its outage, 503 during it ($early, $late)" \
    test "$early" = 200 -a "$late" = 503
exit $((fails > 0))
