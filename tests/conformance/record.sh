#!/bin/sh
# record.sh - re-record the conformance folders (make conformance-record).
#
# Runs every tests/conformance/recorders/LIB/record.sh. Each takes its library's
# source from a variable (GOBREAKER_SRC, PYBREAKER_SRC, ...: tests/conformance/README.md),
# writes tests/conformance/LIB-VERSION/ and exits 0; when the source is not given it prints
# one line saying what it needs and where to get it, and exits 3 (skipped). Then, with
# DRIVER (the build's tests/diff/resilience/driver, which make passes), every folder is
# replayed and its differences counted, as make test will. This script exits 1 when a
# recorder failed, else 0 (differences are for make test to fail on).
set -u
cd "$(dirname "$0")/../.." || exit 2
failed=0
for rec in tests/conformance/recorders/*/record.sh; do
    [ -f "$rec" ] || continue
    name=$(basename "$(dirname "$rec")")
    sh "$rec"
    rc=$?
    case $rc in
    0) echo "conformance-record: $name: recorded" ;;
    3) echo "conformance-record: $name: skipped" ;;
    *)
        echo "conformance-record: $name: FAILED (exit $rc)"
        failed=1
        ;;
    esac
done
if [ -n "${DRIVER:-}" ] && [ -x "$DRIVER" ]; then
    for cases in tests/conformance/*/cases.jsonl; do
        [ -f "$cases" ] || continue
        out=$("$DRIVER" --replay "$cases") || { failed=1; continue; }
        echo "conformance-record: $(basename "$(dirname "$cases")"): $(printf '%s\n' "$out" |
            grep -c '^ok ') ok, $(printf '%s\n' "$out" | grep -c '^skip ') skipped, $(printf '%s\n' "$out" |
            grep -c '^not ok ') differ"
    done
fi
exit $failed
