#!/bin/sh
# tests/e2e/mock_verdict.sh - the verdict on the client under test (GET /__fusebox/verdict,
# `fusebox verdict LOG`): the official openai and @anthropic-ai/sdk clients (pinned, as in
# mock_sdk.sh) pass every rule they exercise; each deliberately bad client of
# tests/sdk/verdict.mjs fails on exactly its rule and no other. The mock's log is reset between
# clients. Timing: a loaded machine only lengthens waits, which no rule but the jitter one can
# be fooled by; when the fixed-backoff client's own clock shows the machine spread its waits
# apart, that test says inconclusive (skip) instead of failing. TAP output.
. tests/tap.sh
set -u
SDK=$ROOT/out/sdk
D=$(logs_dir mock-verdict)
mkdir -p "$SDK"
plan 67

need node "$SDK/apt.log" nodejs npm
need npm "$SDK/apt.log" nodejs npm
if ! npm_pinned "$SDK" openai@6.49.0 @anthropic-ai/sdk@1.14.0; then
    ok 1 "npm install of openai and @anthropic-ai/sdk (see $SDK/npm.log)"
    finish
    exit 1
fi
cp "$ROOT/tests/sdk/verdict.mjs" "$SDK/"

mock_start "$D/url" "$FUSEBOX" mock --port 0 --quiet
URL=$MOCK_URL
check "the mock prints its URL" test -n "$URL"
C="curl -s -m 10"

# client MODE: run it (ESM resolves packages from the script's folder), its own waits in
# $D/MODE.out; then the verdict in $D/MODE.json. QUERY: the verdict's query string.
client() {
    $C -X POST "$URL/__fusebox/reset" >/dev/null
    (cd "$SDK" && MOCK_URL=$URL timeout 120 node verdict.mjs "$1") >"$D/$1.out" 2>"$D/$1.err"
    _rc=$?
    $C "$URL/__fusebox/verdict${QUERY:-}" >"$D/$1.json"
    return $_rc
}
rule() { json "$D/$1.json" "r['rules']['$2']['result']"; }
# fails_only MODE RULE: RULE failed, every other rule passed or was not exercised.
fails_only() {
    python3 -c 'import json,sys
v = json.load(open(sys.argv[1]))
bad = sys.argv[2]
assert v["verdict"] == "fail", v["verdict"]
others = [k for k, r in v["rules"].items() if k != bad and r["result"] == "fail"]
assert not others, "also failed: %s" % others' "$D/$1.json" "$2"
}

# ---- the official SDKs ----
check "the official SDKs run through every fault" client official
check "verdict: pass" test "$(json "$D/official.json" "r['verdict']")" = pass
for r in retry_only_retryable honours_retry_after backoff_jitter bounded_attempts \
    no_stream_restart; do
    check "official SDKs: $r passes" test "$(rule official $r)" = pass
done
check "official SDKs: falls_back not exercised (no fallback expected)" \
    test "$(rule official falls_back)" = n/a
check "the SDKs' jitter measured across 8 clients per dialect" \
    python3 -c 'import json,sys
g = json.load(open(sys.argv[1]))["jitter_groups"]
assert sorted((x["fault"], x["clients"]) for x in g) == [("500-times-1", 8), ("529-times-1", 8)], g' \
    "$D/official.json"

# The same log judged by the command: the same JSON; JUnit with a test case per rule.
$C "$URL/__fusebox/log" >"$D/official.log.json"
$C "$URL/__fusebox/verdict" >"$D/official.again.json"
expect_exit 0 "fusebox verdict on the saved log exits 0" "$FUSEBOX" verdict "$D/official.log.json" \
    --json "$D/cli.json" --junit "$D/cli.xml"
check "and writes the endpoint's JSON" cmp "$D/cli.json" "$D/official.again.json"
check "and JUnit: 7 test cases, no failure, falls_back skipped" python3 -c '
import sys, xml.etree.ElementTree as ET
s = ET.parse(sys.argv[1]).getroot().find("testsuite")
cases = {c.get("name"): c for c in s.findall("testcase")}
assert len(cases) == 7 and s.get("failures") == "0", (len(cases), s.get("failures"))
assert cases["falls_back"].find("skipped") is not None' "$D/cli.xml"
contains "$OUT" "verdict: pass" "and says so on stdout"

