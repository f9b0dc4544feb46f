#!/bin/sh
# tests/e2e/live_otlp.sh - `fusebox live --otlp FILE`: every logical request and attempt as
# OpenTelemetry spans in OTLP/JSON. The trace of a small outage (retries, fallback, breaker,
# both dialects, streamed and whole answers) is checked three ways: its layout, span tree and
# counts against report.json (tests/e2e/otlp_check.py); decoded and encoded back losslessly
# with the OTLP protobuf schema of @opentelemetry/otlp-transformer, and its attribute keys
# against @opentelemetry/semantic-conventions (tests/e2e/otlp_decode.mjs, pinned versions in
# out/otlp/); and a few spans read for what they must say. TAP output.
. tests/tap.sh
T=$E2E_TMP
S=tests/e2e/live/small.json
NPM=$ROOT/out/otlp
TRANSFORMER_VERSION=0.57.2 # the last line that ships the generated protobuf schema
PROTOBUFJS_VERSION=7.6.6
SEMCONV_VERSION=1.41.1 # semantic conventions v1.41, the last with gen_ai in the main repository
mkdir -p "$NPM"

live_exit "$T/a" "live --otlp exits 0" "$FUSEBOX" live "$S" --time-scale 5 --no-charts \
    -o "$T/a" --otlp "$T/trace.json"
contains "$OUT" "wrote $T/trace.json:" "live says it wrote the trace"
check "the trace is OTLP/JSON: layout, tree, attributes, counts = report.json" \
    python3 tests/e2e/otlp_check.py "$T/trace.json" "$T/a/report.json"

need node "$NPM/apt.log" nodejs npm
need npm "$NPM/apt.log" nodejs npm
if npm_pinned "$NPM" "@opentelemetry/otlp-transformer@$TRANSFORMER_VERSION" \
    "protobufjs@$PROTOBUFJS_VERSION" "@opentelemetry/semantic-conventions@$SEMCONV_VERSION"; then
    ok 0 "npm install of the OpenTelemetry packages"
    (cd "$NPM" && node "$ROOT/tests/e2e/otlp_decode.mjs" "$T/trace.json") >"$T/decode.out" 2>&1
    r=$?
    [ $r -ne 0 ] && sed 's/^/# /' "$T/decode.out"
    ok $r "the OTLP protobuf schema decodes the trace and encodes it back unchanged"
    # the two checks can fail: an int64 as a number, a key the conventions do not have
    sed 's/"intValue":"200"/"intValue":200/' "$T/trace.json" >"$T/bad1.json"
    (cd "$NPM" && node "$ROOT/tests/e2e/otlp_decode.mjs" "$T/bad1.json") >"$T/bad1.out" 2>&1
    [ $? -ne 0 ] && grep -q "became" "$T/bad1.out"
    ok $? "a number where OTLP/JSON wants a decimal string is caught"
    sed 's/"gen_ai.request.model"/"gen_ai.request.modle"/' "$T/trace.json" >"$T/bad2.json"
    (cd "$NPM" && node "$ROOT/tests/e2e/otlp_decode.mjs" "$T/bad2.json") >"$T/bad2.out" 2>&1
    [ $? -ne 0 ] && grep -q "gen_ai.request.modle" "$T/bad2.out"
    ok $? "an attribute the semantic conventions do not define is caught"
else
    ok 1 "npm install of the OpenTelemetry packages (see $NPM/npm.log)"
fi

# the structural check can fail too: a span fewer
python3 - "$T/trace.json" "$T/short.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["resourceSpans"][0]["scopeSpans"][0]["spans"].pop()
json.dump(d, open(sys.argv[2], "w"))
PY
python3 tests/e2e/otlp_check.py "$T/short.json" "$T/a/report.json" >"$T/short.out"
[ $? -ne 0 ]
ok $? "a trace with a span missing does not pass the check"

