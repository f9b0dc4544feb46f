#!/bin/sh
# conformance.sh - every recorded conformance case replayed through fusebox's presets.
#
# tests/conformance/LIB-VERSION/cases.jsonl holds sequences run through the real library
# (its own code at that version, under a fake clock) and the decisions it made; the
# recorders in tests/conformance/recorders/ wrote them (make conformance-record,
# tests/conformance/README.md). Here the driver (tests/diff/resilience/driver.c,
# --replay) runs each case through the preset's layer and core/ and compares. One test per
# named edge case; one per folder for its random sequences (names starting "random"), with
# the first differences shown. A case with "skip" is something the preset does not model
# (docs/presets.md, "Not modelled"): a TAP skip with its reason. Nothing but the build runs.
set -u
. tests/tap.sh
DRIVER=$ROOT/$BUILD/tests/diff/resilience/driver
LOGS=$(logs_dir conformance)

if [ ! -x "$DRIVER" ]; then
    ok 1 "the driver $DRIVER is built (make build)"
    finish
    exit 1
fi

found=0
for cases in tests/conformance/*/cases.jsonl; do
    [ -f "$cases" ] || continue
    found=$((found + 1))
    dir=$(dirname "$cases")
    lib=$(basename "$dir")
    log=$LOGS/$lib.out
    "$DRIVER" --replay "$cases" >"$log" 2>"$LOGS/$lib.err"
    rc=$?
    total=$(grep -cv '^[[:space:]]*$' "$cases")
    lines=$(wc -l <"$log")
    [ "$rc" -eq 0 ] && [ "$lines" -eq "$total" ]
    r=$?
    [ $r -ne 0 ] && sed 's/^/# /' "$LOGS/$lib.err"
    ok $r "$lib: the replay ran every case ($lines of $total)"
    # Named cases: one test each.
    while IFS= read -r line; do
        case "$line" in
        "ok random"* | "not ok random"* | "skip random"*) ;;
        "ok "*) ok 0 "$lib: ${line#ok }" ;;
        "skip "*)
            name=${line#skip }
            skip "$lib: ${name%% # *}" "${name#* # }"
            ;;
        *)
            echo "# $line"
            ok 1 "$lib: ${line#not ok }"
            ;;
        esac
    done <"$log"
    # Random sequences: one test for the folder.
    nrand=$(grep -cE '^(ok|not ok|skip) random' "$log")
    ndiff=$(grep -c '^not ok random' "$log")
    nskip=$(grep -c '^skip random' "$log")
    if [ "$nrand" -eq 0 ]; then
        ok 1 "$lib: random sequences recorded (none in $cases)"
    else
        [ "$ndiff" -eq 0 ]
        r=$?
        [ $r -ne 0 ] && grep '^not ok random' "$log" | head -n 5 | sed 's/^/# /'
        what="$lib: $nrand random sequences: $ndiff differences"
        [ "$nskip" -gt 0 ] && what="$what ($nskip skipped: not modelled)"
        ok $r "$what"
    fi
done
[ "$found" -gt 0 ]
ok $? "tests/conformance/ holds recorded folders ($found)"
finish
