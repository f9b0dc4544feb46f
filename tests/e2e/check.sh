#!/bin/sh
# check.sh - the scenario library as a regression suite, and `fusebox check` end to end.
#
# Runs `fusebox check scenarios/ --junit out/junit/check.xml` and reports every
# expectation line as one test (PASS -> ok; FAIL or ERROR -> not ok), then
# checks the command itself: the JUnit file is well-formed and adds up,
# --jobs 2 prints and writes exactly what --jobs 1 does, a policy changed with
# --set so that a lesson no longer holds exits 1 with a readable FAIL line, an
# expectation on an n/a metric fails saying so, an unreadable expectation and
# a scenario with a bad key exit 2 and say where. The library runs as docs/check.md shows it,
# in a fresh clone's layout (no out/ folder yet); the JUnit file is then copied to out/junit/.
set -u
. tests/tap.sh
T=$E2E_TMP
FRESH=$T/clone
JUNIT=$FRESH/out/junit/check.xml
mkdir -p "$FRESH"
cp -R scenarios docs "$FRESH/"

# ---- the library ----
(cd "$FRESH" && "$FUSEBOX" check scenarios/ --junit out/junit/check.xml) >"$T/check1" 2>"$T/check1.err"
rc=$?
mkdir -p "$ROOT/out/junit" && cp "$JUNIT" "$ROOT/out/junit/check.xml" 2>/dev/null
while IFS= read -r line; do
    case "$line" in
    "PASS  "*) ok 0 "${line#PASS  }" ;;
    "FAIL  "*) ok 1 "${line#FAIL  }" ;;
    "ERROR "*) ok 1 "${line#ERROR }" ;;
    esac