# ---- clients without x-fusebox-key (issue 25) ----
# 8 official clients in a 429 storm, each retrying 1 s after its own 429: told apart by what
# they send (User-Agent and body), the verdict passes ("seq 21 came 3.8 ms after the 429 of
# seq 18" before). Sending the same request, only timing tells them apart: pass when every
# client that could have made a retry would be judged alike, else inconclusive, never fail.
check "keyless-storm: 8 keyless openai clients get their answers" client keyless-storm
check "keyless-storm: 16 attempts in 8 requests" python3 -c 'import json,sys
v = json.load(open(sys.argv[1]))
assert (v["attempts"], v["requests"]) == (16, 8), (v["attempts"], v["requests"])' \
    "$D/keyless-storm.json"
check "keyless-storm: verdict pass" test "$(json "$D/keyless-storm.json" "r['verdict']")" = pass
check "keyless-storm: honours_retry_after passes for all 8" python3 -c 'import json,sys
r = json.load(open(sys.argv[1]))["rules"]["honours_retry_after"]
assert (r["result"], r["passed"], r["failed"]) == ("pass", 8, 0), r' "$D/keyless-storm.json"
check "keyless-storm-same: the clients run" client keyless-storm-same
same=$(json "$D/keyless-storm-same.json" "r['verdict']")
check "keyless-storm-same: pass or inconclusive, never fail (got $same)" \
    test "$same" = pass -o "$same" = inconclusive
# Without an SDK (the issue's reproduction): two keyless sequences interleaved, each retry
# 1.05 s after its own 429, the same request: the first retry could be either's.
$C -X POST "$URL/__fusebox/reset" >/dev/null
post() {
    $C -o /dev/null -H "x-stainless-retry-count: $1" -H 'x-fusebox-fault: 429-retry-after-1' \
        "$URL/v1/chat/completions" -d '{"model":"gpt-4o-mini","messages":[]}'
}
post 0; sleep 0.9; post 0; sleep 0.15; post 1; sleep 0.9; post 1
$C "$URL/__fusebox/verdict" >"$D/curl-keyless.json"
check "curl, two keyless sequences interleaved: inconclusive, not fail" \
    test "$(json "$D/curl-keyless.json" "r['verdict']")" = inconclusive
contains "$(cat "$D/curl-keyless.json")" "give each logical request its own x-fusebox-key" \
    "... saying to give each request a key"

# ---- the bad clients: each fails on its rule and no other ----
bad() {
    _mode=$1 _rule=$2
    check "$_mode: the client runs" client "$_mode"
    check "$_mode: fails $_rule" test "$(rule "$_mode" "$_rule")" = fail
    check "$_mode: and no other rule" fails_only "$_mode" "$_rule"
}
bad retry-400 retry_only_retryable
bad ignore-retry-after honours_retry_after
bad forever bounded_attempts
bad restart-stream no_stream_restart

check "fixed-backoff: 6 clients run" client fixed-backoff
if [ "$(rule fixed-backoff backoff_jitter)" = fail ]; then
    ok 0 "fixed-backoff: fails backoff_jitter"
