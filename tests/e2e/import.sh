#!/bin/sh
# tests/e2e/import.sh - `fusebox import` on logs nobody here wrote by hand:
#   (a) OTLP/JSON traces of the real `openai` Node client (pinned) against `fusebox mock`
#       playing a fault timeline, traced by the pinned @opentelemetry/instrumentation-openai
#       (and instrumentation-undici for the HTTP attempts, or without it: one span per
#       request), serialised by @opentelemetry/otlp-transformer (tests/e2e/import/
#       openai_trace.cjs);
#   (b) the trace of a `fusebox live --otlp` run;
#   (c) LiteLLM StandardLoggingPayload records generated from a known timeline
#       (tests/e2e/import/litellm_gen.py);
#   (d) a trace of conversations (tests/e2e/import/sessions_gen.py): sessions, think times.
# Each is imported; the fitted fault timeline is compared with the one that ran
# (tests/e2e/import/check_fit.py), the policy inferred with the one that ran, the log's
# counts with what the run counted, and the as-was simulation with the log (the import's
# exit code and `fusebox check`). Then bad input. Real-time runs on a busy machine are
# inconclusive, with the reason, for what depends on their timing. TAP output.
. tests/tap.sh
T=$E2E_TMP
D=tests/e2e/import
NPM=$ROOT/out/import-otel
# the OpenTelemetry JS release of 2026-10 (sdk-node 0.223.0): the instrumentations, the SDK
# and the OTLP serializer of one line; instrumentation-openai 0.21.0 patches openai >=4.19 <7
PKGS="openai@6.49.0 @opentelemetry/instrumentation-openai@0.21.0
@opentelemetry/instrumentation-undici@0.33.0 @opentelemetry/instrumentation@0.223.0
@opentelemetry/sdk-trace-node@2.12.0 @opentelemetry/sdk-trace-base@2.12.0
@opentelemetry/resources@2.12.0 @opentelemetry/api@1.9.0 @opentelemetry/otlp-transformer@0.223.0"
mkdir -p "$NPM"
M1_PID= M2_PID= M3_PID=
LIVE_PID=
CUT_PID=
trap 'kill $M1_PID $M2_PID $M3_PID $LIVE_PID $CUT_PID 2>/dev/null; mock_stop; rm -rf "$E2E_TMP"' EXIT

# timed CODE NAME: a result that depends on a real-time run's timing: a failure while the
# run did not keep its timing ($BUSY says why) is inconclusive, a skip with the reason
timed() {
    if [ "$1" -ne 0 ] && [ -n "$BUSY" ]; then
        skip "$2" "inconclusive: $BUSY"
    else
        ok "$1" "$2"
    fi
}

pyjson() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }
# the as-was variant's policy, for comparisons
policy() { pyjson "$1" "json.dumps(d['variants']['as-was']['$2'], sort_keys=True)"; }

# why_node RC LOG: when the traced run failed, why, as TAP comments: its output, or what its
# exit code says when it printed nothing
why_node() {
    [ "$1" -eq 0 ] && return 0
    case $1 in
    124) echo "# node was stopped after 120 s (timeout), node $(node --version 2>&1)" ;;
    *) echo "# node exited $1, node $(node --version 2>&1)" ;;
    esac
    if [ -s "$2" ]; then
        tail -n 40 "$2" | sed 's/^/# /'
    else
        echo "# ... and printed nothing ($2 is empty)"
    fi
}

# ---- (b) starts first: the live run (a few seconds) runs while the traced runs of (a) take
# their 32 s, instead of after them; it keeps its timing or says inconclusive, as alone ----

S=$D/live-outage.json
("$FUSEBOX" live "$S" --time-scale 2 --no-charts -q -o "$T/live" --otlp "$T/live.json" \
    >"$T/live.out" 2>"$T/live.err"
echo $? >"$T/live.rc") &
LIVE_PID=$!
# and hangs that a request timeout cut: the trace holds only cancelled attempts for them
("$FUSEBOX" live "$D/live-hang-cut.json" --time-scale 2 --no-charts -q -o "$T/cut" \
    --otlp "$T/cut.json" >"$T/cut.out" 2>"$T/cut.err"
echo $? >"$T/cut.rc") &
CUT_PID=$!

# ---- (a) the openai Node client, traced ----

need node "$NPM/apt.log" nodejs npm
need npm "$NPM/apt.log" nodejs npm
# On Node 18 (Debian bookworm's), openai 6.49.0 leaves a request to a hung server unsettled after
# its timeout now and then (2 of 5 hung requests at once, in a bookworm root; fetch alone aborts
# all 5, and Node 20 settles them all): the two runs of openai-truth.json, whose timeline has a
# hang, would never end. node_pinned installs Node 20 where the system's is older; only if that
# fails are they skipped with that reason (the slow-window run has no hang).
NODE_HANGS=
node_pinned
node -e 'process.exit(+process.versions.node.split(".")[0] >= 20 ? 0 : 1)' 2>/dev/null ||
    NODE_HANGS="openai 6.49.0 on node $(node --version 2>&1) leaves some requests to a hung server unsettled after its timeout (Node 20 settles them): a traced run of openai-truth.json (a hang in its timeline) would never end"
