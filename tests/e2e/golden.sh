#!/bin/sh
# golden.sh - the checked-in outputs of tests/golden/: each golden scenario, run by
# this build, writes report.json, timeseries.csv and events.jsonl byte for byte as
# tests/golden/NAME/ holds them. A difference is shown as the first lines of a diff.
# To rewrite them (only when a change of output is intended): make golden, and see
# tests/README.md.
. tests/tap.sh
T=$E2E_TMP

sh tests/golden/update.sh "$T/now" >"$T/update.log" 2>&1
r=$?
[ $r -ne 0 ] && sed 's/^/# /' "$T/update.log"
ok $r "every golden scenario runs"
while read -r name scenario; do
    case "$name" in '' | '#'*) continue ;; esac
    for f in report.json timeseries.csv events.jsonl; do
        cmp -s "tests/golden/$name/$f" "$T/now/$name/$f"
        r=$?
        [ $r -ne 0 ] && diff -u "tests/golden/$name/$f" "$T/now/$name/$f" | head -n 20 | sed 's/^/# /'
        ok $r "$name ($scenario): $f is byte-identical to tests/golden/$name/$f"
    done
done <tests/golden/scenarios
finish