# what the spans say (the outage: 503s, retries, fallbacks; a streamed class; Anthropic)
spans() {
    python3 - "$T/trace.json" "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
def val(v):
    k, x = next(iter(v.items()))
    return int(x) if k == "intValue" else [val(e) for e in x["values"]] if k == "arrayValue" else x
spans = [dict(s, a={a["key"]: val(a["value"]) for a in s["attributes"]})
         for rs in d["resourceSpans"] for ss in rs["scopeSpans"] for s in ss["spans"]]
roots = {s["traceId"]: s for s in spans if "parentSpanId" not in s}
print(eval(sys.argv[2]))
PY
}
[ "$(spans "any(s['a'].get('error.type') == '503' and s['a'].get('http.response.status_code') == 503 and s.get('status') == {'code': 2} for s in spans)")" = True ]
ok $? "a 503 attempt: status code, error.type '503', span status error"
[ "$(spans "any(s['a'].get('http.request.resend_count') == 1 and roots[s['traceId']]['a']['fusebox.attempts'] == 2 for s in spans)")" = True ]
ok $? "a retried request: its second attempt has http.request.resend_count 1"
[ "$(spans "any(r['a']['fusebox.via_fallback'] and r['a']['gen_ai.provider.name'] == 'anthropic' and r['name'] == 'chat anthropic' for r in roots.values())")" = True ]
ok $? "a request answered by the fallback: its root names the provider that answered"
[ "$(spans "any(s['a'].get('url.template') == '/v1/messages' and s['a']['gen_ai.provider.name'] == 'anthropic' and s['name'] == 'POST /v1/messages' for s in spans)")" = True ]
ok $? "Anthropic attempts: POST /v1/messages, gen_ai.provider.name anthropic"
[ "$(spans "any(s['a'].get('gen_ai.request.stream') and s['a'].get('gen_ai.usage.output_tokens') == 20 for s in spans)")" = True ]
ok $? "a streamed attempt: gen_ai.request.stream, its output tokens"
[ "$(spans "(lambda xs: len(xs) > 200 and all(r['a'].get('gen_ai.usage.input_tokens') == 200 and r['a'].get('gen_ai.usage.output_tokens') == 20 and r['a'].get('gen_ai.response.finish_reasons') for r in xs))([r for r in roots.values() if r['a']['fusebox.outcome'] == 'success'])")" = True ]
ok $? "every success: usage 200 in, 20 out (the scenario's), finish reasons"
[ "$(spans "len(set(s['traceId'] for s in spans)) == len(roots) and len(set(s['spanId'] for s in spans)) == len(spans)")" = True ]
ok $? "a trace per request, an id per span"

# attempts that time out, and attempts whose request ends first (a cancellation, not an error)
cat >"$T/hang.json" <<'JSON'
{"name": "otlp-hang", "seed": 8, "duration": "2s",
 "traffic": [{"class": "c", "arrivals": {"constant": "10/s"}, "completion_tokens": 5}],
 "pods": {"request_timeout": "300ms"},
 "providers": [{"name": "openai", "latency": {"ttft": "20ms"},
                "faults": [{"at": "0s", "for": "1h", "hang": {}}]}],
 "policy": {"retry": {"attempts": 2, "backoff": {"constant": "10ms"}, "jitter": "none",
                      "attempt_timeout": "200ms"}}}
JSON
live_exit "$T/h" "live --otlp on a hanging provider exits 0" "$FUSEBOX" live "$T/hang.json" \
    --no-charts -q -o "$T/h" --otlp "$T/hang-trace.json"
check "its trace is OTLP/JSON, counts = report.json" \
    python3 tests/e2e/otlp_check.py "$T/hang-trace.json" "$T/h/report.json"
cp "$T/hang-trace.json" "$T/trace.json"
[ "$(spans "(lambda xs: len(xs) == 20 and all(s['a'].get('error.type') == 'timeout' and s.get('status') == {'code': 2} and 'http.response.status_code' not in s['a'] for s in xs))([s for s in spans if 'parentSpanId' in s and 'http.request.resend_count' not in s['a']])")" = True ]
ok $? "a first attempt cut at its 200 ms timeout: error.type timeout, no status code"
[ "$(spans "(lambda xs: len(xs) == 20 and all(s['a'].get('fusebox.cancelled') and 'error.type' not in s['a'] and 'status' not in s for s in xs))([s for s in spans if s['a'].get('http.request.resend_count') == 1])")" = True ]
ok $? "a second attempt cut by its request's 300 ms deadline: cancelled, not an error"
[ "$(spans "len(roots) == 20 and all(r['a']['error.type'] == 'timeout' and r['a']['fusebox.outcome'] == 'timeout' for r in roots.values())")" = True ]
ok $? "the requests: error.type timeout (the pod's request timeout)"

# bad input and caps
expect_exit 2 "an --otlp file that cannot be written exits 2" "$FUSEBOX" live "$S" \
    --no-charts -q -o "$T/b" --otlp "$T/no/such/dir/trace.json"
contains "$ERR" "--otlp: cannot write $T/no/such/dir/trace.json" "the file is named"
expect_exit 2 "the span cap stops the run with exit 2" "$FUSEBOX" live "$S" --time-scale 5 \
    --no-charts -q -o "$T/c" --otlp "$T/capped.json" --otlp-max-spans 10
contains "$ERR" "its cap (--otlp-max-spans)" "the cap is named"
check "a capped trace is still a whole JSON document" python3 -m json.tool "$T/capped.json"
finish
