#!/bin/sh
# gate.sh - the CI gate a pipeline runs (contrib/ci/github-actions.yml, gitlab-ci.yml): check
# the scenarios' expectations, compare with the default branch's results when they are there,
# and leave what a CI system publishes in one folder.
#
#   sh gate.sh [-o OUT] [-b BASELINE] SCENARIO|DIR...
#
# OUT (default out/fusebox) gets:
#   junit.xml         fusebox check --junit: one test case per expectation (publish it)
#   results/NAME/     fusebox check -o: each scenario's report.json (keep it: the next run's
#                     baseline, when this run is on the default branch)
#   reports/NAME/     fusebox run: each scenario's report.html, charts and events (keep it)
#   summary.txt       what check printed
# BASELINE: a results/ folder of an earlier run (the default branch's). When it holds no
# report.json the gate says so and checks without it (the first run of a new pipeline).
# Environment: FUSEBOX, the binary (default: fusebox on PATH).
# Exit: fusebox check's (0 every expectation holds and nothing regressed beyond noise, 1 some
# did not, 2 bad input), or 2 when the gate itself is used wrongly.
set -u
FUSEBOX=${FUSEBOX:-fusebox}
OUT=out/fusebox
BASE=

usage() {
    echo "usage: sh gate.sh [-o OUT] [-b BASELINE] SCENARIO|DIR..." >&2
    exit 2
}
while getopts o:b:h opt; do
    case $opt in
    o) OUT=$OPTARG ;;
    b) BASE=$OPTARG ;;
    *) usage ;;
    esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] || usage
if ! command -v "$FUSEBOX" >/dev/null 2>&1; then
    echo "gate.sh: $FUSEBOX: not found (install fusebox: contrib/ci/install.sh, or set FUSEBOX)" >&2
    exit 2
fi

case $(cd "$BASE" 2>/dev/null && pwd -P)/ in
"$(mkdir -p "$OUT/results" && cd "$OUT/results" && pwd -P)"/*)
    echo "gate.sh: the baseline $BASE is inside $OUT/results, which this run rewrites:" \
        "restore it to another folder" >&2
    exit 2
    ;;
esac
rm -rf "$OUT/results" "$OUT/reports"
mkdir -p "$OUT/results" "$OUT/reports" || exit 2
if [ -n "$BASE" ] && ls "$BASE"/*/report.json >/dev/null 2>&1; then
    echo "gate.sh: comparing with the baseline in $BASE"
    set -- "$@" --baseline "$BASE"
elif [ -n "$BASE" ]; then
    echo "gate.sh: no baseline in $BASE (no */report.json): checking the expectations only"
fi
"$FUSEBOX" check "$@" --junit "$OUT/junit.xml" -o "$OUT/results" >"$OUT/summary.txt" 2>&1
rc=$?
cat "$OUT/summary.txt"

# each scenario's full report, for people: the files check read, scenario by scenario
report() {
    name=$(basename "$1" .json)
    "$FUSEBOX" run "$1" -o "$OUT/reports/$name" -q >/dev/null 2>"$OUT/reports/$name.err" ||
        echo "gate.sh: fusebox run $1 failed: see $OUT/reports/$name.err"
    [ -s "$OUT/reports/$name.err" ] || rm -f "$OUT/reports/$name.err"
}
for arg in "$@"; do
    case $arg in --baseline) break ;; esac
    if [ -d "$arg" ]; then
        for f in "$arg"/*.json; do
            [ -f "$f" ] && report "$f"
        done
    else
        report "$arg"
    fi
done
echo "gate.sh: exit $rc; JUnit $OUT/junit.xml, reports $OUT/reports/*/report.html," \
    "baseline for the next run $OUT/results"
exit $rc