done <"$T/check1"
[ "$rc" -eq 0 ]
r=$?
[ $r -ne 0 ] && sed 's/^/# /' "$T/check1.err"
ok $r "fusebox check scenarios/ exits 0 (got $rc)"
nfiles=$(ls scenarios/*.json | wc -l)
nlines=$(grep -cE '^(PASS|FAIL|ERROR) ' "$T/check1")
summary=$(tail -n 1 "$T/check1")
contains "$summary" "check: $nfiles scenarios, $nlines expectations: $nlines passed, 0 failed, 0 errors" \
    "the summary counts every scenario file and every expectation"
grep -q '^NOTE ' "$T/check1"
[ $? -ne 0 ]
ok $? "every library scenario has expectations"

# ---- JUnit ----
python3 - "$JUNIT" "$nfiles" "$nlines" >"$T/junit.log" 2>&1 <<'PY'
import sys
import xml.etree.ElementTree as ET
path, nfiles, nlines = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
root = ET.parse(path).getroot()  # raises on malformed XML
assert root.tag == "testsuites", root.tag
suites = root.findall("testsuite")
cases = root.findall("testsuite/testcase")
assert len(suites) == nfiles, (len(suites), nfiles)
assert len(cases) == nlines, (len(cases), nlines)
assert root.get("tests") == str(nlines), root.get("tests")
assert root.get("failures") == "0" and root.get("errors") == "0"
assert all(c.get("classname") and c.get("name") for c in cases)
PY
r=$?
[ $r -ne 0 ] && sed 's/^/# /' "$T/junit.log"
ok $r "the JUnit file is well-formed XML with one testsuite per scenario, one testcase per expectation"
[ -s "$JUNIT" ] && [ -z "$(cat "$T/check1.err")" ]
ok $? "--junit out/junit/check.xml creates the missing folders in a fresh clone, nothing on stderr"
python3 - "$JUNIT" "$T/check1" >"$T/junit2.log" 2>&1 <<'PY'
import re, sys
import xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
num = re.compile(r"^[0-9]+\.[0-9]{3}$")
for s in root.findall("testsuite"):
    assert num.match(s.get("time", "")), ("suite time", s.get("name"), s.get("time"))
    cases = s.findall("testcase")
    assert s.get("tests") == str(len(cases)), (s.get("name"), s.get("tests"), len(cases))
    for c in cases:
        assert num.match(c.get("time", "")), ("case time", c.get("name"), c.get("time"))
# every PASS line's measured value is in its case's <system-out>
lines = [l for l in open(sys.argv[2]).read().splitlines() if l.startswith("PASS  ")]
outs = [c.findtext("system-out") for c in root.findall("testsuite/testcase")]
assert len(lines) == len(outs), (len(lines), len(outs))
for l, o in zip(lines, outs):
    want = "measured: " + l[l.rindex("  [") + 3:-1]
    assert o == want, (l, o)
PY
r=$?
[ $r -ne 0 ] && sed 's/^/# /' "$T/junit2.log"
ok $r "JUnit: a time on every testsuite and testcase, the measured value of every passing case"
if command -v xmllint >/dev/null 2>&1; then
    xmllint --noout "$JUNIT" 2>"$T/xmllint.log"
    r=$?
    [ $r -ne 0 ] && sed 's/^/# /' "$T/xmllint.log"
    ok $r "xmllint accepts the JUnit file"
else
    skip "xmllint accepts the JUnit file" "xmllint is not installed (Debian: libxml2-utils)"
fi

# ---- --jobs ----
"$FUSEBOX" check scenarios/ --jobs 2 --junit "$T/check2.xml" >"$T/check2" 2>&1
ok $? "fusebox check --jobs 2 exits 0"
cmp -s "$T/check1" "$T/check2"
ok $? "--jobs 2 prints exactly what --jobs 1 prints"
# wall times are the only difference allowed
sed 's/ time="[0-9.]*"//' "$JUNIT" >"$T/j1.xml"
sed 's/ time="[0-9.]*"//' "$T/check2.xml" >"$T/j2.xml"
cmp -s "$T/j1.xml" "$T/j2.xml"
ok $? "--jobs 2 writes exactly the JUnit file --jobs 1 writes (times aside)"

# ---- a lesson that no longer holds: the flagship's tuned variant gets the naive retry loop ----
NAIVE='variants.tuned.retry={"attempts":1000,"backoff":"none","retry_after":"ignore","attempt_timeout":"10s"}'
expect_exit 1 "retry-storm with the naive retry in 'tuned' exits 1" \
    "$FUSEBOX" check scenarios/retry-storm.json --set "$NAIVE" --set variants.tuned.breaker=false \
    --junit "$T/fail.xml"
printf '%s\n' "$OUT" | grep -qE '^FAIL  retry-storm: tuned\.success_rate >= 0\.99  \[measured 0\.[0-9]+, limit >= 0\.99: short by 0\.[0-9]+\]$'
ok $? "it prints a readable FAIL line: the measured value, the limit, how far short"
printf '%s\n' "$OUT" | grep -qE '^FAIL  retry-storm: naive\.spillover > tuned\.spillover \* 5  \[measured .+, limit > .+: short by .+\]$'
ok $? "the comparison between variants fails too"
contains "$OUT" "failed, 0 errors" "the summary counts the failures"
grep -q '<failure message="measured 0\.[0-9]*, limit &gt;= 0\.99: short by ' "$T/fail.xml"
ok $? "the JUnit file records the failure with the measured value"

# ---- --junit that cannot be written: exit 2, the file and the reason on a line of stderr ----
expect_exit 2 "--junit /dev/full (a write error) exits 2" \
    "$FUSEBOX" check scenarios/bad-deploy.json --junit /dev/full
[ "$ERR" = "fusebox check: cannot write /dev/full: No space left on device" ]
ok $? "the write error names the file and the reason, alone on stderr (got: $ERR)"
contains "$OUT" "check: 1 scenario, " "the results are still printed on stdout"
touch "$T/afile"
expect_exit 2 "--junit under a plain file exits 2 before running anything" \
    "$FUSEBOX" check scenarios/bad-deploy.json --junit "$T/afile/check.xml"
[ -z "$OUT" ] && [ "$ERR" = "fusebox check: cannot write $T/afile/check.xml: Not a directory" ]
ok $? "it says why on stderr and prints no results (got: $ERR)"
# -o DIR where a scenario's folder cannot be made: an error, counted apart from expectations
mkdir -p "$T/o" && touch "$T/o/bad-deploy"
expect_exit 2 "check -o DIR where DIR/<scenario>/report.json cannot be written exits 2" \
    "$FUSEBOX" check scenarios/bad-deploy.json -o "$T/o" --junit "$T/o.xml"
contains "$OUT" "ERROR bad-deploy: cannot write $T/o/bad-deploy/report.json: Not a directory" \
    "the report that was not written is named with the reason"
contains "$OUT" "0 failed, 0 errors, 1 report.json not written" \
    "the summary counts it apart from the expectations"
grep -q '<testcase classname="bad-deploy" name="report.json"' "$T/o.xml"
ok $? "the JUnit file has it as an errored case"
# piped as in CI: stdout and stderr into one pipe, the error is a line of its own
"$FUSEBOX" check scenarios/bad-deploy.json --junit /dev/full 2>&1 | cat >"$T/piped"
grep -qx "fusebox check: cannot write /dev/full: No space left on device" "$T/piped" &&
    [ "$(grep -c '^PASS  bad-deploy' "$T/piped")" -eq "$(grep -c '^PASS' "$T/piped")" ]
ok $? "piped, the error line does not land inside a PASS line"

# a second lesson: the tool's breaker removed from dependency-hang
expect_exit 1 "dependency-hang without the tool's breaker exits 1" \
    "$FUSEBOX" check scenarios/dependency-hang.json --set 'variants.breaker.overrides.stock-api.breaker=false'
printf '%s\n' "$OUT" | grep -qE '^FAIL  dependency-hang: two-retries\.collateral > breaker\.collateral \* 50  \[measured [0-9]+, limit > [0-9]+: short by [0-9]+\]$'
ok $? "the collateral lesson fails with a readable line"

# ---- bad input ----
python3 - scenarios/metastable.json "$T" <<'PY'
import json, sys
src, out = sys.argv[1], sys.argv[2]
doc = json.load(open(src))
bad = dict(doc, expect=["retry-budget.recoverd == 1"])
json.dump(bad, open(out + "/bad-metric.json", "w"))
bad = dict(doc, expect=["retry-budget.recovered === 1"])
json.dump(bad, open(out + "/bad-syntax.json", "w"))
bad = dict(doc, expect=["retry-budget.spillover <= 90"])
json.dump(bad, open(out + "/bad-unit.json", "w"))
bad = json.loads(json.dumps(doc))
bad["providers"][0]["capacity"]["concurency"] = 50
json.dump(bad, open(out + "/bad-key.json", "w"))
PY
expect_exit 2 "an unknown metric in an expectation exits 2" "$FUSEBOX" check "$T/bad-metric.json"
contains "$OUT" "ERROR $T/bad-metric.json: expect[0]: retry-budget.recoverd == 1: unknown metric 'recoverd'" \
    "the unreadable expectation is named with the metric"
expect_exit 2 "a syntax error in an expectation exits 2" "$FUSEBOX" check "$T/bad-syntax.json"
contains "$OUT" "ERROR $T/bad-syntax.json: expect[0]: retry-budget.recovered === 1" \
    "the expectation with the syntax error is named"
expect_exit 2 "a duration compared with a bare number exits 2" "$FUSEBOX" check "$T/bad-unit.json"
contains "$OUT" "ERROR $T/bad-unit.json: expect[0]" "the expectation without a unit is named"
expect_exit 2 "a scenario with a bad key exits 2" "$FUSEBOX" check "$T/bad-key.json"
contains "$OUT" "ERROR $T/bad-key.json: providers[0].capacity.concurency: unknown key 'concurency' (did you mean 'concurrency'?)" \
    "the bad key is named with its path"
# ---- n/a: an expectation on a metric that has no meaning for the run fails, saying so ----
python3 - scenarios/metastable.json "$T" <<'PY'
import json, sys
src, out = sys.argv[1], sys.argv[2]
doc = json.load(open(src))
# the spike ends 10 s before traffic does: no 30 s window can judge the recovery
na = dict(doc, duration="90s", expect=["retry-budget.recovered == 1",
                                         "retry-budget.collateral_share < 0.5"])
na["traffic"][0]["spikes"] = [{"at": "1m", "for": "20s", "rate": "90/s"}]
json.dump(na, open(out + "/na.json", "w"))
PY
expect_exit 1 "an expectation on an n/a metric fails (exit 1)" "$FUSEBOX" check "$T/na.json"
contains "$OUT" "FAIL  metastable: retry-budget.recovered == 1  [measured: retry-budget.recovered is n/a (n/a when" \
    "an undetermined recovery fails with the reason"
contains "$OUT" "FAIL  metastable: retry-budget.collateral_share < 0.5  [measured: retry-budget.collateral_share is n/a" \
    "a collateral share with no meaning fails, naming the metric"

expect_exit 2 "bad input wins over passing scenarios" "$FUSEBOX" check scenarios/bad-deploy.json "$T/bad-key.json"
contains "$OUT" "PASS  bad-deploy: " "the good scenario is still checked"

# ---- signals: the JUnit file is replaced whole, or holds what was checked marked interrupted ----
# a.json checks in 0.05 s; b.json (a day of traffic) runs for seconds (more under asan), and is
# signalled
mkdir -p "$T/sig"
cp scenarios/bad-deploy.json "$T/sig/a.json"
python3 - "$T/sig/b.json" <<'PY'
import json, sys
d = json.load(open("scenarios/bad-deploy.json"))
d["name"], d["duration"] = "bad-deploy-day", "24h"
json.dump(d, open(sys.argv[1], "w"))
PY
"$FUSEBOX" check "$T/sig/a.json" --junit "$T/sig.xml" >/dev/null
cp "$T/sig.xml" "$T/sig-earlier.xml"
# check_signal SIG JOBS: check $T/sig with --jobs JOBS, send SIG to fusebox alone once a.json is
# checked (its -o report.json is written after that)
check_signal() {
    rm -rf "$T/sig-o"
    "$FUSEBOX" check "$T/sig" -j "$2" --junit "$T/sig.xml" -o "$T/sig-o" >"$T/sig.out" \
        2>"$T/sig.err" &
    _pid=$!
    _i=0
    while [ ! -f "$T/sig-o/bad-deploy/report.json" ] && [ $_i -lt 400 ]; do
        sleep 0.05
        _i=$((_i + 1))
    done
    sleep 0.2
    kill -s "$1" "$_pid"
    wait "$_pid" 2>/dev/null # no "Killed" from the shell in the TAP output
    got=$?
}
check_signal KILL 1
cmp -s "$T/sig.xml" "$T/sig-earlier.xml"
ok $? "SIGKILL mid-check: the earlier JUnit file is left as it was (exit $got)"
for how in INT:1:130 TERM:2:143; do
    sig=${how%%:*} jobs=${how#*:} want=${how##*:}
    jobs=${jobs%:*}
    check_signal "$sig" "$jobs"
    [ "$got" -eq "$want" ]
    ok $? "SIG$sig, --jobs $jobs: exit $want (got $got; stderr: $(cat "$T/sig.err"))"
    contains "$(cat "$T/sig.out")" \
        "check: interrupted (SIG$sig) with 1 of 2 scenarios not checked; 1 scenario, 11 expectations: 11 passed" \
        "SIG$sig, --jobs $jobs: the totals say the check was interrupted"
    r=$(python3 - "$T/sig.xml" <<'PY'
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
suites = [s.get("name") for s in root]
cases = root.findall("./testsuite/testcase")
stop = [c for c in cases if c.get("name") == "interrupted"]
err = stop[0].find("error").get("message") if stop else ""
out = stop[0].find("system-out").text if stop else ""
print(suites, root.get("tests"), root.get("errors"), err, out.endswith("/b.json"))
PY
)
    [ "$r" = "['bad-deploy', 'fusebox check'] 12 1 interrupted by SIG$sig: 1 of 2 scenarios not checked True" ]
    ok $? "SIG$sig, --jobs $jobs: the JUnit file holds the scenario checked and an \"interrupted\" error naming the other (got $r)"
    [ ! -e "$T/sig.xml.fusebox-new" ]
    ok $? "SIG$sig, --jobs $jobs: no temporary file left beside it"
done

finish
