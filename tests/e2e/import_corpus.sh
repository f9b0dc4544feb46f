#!/bin/sh
# tests/e2e/import_corpus.sh - issue 21's corpus: traces that nobody tuned by hand, imported
# and replayed, each figure against the truth of the run that made it.
#
# Each line of tests/e2e/import/corpus/traces.tsv is one traced run: the real `openai` or
# `@anthropic-ai/sdk` Node client (pinned), instrumented by a real OpenTelemetry
# instrumentation of its SDK and by instrumentation-undici (one span per attempt), against its
# own `fusebox mock` playing the fault timeline of corpus/NAME.json (corpus/corpus_trace.cjs).
# The truth is the client's own record (per request: latency, how it ended) and the mock's log
# (per attempt: its request's x-fusebox-key, its status), never what the import infers. The
# trace is imported; the as-was variant is run for seeds 1-10 and each figure (requests,
# attempts, retries, ends, latency p50/p90/p99, attempts per request, attempts per status)
# is compared with the truth within issue 21's tolerances (corpus/corpus_check.py prints the
# table). A line with sessions is a conversation-mode run (conversations of drawn turns with
# drawn think times, each turn in an application span carrying session.id): its scenario must
# replay it as sessions with the think time's mean within its noise (corpus/sessions_check.py).
# CORPUS_ONLY=NAME[,NAME...] runs those lines only (litellm: the LiteLLM records). A miss
# listed in corpus/known-misses.tsv is a TAP TODO with its reason (neither a pass nor a
# failure; tests/run.sh counts it as skipped); a figure the report does not have yet is a skip
# naming the field; a miss while the client's event loop ran late is inconclusive (a skip with
# the reason). TAP output.
. tests/tap.sh
T=$E2E_TMP
D=tests/e2e/import/corpus
NPM=$ROOT/out/import-corpus
# the OpenTelemetry JS release of 2026-10 (sdk-node 0.223.0) as in e2e/import.sh; the
# anthropic instrumentation is Traceloop's (OpenLLMetry JS 0.27.0), which patches
# Anthropic.Completions and so needs a 0.x @anthropic-ai/sdk (1.x removed that class)
PKGS="openai@6.49.0 @anthropic-ai/sdk@0.137.0 @opentelemetry/instrumentation-openai@0.21.0
@traceloop/instrumentation-anthropic@0.27.0 @opentelemetry/instrumentation-undici@0.33.0
@opentelemetry/instrumentation@0.223.0 @opentelemetry/sdk-trace-node@2.12.0
@opentelemetry/sdk-trace-base@2.12.0 @opentelemetry/resources@2.12.0 @opentelemetry/api@1.9.0
@opentelemetry/otlp-transformer@0.223.0"
# traced runs at once (each a Node client and a mock): all eleven (nine took 40 s of wall time
# on the 2-core machine with no run's event loop late, three at a time 105 s; the tenth,
# `sessions`, sends 17 calls a second; the eleventh, `deadline`, 33); a run that lags on a busy
# machine is inconclusive, not failed (CORPUS_JOBS=3 to spare a slower machine)
JOBS=${CORPUS_JOBS:-11}
# seconds a traced run may take before it is stopped (and fails saying where it was)
TMO=${CORPUS_TIMEOUT:-150}
PIDS=
# at exit (also on SIGINT/SIGTERM): the traced runs still going, and their mocks
trap 'kill $PIDS $(cat "$T"/*.mockpid 2>/dev/null) 2>/dev/null; rm -rf "$E2E_TMP"' EXIT

# timed CODE NAME: a result that depends on a real-time run's timing: a failure while the
# run did not keep its timing ($BUSY says why) is inconclusive, a skip with the reason
timed() {
    if [ "$1" -ne 0 ] && [ -n "$BUSY" ]; then
        skip "$2" "inconclusive: $BUSY"
    else
        ok "$1" "$2"
    fi
}

# todo NAME REASON: a known miss: "not ok N - NAME # TODO REASON" (neither passed nor failed)
todo() {
    TAP_N=$((TAP_N + 1))
    echo "not ok $TAP_N - $1 # TODO $2"
}

# traces: the lines of traces.tsv without comments (CORPUS_ONLY=NAME[,NAME...]: those only;
# the LiteLLM records then only if "litellm" is one of them)
traces() {
    grep -v '^#' "$D/traces.tsv" | grep -v '^[[:space:]]*$' |
        awk -v only="${CORPUS_ONLY:-}" 'BEGIN { n = split(only, o, ","); for (i = 1; i <= n; i++) w[o[i]] = 1 }
            only == "" || ($1 in w)'
}

