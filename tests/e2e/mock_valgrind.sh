#!/bin/sh
# tests/e2e/mock_valgrind.sh - `fusebox mock` under valgrind memcheck: a mix of requests
# (successes, streams, error faults, reset, cut, stall, hang, bad input, control plane),
# then SIGTERM. Passes when valgrind reports no errors and no leaks.
. tests/tap.sh
set -u
D=$(logs_dir mock-valgrind)
plan 7
# skip_all REASON: the suite's tests, skipped with REASON.
skip_all() {
    for t in "starts under valgrind" "answered every request" \
        "exits 0 after SIGTERM (valgrind error exit is 99)" "no errors and no leaks reported" \
        "proxy: answered every request" \
        "proxy: exits 0 after SIGTERM (valgrind error exit is 99)" \
        "proxy: no errors and no leaks reported"; do
        skip "$t" "$1"
    done
    finish
    exit
}
if nm "$FUSEBOX" 2>/dev/null | grep -q __asan_init; then
    # Sanitizer builds cannot run under valgrind; LeakSanitizer covers them instead.
    skip_all "ASan build (valgrind runs with the release build)"
fi
need valgrind "$D/apt.log" valgrind
command -v valgrind >/dev/null 2>&1 ||
    skip_all "valgrind is not installed and could not be (Debian: valgrind; see $D/apt.log)"
UP_PID=
# The proxy part's upstream is stopped at exit too (tap.sh's trap knows only $MOCK_PID).
trap 'mock_stop; [ -n "$UP_PID" ] && kill "$UP_PID" 2>/dev/null; rm -rf "$E2E_TMP"' EXIT

echo '[{"at":"0s","for":"1h","rate_limit":{"fraction":0.3,"retry_after":"2s"}},
       {"midstream":{"after_tokens":3,"mode":"cut","fraction":0.2}},{"slow":{"factor":2}}]' \
    >"$D/faults.json"
MOCK_WAIT=400 mock_start "$D/url" valgrind --leak-check=full --error-exitcode=99 \
    --log-file="$D/valgrind.log" "$FUSEBOX" mock --port 0 --quiet --faults "$D/faults.json" \
    --per-token 1ms
URL=$MOCK_URL
check "starts under valgrind" test -n "$URL"

J="Content-Type: application/json"
OA='{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hello"}],"max_tokens":6'
AN='{"model":"claude","max_tokens":6,"messages":[{"role":"user","content":"hello"}]'
# c CURL_ARGS...: one request; its status code (000: no answer) is a line of codes.txt
sent=0
c() {
    sent=$((sent + 1))
    curl -s -m 10 -o /dev/null -w '%{http_code}\n' -H "$J" "$@" >>"$D/codes.txt" 2>&1
}
# ends PREFIX LOG MIN: every request of codes.txt has its code (at least MIN; only the resets
# and the hang, at most 4, unanswered), the mock under valgrind exits 0 on SIGTERM (valgrind's
# error exit is 99) and its LOG reports no errors and no leaks.
ends() {
    codes=$(grep -cE '^[0-9]{3}$' "$D/codes.txt")
    unanswered=$(grep -c '^000$' "$D/codes.txt")
    echo "# $1$codes codes for $sent requests, $unanswered unanswered"
    check "${1}answered every request" test "$codes" -eq "$sent" -a "$sent" -gt "$3" \
        -a "$unanswered" -le 4
    mock_stop
    wait "$HANG" 2>/dev/null
    check "${1}exits 0 after SIGTERM (valgrind error exit is 99)" test "$MOCK_RC" = 0
    check "${1}no errors and no leaks reported" \
        sh -c 'grep -q "ERROR SUMMARY: 0 errors" "$1" && ! grep -qE "(definitely|indirectly|possibly) lost: [1-9]" "$1"' \
        _ "$2"
    grep -E 'ERROR SUMMARY|lost:|in use at exit' "$2" | sed 's/^==[0-9]*== */# /'
}
: >"$D/codes.txt"
for i in 1 2 3 4 5; do
    c "$URL/v1/chat/completions" -d "$OA}"
    c "$URL/v1/chat/completions" -d "$OA,\"stream\":true,\"stream_options\":{\"include_usage\":true}}"
    c "$URL/v1/messages" -d "$AN,\"stream\":true}"
    c "$URL/v1/messages" -d "$AN}"
done
for spec in 429-retry-after-1 529 500-should-retry-false context-length content-filter \
    stall-1-50ms cut-2 error-1 malformed-1 truncate reset ttft-20ms quota refusal; do
    c -H "x-fusebox-fault: $spec" "$URL/v1/chat/completions" -d "$OA,\"stream\":true}"
    c -H "x-fusebox-fault: $spec" "$URL/v1/messages" -d "$AN}"