# shellcheck disable=SC2086
if npm_pinned "$NPM" $PKGS; then
    ok 0 "npm install of openai and the OpenTelemetry packages"
    cp "$D/openai_trace.cjs" "$NPM/"
    MOCK_PID=
    mock_start "$T/mock1.url" "$FUSEBOX" mock --scenario "$D/openai-truth.json" --provider openai \
        --port 0 --quiet
    M1_PID=$MOCK_PID M1_URL=$MOCK_URL
    MOCK_PID=
    mock_start "$T/mock2.url" "$FUSEBOX" mock --scenario "$D/openai-truth.json" --provider openai \
        --port 0 --quiet
    M2_PID=$MOCK_PID M2_URL=$MOCK_URL
    MOCK_PID=
    mock_start "$T/mock3.url" "$FUSEBOX" mock --scenario "$D/openai-slow-truth.json" \
        --provider openai --port 0 --quiet
    M3_PID=$MOCK_PID M3_URL=$MOCK_URL
    MOCK_PID=
    # a third at once: a 2.5x slow window, answers of 5 or 16 tokens (issue 21's Trace A)
    (cd "$NPM" && MOCK_URL=$M3_URL TRACE=$T/slow.json META=$T/slow-meta.json TOKENS=5,16 \
        RATE=10 SECONDS=32 TIMEOUT_MS=4000 timeout 120 node openai_trace.cjs) \
        >"$T/slow.log" 2>&1 &
    SLOW=$!
    # two runs at once: with the HTTP instrumentation (attempts visible), and without
    if [ -z "$NODE_HANGS" ]; then
        (cd "$NPM" && MOCK_URL=$M2_URL TRACE=$T/plain.json META=$T/plain-meta.json NO_HTTP=1 \
            RATE=10 SECONDS=32 TIMEOUT_MS=1500 timeout 120 node openai_trace.cjs) \
            >"$T/plain.log" 2>&1 &
        PLAIN=$!
        (cd "$NPM" && MOCK_URL=$M1_URL TRACE=$T/trace.json META=$T/meta.json RATE=10 SECONDS=32 \
            TIMEOUT_MS=1500 timeout 120 node openai_trace.cjs) >"$T/node.log" 2>&1
        r=$?
        wait $PLAIN
        r2=$?
    fi
    wait $SLOW
    r3=$?
    kill "$M1_PID" "$M2_PID" "$M3_PID" 2>/dev/null
    wait "$M1_PID" "$M2_PID" "$M3_PID" 2>/dev/null
    if [ -n "$NODE_HANGS" ]; then
        skip "the openai client's traced run against fusebox mock" "$NODE_HANGS"
        skip "the same without the HTTP instrumentation" "$NODE_HANGS"
    else
        why_node $r "$T/node.log"
        ok $r "the openai client's traced run against fusebox mock"
        why_node $r2 "$T/plain.log"
        ok $r2 "the same without the HTTP instrumentation"
    fi
    why_node $r3 "$T/slow.log"
    ok $r3 "the same with a slow window and answers of 5 or 16 tokens"
else
    ok 1 "npm install of openai and the OpenTelemetry packages (see $NPM/npm.log)"
fi

