#!/bin/sh
# tests/e2e/mock_valgrind.sh - `fusebox mock` under valgrind memcheck: a mix of requests
# (successes, streams, error faults, reset, cut, stall, hang, bad input, control plane),
# then SIGTERM. Passes when valgrind reports no errors and no leaks.
. tests/wait_url.sh
set -u
FUSEBOX=${FUSEBOX:?FUSEBOX is set by tests/run.sh}
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
OUT=$ROOT/out/e2e-mock-valgrind
mkdir -p "$OUT"
echo "1..4"
if nm "$FUSEBOX" 2>/dev/null | grep -q __asan_init; then
    # Sanitizer builds cannot run under valgrind; LeakSanitizer covers them instead.
    for i in 1 2 3 4; do echo "ok $i # SKIP ASan build (valgrind runs with the release build)"; done
    exit 0
fi
if ! command -v valgrind >/dev/null 2>&1; then
    SUDO=$([ "$(id -u)" = 0 ] || echo sudo)
    { $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
        $SUDO apt-get install -y -qq --no-install-recommends valgrind; } >"$OUT/apt.log" 2>&1
fi

n=0
fails=0
check() {
    name=$1
    shift
    n=$((n + 1))
    if "$@"; then echo "ok $n - $name"; else fails=$((fails + 1)); echo "not ok $n - $name"; fi
}
PID=
cleanup() { [ -n "$PID" ] && kill "$PID" 2>/dev/null && wait "$PID" 2>/dev/null; }
trap cleanup EXIT INT TERM

echo '[{"at":"0s","for":"1h","rate_limit":{"fraction":0.3,"retry_after":"2s"}},
       {"midstream":{"after_tokens":3,"mode":"cut","fraction":0.2}},{"slow":{"factor":2}}]' \
    >"$OUT/faults.json"
valgrind --leak-check=full --error-exitcode=99 --log-file="$OUT/valgrind.log" \
    "$FUSEBOX" mock --port 0 --quiet --faults "$OUT/faults.json" --per-token 1ms \
    >"$OUT/url" 2>"$OUT/stderr" &
PID=$!
URL=$(wait_url "$OUT/url" 400)
check "starts under valgrind" test -n "$URL"

J="Content-Type: application/json"
OA='{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hello"}],"max_tokens":6'
AN='{"model":"claude","max_tokens":6,"messages":[{"role":"user","content":"hello"}]'
c() { curl -s -m 10 -o /dev/null -w '%{http_code}\n' -H "$J" "$@" >>"$OUT/codes.txt" 2>&1; }
: >"$OUT/codes.txt"
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
c -m 1 -H "x-fusebox-fault: hang" "$URL/v1/chat/completions" -d "$OA}"
c "$URL/v1/chat/completions" -d '{"model":'
c "$URL/v1/nowhere" -d '{}'
c -X GET "$URL/v1/messages"
c "$URL/__fusebox/faults" -d '[{"outage":{"fraction":9}}]'
c "$URL/__fusebox/faults" -d '[{"outage":{"status":503}}]'
c "$URL/v1/chat/completions" -d "$OA}"
c "$URL/__fusebox/log"
c "$URL/__fusebox/stats"
c "$URL/__fusebox/reset" -d ''
# A hung request still waiting at shutdown must be released cleanly.
curl -s -m 20 -H "$J" -H "x-fusebox-fault: hang" "$URL/v1/chat/completions" -d "$OA}" \
    >/dev/null 2>&1 &
HANG=$!
sleep 1
check "answered every request (no 000 besides the resets and hangs)" \
    test "$(grep -c '^000$' "$OUT/codes.txt")" -le 4

kill "$PID"
wait "$PID"
rc=$?
PID=
wait "$HANG" 2>/dev/null
check "exits 0 after SIGTERM (valgrind error exit is 99)" test "$rc" = 0
check "no errors and no leaks reported" \
    sh -c 'grep -q "ERROR SUMMARY: 0 errors" "$1" && ! grep -qE "(definitely|indirectly|possibly) lost: [1-9]" "$1"' \
    _ "$OUT/valgrind.log"
grep -E 'ERROR SUMMARY|lost:|in use at exit' "$OUT/valgrind.log" | sed 's/^==[0-9]*== */# /'
exit $((fails > 0))
