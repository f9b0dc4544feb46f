#!/bin/sh
# tests/e2e/mock_proxy.sh - proxy mode end to end: `fusebox mock --upstream URL` in front of a
# second `fusebox mock` (the upstream), both on 127.0.0.1 with ports the kernel picks, driven
# by curl. Without a fault the upstream's answer comes back byte for byte; an error, a
# Retry-After storm (a timeline loaded into the proxy), a stream cut after k of the
# upstream's tokens and an added latency are applied on top of it; an upstream that refuses
# connections is a 502 in the path's dialect. Times are lower bounds only (a loaded machine
# only makes them longer). TAP output.
. tests/tap.sh
set -u
D=$(logs_dir mock-proxy)
need curl "$D/apt.log" curl
plan 37
UP_PID=
# The upstream is stopped at exit as well as the proxy (tap.sh's trap knows only $MOCK_PID).
EN_PID=
trap 'mock_stop; for p in $UP_PID $EN_PID; do kill "$p" 2>/dev/null; done; rm -rf "$E2E_TMP"' EXIT

J="Content-Type: application/json"
AV="anthropic-version: 2023-06-01"
OA='{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hello"}],"max_tokens":8'
AN='{"model":"claude","max_tokens":8,"messages":[{"role":"user","content":"hello"}]'
C="curl -s -m 10"

# The upstream: a plain mock, 20 ms per token so that a stream takes a while.
mock_start "$D/up.url" "$FUSEBOX" mock --port 0 --quiet --per-token 20ms
UP_PID=$MOCK_PID
UP=$MOCK_URL
MOCK_PID=
mock_start "$D/px.url" "$FUSEBOX" mock --port 0 --quiet --upstream "$UP"
PX=$MOCK_URL
check "the upstream and the proxy print their URLs" test -n "$UP" -a -n "$PX"

up_attempts() { $C "$UP/__fusebox/stats" | python3 -c 'import json,sys; print(json.load(sys.stdin)["attempts"])'; }
px_stat() { $C "$PX/__fusebox/stats" | python3 -c "import json,sys; print(json.load(sys.stdin)['$1'])"; }
# same NAME PATH BODY [CURL_ARGS...]: the upstream's answer directly and through the proxy,
# each after a reset of the upstream (its ids and times then start the same): equal bytes.
same() {
    _n=$1 _p=$2 _b=$3
    shift 3
    $C -X POST "$UP/__fusebox/reset" >/dev/null
    $C -N -H "$J" "$@" "$UP$_p" -d "$_b" -o "$D/$_n.direct" -w '%{http_code}\n' >"$D/$_n.codes"
    $C -X POST "$UP/__fusebox/reset" >/dev/null
    $C -N -H "$J" "$@" "$PX$_p" -d "$_b" -o "$D/$_n.proxied" -w '%{http_code}\n' >>"$D/$_n.codes"
    unclock "$D/$_n.direct" "$D/$_n.proxied"
    check "without a fault: $_n byte for byte" \
        sh -c 'cmp "$1.direct" "$1.proxied" && [ "$(sort -u "$1.codes" | wc -l)" = 1 ]' _ "$D/$_n"
}
# The upstream writes its wall clock's second into OpenAI's "created": two answers a second
# apart differ there, whoever carried them.
unclock() { sed -i 's/"created":[0-9]*/"created":0/g' "$@"; }
same "an OpenAI answer" /v1/chat/completions "$OA}"
same "an OpenAI stream" /v1/chat/completions "$OA,\"stream\":true}"
same "an Anthropic stream" /v1/messages "$AN,\"stream\":true}" -H "$AV"
same "the upstream's own 429" /v1/chat/completions '{"model":"fb-429-retry-after-7","messages":[]}'
check "the upstream's 429 came through as a 429" sh -c 'head -n 1 "$1" | grep -qx 429' _ "$D/the upstream's own 429.codes"
$C -D "$D/hdr.txt" -o /dev/null -H "$J" "$PX/v1/chat/completions" -d '{"model":"fb-429-retry-after-7","messages":[]}'
check "with its retry-after" sh -c 'tr -d "\r" <"$1" | grep -qix "retry-after: 7"' _ "$D/hdr.txt"

# An error instead of the upstream's answer: the upstream never sees the request.
before=$(up_attempts)
code=$($C -o "$D/err.json" -w '%{http_code}' -H "$J" -H 'x-fusebox-fault: 503' \
    "$PX/v1/chat/completions" -d "$OA}")
