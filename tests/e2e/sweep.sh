#!/bin/sh
# tests/e2e/sweep.sh - fusebox sweep and fusebox merge, end to end (TAP).
#
# Uses tests/e2e/sweep-small.json (a 2-minute scenario that runs in
# milliseconds): determinism across --jobs and shards, the answer block,
# and the errors a user meets first.
set -u
: "${FUSEBOX:?set FUSEBOX to the fusebox binary}"
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
SC="$ROOT/tests/e2e/sweep-small.json"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/fusebox-sweep.XXXXXX")
trap 'rm -rf "$TMP"' EXIT INT TERM
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); echo "not ok $n - $1"; shift; for l in "$@"; do echo "# $l"; done; }
check() { # check NAME COMMAND...: ok when the command succeeds
    name=$1
    shift
    if "$@" >"$TMP/check.out" 2>&1; then ok "$name"; else not_ok "$name" "$(head -c 600 "$TMP/check.out")"; fi
}
same_outputs() { # same_outputs DIR1 DIR2: the data files and the page are byte-identical
    for f in sweep.csv sweep-points.csv sweep.json sweep.html; do
        cmp "$1/$f" "$2/$f" || return 1
    done
}

echo "1..17"

GRID="--grid breaker.failure_rate=0.3,0.5,0.7 --grid breaker.open=5s,20s --seeds 3"
OBJ="--minimize cost_usd --subject-to success_rate>=0.99,latency_p99<=10s"

# shellcheck disable=SC2086
"$FUSEBOX" sweep "$SC" $GRID $OBJ --jobs 1 -o "$TMP/j1" >"$TMP/j1.out" 2>"$TMP/j1.err"
rc=$?
if [ $rc -eq 0 ] && [ -s "$TMP/j1/sweep.csv" ] && [ -s "$TMP/j1/sweep.json" ] &&
    [ -s "$TMP/j1/sweep-points.csv" ] && [ -s "$TMP/j1/charts/heatmap.png" ] &&
    [ -s "$TMP/j1/charts/pareto.png" ]; then
    ok "sweep --jobs 1 writes csv, json and charts"
else
    not_ok "sweep --jobs 1 writes csv, json and charts" "exit $rc" "$(cat "$TMP/j1.err")"
fi

rows=$(($(wc -l <"$TMP/j1/sweep.csv") - 1))
points=$(($(wc -l <"$TMP/j1/sweep-points.csv") - 1))
if [ "$rows" -eq 18 ] && [ "$points" -eq 6 ]; then
    ok "one csv row per point x seed (18), one per point (6)"
else
    not_ok "one csv row per point x seed (18), one per point (6)" "rows $rows, points $points"
fi

# shellcheck disable=SC2086
"$FUSEBOX" sweep "$SC" $GRID $OBJ --jobs 2 -o "$TMP/j2" -q 2>"$TMP/j2.err"
check "--jobs 2 writes the same bytes as --jobs 1" same_outputs "$TMP/j1" "$TMP/j2"

# shellcheck disable=SC2086
"$FUSEBOX" sweep "$SC" $GRID $OBJ --jobs 3 -o "$TMP/j3" -q 2>"$TMP/j3.err"
check "--jobs 3 (uneven slices) writes the same bytes" same_outputs "$TMP/j1" "$TMP/j3"

# shellcheck disable=SC2086
"$FUSEBOX" sweep "$SC" $GRID $OBJ --shard 1/2 --jobs 2 -o "$TMP/parts" -q &&
    "$FUSEBOX" sweep "$SC" $GRID $OBJ --shard 2/2 --jobs 1 -o "$TMP/parts" -q
rc=$?
if [ $rc -eq 0 ] && [ -s "$TMP/parts/sweep.part-1-of-2.json" ] &&
    [ -s "$TMP/parts/sweep.part-2-of-2.json" ] && [ ! -e "$TMP/parts/sweep.csv" ]; then
    ok "--shard K/N writes only its partial file"
else
    not_ok "--shard K/N writes only its partial file" "exit $rc" "$(ls "$TMP/parts")"
fi

"$FUSEBOX" merge "$TMP/parts/sweep.part-2-of-2.json" "$TMP/parts/sweep.part-1-of-2.json" \
    -o "$TMP/merged" >"$TMP/merged.out" 2>&1
check "shards 1/2 + 2/2 merged == the unsharded run, byte for byte" same_outputs "$TMP/j1" "$TMP/merged"
grep -v '^wrote ' "$TMP/j1.out" >"$TMP/j1.answer"
grep -v '^wrote ' "$TMP/merged.out" >"$TMP/merged.answer"
check "merge prints the same answer as the sweep" cmp "$TMP/j1.answer" "$TMP/merged.answer"

"$FUSEBOX" merge "$TMP/parts/sweep.part-1-of-2.json" -o "$TMP/m1" >"$TMP/m1.out" 2>&1
rc=$?
if [ $rc -eq 2 ] && grep -q "missing shard 2 of 2" "$TMP/m1.out"; then
    ok "merge names a missing shard (exit 2)"
else
    not_ok "merge names a missing shard (exit 2)" "exit $rc" "$(cat "$TMP/m1.out")"
fi

"$FUSEBOX" sweep "$SC" --grid breaker.failure_rate=0.3,0.5 --seeds 3 --shard 2/2 -o "$TMP/other" -q
"$FUSEBOX" merge "$TMP/parts/sweep.part-1-of-2.json" "$TMP/other/sweep.part-2-of-2.json" \
    -o "$TMP/m2" >"$TMP/m2.out" 2>&1
rc=$?
if [ $rc -eq 2 ] && grep -q "different sweeps" "$TMP/m2.out"; then
    ok "merge refuses shards of different sweeps (exit 2)"
