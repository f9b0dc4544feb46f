#!/bin/sh
# bench/mock_bench.sh - requests/s and latency percentiles of `fusebox mock` under wrk,
# beside nginx serving a static JSON file on the same machine, and the mock with a fault
# timeline against nginx side by side (alternating rounds; the target is >= 50%).
# Prints figures, never fails.
# Installs Debian's wrk and nginx-light if missing. Run by bench/run.sh with BUILD set.
. "$(dirname "$0")/../tests/wait_url.sh"
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-build/release}
FUSEBOX=$ROOT/$BUILD/fusebox
DURATION=${MOCK_BENCH_DURATION:-5s}
CONNS=${MOCK_BENCH_CONNECTIONS:-100}
TMP=$(mktemp -d /tmp/fusebox-mock-bench.XXXXXX)
chmod 755 "$TMP"
MOCK=
NGINX_PID=

cleanup() {
    [ -n "$MOCK" ] && kill "$MOCK" 2>/dev/null && wait "$MOCK" 2>/dev/null
    [ -n "$NGINX_PID" ] && kill "$NGINX_PID" 2>/dev/null && wait "$NGINX_PID" 2>/dev/null
    rm -rf "$TMP"
}
trap cleanup EXIT INT TERM

need=""
command -v wrk >/dev/null 2>&1 || need="$need wrk"
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || need="$need nginx-light"
if [ -n "$need" ]; then
    SUDO=$([ "$(id -u)" = 0 ] || echo sudo)
    { $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
        $SUDO apt-get install -y -qq --no-install-recommends $need; } >"$TMP/apt.log" 2>&1 ||
        { echo "mock_bench: cannot install$need; skipped"; exit 0; }
fi
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
[ -x "$FUSEBOX" ] || { echo "mock_bench: $FUSEBOX not built; skipped"; exit 0; }

BODY='{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hello there"}],"max_tokens":16}'
cat >"$TMP/post.lua" <<LUA
wrk.method = "POST"
wrk.body = '$BODY'
wrk.headers["Content-Type"] = "application/json"
LUA

# run NAME URL [wrk args...]: one wrk run, one result line.
run() {
    name=$1
    url=$2
    shift 2
    wrk -t1 -c"$CONNS" -d"$DURATION" --latency "$@" "$url" >"$TMP/wrk.txt" 2>&1
    rps=$(awk '/^Requests\/sec:/ {print $2}' "$TMP/wrk.txt")
    p50=$(awk '$1 == "50%" {print $2}' "$TMP/wrk.txt")
    p99=$(awk '$1 == "99%" {print $2}' "$TMP/wrk.txt")
    non2xx=$(awk '/Non-2xx/ {print $NF}' "$TMP/wrk.txt")
    errs=$(awk '/Socket errors/ {print $0}' "$TMP/wrk.txt")
    printf '%-34s %10s req/s   p50 %8s   p99 %8s   non-2xx %s%s\n' "$name" "${rps:-?}" \
        "${p50:-?}" "${p99:-?}" "${non2xx:-0}" "${errs:+   ($errs)}"
}

start_mock() {
    rm -f "$TMP/url" # else a slow start lets wait_url read the last mock's (closed) address
    "$FUSEBOX" mock --port 0 --quiet "$@" >"$TMP/url" 2>/dev/null &
    MOCK=$!
    URL=$(wait_url "$TMP/url")
}
stop_mock() { kill "$MOCK" 2>/dev/null; wait "$MOCK" 2>/dev/null; MOCK=; }