if [ -s "$T/trace.json" ]; then
    # a loaded machine runs the client late: its timing, not the import, is then in doubt
    BUSY=$(python3 -c "import json,sys; m=json.load(open(sys.argv[1]))
print('' if m['lag_p99_ms'] < 40 and m['lag_max_ms'] < 200 and m['late_max_ms'] < 150 else
      'the machine was busy: the Node event loop ran late (p99 %.0f ms, max %.0f ms; a request started %.0f ms late), so the traced run did not keep its timing' % (m['lag_p99_ms'], m['lag_max_ms'], m['late_max_ms']))" "$T/meta.json")
    run_kept "$FUSEBOX" import "$T/trace.json" -o "$T/incident.json"
    echo "$OUT" | sed 's/^/# /'
    [ "$got" -le 1 ] && [ -s "$T/incident.json" ]
    ok $? "fusebox import of the openai trace writes a scenario"
    timed "$got" "... and as-was reproduces the traced run within its bands (exit 0)"
    contains "$OUT" "as-was vs the logs" "the import prints logs and simulation side by side"
    "$FUSEBOX" check "$T/incident.json" >"$T/check.out" 2>&1
    r=$?
    [ $r -ne 0 ] && sed 's/^/# /' "$T/check.out"
    timed $r "fusebox check incident.json passes (the done-when line)"
    [ "$(pyjson "$T/meta.json" "d['requests']")" = "$(pyjson "$T/incident.json" "len(d['traffic'][0]['arrivals']['replay']['at_ms'])")" ]
    ok $? "the arrivals are the client's requests, not its attempts (one per chat.completions.create)"
    python3 - "$T/meta.json" "$T/incident.json" <<'PY'
import json, re, sys
m, d = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
n, ok = map(int, re.match(r"(\d+) requests in the log, (\d+) answered", d["traffic"][0]["description"]).groups())
print("# client: %d requests, %d answered; log: %d, %d" % (m["requests"], m["ok"], n, ok))
sys.exit(0 if (n, ok) == (m["requests"], m["ok"]) else 1)
PY
    ok $? "the log's success rate is the client's (its answers over its requests)"
    OFFSET=$(python3 -c "import json,sys; m=json.load(open(sys.argv[1])); d=json.load(open(sys.argv[2]))
s=[int(x['startTimeUnixNano']) for r in d['resourceSpans'] for ss in r['scopeSpans'] for x in ss['spans'] if x['name'].startswith('chat')]
print(min(s) / 1e6 - m['t0_unix_ms'])" "$T/meta.json" "$T/trace.json")
    python3 "$D/check_fit.py" "$T/incident.json" "$D/openai-truth.json" openai=openai \
        --offset-ms="$OFFSET" --edge-ms=600 --attempts-per-s=13 --log="$T/trace.json" >"$T/fit.out"
    r=$?
    sed 's/^/# /' "$T/fit.out"
    timed $r "the fitted timeline matches the mock's (edges 600 ms or 4 hits' worth of attempts, fractions 3 sd)"
    # openai-node v6.49.0 src/client.ts: maxRetries 2, 0.5 s x 2^n x (1 - 0.25 U), Retry-After
    # (retry-after-ms) waited as is; the client's timeout was 1.5 s
    pyjson "$T/incident.json" "d['variants']['as-was']['retry']" >"$T/retry.txt"
    python3 - "$T/incident.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["variants"]["as-was"]["retry"]
e = r["backoff"]["exponential"]
checks = [r["attempts"] == 3, 400 <= int(e["base"][:-2]) <= 475, 1.8 <= e["multiplier"] <= 2.2,
          0.08 <= r["jitter"]["proportional"] <= 0.2, r.get("retry_after") == "as_is",
          r.get("attempt_timeout") in ("1500ms", "1501ms", "1502ms", "1503ms", "1499ms")]
print("# inferred retry:", json.dumps(r))
sys.exit(0 if all(checks) else 1)
PY
    timed $? "as-was is openai-node's policy: 3 attempts, 0.5 s x 2^n less up to 25%, Retry-After as is, the 1.5 s timeout"
    run_kept "$FUSEBOX" import "$T/trace.jsonl" -o "$T/incident-lines.json" -q
    [ "$got" -le 1 ] && [ -s "$T/incident-lines.json" ]
    ok $? "the one-request-per-line form imports too"
    [ "$(pyjson "$T/incident.json" "json.dumps([d['providers'], d['variants'], d['traffic']])")" = \
        "$(pyjson "$T/incident-lines.json" "json.dumps([d['providers'], d['variants'], d['traffic']])")" ]
    ok $? "... into the same scenario"
    "$FUSEBOX" import "$T/trace.json" -o "$T/incident2.json" -q
    cmp -s "$T/incident.json" "$T/incident2.json"
    ok $? "importing twice writes the same bytes"
else
    skip "fusebox import of the openai trace" "no trace (see above)"
fi

if [ -s "$T/plain.json" ]; then
    BUSY=$(python3 -c "import json,sys; m=json.load(open(sys.argv[1]))
print('' if m['lag_p99_ms'] < 40 and m['lag_max_ms'] < 200 and m['late_max_ms'] < 150 else 'the machine was busy: the Node event loop ran late (max %.0f ms)' % m['lag_max_ms'])" "$T/plain-meta.json")
    run_kept "$FUSEBOX" import "$T/plain.json" -o "$T/plain-incident.json"
    [ "$got" -le 1 ] && [ -s "$T/plain-incident.json" ]
    ok $? "a trace with one span per request (no HTTP instrumentation) imports"
    [ "$got" -ne 0 ] && echo "$OUT$ERR" | grep -iE "MISS|OUTSIDE|cause|^  *[a-z_/ 0-9]+ .*  " | sed 's/^/# /' | head -n 40
    # A known miss of issue 21, kept as a TODO (neither passed nor failed): with the retries
    # invisible, a request's latency holds its retries' waits, which as-was adds as slow
    # faults' delays drawn per attempt (docs/import.md, Limits): its p99 is the 3rd longest of
    # 290 requests, and where the log has just three two-wait answers it sits on a cliff
    # (about 2.3 s or 4.5 s by whether the replay drew three), beyond the import's noise on
    # some runs. Any other figure missed is a failure.
    PLAIN_TODO="known miss (issue 21): one span per request hides the retries, whose waits are in the request's latency tail"
    plain_only_tail() { # the misses the import lists are latency_p90/p99 only, and no band is OUTSIDE
        echo "$1" | grep -qE '^  latency_p(90|99): .* against the log' &&
            ! echo "$1" | grep -E '^  [a-z_/0-9 ]+: .* against the log' | grep -vqE '^  latency_p(90|99):' &&
            ! echo "$1" | grep -q OUTSIDE
    }
    if [ "$got" -eq 1 ] && plain_only_tail "$OUT$ERR"; then
        TAP_N=$((TAP_N + 1))
        echo "not ok $TAP_N - ... and as-was reproduces it # TODO $PLAIN_TODO"
    else
        timed "$got" "... and as-was reproduces it"
    fi
    contains "$(pyjson "$T/plain-incident.json" "d['description']")" "the client's retries, if it made any, are invisible" \
        "... and the scenario says that the retries are invisible"
    [ "$(pyjson "$T/plain-incident.json" "d['variants']['as-was']['retry']['attempts']")" = 1 ]
    ok $? "... and as-was makes one attempt (the faults are per request, after the retries)"
    "$FUSEBOX" check "$T/plain-incident.json" >"$T/check.out" 2>&1
    r=$?
    [ $r -ne 0 ] && grep -v "^PASS" "$T/check.out" | sed 's/^/# /' | head -n 30
    if [ $r -eq 1 ] && [ "$(grep -c '^FAIL' "$T/check.out")" -eq 1 ] &&
        grep -q '^FAIL  plain: as-was beside the log (observed)' "$T/check.out" &&
        ! grep -E '^      [a-z_/0-9 ]+: .* against the log' "$T/check.out" | grep -vqE '^      latency_p(90|99):'; then
        TAP_N=$((TAP_N + 1))
        echo "not ok $TAP_N - ... fusebox check passes # TODO $PLAIN_TODO"
    else
        timed $r "... fusebox check passes"
    fi
else
    skip "a trace with one span per request (no HTTP instrumentation) imports" "no trace (see above)"
fi

if [ -s "$T/slow.json" ]; then
    BUSY=$(python3 -c "import json,sys; m=json.load(open(sys.argv[1]))
print('' if m['lag_p99_ms'] < 40 and m['lag_max_ms'] < 200 and m['late_max_ms'] < 150 else 'the machine was busy: the Node event loop ran late (max %.0f ms)' % m['lag_max_ms'])" "$T/slow-meta.json")
    run_kept "$FUSEBOX" import "$T/slow.json" -o "$T/slow-incident.json"
    echo "$OUT" | sed 's/^/# /'
    [ "$got" -le 1 ] && [ -s "$T/slow-incident.json" ]
    ok $? "the trace with a slow window imports"
    timed "$got" "... and as-was reproduces it within its bands"
    OFFSET=$(python3 -c "import json,sys; m=json.load(open(sys.argv[1])); d=json.load(open(sys.argv[2]))
s=[int(x['startTimeUnixNano']) for r in d['resourceSpans'] for ss in r['scopeSpans'] for x in ss['spans'] if x['name'].startswith('chat')]
print(min(s) / 1e6 - m['t0_unix_ms'])" "$T/slow-meta.json" "$T/slow.json")
    python3 "$D/check_fit.py" "$T/slow-incident.json" "$D/openai-slow-truth.json" openai=openai \
        --offset-ms="$OFFSET" --edge-ms=600 --attempts-per-s=12 --log="$T/slow.json" >"$T/slowfit.out"
    r=$?
    sed 's/^/# /' "$T/slowfit.out"
    timed $r "... the slow window fitted where it ran, 2.5x within 10% (the factor from the latency over the model's, not the first token alone: 6.94x once), and the rest of the timeline"
    python3 - "$T/slow-incident.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
c = d["traffic"][0]["completion_tokens"]
print("# completion_tokens:", json.dumps(c))
sys.exit(0 if "empirical" in c and c["empirical"]["values"] == [5, 16] else 1)
PY
    ok $? "... completion tokens are the two values the client asked for (empirical), not a uniform on [5, 16]"
    contains "$(pyjson "$T/slow-incident.json" "d['description']")" "95% interval" \
        "... the scenario states the slow factor's interval"
    # the gaps after a Retry-After are the client's real waits: a late event loop lengthens them,
    # and max(header, backoff) can then fit them as well as the header alone (in a clean-clone
    # run, with the loop 269 ms late: max 1% off, as is 2%)
    [ "$(pyjson "$T/slow-incident.json" "d['variants']['as-was']['retry'].get('retry_after')")" = as_is ]
    timed $? "... and Retry-After waited as is (openai-node's retryRequest)"
    # 32 s of traffic, faults one after the other, spillover.hold 30 s: no recovery can be
    # judged, and fusebox run says so once, not once per fault and variant
    "$FUSEBOX" run "$T/slow-incident.json" -o "$T/slow-run" >"$T/slow-run.out" 2>&1
    [ "$(grep -c 'recovery not measured' "$T/slow-run.out")" = 1 ] &&
        ! grep -q 'undetermined' "$T/slow-run.out"
    ok $? "... and fusebox run on it says once that recovery is not measured (no per-fault noise)"
fi

# ---- (b) fusebox live --otlp ----

# traced_import NAME TEST: the background live run into $T/NAME (its exit code and output, as
# live_exit reads them from a command), then the import of its trace $T/NAME.json into
# $T/NAME-incident.json ($got, $OUT); false when it wrote no trace
traced_import() {
    live_exit "$T/$1" "$2" sh -c 'cat "$1"; cat "$2" >&2; exit "$(cat "$3" 2>/dev/null || echo 1)"' \
        _ "$T/$1.out" "$T/$1.err" "$T/$1.rc"
    [ -s "$T/$1.json" ] || return 1
    run_kept "$FUSEBOX" import "$T/$1.json" -o "$T/$1-incident.json"
    echo "$OUT" | sed 's/^/# /'
}

wait $LIVE_PID
LIVE_PID=
if traced_import live "fusebox live --otlp of an outage with retries, a breaker and a fallback"; then
    LIVE_BUSY=$INCONCLUSIVE
    BUSY=$LIVE_BUSY
    # once a known miss (its two-attempt requests replayed short): the as-was replay now sends
    # each retry when the log's started and each attempt in a window fails as the log's k-th
    # did (docs/import.md, "The corpus"), so any figure missed, or a band OUTSIDE, is a failure
    timed "$got" "as-was reproduces the live run (the import exits 0)"
    # as-was's retries come at the log's times: the import says how yours, which draws them from
    # the fitted policy, compares with the log (one run, said, not judged)
    contains "$OUT" "yours beside the log (one run" "... and says how yours, its retries drawn, compares with the log"
    echo "$OUT" >"$T/live-table.txt"
    python3 - "$T/live-incident.json" "$T/live/report.json" "$T/live-table.txt" <<'PY'
import json, sys
inc, rep = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
s = rep["variants"]["default"]["summary"]
n = sum(len(c["arrivals"]["replay"]["at_ms"]) for c in inc["traffic"])
rows = {l.split()[0]: l.split()[1] for l in open(sys.argv[3]) if len(l.split()) >= 3}
want = {"success_rate": "%.2f%%" % (100 * s["success_rate"]), "amplification": "%.3fx" % s["amplification"]}
print("# run: %d requests, %s; the log as imported: %d requests, %s" % (s["requests"], want, n,
      {k: rows.get(k) for k in want}))
sys.exit(0 if n == s["requests"] and all(rows.get(k) == v for k, v in want.items()) else 1)
PY
    ok $? "the trace's requests, success rate and amplification are the run's (report.json)"
    python3 -c "import json,sys; r=json.load(open(sys.argv[1]))['variants']['as-was']['retry']
e=r['backoff'].get('exponential', {}); print('# retry:', r)
sys.exit(0 if r['attempts'] == 3 and 98 <= float(e.get('base', '0ms')[:-2]) <= 103 and 1.9 <= e.get('multiplier', 0) <= 2.1 and r['jitter'] == 'none' else 1)" "$T/live-incident.json"
    r=$?
    BUSY=$LIVE_BUSY
    timed $r "as-was retries as the run did: 3 attempts, 100 ms x 2 (the wire adds a millisecond or two), no jitter"
    [ "$(policy "$T/live-incident.json" fallback)" = '["openai", "anthropic"]' ]
    ok $? "as-was falls back as the run did: openai, then anthropic"
    # the trace shows the threshold only where the breaker let an attempt through after the
    # 7th failure in a row and before the 8th; answers that came in together (the driver
    # late) leave 7 as likely as 8, and the import says what the log allows
    UNSHOWN=$(python3 - "$T/live-incident.json" <<'PY'
import json, re, sys
d = json.load(open(sys.argv[1]))["variants"]["as-was"]["description"]
m = re.search(r"the log allows (\d+) to (\d+) consecutive failures", d)
lo, hi = map(int, m.groups()) if m else (0, 0)
if lo < 8 <= hi:
    print("the trace allows %d to %d consecutive failures: no attempt was let through between "
          "the %dth failure in a row and the opening (their answers came in together), so it "
          "cannot tell %d from 8" % (lo, hi, lo, lo))
PY
)
    python3 -c "import json,sys; b=json.load(open(sys.argv[1]))['variants']['as-was'].get('breaker', {})
print('# breaker:', b); sys.exit(0 if b.get('consecutive_failures') == 8 and 1000 <= float(b['open'][:-2]) <= 1200 else 1)" \
        "$T/live-incident.json"
    r=$?
    BUSY=${LIVE_BUSY:-$UNSHOWN}
    timed $r "as-was has the run's breaker: 8 consecutive failures, open 1 s (plus the wait for a request)"
    BUSY=$LIVE_BUSY
    python3 "$D/check_fit.py" "$T/live-incident.json" "$S" openai=openai anthropic=anthropic \
        --edge-ms=450 --attempts-per-s=40 --log="$T/live.json" >"$T/lfit.out"
    r=$?
    sed 's/^/# /' "$T/lfit.out"
    timed $r "the fitted timeline matches the scenario's (edges 450 ms or 4 hits' worth of attempts, fractions 3 sd)"
    "$FUSEBOX" check "$T/live-incident.json" >"$T/check.out" 2>&1
    r=$?
    [ $r -ne 0 ] && grep -v "^PASS" "$T/check.out" | sed 's/^/# /' | head -n 30
    timed $r "fusebox check on the imported live run"
    BUSY=
fi

# ---- (b') hangs cut by the request timeout: cancelled attempts ----

wait $CUT_PID
CUT_PID=
if traced_import cut "fusebox live --otlp of hangs that a 1.5 s request timeout cuts"; then
    BUSY=$INCONCLUSIVE
    # the attempts that waited past every answer are hangs (they were left out: no fault, and a
    # replay that answered every request), and the requests given up at 1.5 s its timeout
    timed "$got" "hangs cut by a request timeout: as-was reproduces the live run (the import exits 0)"
    python3 "$D/check_fit.py" "$T/cut-incident.json" "$D/live-hang-cut.json" openai=openai \
        --edge-ms=450 --attempts-per-s=30 --log="$T/cut.json" >"$T/cutfit.out"
    r=$?
    sed 's/^/# /' "$T/cutfit.out"
    timed $r "... its hang window is the scenario's (edges 450 ms or 4 hits' worth, fraction 3 sd)"
    python3 -c "import json,sys; d=json.load(open(sys.argv[1])); t=d['pods']['request_timeout']
print('# request_timeout:', t); sys.exit(0 if t.endswith('ms') and 1500 <= float(t[:-2]) <= 1700 else 1)" \
        "$T/cut-incident.json"
    r=$?
    timed $r "... and its request timeout is the run's 1.5 s (read from the requests given up)"
    contains "$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['providers'][0]['description'])" "$T/cut-incident.json")" \
        "are counted as hangs" "... and the provider's description says the cancelled attempts were read as hangs"
    BUSY=
fi

# ---- (c) LiteLLM StandardLoggingPayload records ----

python3 "$D/litellm_gen.py" "$T/litellm.jsonl" "$T/litellm-truth.json"
ok $? "litellm_gen.py writes the records of a known bad hour"
expect_exit 0 "fusebox import of LiteLLM records: as-was reproduces them" "$FUSEBOX" import \
    "$T/litellm.jsonl" -o "$T/ll-incident.json"
echo "$OUT" | sed 's/^/# /'
check "fusebox check on the imported LiteLLM log" "$FUSEBOX" check "$T/ll-incident.json"
python3 "$D/check_fit.py" "$T/ll-incident.json" "$T/litellm-truth.json" openai=openai-primary \
    azure=azure-backup --edge-ms=3000 --attempts-per-s=4 >"$T/llfit.out"
r=$?
sed 's/^/# /' "$T/llfit.out"
ok $r "the fitted timelines match the generator's (edges 3 s, fractions 3 sd)"
# the records carry no Retry-After: the 2 s is inferred from the gaps, and waited as is
[ "$(policy "$T/ll-incident.json" retry)" = '{"attempt_timeout": "10000ms", "attempts": 3, "backoff": {"exponential": {"base": "1000ms", "multiplier": 2}}, "jitter": "none", "retry_after": "as_is"}' ]
ok $? "as-was is the generator's policy: 3 attempts, 1 s x 2, Retry-After as is, the 10 s timeout (got $(policy "$T/ll-incident.json" retry))"
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); p={x['name']: x for x in d['providers']}
o=p['openai']; print('# openai:', o['price'], o['context_window'], o['latency'])
sys.exit(0 if o['price'] == {'input_per_mtok': 2.5, 'output_per_mtok': 10} and o['context_window'] == 128000
         and abs(int(o['latency']['per_output_token'][:-2]) - 12000) < 600 else 1)" "$T/ll-incident.json"
ok $? "prices and the context window from model_map_information, the time per token from the answers"
contains "$OUT" "cost_usd " "the import's table has the bill (the records' response_cost)"
[ "$(pyjson "$T/ll-incident.json" "len([e for e in d['expect'] if e.startswith('as-was.cost_usd ')])")" = 2 ]
ok $? "... and the scenario expects as-was.cost_usd within its band (two lines)"
python3 -c "import json,sys
with open(sys.argv[1]) as f, open(sys.argv[2], 'w') as g:
    for line in f:
        r = json.loads(line); r['response_cost'] = 2 * r['response_cost']; g.write(json.dumps(r) + '\n')" \
    "$T/litellm.jsonl" "$T/ll-double.jsonl"
expect_exit 1 "a bill twice what the prices give: as-was does not reproduce it" "$FUSEBOX" import \
    "$T/ll-double.jsonl" -o "$T/ll-double.json"
contains "$(echo "$OUT" | grep '^cost_usd ')" "OUTSIDE" "... and the cost_usd row says so"
# the log beside as-was: the import's figures, fusebox run's columns, fusebox check
contains "$OUT" "as-was beside the log" "the import prints the log's figures beside as-was's"
[ "$(pyjson "$T/ll-incident.json" "d['observed']['variant'] + ' ' + str(d['observed']['requests'])")" = "as-was 2317" ]
ok $? "the scenario carries the log's figures (observed: as-was, 2317 requests)"
expect_exit 0 "fusebox run on the imported scenario" "$FUSEBOX" run "$T/ll-incident.json" --no-charts \
    -o "$T/ll-run"
python3 - "$T/ll-incident.json" "$T/ll-run/report.json" "$OUT" <<'PY' >"$T/ll-cols.out" 2>&1
import json, re, sys
obs = json.load(open(sys.argv[1]))["observed"]
rep = json.load(open(sys.argv[2]))["variants"]["as-was"]
bd, text = rep["breakdown"], sys.argv[3]
rows = {}
for line in text.split("\n"):
    m = re.match(r"(attempts/request \d+|status \S+|requests|attempts|retries) +(\d+)(?: \([\d.]+%\))? +(\d+)", line)
    if m:
        rows[m.group(1)] = (int(m.group(2)), int(m.group(3)))
bad = []
want = {"requests": (obs["requests"], rep["summary"]["requests"]),
        "attempts": (obs["attempts"], rep["summary"]["attempts"]),
        "retries": (obs["retries"], rep["summary"]["retries"])}
for k in set(obs["attempts_per_request"]) | set(bd["attempts_per_request"]):
    want["attempts/request " + k] = (obs["attempts_per_request"].get(k, 0), bd["attempts_per_request"].get(k, 0))
for k in set(obs["status"]) | set(bd["status"]):
    want["status " + k] = (obs["status"].get(k, 0), bd["status"].get(k, 0))
for k, v in sorted(want.items()):
    if rows.get(k) != v:
        bad.append("%s: printed %s, want %s (log, as-was)" % (k, rows.get(k), v))
print("%d rows checked" % len(want))
print("\n".join(bad))
# every call answered once, every ended request in one bucket
if sum(bd["status"].values()) != rep["summary"]["attempts"]:
    bad.append("statuses %d != attempts %d" % (sum(bd["status"].values()), rep["summary"]["attempts"]))
if sum(bd["attempts_per_request"].values()) != rep["summary"]["requests"]:
    bad.append("buckets != requests")
sys.exit(1 if bad else 0)
PY
r=$?
sed 's/^/# /' "$T/ll-cols.out"
ok $r "fusebox run prints each bucket and status of the log beside as-was's (report.json's breakdown)"
python3 -c "import json,sys
d = json.load(open(sys.argv[1])); d['variants']['as-was']['retry']['attempts'] = 1
json.dump(d, open(sys.argv[2], 'w'), indent=1)" "$T/ll-incident.json" "$T/ll-one.json"
expect_exit 1 "fusebox check fails when as-was no longer retries (retry.attempts 1)" "$FUSEBOX" \
    check "$T/ll-one.json"
contains "$OUT" "FAIL  litellm: as-was beside the log (observed)" "... as the observed figures' result"
contains "$OUT" "retries: 0 against the log's 1285" "... naming the retries it no longer makes"
contains "$OUT" "attempts/request 4: 0 (0.0%) against the log's 380" "... and the bucket it empties"
# the 500s of the log spread over ten statuses: the fit keeps 8 kinds per provider, the
# replay cannot answer the rarer ones, and the import names the figures and the cause
python3 -c "import json,sys
codes = [500, 502, 503, 504, 520, 521, 522, 523, 524, 525]
i = 0
with open(sys.argv[1]) as f, open(sys.argv[2], 'w') as g:
    for line in f:
        r = json.loads(line)
        e = r.get('error_information') or {}
        if e.get('error_code') == '500':
            e['error_code'] = str(codes[i % len(codes)])
            i += 1
        g.write(json.dumps(r) + '\n')" "$T/litellm.jsonl" "$T/ll-statuses.jsonl"
expect_exit 1 "a log with ten error statuses on one provider: as-was cannot answer them all" \
    "$FUSEBOX" import "$T/ll-statuses.jsonl" -o "$T/ll-statuses.json" -q
contains "$ERR" "status 525: 0 against the log's 115" "... the import names the figure and the miss"
contains "$ERR" "most likely the error kinds fitted per provider (at most 8;" "... and the likely cause"
expect_exit 0 "the rate-curve form (--arrivals rate) imports too" "$FUSEBOX" import "$T/litellm.jsonl" \
    -o "$T/ll-rate.json" --arrivals rate -q
[ "$(pyjson "$T/ll-rate.json" "len(d['traffic'][0]['ramp'])")" = 32 ]
ok $? "... as a ramp of 32 points (the most a ramp has: one per 19 s of the 600 s)"
expect_exit 0 "a slice of it (--start 5m --duration 2m)" "$FUSEBOX" import "$T/litellm.jsonl" \
    -o "$T/ll-slice.json" --start 5m --duration 2m -q
[ "$(pyjson "$T/ll-slice.json" "d['duration']")" = 120000ms ]
ok $? "... is two minutes long"

# ---- (d) conversations: the traffic as sessions with their think time ----

python3 "$D/sessions_gen.py" "$T/sessions.json" "$T/sessions-truth.json"
ok $? "sessions_gen.py writes a trace of 300 conversations (exponential think times, mean 8 s)"
expect_exit 0 "fusebox import of the conversations: as-was reproduces them" "$FUSEBOX" import \
    "$T/sessions.json" -o "$T/sessions-incident.json"
contains "$OUT" "Replayed as 300 sessions" "... written as sessions, said in the fits"
python3 -c "import json,sys
d = json.load(open(sys.argv[1])); t = json.load(open(sys.argv[2]))
a = d['traffic'][0]['arrivals']['replay']
mean = int(a['think']['exponential']['mean'][:-2]) / 1000
print('# %d sessions, %d requests, think %s: mean %.1f ms (the gaps %.1f, the truth %.0f, %d gaps)'
      % (len(a['at_ms']), sum(a['turns']), list(a['think']), mean, t['think_mean_ms'],
         t['think_truth_ms'], t['gaps']))
rec = a.get('think_ms', [])
print('# recorded think times (think_ms): %d, mean %.1f ms' % (len(rec), sum(rec) / max(1, len(rec))))
sys.exit(0 if len(a['at_ms']) == t['sessions'] and sum(a['turns']) == t['requests']
         and abs(mean - t['think_mean_ms']) < 1
         and len(rec) == t['gaps'] and abs(sum(rec) / len(rec) - t['think_mean_ms']) < 1
         and abs(mean - t['think_truth_ms']) < 3 * t['think_truth_ms'] / t['gaps'] ** 0.5 else 1)" \
    "$T/sessions-incident.json" "$T/sessions-truth.json"
ok $? "... each conversation a session with its requests, its recorded think times (one per gap, their mean the gaps'), the fit an exponential of the gaps' mean (the truth within 3 sd)"
r=0
for seed in 1 2 3; do
    "$FUSEBOX" run "$T/sessions-incident.json" --variant as-was --seed $seed -q -o "$T/sessions-run" \
        >/dev/null 2>&1 || r=1
    n=$(pyjson "$T/sessions-run/report.json" "d['variants']['as-was']['summary']['requests']")
    want=$(pyjson "$T/sessions-truth.json" "d['requests']")
    echo "# seed $seed: $n requests replayed for the log's $want"
    [ "$(python3 -c "print(int(abs($n - $want) <= 0.02 * $want))")" = 1 ] || r=1
done
ok $r "... and replays the log's requests within 2% (seeds 1-3: the recorded think times)"

# ---- bad input: exit 2, saying what is missing and where ----

bad() { # bad NAME FRAGMENT FILE [OPTIONS...]
    _name=$1 _frag=$2
    shift 2
    expect_exit 2 "$_name: exit 2" "$FUSEBOX" import "$@" -o "$T/never.json"
    contains "$ERR" "$_frag" "$_name: the error says '$_frag'"
}
printf '%s\n' '{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"0000000000000000000000000000000a","spanId":"00000000000000ab","name":"POST","startTimeUnixNano":"1796000000000000000","endTimeUnixNano":"1796000000100000000","attributes":[{"key":"http.request.method","value":{"stringValue":"POST"}}]}]}]}]}' >"$T/nogenai.json"
bad "a trace with no GenAI span" "$T/nogenai.json: no GenAI span" "$T/nogenai.json"
printf '%s\n' '{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"0000000000000000000000000000000a","spanId":"00000000000000ab","name":"chat","attributes":[{"key":"gen_ai.operation.name","value":{"stringValue":"chat"}},{"key":"gen_ai.provider.name","value":{"stringValue":"openai"}}]}]}]}]}' >"$T/notimes.json"
bad "a span without times" "$T/notimes.json:1: span 00000000000000ab (chat): no startTimeUnixNano" "$T/notimes.json"
sed 's/"gen_ai.provider.name","value":{"stringValue":"openai"}/"gen_ai.request.model","value":{"stringValue":"m"}/; s/"name":"chat","attributes"/"name":"chat","startTimeUnixNano":"1796000000000000000","endTimeUnixNano":"1796000000100000000","attributes"/' \
    "$T/notimes.json" >"$T/noprovider.json"
bad "an unknown provider" "span 00000000000000ab (chat): unknown provider" "$T/noprovider.json"
if [ -s "$T/trace.json" ]; then SRC=$T/trace.json; else SRC=$T/live.json; fi
if [ -s "$SRC" ]; then
    head -c 20000 "$SRC" >"$T/truncated.json"
    bad "truncated JSON" "invalid JSON: the document ends before it closes (a truncated file?)" "$T/truncated.json"
    bad "a log of about 30 s asked to fit an hour" "--duration 1h 00m asks for more than the log holds" "$SRC" --duration 1h
    bad "the cap on records" "more than 50 spans: the cap on records; raise it with --max-records" "$SRC" --max-records 50
    bad "the cap on the file's size" "more than the cap on the file's size (1000 bytes)" "$SRC" --max-bytes 1000
fi
head -n 3 "$T/litellm.jsonl" >"$T/ll-bad.jsonl"
echo '{"id": "call-4", "trace_id": "t-4", "model_group": "g", "model": "m", "status": "success", "endTime": 1796000001.0}' >>"$T/ll-bad.jsonl"
bad "a LiteLLM record without startTime" "$T/ll-bad.jsonl:4: record call-4: no startTime (unix seconds)" "$T/ll-bad.jsonl"
# one record per line is read in one pass: 20,000 lines (27 MB) with a bad record at the end,
# under a generous CPU cap (the old reader counted every line's number from byte 0: 2 CPU
# minutes); the error still names the last line
python3 -c "import sys
lines = open(sys.argv[1]).read().splitlines()
with open(sys.argv[2], 'w') as f:
    for i in range(20000): f.write(lines[i % len(lines)] + '\n')
    f.write(open(sys.argv[3]).read().splitlines()[-1] + '\n')" "$T/litellm.jsonl" "$T/ll-long.jsonl" "$T/ll-bad.jsonl"
(ulimit -t 30; exec "$FUSEBOX" import "$T/ll-long.jsonl" -o "$T/never.json") >/dev/null 2>"$T/ll-long.err"
rc=$?
sed 's/^/# /' "$T/ll-long.err"
[ "$rc" = 2 ] && grep -q "ll-long.jsonl:20001: record call-4: no startTime" "$T/ll-long.err"
ok $? "20,000 JSON lines import in one pass (within 30 s of CPU), the error naming line 20001"
python3 -c 'import sys; open(sys.argv[1], "w").write("[" + "0," * 300000 + "0]")' "$T/zeros.json"
bad "600 KB of [0,0,...] (the cap on JSON values per byte)" "about 300002 JSON values in 600003 bytes, more than the 215536" "$T/zeros.json"
python3 -c "import json, sys
lines = open(sys.argv[1]).read().splitlines()[:3]
r = json.loads(lines[1]); r['model_map_information']['model_map_value']['output_cost_per_token'] = 1e303
lines[1] = json.dumps(r)
open(sys.argv[2], 'w').write('\n'.join(lines) + '\n')" "$T/litellm.jsonl" "$T/ll-price.jsonl"
bad "a price the scenario cannot hold" "ll-price.jsonl:2: record" "$T/ll-price.jsonl"
contains "$ERR" "model_map_value.output_cost_per_token: 1e+303 USD is out of range [0, 1] per token" \
    "... naming the key and the range"
echo '{"hello": "world"}' >"$T/other.json"
bad "a file in neither format" "name the format with --format otlp|litellm" "$T/other.json"
bad "an unknown --format" "--format is otlp, litellm or auto" "$T/other.json" --format har
bad "a file that is not there" "cannot open" "$T/nope.json"
expect_exit 0 "fusebox import --help" "$FUSEBOX" import --help
contains "$OUT" "usage: fusebox import FILE" "... prints the usage"
# what was imported, kept for a look after a failure
L=$(logs_dir import)
cp "$T"/*.json "$T"/*.jsonl "$T"/*.out "$L/" 2>/dev/null
finish