else
    not_ok "merge refuses shards of different sweeps (exit 2)" "exit $rc" "$(cat "$TMP/m2.out")"
fi

"$FUSEBOX" sweep "$SC" --grid breaker.failur_rate=0.3,0.5 -o "$TMP/bad" >"$TMP/bad.out" 2>&1
rc=$?
if [ $rc -eq 2 ] && grep -q "breaker.failur_rate" "$TMP/bad.out" && grep -q "failure_rate" "$TMP/bad.out"; then
    ok "a misspelt --grid key is exit 2 naming it, with a suggestion"
else
    not_ok "a misspelt --grid key is exit 2 naming it, with a suggestion" "exit $rc" "$(cat "$TMP/bad.out")"
fi

"$FUSEBOX" sweep "$SC" --grid breaker.failure_rate=0.5,1.5 -o "$TMP/bad" >"$TMP/bad.out" 2>&1
rc=$?
if [ $rc -eq 2 ] && grep -q "value '1.5' (point 1)" "$TMP/bad.out" &&
    grep -q "variants.tuned.breaker.failure_rate" "$TMP/bad.out"; then
    ok "a bad value is exit 2 naming the point and the path"
else
    not_ok "a bad value is exit 2 naming the point and the path" "exit $rc" "$(cat "$TMP/bad.out")"
fi

# The policy block printed under "policy for variants.tuned" is accepted by fusebox run --set.
sed -n '/^policy for variants.tuned/,/^or run it:/p' "$TMP/j1.out" | sed '1d;$d' >"$TMP/policy.json"
"$FUSEBOX" run "$SC" --variant tuned --set "variants.tuned=$(cat "$TMP/policy.json")" \
    --no-charts -q -o "$TMP/run" >"$TMP/run.out" 2>&1
rc=$?
if [ $rc -eq 0 ] && [ -s "$TMP/policy.json" ] && grep -q '"breaker"' "$TMP/policy.json"; then
    ok "the --minimize policy block is accepted by fusebox run --set"
else
    not_ok "the --minimize policy block is accepted by fusebox run --set" "exit $rc" \
        "$(cat "$TMP/policy.json" "$TMP/run.out")"
fi

"$FUSEBOX" sweep "$SC" --grid breaker.open=5s,20s --minimize cost_usd \
    --subject-to "success_rate>=1.5" -o "$TMP/inf" >"$TMP/inf.out" 2>&1
rc=$?
if [ $rc -eq 1 ] && grep -q "no point satisfies" "$TMP/inf.out" && grep -q "closest: point" "$TMP/inf.out"; then
    ok "no feasible point: says so, shows the closest, exit 1"
else
    not_ok "no feasible point: says so, shows the closest, exit 1" "exit $rc" "$(cat "$TMP/inf.out")"
fi

"$FUSEBOX" sweep "$SC" --grid breaker.open=5s,20s --minimize cost_usdd -o "$TMP/bad" >"$TMP/bad.out" 2>&1
rc=$?
if [ $rc -eq 2 ] && grep -q "did you mean 'cost_usd'" "$TMP/bad.out"; then
    ok "an unknown objective metric is exit 2 with a did-you-mean"
else
    not_ok "an unknown objective metric is exit 2 with a did-you-mean" "exit $rc" "$(cat "$TMP/bad.out")"
fi

LHS="--grid retry.backoff.exponential.base=log:50ms..2s --grid breaker.failure_rate=0.2..0.8 --sample 8 --seeds 2"
# shellcheck disable=SC2086
"$FUSEBOX" sweep "$SC" $LHS --jobs 2 -o "$TMP/lhs1" -q && "$FUSEBOX" sweep "$SC" $LHS --jobs 1 -o "$TMP/lhs2" -q
rc=$?
distinct=$(cut -d, -f2 "$TMP/lhs1/sweep-points.csv" | sed 1d | sort -u | wc -l)
if [ $rc -eq 0 ] && [ "$distinct" -eq 8 ] && same_outputs "$TMP/lhs1" "$TMP/lhs2"; then
    ok "--sample: 8 distinct Latin hypercube points, the same bytes on every run"
else
    not_ok "--sample: 8 distinct Latin hypercube points, the same bytes on every run" "exit $rc, distinct $distinct"
fi

"$FUSEBOX" sweep "$SC" --grid breaker.open=1s,2s,3s,4s,5s,6s,7s,8s,9s,10s \
    --grid breaker.minimum_calls=1,2,3,4,5,6,7,8,9,10 --grid breaker.window=10s,20s,30s,40s,50s,60s,70s,80s,90s,100s \
    --seeds 101 -o "$TMP/cap" >"$TMP/cap.out" 2>&1
rc=$?
if [ $rc -eq 2 ] && grep -q "the cap is 100000 runs" "$TMP/cap.out"; then
    ok "more runs than the cap is exit 2 before anything runs"
else
    not_ok "more runs than the cap is exit 2 before anything runs" "exit $rc" "$(cat "$TMP/cap.out")"
fi

"$FUSEBOX" sweep "$SC" --grid breaker.open=5s,20s --minimize cost_usd --subject-to "success_rate>=0.9" \
    --strict --no-charts -o "$TMP/strict" >"$TMP/strict.out" 2>&1
rc=$?
if [ $rc -le 1 ] && grep -q '"judged_on": "ci95"' "$TMP/strict/sweep.json" &&
    grep -q "judged on the 95% CI" "$TMP/strict.out"; then
    ok "--strict judges the constraints on the confidence interval"
else
    not_ok "--strict judges the constraints on the confidence interval" "exit $rc" "$(cat "$TMP/strict.out")"
fi
