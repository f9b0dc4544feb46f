#!/bin/sh
# tests/e2e/stress.sh - fusebox at its limits (issue 14): the mock under a bounded flood of
# garbage and valid requests at once with its memory sampled (tests/e2e/flood_client.py), a
# run with 10^5 requests in flight, and a scenario just past every cap
# (tests/e2e/stress_caps.py), each stopping with exit 2 and an error naming the cap. The
# sanitizer run does the same under ASan and UBSan. Logs stay in out/e2e-stress/.
. tests/tap.sh
set -u
D=$(logs_dir stress)
T=$E2E_TMP
FLOOD_S=${FLOOD_S:-6}
ASAN=
if nm "$FUSEBOX" 2>/dev/null | grep -q __asan_init; then
    ASAN=1
    # freed memory would sit in ASan's quarantine, growing RSS without a leak (mock_load.sh)
    ASAN_OPTIONS="quarantine_size_mb=0:thread_local_quarantine_size_kb=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
    export ASAN_OPTIONS
fi

# ---- the mock under a flood ----
# --max-memory 16 MiB: the 48 big bodies of the flood (144 MiB) must not all get in (without
# the cap the mock grows by about 90 MiB). The bound on RSS: that cap and 32 MiB for everything
# else (under ASan, its shadow and allocator: 48 MiB).
MAXMEM=16777216
BOUND_KB=$((48 * 1024))
[ -n "$ASAN" ] && BOUND_KB=$((64 * 1024))
mock_start "$D/url" "$FUSEBOX" mock --port 0 --quiet --max-memory $MAXMEM
URL=$MOCK_URL
if [ -z "$URL" ]; then
    ok 1 "the mock starts (see $D/url.err)"
    finish
    exit 1
fi
python3 tests/e2e/flood_client.py "${URL##*:}" "$MOCK_PID" "$FLOOD_S" >"$D/flood.json" 2>"$D/flood.err"
check "the flood runs to its end ($FLOOD_S s)" test -s "$D/flood.json"
F=$D/flood.json
echo "# flood: $(json "$F" "{k: v for k, v in r.items() if k != 'big_statuses'}")"
echo "# big bodies: $(json "$F" "__import__('collections').Counter(r['big_statuses'])")"
# Valid requests get a 200, or the documented 503 while the big bodies fill --max-memory.
others=$(json "$F" "(r['valid_other_statuses'], r['valid_failed'])")
timeouts=$(json "$F" "r['valid_timeout']")
if [ "$others" != "([], 0)" ]; then
    ok 1 "valid requests among the garbage get 200 (or 503 at --max-memory): other statuses, failed connections: $others"
elif [ "$timeouts" -gt 0 ]; then
    skip "valid requests among the garbage are answered" \
        "inconclusive: $timeouts timed out after 20 s (the machine is busy: load $(cut -d' ' -f1 /proc/loadavg))"
else
    check "valid requests among the garbage are answered: $(json "$F" "(r['valid_200'], r['valid_503'])") (200, 503 at --max-memory)" \
        test "$(json "$F" "r['valid_200'] > 0")" = True
fi
check "every big body got an answer, and --max-memory turned some away (503)" \
    test "$(json "$F" "all(s > 0 for s in r['big_statuses']) and 503 in r['big_statuses']")" = True
grow=$(json "$F" "r['rss_kb_peak'] - r['rss_kb_start']")
check "memory bounded: RSS grew ${grow} kB at its peak (bound $BOUND_KB kB)" test "$grow" -lt "$BOUND_KB"
code=$(curl -s -m 10 -o /dev/null -w '%{http_code}' -H 'Content-Type: application/json' \
    "$URL/v1/chat/completions" -d '{"model":"m","messages":[{"role":"user","content":"hi"}]}')
check "after the flood a request is answered ($code)" test "$code" = 200
curl -s -m 5 "$URL/__fusebox/stats" >"$D/stats.json"
check "nothing left in flight or waiting" \
    test "$(json "$D/stats.json" "(r['in_flight'], r['waiting'], r['suspended'])")" = "(0, 0, 0)"
mock_stop
check "the mock shuts down cleanly (exit $MOCK_RC${ASAN:+, no leak})" test "$MOCK_RC" = 0

# ---- 10^5 requests in flight ----
# 20,000/s for 5 s to a provider that answers after 60 s: all 100,000 are in flight at once.
cat >"$T/inflight.json" <<'JSON'
{"name": "in-flight-1e5", "seed": 1, "duration": "5s",
 "traffic": [{"class": "chat", "arrivals": {"constant": "20000/s"}, "prompt_tokens": 100,
              "completion_tokens": 20}],
 "pods": {"count": 100, "workers": 1000, "queue": 10, "request_timeout": "5m"},
 "providers": [{"name": "p0", "latency": {"ttft": "60s", "per_output_token": "0ms"},
                "capacity": {"concurrency": 200000}}],
 "policy": {"fallback": ["p0"]},
 "variants": {"v": {}}}
JSON
expect_exit 0 "a run with 10^5 requests in flight completes" \
    "$FUSEBOX" run "$T/inflight.json" -o "$T/inflight" --quiet
R=$T/inflight/report.json
got=$(json "$R" "(r['variants']['v']['complete'], r['variants']['v']['summary']['requests'], r['variants']['v']['summary']['in_flight_peak'], r['variants']['v']['summary']['success_rate'])" 2>&1)
check "... all 100000 in flight at once, every one answered ($got)" test "$got" = "(True, 100000, 100000, 1.0)"
expect_exit 2 "one fewer allowed in flight (--set limits.in_flight=99999): exit 2" \
    "$FUSEBOX" run "$T/inflight.json" -o "$T/inflight2" --quiet --set limits.in_flight=99999
contains "$ERR" "in-flight cap reached (limits.in_flight = 99999)" "... naming the cap"
check "... and the report says incomplete, with the reason" test "$(json "$T/inflight2/report.json" \
    "(r['variants']['v']['complete'], 'limits.in_flight' in r['variants']['v']['stopped'])")" = "(False, True)"

# ---- every cap ----
mkdir -p "$T/caps"
python3 tests/e2e/stress_caps.py "$T/caps" >"$T/caps.txt"
while IFS="	" read -r name says; do
    run_kept "$FUSEBOX" run "$T/caps/$name.json" -o "$T/caps/out-$name" --quiet
    r=1
    case $ERR in *"$says"*) [ "$got" -eq 2 ] && r=0 ;; esac
    [ $r -ne 0 ] && echo "# exit $got; stderr: $ERR"
    # a run that a cap stopped wrote its files: they must say it is incomplete
    rep=$T/caps/out-$name/report.json
    marked=
    if [ $r -eq 0 ] && [ -f "$rep" ]; then
        marked=", report incomplete"
        [ "$(json "$rep" "[v['complete'] for v in r['variants'].values()]")" = "[False]" ] || r=1
        [ $r -ne 0 ] && echo "# $rep does not say incomplete"
    fi
    ok $r "cap $name: exit 2, '$says'$marked"
done <"$T/caps.txt"
finish