check "x-fusebox-fault: 503 is the proxy's 503" test "$code" = 503
check "in OpenAI's envelope" python3 -c 'import json,sys; e=json.load(open(sys.argv[1]))["error"]; assert e["type"] and e["message"]' "$D/err.json"
code=$($C -o "$D/err529.json" -w '%{http_code}' -H "$J" -H "$AV" -H 'x-fusebox-fault: 529' \
    "$PX/v1/messages" -d "$AN}")
check "x-fusebox-fault: 529 on messages is Anthropic's overloaded_error" \
    sh -c '[ "$1" = 529 ] && grep -q "\"type\":\"overloaded_error\"" "$2"' _ "$code" "$D/err529.json"
check "the upstream saw neither" test "$(up_attempts)" = "$before"

# A Retry-After storm: a timeline loaded into the proxy; every answer is its 429.
code=$($C -o /dev/null -w '%{http_code}' -H "$J" "$PX/__fusebox/faults" \
    -d '[{"rate_limit":{"retry_after":"3s"}}]')
check "the storm's timeline loads" test "$code" = 200
before=$(up_attempts)
: >"$D/storm.txt"
for i in 1 2 3 4 5; do
    $C -D - -o /dev/null -H "$J" "$PX/v1/chat/completions" -d "$OA,\"stream\":true}" |
        tr -d '\r' | grep -iE '^(HTTP/|retry-after)' >>"$D/storm.txt"
done
check "5 of 5 requests get 429 with retry-after: 3" \
    sh -c '[ "$(grep -c "^HTTP/1.1 429" "$1")" = 5 ] && [ "$(grep -ci "^retry-after: 3$" "$1")" = 5 ]' \
    _ "$D/storm.txt"
check "none reached the upstream" test "$(up_attempts)" = "$before"
$C -o /dev/null -H "$J" "$PX/__fusebox/faults" -d '[]'
code=$($C -o /dev/null -w '%{http_code}' -H "$J" "$PX/v1/chat/completions" -d "$OA}")
check "after the storm the upstream answers again" test "$code" = 200

# A stream cut after 3 of the upstream's tokens: a byte prefix of the upstream's own stream.
$C -X POST "$UP/__fusebox/reset" >/dev/null
$C -N -H "$J" "$UP/v1/chat/completions" -d "$OA,\"stream\":true}" >"$D/whole.sse"
$C -X POST "$UP/__fusebox/reset" >/dev/null
$C -N -H "$J" -H 'x-fusebox-fault: cut-3' "$PX/v1/chat/completions" \
    -d "$OA,\"stream\":true}" >"$D/cut.sse"
rc=$?
unclock "$D/whole.sse" "$D/cut.sse"
check "cut-3 ends the stream abortively (curl exit 18)" test "$rc" = 18
check "after exactly 3 of the upstream's content chunks" \
    sh -c '[ "$(grep -c "\"content\":\"[^\"]" "$1")" = 3 ] && [ "$(grep -c "\"content\":\"[^\"]" "$2")" = 8 ]' \
    _ "$D/cut.sse" "$D/whole.sse"
check "which are the upstream's own bytes" \
    sh -c 'n=$(wc -c <"$1"); [ "$n" -gt 0 ] && head -c "$n" "$2" | cmp -s - "$1"' _ "$D/cut.sse" "$D/whole.sse"
check "and no [DONE]" sh -c '! grep -q "\[DONE\]" "$1"' _ "$D/cut.sse"
$C "$PX/__fusebox/log" >"$D/px.log.json"
check "the proxy's log: the cut stream broke after 3 tokens" \
    python3 -c 'import json,sys; e=json.load(open(sys.argv[1]))["entries"][-1]
assert e["fault"] == "cut-3" and e["tokens"] == 3 and e["broken"] is True, e' "$D/px.log.json"
# A client that starts the cut stream again: the verdict on the proxy catches it.
$C -N -H "$J" -H 'x-fusebox-key: again' -H 'x-fusebox-fault: cut-3-times-1' \
    "$PX/v1/chat/completions" -d "$OA,\"stream\":true}" >/dev/null
$C -N -H "$J" -H 'x-fusebox-key: again' -H 'x-fusebox-fault: cut-3-times-1' \
    "$PX/v1/chat/completions" -d "$OA,\"stream\":true}" >/dev/null
$C "$PX/__fusebox/verdict" >"$D/px.verdict.json"
check "the proxy's verdict: no_stream_restart fails for that client" \
    python3 -c 'import json,sys; v=json.load(open(sys.argv[1]))
q = [q for q in v["per_request"] if q["key"] == "again"][0]
assert q["rules"]["no_stream_restart"]["result"] == "fail", q' "$D/px.verdict.json"

# Added latency: 600 ms before the upstream's answer (the upstream itself is quick to answer).
t=$($C -o /dev/null -w '%{time_starttransfer}' -H "$J" -H 'x-fusebox-fault: ttft-600ms' \
    "$PX/v1/chat/completions" -d "$OA}")
