#!/bin/sh
# tune.sh - fusebox tune end to end: over five small incident scenarios
# (tests/e2e/tune/: an outage, a 429 storm, a brownout, a slow provider, a
# flapping one; each runs in milliseconds) and five knobs, a search within 10%
# of the full grid's runs lands within the seeds' noise of the full grid's
# best, which `fusebox sweep` of every scenario finds independently; the same
# bytes for --jobs 1 and 2, for shards and for rounds of shards (--shard,
# --merge); the errors a user meets first.
. tests/tap.sh
T=$E2E_TMP
S=tests/e2e/tune

KNOBS="--knob retry.attempts=1,2,3 --knob breaker.failure_rate=0.3,0.5,0.7 --knob breaker.open=5s,10s,20s
--knob breaker.minimum_calls=5,10,20 --knob retry.backoff.exponential.base=100ms,200ms,400ms"
OBJ="--minimize cost_usd --subject-to success_rate>=0.97"

# shellcheck disable=SC2086
expect_exit 0 "tune --jobs 1 exits 0" "$FUSEBOX" tune $S $KNOBS $OBJ --jobs 1 -o "$T/j1"
ANSWER=$OUT
writes "$T/j1" "tune" tune.json tune.html
HTML=$(cat "$T/j1/tune.html")
contains "$HTML" "success_rate&gt;=0.97" "tune.html escapes the answer's text"
contains "$HTML" "<span class=\"ok rec\">" "tune.html marks the recommendation in each knob's row"
python3 -m json.tool "$T/j1/tune.json" >/dev/null 2>&1
ok $? "tune.json is valid JSON"
contains "$ANSWER" "recommended:" "the answer gives the recommendation"
contains "$ANSWER" "per scenario (recommended | current):" "the answer compares with the current settings"
contains "$ANSWER" "binds: success_rate>=0.97" "the answer names the binding constraint"
contains "$ANSWER" "sensitivity (one knob moves" "the answer gives each knob's sensitivity"
contains "$ANSWER" "or run it: fusebox run" "the answer gives a policy block and its command"
[ "$(json "$T/j1/tune.json" "r['runs']['search'] <= r['runs']['full_grid'] // 10 and r['runs']['full_grid'] == 3645")" = True ]
ok $? "the search stays within 10% of the full grid's 3645 runs"

# shellcheck disable=SC2086
"$FUSEBOX" tune $S $KNOBS $OBJ --jobs 2 -o "$T/j2" >"$T/j2.txt"
same_files "$T/j1" "$T/j2" tune.json tune.html &&
    [ "$(grep -v '^wrote ' "$T/j2.txt")" = "$(echo "$ANSWER" | grep -v '^wrote ')" ]
ok $? "--jobs 2 writes the same tune.json and tune.html and prints the same answer as --jobs 1"

# the full grid, one sweep per scenario (243 points x 3 seeds each): the oracle
GRID=$(echo "$KNOBS" | sed 's/--knob/--grid/g')
for f in "$S"/*.json; do
    # shellcheck disable=SC2086
    "$FUSEBOX" sweep "$f" $GRID --seeds 3 -q --no-charts -o "$T/grid/$(basename "$f" .json)" ||
        echo "# sweep of $f failed"
done
python3 - "$T/grid" "$T/j1/tune.json" >"$T/oracle.txt" <<'EOF'
import csv, json, os, sys
grid, tune = sys.argv[1], json.load(open(sys.argv[2]))
rows = {}
for name in sorted(os.listdir(grid)):
    rows[name] = list(csv.DictReader(open(os.path.join(grid, name, "sweep-points.csv"))))
points = len(next(iter(rows.values())))
def worst(p):
    return max(float(r[p]["cost_usd"]) for r in rows.values())
def feasible(p):
    return all(float(r[p]["success_rate"]) >= 0.97 for r in rows.values())
best = min((p for p in range(points) if feasible(p)), key=lambda p: (worst(p), p))
noise = max((float(r[best]["cost_usd_ci_high"]) - float(r[best]["cost_usd_ci_low"])) / 2
            for r in rows.values())
rec = tune["recommendation"]
p = rec["point"]
print("grid best %d %.4f noise %.4f; tune %d %.4f feasible %s" %
      (best, worst(best), noise, p, rec["objective"], feasible(p)))
# the same point in both: the same seeds give the same figures (to the csv's 4 decimals)
print("same_figures", abs(worst(p) - rec["objective"]) < 1e-3)
print("feasible", feasible(p) and rec["feasible"])
print("within_noise", worst(p) <= worst(best) + noise)
# stricter than the noise: no more than a tenth of the feasible points beat it
feas = [q for q in range(points) if feasible(q)]
beat = sum(1 for q in feas if worst(q) < worst(p))
print("beaten_by %d of %d feasible points" % (beat, len(feas)))
print("top_tenth", beat <= len(feas) // 10)
EOF
sed 's/^/# /' "$T/oracle.txt"
grep -q "^same_figures True" "$T/oracle.txt"
ok $? "tune's figures for its recommendation are the sweep's figures for that point"
grep -q "^feasible True" "$T/oracle.txt"
ok $? "the recommendation meets the constraint in all five scenarios (per the sweeps)"
grep -q "^within_noise True" "$T/oracle.txt"
ok $? "within 10% of the runs, tune's worst case is within the seeds' noise of the full grid's best"
grep -q "^top_tenth True" "$T/oracle.txt"
ok $? "and at most a tenth of the grid's feasible points have a lower worst case"

# --screen: a cheaper first fidelity (every scenario cut to 20 s of its minute, one seed); the
# same budget screens more candidates, and the answer still lands within the seeds' noise of
# the full grid's best (the sweeps above)
# shellcheck disable=SC2086
expect_exit 0 "tune --screen 20s exits 0" "$FUSEBOX" tune $S $KNOBS $OBJ --screen 20s --no-charts \
    -o "$T/scr"
contains "$OUT" "sampled points screened at 20s on 1 seed" "the answer says how it screened"
python3 - "$T/grid" "$T/scr/tune.json" "$T/j1/tune.json" <<'EOF2'
import csv, json, math, os, sys
grid, scr, plain = sys.argv[1], json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))
rows = {n: list(csv.DictReader(open(os.path.join(grid, n, "sweep-points.csv"))))
        for n in sorted(os.listdir(grid))}
def worst(p):
    return max(float(r[p]["cost_usd"]) for r in rows.values())
def feasible(p):
    return all(float(r[p]["success_rate"]) >= 0.97 for r in rows.values())
pts = range(len(next(iter(rows.values()))))
best = min((p for p in pts if feasible(p)), key=lambda p: (worst(p), p))
noise = max((float(r[best]["cost_usd_ci_high"]) - float(r[best]["cost_usd_ci_low"])) / 2
            for r in rows.values())
sc, p = scr["search"]["screen"], scr["recommendation"]["point"]
checks = {
    "more candidates than without": sc["candidates"] > plain["search"]["sampled"],
    "same budget": scr["runs"]["budget"] == plain["runs"]["budget"],
    "within it": scr["runs"]["search"] <= scr["runs"]["budget"],
    "short runs": sc["runs"] == sc["candidates"] * 5,
    "counted as a third": sc["counted"] == math.ceil(sc["candidates"] * 5 * 20 / 60),
    "feasible": feasible(p),
    "within noise": worst(p) <= worst(best) + noise,
}
print("# screened %d (without: %d); worst %.4f, grid best %.4f +/- %.4f; %s" %
      (sc["candidates"], plain["search"]["sampled"], worst(p), worst(best), noise,
       [k for k, v in checks.items() if not v]))
sys.exit(0 if all(checks.values()) else 1)
EOF2
ok $? "--screen: more candidates for the budget, counted by duration, and within the noise of the best"
# shellcheck disable=SC2086
expect_exit 2 "a screen as long as a scenario exits 2" "$FUSEBOX" tune $S $KNOBS $OBJ --screen 1m \
    -o "$T/bad"
contains "$ERR" "--screen 1m: not shorter than tests/e2e/tune/brownout.json's duration (60 s)" \
    "the error names the scenario and its duration"
# shellcheck disable=SC2086
expect_exit 2 "a screen that ends before a fault starts exits 2" "$FUSEBOX" tune $S $KNOBS $OBJ \
    --screen 10s -o "$T/bad"
contains "$ERR" "--screen 10s: " "the scenario's own error says it is the screen's"

# --search direct: NLopt's DIRECT-L on one seed, the rungs, then COBYLA from the best; the same
# Done-when check against the full grid's sweeps, and the same bytes for --jobs 1 and 2
# shellcheck disable=SC2086
expect_exit 0 "tune --search direct exits 0" "$FUSEBOX" tune $S $KNOBS $OBJ --search direct --no-charts \
    --jobs 1 -o "$T/nl1"
NLANSWER=$OUT
contains "$NLANSWER" "NLopt GN_DIRECT_L: " "the answer says NLopt's global phase ran"
contains "$NLANSWER" "then NLopt LN_COBYLA from the best on every seed" "and its local phase"
# shellcheck disable=SC2086
"$FUSEBOX" tune $S $KNOBS $OBJ --search direct --no-charts --jobs 2 -o "$T/nl2" >"$T/nl2.txt"
same_files "$T/nl1" "$T/nl2" tune.json tune.html &&
    [ "$(grep -v '^wrote ' "$T/nl2.txt")" = "$(echo "$NLANSWER" | grep -v '^wrote ')" ]
ok $? "--search direct: --jobs 2 writes and prints the same as --jobs 1"
python3 - "$T/grid" "$T/nl1/tune.json" <<'EOF2'
import csv, json, os, sys
grid, r = sys.argv[1], json.load(open(sys.argv[2]))
rows = {n: list(csv.DictReader(open(os.path.join(grid, n, "sweep-points.csv"))))
        for n in sorted(os.listdir(grid))}
def worst(p):
    return max(float(r[p]["cost_usd"]) for r in rows.values())
def feasible(p):
    return all(float(r[p]["success_rate"]) >= 0.97 for r in rows.values())
pts = range(len(next(iter(rows.values()))))
best = min((p for p in pts if feasible(p)), key=lambda p: (worst(p), p))
noise = max((float(r[best]["cost_usd_ci_high"]) - float(r[best]["cost_usd_ci_low"])) / 2
            for r in rows.values())
p, nl = r["recommendation"]["point"], r["search"]["nlopt"]
checks = {
    "method": r["search"]["method"] == "direct" and nl["global"] == "GN_DIRECT_L",
    "within 10% of the grid": r["runs"]["search"] <= r["runs"]["full_grid"] // 10,
    "rungs": [k["seeds"] for k in r["search"]["rungs"]] == [1, 3],
    "the same figures": abs(worst(p) - r["recommendation"]["objective"]) < 1e-3,
    "feasible": feasible(p) and r["recommendation"]["feasible"],
    "within noise": worst(p) <= worst(best) + noise,
}
print("# direct: %d runs, %d points on 1 seed; worst %.4f, grid best %.4f +/- %.4f; %s" %
      (r["runs"]["search"], r["search"]["sampled"], worst(p), worst(best), noise,
       [k for k, v in checks.items() if not v]))
sys.exit(0 if all(checks.values()) else 1)
EOF2
ok $? "--search direct: within 10% of the runs, a feasible setting within the seeds' noise of the grid's best"
# a grid NLopt's global phase covers whole: it stops there (a grid point proposed again costs no
# run, and the phase does not go on proposing)
"$FUSEBOX" tune $S --knob retry.attempts=1,2,3 --minimize cost_usd --search direct --no-charts -q \
    -o "$T/nl3"
[ "$(json "$T/nl3/tune.json" "(r['search']['sampled'], r['search']['nlopt']['global_calls'])")" = "(3, 3)" ]
ok $? "--search direct on a 3-point grid: 3 calls of DIRECT-L run its 3 points, then it stops"
# shellcheck disable=SC2086
expect_exit 2 "an unknown --search exits 2" "$FUSEBOX" tune $S $KNOBS $OBJ --search newton -o "$T/bad"
contains "$ERR" "--search needs nlopt, halving or direct, got 'newton'" "the error names the choices"

# the default search (nlopt) is halving's, then NLopt's COBYLA on the budget left: --search
# halving alone meets the same Done-when bar, and the default's answer is no worse than it
contains "$ANSWER" "successive halving: " "the default search starts with successive halving"
contains "$ANSWER" "one knob at a time; then NLopt LN_COBYLA" "and ends with NLopt's COBYLA"
# shellcheck disable=SC2086
expect_exit 0 "tune --search halving exits 0" "$FUSEBOX" tune $S $KNOBS $OBJ --search halving \
    --no-charts -o "$T/hv"
python3 - "$T/grid" "$T/hv/tune.json" "$T/j1/tune.json" <<'EOF2'
import csv, json, os, sys
grid, r, d = sys.argv[1], json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))
rows = {n: list(csv.DictReader(open(os.path.join(grid, n, "sweep-points.csv"))))
        for n in sorted(os.listdir(grid))}
def worst(p):
    return max(float(r[p]["cost_usd"]) for r in rows.values())
def feasible(p):
    return all(float(r[p]["success_rate"]) >= 0.97 for r in rows.values())
pts = range(len(next(iter(rows.values()))))
best = min((p for p in pts if feasible(p)), key=lambda p: (worst(p), p))
noise = max((float(r[best]["cost_usd_ci_high"]) - float(r[best]["cost_usd_ci_low"])) / 2
            for r in rows.values())
p, q = r["recommendation"]["point"], d["recommendation"]["point"]
checks = {
    "methods": r["search"]["method"] == "halving" and r["search"]["nlopt"] is None
    and d["search"]["method"] == "nlopt" and d["search"]["nlopt"]["local"] == "LN_COBYLA",
    "within 10% of the grid": r["runs"]["search"] <= r["runs"]["full_grid"] // 10,
    "feasible": feasible(p) and r["recommendation"]["feasible"],
    "within noise": worst(p) <= worst(best) + noise,
    "the same sample": r["search"]["sampled"] == d["search"]["sampled"],
    "the default no worse": feasible(q) and worst(q) <= worst(p),
}
print("# halving: %d runs, worst %.4f; the default (nlopt): %d runs, worst %.4f; grid best %.4f "
      "+/- %.4f; %s" % (r["runs"]["search"], worst(p), d["runs"]["search"], worst(q), worst(best),
                        noise, [k for k, v in checks.items() if not v]))
sys.exit(0 if all(checks.values()) else 1)
EOF2
ok $? "--search halving: within 10% of the runs, within the seeds' noise of the grid's best; the default no worse"

# the smallest budget: the report's runs may see a better neighbour, and then say so
"$FUSEBOX" tune $S --knob retry.attempts=1,2,3 --knob breaker.open=5s,10s,20s $OBJ -o "$T/small" >"$T/small.txt"
python3 - "$T/small/tune.json" "$T/small.txt" <<'EOF2'
import json, sys
r = json.load(open(sys.argv[1]))
text = open(sys.argv[2]).read()
better = [k["key"] for k in r["sensitivity"] if k["better_at"] is not None]
# a better neighbour exists only when the budget stopped the search, and the answer says it
ok = (not better or r["runs"]["budget_reached"]) and text.count("BETTER at") == len(better)
# and it is better: feasible, with a lower worst case than the recommendation
for k in r["sensitivity"]:
    if k["better_at"] is not None:
        v = next(x for x in k["values"] if x["value"] == k["better_at"])
        ok = ok and v["feasible"] and v["objective"] < r["recommendation"]["objective"]
print("better:", better)
sys.exit(0 if ok else 1)
EOF2
ok $? "a better neighbour seen by the report's runs is named, only when the budget ran out"

# errors
expect_exit 2 "a misspelt --knob key exits 2" "$FUSEBOX" tune $S --knob breaker.opn=5s,10s \
    --minimize cost_usd -o "$T/bad"
contains "$ERR" "--knob breaker.opn" "the error names the --knob"
contains "$ERR" "did you mean 'open'" "the error suggests the right key"
expect_exit 2 "an empty range exits 2" "$FUSEBOX" tune $S --knob breaker.open=5s..5s \
    --minimize cost_usd -o "$T/bad"
contains "$ERR" "--knob breaker.open=5s..5s" "the empty range's error names the --knob"
expect_exit 2 "a range of one integer exits 2" "$FUSEBOX" tune $S --knob retry.attempts=3..3 \
    --minimize cost_usd -o "$T/bad"
# shellcheck disable=SC2086
expect_exit 2 "a budget below the smallest search exits 2" "$FUSEBOX" tune $S $KNOBS $OBJ \
    --budget 20 -o "$T/bad"
contains "$ERR" "--budget 20 runs is too small: the search needs at least 25" \
    "the budget error says what the search needs"
expect_exit 2 "no objective exits 2" "$FUSEBOX" tune $S --knob breaker.open=5s,10s -o "$T/bad"
contains "$ERR" "--minimize or --maximize" "the error asks for an objective"
expect_exit 2 "a variant missing from a scenario exits 2" "$FUSEBOX" tune $S \
    --knob breaker.open=5s,10s --minimize cost_usd --variant nope -o "$T/bad"
contains "$ERR" "no variant named 'nope'" "the error names the variant"
[ ! -e "$T/bad/tune.json" ]
ok $? "bad input writes no tune.json"

expect_exit 2 "a scenario given twice exits 2" "$FUSEBOX" tune $S $S/outage.json \
    --knob breaker.open=5s,10s --minimize cost_usd -o "$T/bad"
contains "$ERR" "tests/e2e/tune/outage.json is given twice" "the error names the file"

# --across mean: the mean of the scenarios' means, said so; here no worse than the worst case
expect_exit 0 "--across mean exits 0" "$FUSEBOX" tune $S/outage.json $S/rate-limit.json \
    --knob retry.attempts=1,2,3 --knob breaker.open=5s,20s --minimize cost_usd --across mean \
    --exhaustive -o "$T/mean"
contains "$OUT" "across 2 scenarios (mean)" "--across mean says so"
"$FUSEBOX" tune $S/outage.json $S/rate-limit.json --knob retry.attempts=1,2,3 \
    --knob breaker.open=5s,20s --minimize cost_usd --exhaustive -q -o "$T/worst"
python3 - "$T/mean/tune.json" "$T/worst/tune.json" <<'EOF2'
import json, sys
m, w = (json.load(open(f)) for f in sys.argv[1:3])
# the same runs (exhaustive, same seeds): each point's mean across is below its worst case
wo = {e["point"]: e["objective"] for e in w["evaluated"]}
ok = all(e["objective"] <= wo[e["point"]] + 1e-9 for e in m["evaluated"])
ok = ok and any(e["objective"] < wo[e["point"]] - 1e-9 for e in m["evaluated"])
sys.exit(0 if ok and m["objective"]["across"] == "mean" else 1)
EOF2
ok $? "--across mean: every point's mean across the scenarios is at most its worst case"

# --weight: a weighted mean across the scenarios, its weights and each scenario's share said
W2="--knob retry.attempts=1,2,3 --knob breaker.open=5s,20s --minimize cost_usd --exhaustive"
# shellcheck disable=SC2086
expect_exit 0 "--weight exits 0" "$FUSEBOX" tune $S $W2 --subject-to "success_rate>=0.97" \
    --weight outage=3 --weight $S/slow.json=0 -o "$T/w"
contains "$OUT" "across 5 scenarios (weighted mean)" "--weight implies a weighted mean, said so"
contains "$OUT" "weights: brownout 1, flapping 1, outage 3, rate-limit 1, slow 0" \
    "the answer lists every scenario's weight"
contains "$OUT" "slow.json (weight 0: constraints only)" "a 0 weight counts for the constraints only"
python3 - "$T/w/tune.json" <<'EOF2'
import json, sys
r = json.load(open(sys.argv[1]))
rec = r["recommendation"]
sc = rec["scenarios"]
w = [s["weight"] for s in sc]
m = [s["metrics"]["cost_usd"]["recommended"] for s in sc]
mean = sum(a * b for a, b in zip(w, m)) / sum(w)
shares = sum(s["share"] for s in sc if s["weight"] > 0)
ok = r["objective"]["weights"] == [1, 1, 3, 1, 0] and w == [1, 1, 3, 1, 0]
ok = ok and abs(mean - rec["objective"]) < 1e-6 and abs(shares - 1) < 1e-6
print("# weighted mean %.6f, tune says %.6f; shares sum to %.6f" % (mean, rec["objective"], shares))
sys.exit(0 if ok else 1)
EOF2
ok $? "the objective is the weighted mean of the scenarios' figures, and the shares sum to 1"
# the seeds' noise of a weighted mean: the scenarios' 95% half-widths (here from one-point
# sweeps of the recommendation, on the same seeds) combined as sqrt(sum((w_i/W * h_i)^2))
for f in "$S"/*.json; do
    # shellcheck disable=SC2046
    "$FUSEBOX" sweep "$f" $(json "$T/w/tune.json" "' '.join('--grid %s=%s' % kv for kv in r['recommendation']['settings'].items())") \
        --seeds 3 -q --no-charts -o "$T/wn/$(basename "$f" .json)" || echo "# sweep of $f failed"
done
python3 - "$T/w/tune.json" "$T/wn" <<'EOF2'
import csv, json, math, os, sys
r = json.load(open(sys.argv[1]))
sq = 0
for s in r["recommendation"]["scenarios"]:
    name = os.path.basename(s["file"])[:-5]
    row = next(csv.DictReader(open(os.path.join(sys.argv[2], name, "sweep-points.csv"))))
    h = (float(row["cost_usd_ci_high"]) - float(row["cost_usd_ci_low"])) / 2
    sq += (s["weight"] / sum(r["objective"]["weights"]) * h) ** 2
print("# noise %.6f, tune says %.6f" % (math.sqrt(sq), r["recommendation"]["noise"]))
sys.exit(0 if abs(math.sqrt(sq) - r["recommendation"]["noise"]) < 1e-3 else 1)
EOF2
ok $? "the noise of the weighted mean combines the scenarios' half-widths by their weights"
# all weight on one scenario: every point's objective is that scenario's own mean
# shellcheck disable=SC2086
"$FUSEBOX" tune $S $W2 --weight brownout=0 --weight flapping=0 --weight outage=0 \
    --weight slow=0 -q -o "$T/w1"
# shellcheck disable=SC2086
"$FUSEBOX" tune $S/rate-limit.json $W2 --across mean -q -o "$T/w1only"
python3 - "$T/w1/tune.json" "$T/w1only/tune.json" <<'EOF2'
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
bo = {e["point"]: e["objective"] for e in b["evaluated"]}
ok = len(bo) == 6 and all(abs(e["objective"] - bo[e["point"]]) < 1e-9 for e in a["evaluated"])
sys.exit(0 if ok and a["recommendation"]["point"] == b["recommendation"]["point"] else 1)
EOF2
ok $? "weights 0,0,0,1,0: the objective and the recommendation are rate-limit's alone"
# shellcheck disable=SC2086
expect_exit 2 "--weight of an unknown scenario exits 2" "$FUSEBOX" tune $S $W2 --weight outag=2 \
    -o "$T/bad"
contains "$ERR" "--weight outag=2: no scenario named 'outag'" "the error names the weight"
# shellcheck disable=SC2086
expect_exit 2 "--weight with --across worst exits 2" "$FUSEBOX" tune $S $W2 --weight outage=2 \
    --across worst -o "$T/bad"
contains "$ERR" "--weight needs --across mean" "the error says the worst case has no weights"
# shellcheck disable=SC2086
expect_exit 2 "a negative --weight exits 2" "$FUSEBOX" tune $S $W2 --weight outage=-1 -o "$T/bad"
# shellcheck disable=SC2086
expect_exit 2 "--weight given twice for a scenario exits 2" "$FUSEBOX" tune $S $W2 \
    --weight outage=2 --weight outage.json=3 -o "$T/bad"
contains "$ERR" "tests/e2e/tune/outage.json is weighted twice" "the error names the scenario"

# two objectives: the second is traded off against the first; the answer lists their Pareto
# front (here computed again from tune.json's figures), charts/ draws it
P2="--knob retry.attempts=1,2,3 --knob breaker.open=5s,10s,20s --knob breaker.failure_rate=0.3,0.5,0.7"
# shellcheck disable=SC2086
expect_exit 0 "two objectives exit 0" "$FUSEBOX" tune $S $P2 --minimize cost_usd \
    --minimize amplification --exhaustive -o "$T/p2"
contains "$OUT" "trade-off: cost_usd against amplification (worst case of each)" \
    "the answer names the trade-off"
python3 - "$T/p2/tune.json" "$OUT" <<'EOF2'
import json, sys
r, text = json.load(open(sys.argv[1])), sys.argv[2]
pts = [e for e in r["evaluated"] if e["seeds"] == r["seeds"] and e["feasible"]]
def dom(a, b):
    return (a["objective"] <= b["objective"] and a["second"] <= b["second"] and
            (a["objective"] < b["objective"] or a["second"] < b["second"]))
front = sorted(e["point"] for e in pts if not any(dom(o, e) for o in pts))
said = sorted(e["point"] for e in r["evaluated"] if e["front"])
n = r["tradeoff"]["front"]
lines = [l for l in text.split("\n") if l.startswith("  cost_usd ") and ", amplification " in l]
rec = r["recommendation"]["point"]
ok = len(pts) == 27 and front == said and n == len(front) and len(lines) == min(n, 12)
ok = ok and rec in front and sum("<- recommended" in l for l in lines) == 1
ok = ok and len(front) >= 3  # a real trade-off here: a cheaper setting amplifies more
ok = ok and r["objective"]["second"] == {"metric": "amplification", "sense": "minimize"}
print("# front %s, tune.json %s, %d lines" % (front, said, len(lines)))
sys.exit(0 if ok else 1)
EOF2
ok $? "the front is the non-dominated settings of the two figures, and the recommendation is on it"
python3 - "$T/p2/charts/tradeoff.dat" <<'EOF2'
import sys
blocks = [b for b in open(sys.argv[1]).read().split("\n\n\n")]
front = [tuple(map(float, l.split())) for l in blocks[1].strip().split("\n")]
# two minimised figures: along the front the first rises while the second falls
ok = len(blocks) == 4 and len(blocks[0].strip().split("\n")) == 27
ok = ok and all(a[0] < b[0] and a[1] > b[1] for a, b in zip(front, front[1:]))
sys.exit(0 if ok else 1)
EOF2
ok $? "tradeoff.dat: every setting, the front by the objective, the recommendation, the current"
if command -v gnuplot >/dev/null 2>&1; then
    for c in tradeoff scenarios; do
        [ "$(head -c 8 "$T/p2/charts/$c.png" | od -An -tx1 | tr -d ' ')" = 89504e470d0a1a0a ]
        ok $? "gnuplot drew charts/$c.png"
    done
    [ "$(grep -o 'src="data:image/png;base64,' "$T/p2/tune.html" | wc -l)" -eq 2 ]
    ok $? "tune.html embeds both charts"
else
    skip "gnuplot drew charts/tradeoff.png" "gnuplot is not installed (apt-get install gnuplot-nox)"
    skip "gnuplot drew charts/scenarios.png" "gnuplot is not installed"
    skip "tune.html embeds both charts" "gnuplot is not installed"
fi
# shellcheck disable=SC2086
"$FUSEBOX" tune $S/outage.json $P2 --minimize cost_usd --exhaustive --no-charts -q -o "$T/nc"
[ ! -e "$T/nc/charts" ] && grep -q "No charts: they were not asked for" "$T/nc/tune.html"
ok $? "--no-charts: no charts/, and tune.html says why"
# shellcheck disable=SC2086
expect_exit 2 "a third objective exits 2" "$FUSEBOX" tune $S $P2 --minimize cost_usd \
    --minimize latency_p99 --maximize success_rate -o "$T/bad"
contains "$ERR" "at most two objectives" "the error says two at most"
# shellcheck disable=SC2086
expect_exit 2 "a misspelt second objective exits 2" "$FUSEBOX" tune $S $P2 --minimize cost_usd \
    --minimize latency_p98 -o "$T/bad"
contains "$ERR" "--minimize latency_p98" "the error names the second objective"
# shellcheck disable=SC2086
expect_exit 2 "the same metric twice exits 2" "$FUSEBOX" tune $S $P2 --minimize cost_usd \
    --maximize cost_usd -o "$T/bad"

# --shard K/N and --merge N (exhaustive): three shards merged write what one process writes
SH="--knob retry.attempts=1,2,3 --knob breaker.open=5s,20s --minimize cost_usd --exhaustive"
# shellcheck disable=SC2086
"$FUSEBOX" tune $S $SH --subject-to "success_rate>=0.97" -o "$T/sh1" >"$T/sh1.txt"
# each knob's line says the seeds' noise its moves were judged against, and which move stood out
grep -qE "^  retry.attempts +no effect on the cost_usd \(range \\\$[0-9.]+, within the seeds' noise, up to \+/- \\\$[0-9.]+\)" "$T/sh1.txt"
ok $? "sensitivity: a knob with no effect names the largest noise of its moves"
grep -qE "^  breaker.open +moves the worst case by \\\$[0-9.]+ \(at 20s: [+-]\\\$[0-9.]+, beyond the seeds' noise of \+/- \\\$[0-9.]+\)" "$T/sh1.txt"
ok $? "... a knob that moves the figure names the move that stood out and its noise"
[ "$(json "$T/sh1/tune.json" "all(k['noise'] > 0 for k in r['sensitivity'])")" = True ]
ok $? "... and tune.json's sensitivity[].noise holds it"
for k in 1 2 3; do
    # shellcheck disable=SC2086
    expect_exit 0 "tune --shard $k/3 exits 0" "$FUSEBOX" tune $S $SH \
        --subject-to "success_rate>=0.97" --shard $k/3 -o "$T/sh3"
done
contains "$OUT" "wrote $T/sh3/tune.part-3-of-3/ (35 runs)" "a shard says what it wrote"
[ ! -e "$T/sh3/tune.json" ]
ok $? "a shard writes no answer"
# shellcheck disable=SC2086
expect_exit 0 "tune --merge 3 exits 0" "$FUSEBOX" tune $S $SH --subject-to "success_rate>=0.97" \
    --merge 3 -o "$T/sh3"
same_files "$T/sh1" "$T/sh3" tune.json tune.html &&
    [ "$(grep -v '^wrote ' "$T/sh1.txt")" = "$(echo "$OUT" | grep -v '^wrote ')" ]
ok $? "the merge of 3 shards writes and prints what one process does, byte for byte"
# shellcheck disable=SC2086
expect_exit 2 "a merge with a shard missing exits 2" "$FUSEBOX" tune $S $SH --merge 4 -o "$T/sh3"
contains "$ERR" "tune.part-1-of-4/00.grid.json: cannot open" "the error names the missing file"
# shellcheck disable=SC2086
expect_exit 2 "a merge with other knobs exits 2" "$FUSEBOX" tune $S \
    --knob retry.attempts=1,2 --knob breaker.open=5s,20s --minimize cost_usd --exhaustive \
    --merge 3 -o "$T/sh3"
contains "$ERR" "is from a different tune ('grid' differs): run the shards again with the same" \
    "the error says the shards are another tune's"
# a shard run by a fusebox of other random streams (docs/rng.md)
cp -r "$T/sh3" "$T/sh-old"
f=$(ls "$T"/sh-old/tune.part-2-of-3/*.json | head -n 1)
sed -i 's/"rng": "fusebox-5"/"rng": "fusebox-4"/' "$f"
# shellcheck disable=SC2086
expect_exit 2 "a merge with a shard of another random-stream version exits 2" "$FUSEBOX" tune $S $SH \
    --subject-to "success_rate>=0.97" --merge 3 -o "$T/sh-old"
contains "$ERR" "was run with random streams fusebox-4, this fusebox draws fusebox-5" "... and says so"

# The budgeted search round by round (docs/tune.md, "Beyond one machine"): --merge N plans a
# round (exit 3), --shard K/N runs its share of it, until a merge writes the answer, which must
# be what one process writes, byte for byte, for both searches, with and without a screen.
RB="--knob retry.attempts=1,2,3 --knob breaker.failure_rate=0.3,0.5,0.7 --knob breaker.open=5s,10s,20s
--minimize cost_usd --budget 60"
# rounds N DIR ARGS...: the loop; $ROUNDS the rounds run; returns the last merge's status
rounds() {
    rn=$1 rdir=$2
    shift 2
    ROUNDS=0
    while :; do
        "$FUSEBOX" tune "$@" --merge "$rn" -o "$rdir" >"$rdir.out" 2>"$rdir.err"
        rrc=$?
        [ $rrc -eq 3 ] || return $rrc
        ROUNDS=$((ROUNDS + 1))
        [ ! -e "$rdir/tune.json" ] || return 99 # no answer before the last round
        rk=1
        while [ $rk -le "$rn" ]; do
            "$FUSEBOX" tune "$@" --shard "$rk/$rn" --jobs 1 -q -o "$rdir" 2>>"$rdir.err" || return 98
            rk=$((rk + 1))
        done
    done
}
# round_case K SEARCH N [--screen D]: one case, its one process and its rounds; the test's code and
# name in $T/case-K
round_case() {
    k=$1 search=$2 n=$3
    shift 3
    d=$T/rounds-$search-$n${1:-}
    # shellcheck disable=SC2086
    "$FUSEBOX" tune $S $RB --subject-to "success_rate>=0.97" --search "$search" "$@" -o "$d-one" >"$d-one.txt"
    # shellcheck disable=SC2086
    rounds "$n" "$d" $S $RB --subject-to "success_rate>=0.97" --search "$search" "$@"
    got=$?
    [ $got -eq 0 ] && [ $ROUNDS -ge 3 ] && same_files "$d-one" "$d" tune.json tune.html &&
        [ "$(grep -v '^wrote ' "$d-one.txt")" = "$(grep -v '^wrote ' "$d.out")" ]
    echo "$? --search $search $* in $ROUNDS rounds of $n shards (last merge exit $got): what one process writes and prints, byte for byte" >"$T/case-$k"
}
# the cases (number, search, shards, screen), the longest chains of processes first
CASES="8 direct 3 --screen 20s
7 nlopt 3 --screen 20s
5 direct 2
4 nlopt 3
2 halving 3
3 nlopt 2
6 halving 2 --screen 20s
1 halving 2"
# Under asan, cases 2, 3 and 8 (115 of the 254 processes, 43 s of their 98 s; 8 is 16 rounds of
# 3 shards) are left to the release run: the others run each search (1, 4, 5), 2 and 3 shards and
# the screen (6, 7) through the same round, shard and merge code, which is what asan checks.
RELEASE_CASES=
case "${BUILD:-}" in *asan*) RELEASE_CASES="2 3 8" ;; esac
# lane: take the next case no other lane took (mkdir is atomic) until none is left; two lanes
# run the cases two at a time, each case a chain of processes on one core
lane() {
    printf '%s\n' "$CASES" | while read -r k args; do
        case " $RELEASE_CASES " in *" $k "*) continue ;; esac
        mkdir "$T/claim-$k" 2>/dev/null || continue
        # shellcheck disable=SC2086
        round_case "$k" $args </dev/null
    done
}
lane >"$T/lane.out" 2>&1 &
lane_pid=$!
lane
wait $lane_pid
cat "$T/lane.out"
for k in 1 2 3 4 5 6 7 8; do
    case " $RELEASE_CASES " in
    *" $k "*)
        skip "rounds case $k ($(printf '%s\n' "$CASES" | sed -n "s/^$k //p"))" \
            "release run only: under asan the other cases run the same round, shard and merge code"
        continue
        ;;
    esac
    read -r code name <"$T/case-$k" || code=1 name="case $k of the rounds wrote no result"
    ok "$code" "$name"
done
[ ! -s "$T/rounds-halving-2.err" ]
ok $? "the rounds wrote nothing on stderr"

R=$T/rounds-bad
# shellcheck disable=SC2086
expect_exit 2 "a round's shard before any merge exits 2" "$FUSEBOX" tune $S $RB --shard 1/2 -o "$R"
contains "$ERR" "$R/tune.round.json: no round planned: the same command with --merge 2" "the error says how to start"
# shellcheck disable=SC2086
expect_exit 3 "the first merge plans round 1: exit 3" "$FUSEBOX" tune $S $RB --merge 2 -o "$R"
contains "$OUT" "round 1: " "the merge says which round it planned"
[ "$(json "$R/tune.round.json" "(r['round'], r['shards'], len(r['runs']) > 0)")" = "(1, 2, True)" ]
ok $? "tune.round.json names round 1, its shards and its runs"
# shellcheck disable=SC2086
expect_exit 2 "a shard with other options exits 2" "$FUSEBOX" tune $S $RB --budget 90 --shard 1/2 -o "$R"
contains "$ERR" "was planned by another command (its options differ)" "the error says the options differ"
# shellcheck disable=SC2086
expect_exit 2 "a shard of another count exits 2" "$FUSEBOX" tune $S $RB --shard 1/3 -o "$R"
contains "$ERR" "round 1 is planned for 2 shards, not 3" "the error names the counts"
# shellcheck disable=SC2086
expect_exit 0 "shard 1/2 of round 1 exits 0" "$FUSEBOX" tune $S $RB --shard 1/2 -o "$R"
contains "$OUT" "wrote $R/tune.round-1/part-1-of-2/" "a round's shard says what it wrote"
# shellcheck disable=SC2086
expect_exit 2 "a merge with a shard missing exits 2" "$FUSEBOX" tune $S $RB --merge 2 -o "$R"
contains "$ERR" "tune.round-1/part-2-of-2/00.grid.json: cannot open" "the error names the missing file"
printf '{"fusebox_tune_round": 1}\n' >"$R/tune.round.json"
# shellcheck disable=SC2086
expect_exit 2 "a damaged round file exits 2" "$FUSEBOX" tune $S $RB --merge 2 -o "$R"
contains "$ERR" "$R/tune.round.json: not a tune round file" "the error names the file"

# 100 seeds: 121,500 runs, about 50 s of CPU here, so that a second is never the whole of it on a
# faster machine either (3 seeds ended in 1.0 s once a run stopped faulting its memory in); the
# signal ends it after that second
# shellcheck disable=SC2086
"$FUSEBOX" tune $S $KNOBS $OBJ --exhaustive --seeds 100 --jobs 2 -o "$T/int" >"$T/int.out" 2>"$T/int.err" &
pid=$!
# the signal a second after its workers have forked (its handler is set before): started beside
# busy cores at the lowest priority (tests/run.sh), a tune may not have reached its handler in a
# second
i=0
while [ $i -lt 300 ] && ! cat /proc/[0-9]*/stat 2>/dev/null |
    awk -v p=$pid '{ sub(/.*\) /, "") } $2 == p { f = 1 } END { exit !f }'; do
    sleep 0.1
    i=$((i + 1))
done
sleep 1
kill -INT $pid
wait $pid
[ $? -eq 130 ] && grep -q "interrupted by SIGINT: nothing written" "$T/int.err" && [ ! -e "$T/int/tune.json" ]
ok $? "SIGINT stops tune: exit 130, one line, no tune.json"

# one seed: the seeds' noise is not measured, so it is not printed as +/- 0 and no knob is said to
# move the figure beyond it (it used to read "seeds' noise +/- $0.00" and "moves the worst case")
expect_exit 0 "tune --seeds 1 exits 0" "$FUSEBOX" tune $S --knob retry.attempts=1,2,3 \
    --knob breaker.open=5s,20s $OBJ --seeds 1 --exhaustive --no-charts -o "$T/one"
contains "$OUT" "(seeds' noise not measured: one seed)" "one seed: the recommendation's noise is not measured"
printf '%s\n' "$OUT" | grep -qE "^  breaker.open +changes the worst case by \\\$[0-9.]+ on one seed \(the seeds' noise not measured\)"
ok $? "... and a knob's change is not judged against it"
case $OUT in *"+/- \$0.00"* | *"moves the worst case"*) false ;; *) true ;; esac
ok $? "... never 'noise +/- \$0.00', never 'moves the worst case'"
[ "$(json "$T/one/tune.json" "r['recommendation']['noise'] is None")" = True ]
ok $? "tune.json: the recommendation's noise is null on one seed"

expect_exit 1 "no setting meets an impossible constraint: exit 1" "$FUSEBOX" tune $S \
    --knob breaker.open=5s,10s --minimize cost_usd --subject-to "success_rate>=1.01" -o "$T/inf"
contains "$OUT" "NO point satisfies every constraint" "infeasible: it says so and shows the closest"

finish