# gen NAME SDK PROVIDER RATE SECONDS RETRIES TIMEOUT SESSIONS DEADLINE: one traced run into
# $T/NAME.*; the mock's log in $T/NAME.log.json; exit code in $T/NAME.rc
gen() {
    _dl=$9
    [ "$_dl" = - ] && _dl=""
    _n=$1
    "$FUSEBOX" mock --scenario "$D/$_n.json" --provider "$3" --port 0 --quiet \
        >"$T/$_n.url" 2>"$T/$_n.mock.err" &
    _m=$!
    echo "$_m" >"$T/$_n.mockpid"
    _u=$(wait_url "$T/$_n.url")
    if [ -z "$_u" ]; then
        echo "the mock did not start: $(cat "$T/$_n.mock.err")" >"$T/$_n.node.log"
        echo 1 >"$T/$_n.rc"
        kill "$_m" 2>/dev/null
        return
    fi
    [ "$6" = - ] && set -- "$1" "$2" "$3" "$4" "$5" "" "$7" "$8"
    [ "$7" = - ] && set -- "$1" "$2" "$3" "$4" "$5" "$6" "" "$8"
    [ "$8" = - ] && set -- "$1" "$2" "$3" "$4" "$5" "$6" "$7" ""
    # @anthropic-ai/sdk's own tracing is on (its default): its call span, GenAI and HTTP
    # attributes at once, sits between Traceloop's GenAI span and undici's attempts, and the
    # import must not count it as one more attempt (the attempts check below)
    (cd "$NPM" && SDK=$2 MOCK_URL=$_u TRACE=$T/$_n.trace.json \
        META=$T/$_n.meta.json RATE=$4 SECONDS=$5 MAX_RETRIES=$6 TIMEOUT_MS=$7 SESSIONS=$8 \
        DEADLINE_MS=$_dl SEED=7 \
        timeout "$TMO" node corpus_trace.cjs) >"$T/$_n.node.log" 2>&1
    echo $? >"$T/$_n.rc"
    python3 -c "import sys, urllib.request
open(sys.argv[2], 'wb').write(urllib.request.urlopen(sys.argv[1] + '/__fusebox/log', timeout=30).read())" \
        "$_u" "$T/$_n.log.json" 2>>"$T/$_n.node.log"
    kill "$_m" 2>/dev/null
    wait "$_m" 2>/dev/null
    rm -f "$T/$_n.mockpid"
}

# verdicts NAME: one test per line of $T/NAME.results (corpus_check.py): ok; a miss while $BUSY
# is inconclusive (the truth itself carries the lag), else a miss listed in known-misses.tsv is
# a TODO with its reason, another a failure;
# a figure report.json does not have yet is a skip naming it
verdicts() {
    while IFS='	' read -r fig verdict detail; do
        # the first line of known-misses.tsv for this trace and figure ("*" any), its
        # fourth column "spread" matching only a miss whose seeds straddle the truth
        known=$(awk -F '\t' -v n="$1" -v f="$fig" -v v="$verdict" '/^#/ { next }
            ($1 == n || $1 == "*") && ($2 == f || $2 == "*") && ($4 == "" || index(v, $4)) { print $3; exit }' \
            "$D/known-misses.tsv")
        case $verdict in
        ok)
            ok 0 "$1: $fig within tolerance ($detail)"
            # a line naming this trace and figure, whatever its fourth column
            listed=$(awk -F '\t' -v n="$1" -v f="$fig" '/^#/ { next }
                $1 == n && $2 == f { print "y"; exit }' "$D/known-misses.tsv")
            [ -n "$listed" ] && echo "# $1 $fig: listed in known-misses.tsv, within tolerance in this run (remove the line once it holds run after run)"
            ;;
        MISSING) skip "$1: $fig" "report.json has no $detail yet (issue 21 contract)" ;;
        *)
            if [ -n "$BUSY" ]; then
                skip "$1: $fig within tolerance ($detail; $verdict)" "inconclusive: $BUSY"
            elif [ -n "$known" ]; then
                todo "$1: $fig within tolerance ($detail; $verdict)" "known miss: $known"
            else
                timed 1 "$1: $fig within tolerance ($detail; $verdict)"
            fi
            ;;
        esac
    done <"$T/$1.results"
}