check "ttft-600ms: the upstream's answer at least 600 ms later" \
    python3 -c 'import sys; assert float(sys.argv[1]) >= 0.6, sys.argv[1]' "$t"
# stall-2-700ms: the third content chunk at least 700 ms after the second (the upstream has
# sent them all by then; they wait in the proxy).
check "stall-2-700ms: 700 ms between the upstream's 2nd and 3rd chunks" python3 -c '
import http.client, json, sys, time, urllib.parse
u = urllib.parse.urlparse(sys.argv[1])
c = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
c.request("POST", "/v1/chat/completions", sys.argv[2],
          {"Content-Type": "application/json", "x-fusebox-fault": "stall-2-700ms"})
r, seen = c.getresponse(), []
for line in r:
    if line.startswith(b"data: {") and json.loads(line[6:])["choices"][0]["delta"].get("content"):
        seen.append(time.monotonic())
assert len(seen) == 8, len(seen)
assert seen[2] - seen[1] >= 0.7, seen[2] - seen[1]
' "$PX" "$OA,\"stream\":true}"
mock_stop
check "the proxy exits 0 on SIGTERM" test "$MOCK_RC" = 0

# Nothing listening upstream: 502 in the path's dialect, naming the upstream.
DEAD=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
mock_start "$D/dead.url" "$FUSEBOX" mock --port 0 --quiet --upstream "http://127.0.0.1:$DEAD"
DX=$MOCK_URL
code=$($C -o "$D/dead_oa.json" -w '%{http_code}' -H "$J" "$DX/v1/chat/completions" -d "$OA}")
check "an upstream that refuses: OpenAI's 502 naming it" \
    python3 -c 'import json,sys; e=json.load(open(sys.argv[2]))["error"]
assert sys.argv[1] == "502" and "did not answer" in e["message"] and sys.argv[3] in e["message"], e' \
    "$code" "$D/dead_oa.json" "127.0.0.1:$DEAD"
code=$($C -o "$D/dead_an.json" -w '%{http_code}' -H "$J" -H "$AV" "$DX/v1/messages" -d "$AN}")
check "and Anthropic's on /v1/messages" \
    python3 -c 'import json,sys; b=json.load(open(sys.argv[2]))
assert sys.argv[1] == "502" and b["type"] == "error" and "did not answer" in b["error"]["message"], b' \
    "$code" "$D/dead_an.json"
mock_stop
kill "$UP_PID" 2>/dev/null
wait "$UP_PID"
rc=$?
UP_PID=
check "the upstream exits 0 on SIGTERM" test "$rc" = 0
# An upstream whose stream never ends (T3-7, issue 25): cut at --max-response, and the client
# learns it at once (an abortive end, curl exit 18), not after a minute of silence (the socket
# closed only on the daemon's next pass; curl's -m 10 ran out, exit 28), and why: whole events,
# then the dialect's in-band error event (the FIN came alone, often inside an event; the
# upstream's chunks end inside events). /v1/messages: an upstream that breaks off inside its
# third event (a chunk left unfinished, then the close).
cat >"$D/endless.py" <<'PY'
import http.server, socketserver, time
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *a): pass
    def do_POST(self):
        self.rfile.read(int(self.headers.get("content-length", 0)))
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        if self.path == "/v1/messages":
            ev = b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hi"}}\n\n'
            data = ev * 2 + ev[:40]
            self.wfile.write(b"%x\r\n%s" % (len(data) + 100, data))
            self.wfile.flush()
            self.close_connection = True
            return
        if self.path.endswith("?gap"):
            self.gap()
            return
        ev = b'data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"hi"}}]}\n\n' * 50
        try:
            while True:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(ev) - 40, ev[:-40]))
                self.wfile.write(b"28\r\n%s\r\n" % ev[-40:])
        except OSError: pass
    def gap(self):
        # The first event, then 262144 - 500 bytes (the proxy's buffer but for 500 bytes), then
        # 1000 + 7000 bytes in one write, then the rest in 500-byte chunks.
        s = b'data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"hi"}}]}\n\n' * 3300
        b = 91 + 262144 - 500
        def chunk(d):
            self.wfile.write(b"%x\r\n%s\r\n" % (len(d), d))
            self.wfile.flush()
        try:
            chunk(s[:91])
            for i in range(91, b, 4000):
                chunk(s[i:min(i + 4000, b)])
            time.sleep(0.2)
            self.wfile.write(b"3e8\r\n%s\r\n1b58\r\n%s\r\n" % (s[b:b + 1000], s[b + 1000:b + 8000]))
            self.wfile.flush()
            time.sleep(0.2)
            for i in range(b + 8000, len(s), 500):
                chunk(s[i:i + 500])
            self.wfile.write(b"0\r\n\r\n")
        except OSError: pass