start_nginx() {
    printf '%s\n' '{"id":"chatcmpl-static","object":"chat.completion","choices":[]}' >"$TMP/resp.json"
    chmod 644 "$TMP/resp.json"
    for try in 1 2 3 4 5; do
        PORT=$((20000 + $(od -An -N2 -tu2 /dev/urandom) % 40000))
        cat >"$TMP/nginx.conf" <<CONF
worker_processes 1;
daemon off;
pid $TMP/nginx.pid;
error_log $TMP/nginx-error.log;
events { worker_connections 4096; }
http {
    access_log off;
    client_body_temp_path $TMP/body;
    proxy_temp_path $TMP/proxy;
    fastcgi_temp_path $TMP/fastcgi;
    uwsgi_temp_path $TMP/uwsgi;
    scgi_temp_path $TMP/scgi;
    server {
        listen 127.0.0.1:$PORT;
        location / { default_type application/json; root $TMP; }
    }
}
CONF
        "$NGINX" -p "$TMP" -c "$TMP/nginx.conf" 2>>"$TMP/nginx-error.log" &
        NGINX_PID=$!
        ok=
        for _ in $(seq 1 50); do
            curl -s -o /dev/null -m 1 "http://127.0.0.1:$PORT/resp.json" && { ok=1; break; }
            kill -0 "$NGINX_PID" 2>/dev/null || break
            sleep 0.05
        done
        [ -n "$ok" ] && return 0
        kill "$NGINX_PID" 2>/dev/null
        wait "$NGINX_PID" 2>/dev/null
        NGINX_PID=
    done
}

# rps NAME URL [wrk args...]: one wrk run's requests/s alone (for the side-by-side rounds).
rps() {
    wrk -t1 -c"$CONNS" -d"$DURATION" "$@" >"$TMP/wrk.txt" 2>&1
    awk '/^Requests\/sec:/ {print $2}' "$TMP/wrk.txt"
}

median() { sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }

echo "wrk -t1 -c$CONNS -d$DURATION; mock: 1 HTTP thread; nginx: 1 worker ($(nproc) cores)"
start_mock
run "mock: chat completion (POST)" "$URL/v1/chat/completions" -s "$TMP/post.lua"
run "mock: /v1/models (GET)" "$URL/v1/models"
stop_mock

cat >"$TMP/faults.json" <<'JSON'
[{"at": "0s", "for": "1h", "rate_limit": {"status": 429, "retry_after": "2s", "fraction": 0.1}},
 {"at": "0s", "for": "1h", "outage": {"status": 503, "fraction": 0.05}},
 {"midstream": {"after_tokens": 8, "mode": "cut", "fraction": 0.1}}]
JSON
start_mock --faults "$TMP/faults.json"
run "mock: chat + timeline faults" "$URL/v1/chat/completions" -s "$TMP/post.lua"
stop_mock

start_mock --faults "$TMP/faults.json" --ttft '{"lognormal":{"median":"1ms","p99":"5ms"}}'
run "mock: faults + drawn latency" "$URL/v1/chat/completions" -s "$TMP/post.lua"
stop_mock

start_nginx
if [ -z "$NGINX_PID" ]; then
    echo "nginx: could not start (see its error log); skipped"
    exit 0
fi
run "nginx: static JSON file (GET)" "http://127.0.0.1:$PORT/resp.json"

# Side by side: three rounds of the mock with faults and nginx in turn, so that a machine
# busy with something else slows both alike; the medians and their ratio.
: >"$TMP/mock.rps"
: >"$TMP/nginx.rps"
for round in 1 2 3; do
    start_mock --faults "$TMP/faults.json"
    rps -s "$TMP/post.lua" "$URL/v1/chat/completions" >>"$TMP/mock.rps"
    stop_mock
    rps "http://127.0.0.1:$PORT/resp.json" >>"$TMP/nginx.rps"
done
m=$(median <"$TMP/mock.rps")
n=$(median <"$TMP/nginx.rps")
awk -v m="$m" -v n="$n" 'BEGIN {
    pct = n > 0 ? 100 * m / n : 0
    printf "side by side (median of 3 rounds): mock with faults %s req/s, nginx %s req/s: %.0f%% of nginx (target >= 50%%)\n", m, n, pct }'