need node "$NPM/apt.log" nodejs npm
need npm "$NPM/apt.log" nodejs npm
# openai 6 on Node 18 (Debian bookworm's) leaves requests to a hung server unsettled: the traced
# runs need Node 20, installed from the npm registry where the system's is older
if ! node_pinned; then
    ok 1 "a Node >= 20 for the traced runs: the system's is $(node --version 2>&1) and the install failed (see $ROOT/out/node-20/npm.log)"
    finish
    exit
fi
mkdir -p "$NPM"
# shellcheck disable=SC2086
if ! npm_pinned "$NPM" $PKGS; then
    ok 1 "npm install of the clients and the OpenTelemetry packages (see $NPM/npm.log)"
    finish
    exit
fi
ok 0 "npm install of openai, @anthropic-ai/sdk and the OpenTelemetry packages"
cp "$D/corpus_trace.cjs" "$NPM/"

# the traced runs, $JOBS at a time
i=0
while read -r name sdk prov rate secs retries tmo sess dl; do
    gen "$name" "$sdk" "$prov" "$rate" "$secs" "$retries" "$tmo" "${sess:--}" "${dl:--}" &
    PIDS="$PIDS $!"
    i=$((i + 1))
    if [ $((i % JOBS)) -eq 0 ]; then
        # shellcheck disable=SC2086
        wait $PIDS
        PIDS=
    fi
done <<TRACES
$(traces)
TRACES
# shellcheck disable=SC2086
wait $PIDS
PIDS=

L=$(logs_dir import_corpus)
while read -r name sdk prov rate secs retries tmo sess dl; do
    what="$name ($sdk, maxRetries $retries, timeout $tmo ms, $rate/s for $secs s)"
    [ "${dl:--}" != - ] &&
        what="$name ($sdk, maxRetries $retries, timeout $tmo ms, a deadline of $dl ms, $rate/s for $secs s)"
    [ "${sess:--}" != - ] &&
        what="$name ($sdk, maxRetries $retries, timeout $tmo ms, $rate conversations/s for $secs s of ${sess%%:*} turns, think ${sess#*:} ms)"
    r=$(cat "$T/$name.rc" 2>/dev/null || echo 1)
    if [ "$r" -ne 0 ] || [ ! -s "$T/$name.trace.json" ] || [ ! -s "$T/$name.log.json" ]; then
        # why, always: node's last lines (a run stopped by the timeout says its phase and the
        # calls left unsettled), the mock's, and what is missing
        why="node exited $r"
        [ "$r" -eq 124 ] && why="node did not end within $TMO s (timeout: exit 124)"
        [ "$r" -eq 0 ] && [ ! -s "$T/$name.trace.json" ] && why="node wrote no trace"
        [ "$r" -eq 0 ] && [ -s "$T/$name.trace.json" ] && why="the mock's log could not be read"
        echo "# $name: $why; the last lines of its node log:"
        if [ -s "$T/$name.node.log" ]; then
            tail -n 30 "$T/$name.node.log" | sed 's/^/#   /'
        else
            echo "#   (empty: node printed nothing)"
        fi
        [ -s "$T/$name.mock.err" ] && tail -n 10 "$T/$name.mock.err" | sed 's/^/#   mock: /'
        ok 1 "$what: the traced run ($why)"
        continue
    fi
    ok 0 "$what: the traced run"
    # a late event loop delays the client's view of each answer (its latency); a request that
    # started late is no matter (the trace has when it started, and the import replays that)
    BUSY=$(python3 -c "import json,sys; m=json.load(open(sys.argv[1]))
print('' if m['lag_p99_ms'] < 40 and m['lag_max_ms'] < 250 else
      'the machine was busy: the Node event loop ran late (p99 %.0f ms, max %.0f ms), so the latencies the client measured carry that delay' % (m['lag_p99_ms'], m['lag_max_ms']))" "$T/$name.meta.json")
    run_kept "$FUSEBOX" import "$T/$name.trace.json" -o "$T/$name.scenario.json" -q
    [ "$got" -le 1 ] && [ -s "$T/$name.scenario.json" ]
    r=$?
    [ $r -ne 0 ] && echo "$ERR" | sed 's/^/# /'
    ok $r "$name: fusebox import writes a scenario"
    [ $r -ne 0 ] && continue
    # the import's own verdict on the trace the SDK wrote: as-was within each figure's stated
    # tolerance or the noise of the log against the replay (exit 0; docs/import.md, "Fidelity")
    [ "$got" -ne 0 ] && echo "$ERR" | sed 's/^/# /'
    timed "$got" "$name: the import's as-was replays the trace within its stated tolerance or noise"
    # every attempt the mock logged is one HTTP span below a request, and nothing else is
    # (an SDK's own call span is not): the import's count is the mock's, exactly; a mismatch
    # while the client's event loop ran late is inconclusive, as for the other checks that
    # depend on the client's timing
    n_log=$(python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))['entries']))" "$T/$name.log.json")
    n_imp=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['observed']['attempts'])" "$T/$name.scenario.json")
    [ "$n_log" = "$n_imp" ]
    timed $? "$name: the import reads $n_imp attempts, the mock logged $n_log"
    # a conversation-mode run: the scenario replays it as sessions, of the conversations' turns,
    # with a think time whose mean is the drawn one's within its noise (sessions_check.py)
    if [ "${sess:--}" != - ]; then
        python3 "$D/sessions_check.py" "$T/$name.meta.json" "$T/$name.scenario.json" >"$T/$name.sessions" 2>&1
        r=$?
        sed 's/^/# /' "$T/$name.sessions"
        timed $r "$name: the import writes the conversations as sessions with their think time"
    fi
    # a deadline around the call (an AbortSignal): the attempts it cut are cancelled, not timed
    # out (the SDK's timeout is 10 minutes): a hang fault, the request timeout the deadline's,
    # and no attempt timeout (read as one, a policy with more retries retried where the
    # application gave up)
    if [ "${dl:--}" != - ]; then
        python3 - "$T/$name.scenario.json" "$dl" >"$T/$name.deadline" 2>&1 <<'PY'