class S(socketserver.ThreadingMixIn, http.server.HTTPServer): daemon_threads = True
s = S(("127.0.0.1", 0), H)
print("http://127.0.0.1:%d" % s.server_address[1], flush=True)
s.serve_forever()
PY
python3 "$D/endless.py" >"$D/endless.url" 2>"$D/endless.err" &
EN_PID=$!
EN=$(wait_url "$D/endless.url" 100)
mock_start "$D/en.url" "$FUSEBOX" mock --port 0 --quiet --upstream "$EN" --max-response 2000000
EX=$MOCK_URL
$C -N -o "$D/endless.sse" -w '%{http_code}' -H "$J" "$EX/v1/chat/completions" \
    -d "$OA,\"stream\":true}" >"$D/endless.code"
rc=$?
check "an endless upstream stream: the client's answer ends abortively at once (curl exit $rc, not 28)" \
    test "$rc" = 18
check "after the 2000000 bytes of --max-response" \
    test "$(cat "$D/endless.code")" = 200 -a "$(wc -c <"$D/endless.sse")" -le 2000000
# sse_end FILE: "whole N error" when every event of FILE is whole JSON and the last is an error
sse_end() {
    python3 -c 'import json, sys
evs = open(sys.argv[1], "rb").read().split(b"\n\n")
assert evs[-1] == b"", "the stream ends inside an event: %r" % evs[-1][-80:]
data = [json.loads([l for l in e.split(b"\n") if l.startswith(b"data: ")][0][6:]) for e in evs[:-1]]
print("whole", len(data), "error" if "error" in data[-1] else "no error: %r" % data[-1])' "$1" 2>&1
}
case $(sse_end "$D/endless.sse") in
"whole "*" error") rc=0 ;;
*) rc=1 ;;
esac
check "whole events, then OpenAI's in-band error event ($(sse_end "$D/endless.sse" | tail -n 1))" \
    test "$rc" = 0
check "and the proxy counts it as an upstream error" test "$($C "$EX/__fusebox/stats" | \
    python3 -c 'import json,sys; print(json.load(sys.stdin)["upstream_errors"])')" -ge 1
$C -N -o "$D/broken.sse" -H "$J" -H "$AV" "$EX/v1/messages" \
    -d '{"model":"claude-haiku-4-5","max_tokens":8,"stream":true,"messages":[{"role":"user","content":"hi"}]}'
rc=$?
check "an upstream that breaks off inside an event: an abortive end at once (curl exit $rc)" \
    test "$rc" = 18
check "its two whole events, then Anthropic's error event ($(sse_end "$D/broken.sse" | tail -n 1))" \
    test "$(sse_end "$D/broken.sse")" = "whole 3 error"
check "the error event is Anthropic's" grep -q '^event: error$' "$D/broken.sse"
mock_stop
# A piece over --max-response as libcurl unpauses the transfer (the client reads slowly): it
# refuses the piece, drops the rest of the bytes it held and reads on; the bytes after that gap
# went to the client, spliced onto the last event the proxy held (check 30's flake, on a loaded
# machine). Made certain: ttft-1s holds the first event, so the proxy's 256 KiB buffer fills with
# exactly the upstream's bytes; the 1000 after it pause the transfer, the 7000 that came in the
# same read wait in libcurl, and on unpausing the 8000 come at once, past the limit (4096 bytes
# past what the proxy held), while the 500-byte chunks after them would each fit.
mock_start "$D/gap.url" "$FUSEBOX" mock --port 0 --quiet --upstream "$EN" \
    --max-response $((91 + 262144 - 500 + 4096 + 1024))
$C -N -o "$D/gap.sse" -H "$J" -H 'x-fusebox-fault: ttft-1s' "$MOCK_URL/v1/chat/completions?gap" \
    -d "$OA,\"stream\":true}"
rc=$?
case $(sse_end "$D/gap.sse") in
"whole "*" error") grc=0 ;;
*) grc=1 ;;
esac
check "past the limit as the transfer unpauses: whole events, then the error event, at once (curl exit $rc; $(sse_end "$D/gap.sse" | tail -n 1))" \
    test "$grc" = 0 -a "$rc" = 18
mock_stop
kill "$EN_PID" 2>/dev/null
EN_PID=
expect_exit 2 "--upstream ftp://x is bad input (exit 2)" "$FUSEBOX" mock --upstream ftp://x --quiet
contains "$ERR" "must be an http:// or https:// URL" "naming what is wrong"
finish