else
    # Did the machine itself spread the fixed 1 s waits (the clients' own clocks say so)?
    why=$(python3 -c 'import json,sys
w = json.loads(open(sys.argv[1]).read())["waits"]
g = json.load(open(sys.argv[2]))["jitter_groups"]
need = min(x["needed_ms"] for x in g) if g else 50
for n in (1, 2):
    ms = [x["ms"] for x in w if x["retry"] == n]
    if ms and max(ms) - min(ms) >= need:
        print("the clients timers fired %.1f ms apart (retry %d) on this loaded machine" % (max(ms) - min(ms), n))
        break' "$D/fixed-backoff.out" "$D/fixed-backoff.json")
    if [ -n "$why" ]; then
        skip "fixed-backoff: fails backoff_jitter" "inconclusive: $why"
    else
        ok 1 "fixed-backoff: fails backoff_jitter"
    fi
fi
check "fixed-backoff: and no other rule" fails_only fixed-backoff backoff_jitter

# ---- fallbacks, when the verdict expects them ----
QUERY='?expect_fallback=1'
check "falls-back: the client runs" client falls-back
check "falls-back: passes falls_back" test "$(rule falls-back falls_back)" = pass
check "falls-back: verdict pass" test "$(json "$D/falls-back.json" "r['verdict']")" = pass
bad never-falls-back falls_back
QUERY=

# ---- the command's exits ----
$C -X POST "$URL/__fusebox/reset" >/dev/null
(cd "$SDK" && MOCK_URL=$URL node verdict.mjs retry-400) >/dev/null 2>&1
$C "$URL/__fusebox/log" >"$D/bad.log.json"
expect_exit 1 "fusebox verdict exits 1 on a broken rule" "$FUSEBOX" verdict "$D/bad.log.json" \
    --junit "$D/bad.xml"
check "its JUnit fails retry_only_retryable naming the request" python3 -c '
import sys, xml.etree.ElementTree as ET
s = ET.parse(sys.argv[1]).getroot().find("testsuite")
f = [c for c in s.findall("testcase") if c.find("failure") is not None]
assert [c.get("name") for c in f] == ["retry_only_retryable"], [c.get("name") for c in f]
assert "key retry-400-client: seq 1 retried the 400 of seq 0" in f[0].find("failure").text' "$D/bad.xml"
$C -X POST "$URL/__fusebox/reset" >/dev/null
$C "$URL/__fusebox/log" >"$D/empty.log.json"
expect_exit 3 "an empty log is inconclusive (exit 3)" "$FUSEBOX" verdict "$D/empty.log.json"
# A client whose every request succeeded was judged by no rule: inconclusive, not a pass (it
# used to be "verdict: pass" with six n/a rules, exit 0, and a JUnit of skips).
$C -H 'x-fusebox-key: ok-1' "$URL/v1/chat/completions" -d '{"model":"m","messages":[]}' >/dev/null
$C "$URL/__fusebox/log" >"$D/ok.log.json"
expect_exit 3 "a log of successes only is inconclusive (exit 3)" "$FUSEBOX" verdict "$D/ok.log.json" \
    --junit "$D/ok.xml"
contains "$OUT" "verdict: inconclusive (1 request, 1 attempt; no rule was exercised" "... saying no rule was exercised"
grep -q '<failure message="inconclusive: no rule was exercised' "$D/ok.xml"
ok $? "... and its JUnit fails attempt_log"
sed 's/"broken":false/"broken":0/' "$D/bad.log.json" >"$D/broken.log.json"
expect_exit 2 "a bad log is bad input (exit 2)" "$FUSEBOX" verdict "$D/broken.log.json"
contains "$ERR" "broken.log.json: entries[0].broken: expected a boolean" "naming the file and JSON path"
# A duplicated key (cJSON keeps the first: a second "status" flipped fail to pass), text after
# the document and a log of [0,0,...] are bad input naming the place, not a verdict.
python3 -c 'import sys; t = open(sys.argv[1]).read(); open(sys.argv[2], "w").write(t.replace("\"status\":", "\"status\":200,\"status\":", 1))' \
    "$D/bad.log.json" "$D/dup.log.json"
expect_exit 2 "a log with a duplicated key is bad input (exit 2)" "$FUSEBOX" verdict "$D/dup.log.json"
contains "$ERR" "dup.log.json: entries[0].status: duplicate key 'status'" "naming the file and JSON path"
cp "$D/bad.log.json" "$D/trail.log.json" && printf '{"total":0}' >>"$D/trail.log.json"
expect_exit 2 "a log with text after it is bad input (exit 2)" "$FUSEBOX" verdict "$D/trail.log.json"
contains "$ERR" "unexpected text after the JSON document" "... saying so"
python3 -c 'import sys; open(sys.argv[1], "w").write("[" + "0," * 300000 + "0]")' "$D/zeros.log.json"
expect_exit 2 "600 KB of [0,0,...] is refused before it is built (exit 2)" "$FUSEBOX" verdict "$D/zeros.log.json"
contains "$ERR" "JSON values in 600003 bytes, more than the 215536" "... naming the cap"
# An error quoting the input (T3-11): a terminal escape in a key is printed escaped, never
# raw; an error message is printed to at most 4096 bytes, the rest counted.
printf '{"total":0,"dropped":0,"time_scale":1,"entries":[],"\\u001b[31mRED\\u001b[0m":1}' \
    >"$D/esc.log.json"
expect_exit 2 "a log with an escape sequence in a key is bad input (exit 2)" "$FUSEBOX" verdict \
    "$D/esc.log.json"
contains "$ERR" "unknown key '\\x1b[31mRED\\x1b[0m'" "... naming the key with its ESC as \\x1b"
check "... and no raw ESC byte on stderr" sh -c '! printf "%s" "$1" | od -An -c | grep -q 033' _ "$ERR"
long=$(python3 -c 'print("/" + "x" * 100000)')
expect_exit 2 "a 100 KB LOG name is bad input (exit 2)" "$FUSEBOX" verdict "$long"
check "... its message cut at 4096 bytes, the rest counted" python3 -c 'import sys
e = sys.argv[1]
assert len(e) < 4200 and e.endswith("bytes more)"), (len(e), e[-80:])' "$ERR"
# The endpoint's parameters: a bad one is a 400 naming it; max_attempts judges as it says.
(cd "$SDK" && MOCK_URL=$URL node verdict.mjs retry-400) >/dev/null 2>&1
code=$($C -o "$D/badq.json" -w '%{http_code}' "$URL/__fusebox/verdict?max_attempts=0")
check "?max_attempts=0 is a 400 naming it" \
    sh -c '[ "$1" = 400 ] && grep -q "\"path\":\"max_attempts\"" "$2"' _ "$code" "$D/badq.json"
$C "$URL/__fusebox/verdict?max_attempts=2" >"$D/max2.json"
check "?max_attempts=2: 3 attempts break bounded_attempts" \
    test "$(json "$D/max2.json" "r['rules']['bounded_attempts']['result']")" = fail
# A key with a byte that is no UTF-8, and one the log's 63 bytes cut in two (T3-11): the log
# and the verdict stay valid UTF-8 (such bytes as '?'), and `fusebox verdict` reads the log back
# (it refused it as invalid UTF-8 before).
$C -X POST "$URL/__fusebox/reset" >/dev/null
$C -o /dev/null -H "$(printf 'x-fusebox-key: a\377b')" -H 'x-fusebox-fault: 400' \
    "$URL/v1/chat/completions" -d '{"model":"m","messages":[]}'
$C -o /dev/null -H "x-fusebox-key: $(python3 -c 'print("\u00e9" * 40)')" \
    "$URL/v1/chat/completions" -d '{"model":"m","messages":[]}'
$C "$URL/__fusebox/log" >"$D/utf8.log.json"
$C "$URL/__fusebox/verdict" >"$D/utf8.json"
check "keys of raw bytes: the log and the verdict are valid UTF-8, such bytes as ?" \
    python3 -c 'import json,sys
for f in sys.argv[1:]: open(f, "rb").read().decode("utf-8")
keys = [e["key"] for e in json.load(open(sys.argv[1]))["entries"]]
assert keys == ["a?b", "\u00e9" * 31 + "?"], keys' "$D/utf8.log.json" "$D/utf8.json"
expect_exit 0 "and fusebox verdict reads that log back" "$FUSEBOX" verdict "$D/utf8.log.json" \
    --json "$D/utf8.cli.json"
mock_stop
check "the mock exits 0 on SIGTERM" test "$MOCK_RC" = 0
finish