import json, sys
s, dl = json.load(open(sys.argv[1])), float(sys.argv[2])
v = s["variants"]["as-was"]
t = s["pods"]["request_timeout"]
tms = float(t[:-2]) if t.endswith("ms") else float(t[:-1]) * 1000
hangs = [f for p in s["providers"] for f in p.get("faults", []) if "hang" in f]
print("# request_timeout %s, attempt_timeout %s, hang faults %d" % (t, v["retry"].get("attempt_timeout"), len(hangs)))
# the shortest request given up, which can be a few ms under the deadline: the signal's timer
# starts before the call's span does (1,491 ms for 1,500 in a run of the eleven at once)
sys.exit(0 if dl - 50 <= tms <= dl + 100 and "attempt_timeout" not in v["retry"] and hangs else 1)
PY
        r=$?
        cat "$T/$name.deadline"
        timed $r "$name: the calls the deadline aborted are cancelled: a hang fault, pods.request_timeout $dl ms, no attempt timeout"
    fi
    python3 "$D/corpus_check.py" "$FUSEBOX" "$name" "$T/$name.meta.json" "$T/$name.log.json" \
        "$T/$name.scenario.json" "$T/$name.runs" "$T/$name.results" 1-10 >"$T/$name.table" 2>&1
    r=$?
    sed 's/^/# /' "$T/$name.table"
    ok $r "$name: the truth and ten replays (corpus_check.py)"
    [ $r -ne 0 ] && continue
    cp "$T/$name.table" "$T/$name.scenario.json" "$T/$name.meta.json" "$T/$name.log.json" \
        "$T/$name.trace.json" "$L/"
    verdicts "$name"
done <<TRACES
$(traces)
TRACES

# ---- the gateway path: LiteLLM StandardLoggingPayload records ----
if [ -n "${CORPUS_ONLY:-}" ] && ! echo ",$CORPUS_ONLY," | grep -q ',litellm,'; then
    finish
    exit
fi
# litellm_gen.py's seeded model of a gateway (no real time: never inconclusive) writes the
# records of a known bad hour; they are the generator's own account of every call, the truth
BUSY=
python3 tests/e2e/import/litellm_gen.py "$T/litellm.jsonl" "$T/litellm-timeline.json"
ok $? "litellm: litellm_gen.py writes the records"
run_kept "$FUSEBOX" import "$T/litellm.jsonl" -o "$T/litellm.scenario.json" -q
[ "$got" -le 1 ] && [ -s "$T/litellm.scenario.json" ]
ok $? "litellm: fusebox import writes a scenario"
python3 "$D/corpus_check.py" "$FUSEBOX" litellm "$T/litellm.jsonl" - "$T/litellm.scenario.json" \
    "$T/litellm.runs" "$T/litellm.results" 1-10 >"$T/litellm.table" 2>&1
r=$?
sed 's/^/# /' "$T/litellm.table"
ok $r "litellm: the truth and ten replays (corpus_check.py)"
if [ $r -eq 0 ]; then
    cp "$T/litellm.table" "$T/litellm.scenario.json" "$L/"
    verdicts litellm
fi
finish
