#!/bin/sh
# tests/e2e/mock_load.sh - 2 x 100,000 requests over 200 keep-alive connections (ApacheBench):
# zero errors, every request logged as a 200, and the server's memory flat across batches.
. tests/wait_url.sh
set -u
FUSEBOX=${FUSEBOX:?FUSEBOX is set by tests/run.sh}
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
OUT=$ROOT/out/e2e-mock-load
mkdir -p "$OUT"
N=100000
C=200
if ! command -v ab >/dev/null 2>&1; then
    SUDO=$([ "$(id -u)" = 0 ] || echo sudo)
    { $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
        $SUDO apt-get install -y -qq --no-install-recommends apache2-utils; } >"$OUT/apt.log" 2>&1
fi

n=0
fails=0
check() {
    name=$1
    shift
    n=$((n + 1))
    if "$@"; then echo "ok $n - $name"; else fails=$((fails + 1)); echo "not ok $n - $name"; fi
}
echo "1..9"

# Under AddressSanitizer freed memory sits in a quarantine and RSS grows without a leak:
# turn the quarantine off so that "flat" still means something (LeakSanitizer checks at exit).
if nm "$FUSEBOX" 2>/dev/null | grep -q __asan_init; then
    ASAN_OPTIONS="quarantine_size_mb=0:thread_local_quarantine_size_kb=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
    export ASAN_OPTIONS
fi
PID=
cleanup() { [ -n "$PID" ] && kill "$PID" 2>/dev/null && wait "$PID" 2>/dev/null; }
trap cleanup EXIT INT TERM
ulimit -n 8192 2>/dev/null || true
"$FUSEBOX" mock --port 0 --quiet --max-connections 4096 >"$OUT/url" 2>"$OUT/stderr" &
PID=$!
URL=$(wait_url "$OUT/url")
echo '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hello"}],"max_tokens":8}' \
    >"$OUT/body.json"
rss() { awk '/^VmRSS:/ {print $2}' "/proc/$PID/status"; }
batch() {
    timeout 120 ab -q -k -n $N -c $C -p "$OUT/body.json" -T application/json \
        "$URL/v1/chat/completions" >"$OUT/ab$1.txt" 2>&1
}
clean() {
    grep -q "^Complete requests: *$N\$" "$OUT/ab$1.txt" &&
        grep -q '^Failed requests: *0$' "$OUT/ab$1.txt" &&
        ! grep -q '^Non-2xx responses' "$OUT/ab$1.txt"
}

batch 1
check "batch 1: $N requests over $C connections complete" clean 1
rss1=$(rss)
batch 2
check "batch 2: $N more, zero errors" clean 2
rss2=$(rss)
echo "# rss after batch 1: ${rss1} kB, after batch 2: ${rss2} kB"
grep -E '^(Requests per second|Time per request:.*across)' "$OUT/ab1.txt" "$OUT/ab2.txt" | sed 's/^/# /'
# Flat: within 2 MiB (allocator noise), no growth per request.
check "memory flat across batches (+$((rss2 - rss1)) kB)" test $((rss2 - rss1)) -lt 2048

curl -s -m 5 "$URL/__fusebox/stats" >"$OUT/stats.json"
want=$((2 * N))
check "stats count $want attempts" grep -q "\"attempts\":$want," "$OUT/stats.json"
check "all of them 2xx" grep -q "\"status_2xx\":$want," "$OUT/stats.json"
check "nothing left in flight" grep -q '"in_flight":0,' "$OUT/stats.json"
curl -s -m 5 "$URL/__fusebox/log" | head -c 100 >"$OUT/log-head.txt"
check "log ring reports the dropped entries" grep -q "\"total\":$want,\"dropped\":$((want - 10000))" "$OUT/log-head.txt"

# Slow requests hold no thread: 2,000 at once, each answered after 1 s, finish together
# (one at a time they would take over half an hour).
start=$(date +%s)
timeout 60 ab -q -n 2000 -c 2000 -s 30 -H 'x-fusebox-fault: ttft-1s' -p "$OUT/body.json" \
    -T application/json "$URL/v1/chat/completions" >"$OUT/ab-slow.txt" 2>&1
took=$(($(date +%s) - start))
check "2000 concurrent 1 s requests all answered, together (${took} s)" sh -c \
    'grep -q "^Complete requests: *2000$" "$1" && grep -q "^Failed requests: *0$" "$1" && [ "$2" -lt 20 ]' \
    _ "$OUT/ab-slow.txt" "$took"

kill "$PID"
wait "$PID"
rc=$?
PID=
check "clean shutdown" test "$rc" = 0
exit $((fails > 0))