done
TOOLS='"tools":[{"type":"function","function":{"name":"w","parameters":{"type":"object","properties":{"c":{"type":"string"}},"required":["c"]}}}],"tool_choice":"required"'
c "$URL/v1/chat/completions" -d "$OA,\"stream\":true,$TOOLS}"
c "$URL/v1/responses" -d '{"model":"m","input":"hi","stream":true}'
c -H "x-fusebox-fault: error-2" "$URL/v1/responses" -d '{"model":"m","input":"hi","stream":true}'
c "$URL/v1/responses" -d '{"model":"m","input":"hi","tools":[{"type":"function","name":"w","parameters":{"type":"object"}}],"tool_choice":"required"}'
c "$URL/v1/embeddings" -d '{"model":"e","input":["a","b"]}'
c "$URL/v1/completions" -d '{"model":"i","prompt":"x","stream":true}'
c -X GET "$URL/v1/models/gpt-4o"
c "$URL/v1/messages/count_tokens" -d "$AN}"
c -H 'api-key: k' "$URL/openai/deployments/d/chat/completions?api-version=1" -d "$OA,\"stream\":true}"
c -H 'x-goog-api-key: k' "$URL/v1beta/models/g:streamGenerateContent?alt=sse" -d '{"contents":[]}'
c -H 'x-goog-api-key: k' "$URL/v1beta/models/fb-429:generateContent" -d '{"contents":[]}'
c "$URL/v1/chat/completions?$(head -c 9000 /dev/zero | tr '\0' a)" -d "$OA}"
c "$URL/v1/chat/completions" -d "$OA} trailing"
c "$URL/v1/chat/completions" -d "$(printf '{"model":"m","messages":[{"role":"user","content":"\377"}]}')"
c "$URL/v1/chat/completions" -d '{"model":"fb-tokens-1000000","messages":[],"n":128}'
c -m 1 -H "x-fusebox-fault: hang" "$URL/v1/chat/completions" -d "$OA}"
c "$URL/v1/chat/completions" -d '{"model":'
c "$URL/v1/nowhere" -d '{}'
c -X GET "$URL/v1/messages"
c "$URL/__fusebox/faults" -d '[{"outage":{"fraction":9}}]'
c "$URL/__fusebox/faults" -d '[{"outage":{"status":503}}]'
c "$URL/v1/chat/completions" -d "$OA}"
c "$URL/__fusebox/log"
c "$URL/__fusebox/stats"
c "$URL/__fusebox/verdict"
c "$URL/__fusebox/verdict?format=junit&expect_fallback=1"
c "$URL/__fusebox/verdict?max_attempts=x"
c "$URL/__fusebox/reset" -d ''
# A hung request still waiting at shutdown must be released cleanly.
curl -s -m 20 -H "$J" -H "x-fusebox-fault: hang" "$URL/v1/chat/completions" -d "$OA}" \
    >/dev/null 2>&1 &
HANG=$!
sleep 1
ends "" "$D/valgrind.log" 50

# Proxy mode under valgrind, in front of a second mock: answers passed through, every fault
# on top of them, an upstream that hangs (its own fb-hang) past --upstream-timeout, an
# upstream error passed through, a hung request at shutdown.
mock_start "$D/up.url" "$FUSEBOX" mock --port 0 --quiet --per-token 1ms
UP_PID=$MOCK_PID
UP=$MOCK_URL
MOCK_PID=
MOCK_WAIT=400 mock_start "$D/px.url" valgrind --leak-check=full --error-exitcode=99 \
    --log-file="$D/valgrind-proxy.log" "$FUSEBOX" mock --port 0 --quiet --upstream "$UP" \
    --upstream-timeout 1s --faults "$D/faults.json"
URL=$MOCK_URL
sent=0
: >"$D/codes.txt"
for i in 1 2 3; do
    c "$URL/v1/chat/completions" -d "$OA}"
    c "$URL/v1/chat/completions" -d "$OA,\"stream\":true}"
    c "$URL/v1/messages" -d "$AN,\"stream\":true}"
    c "$URL/v1/messages" -d "$AN}"
done
for spec in 429-retry-after-1 529 context-length stall-1-50ms cut-2 error-1 malformed-1 \
    truncate-2 truncate reset ttft-20ms slow-2 cut; do
    c -H "x-fusebox-fault: $spec" "$URL/v1/chat/completions" -d "$OA,\"stream\":true}"
    c -H "x-fusebox-fault: $spec" "$URL/v1/messages" -d "$AN}"
done
c "$URL/v1/chat/completions" -d '{"model":"fb-hang","messages":[]}'
c "$URL/v1/chat/completions" -d '{"model":"fb-503","messages":[]}'
c "$URL/v1/chat/completions" -d '{"model":"fb-cut-2","stream":true,"messages":[]}'
c -m 1 -H "x-fusebox-fault: hang" "$URL/v1/chat/completions" -d "$OA}"
c -X GET "$URL/v1/models"
c "$URL/__fusebox/stats"
c "$URL/__fusebox/verdict"
curl -s -m 20 -H "$J" -d "$OA,\"stream\":true}" -H 'x-fusebox-fault: stall-1-30s' \
    "$URL/v1/chat/completions" >/dev/null 2>&1 &
HANG=$!
sleep 1
ends "proxy: " "$D/valgrind-proxy.log" 30
kill "$UP_PID" 2>/dev/null
wait "$UP_PID" 2>/dev/null
UP_PID=
finish
