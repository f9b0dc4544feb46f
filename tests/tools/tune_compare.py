#!/usr/bin/env python3
"""Compare tune's budgeted searches against the full grid (docs/tune.md, "Which is better").

For each grid and objective, runs `fusebox tune --exhaustive` once (every point on
every seed, in every scenario), then each search at each budget, and ranks each
search's recommendation among the full grid's feasible points by its worst case
across the scenarios: rank 0 is the grid's best; a recommendation the full grid
finds infeasible ranks after every feasible point. Prints one line per
objective and the table (rank sums over the objectives). Run by hand:

    python3 tests/tools/tune_compare.py build/release/fusebox [--set small|library]
        [--search nlopt,halving,direct] [--grids 0,1] [--budgets B,...] [--metrics M,...]
        [--cache DIR] [--jobs N]

Scenarios: --set small (the default), tests/e2e/tune (five one-minute incidents); --set
library, five of scenarios/ cut to 4 minutes under the flagship's policy (LIBRARY below).
Seeds 3. --cache keeps each full grid's tune.json, so that another search is compared
without running the grid again. docs/tune.md ("Which is better") gives the figures.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

GRIDS = [
    ("5 knobs x 3 values (243 points)",
     ["retry.attempts=1,2,3", "breaker.failure_rate=0.3,0.5,0.7", "breaker.open=5s,10s,20s",
      "breaker.minimum_calls=5,10,20", "retry.backoff.exponential.base=100ms,200ms,400ms"],
     [150, 365]),
    ("4 knobs x 5 values (625 points)",
     ["retry.attempts=1..5", "breaker.failure_rate=0.2..0.8", "breaker.open=2s..30s",
      "retry.backoff.exponential.base=50ms..800ms"],
     [400, 938]),
]
METRICS = [("--minimize", "cost_usd"), ("--minimize", "latency_p99"),
           ("--minimize", "latency_mean"), ("--minimize", "amplification")]
CONSTRAINTS = [None, "success_rate>=0.97"]

# --set library: five of scenarios/ (an outage, a 429 storm, a hung provider, a
# flapping provider, a metastable retry storm), each cut to 4 minutes (every
# fault starts by 2m), under the flagship's policy (docs/tune.md, "The
# flagship across the library"); tests/e2e/tune_library.sh runs the first grid.
LIBRARY = ["scenarios/fleet-breakers.json", "scenarios/rate-limit-storm.json",
           "scenarios/half-open-stampede.json", "scenarios/flapping.json",
           "scenarios/metastable.json"]
FLAGSHIP = [
    "--set", 'variants={"flagship":{}}',
    "--set", 'policy.retry={"attempts":3,"backoff":{"exponential":{"base":"1s","max":"20s"}},'
    '"jitter":"full","retry_after":"max","attempt_timeout":"10s","deadline":"45s",'
    '"budget":{"token_bucket":{"max":10,"ratio":0.1}}}',
    "--set", 'policy.breaker={"failure_rate":0.5,"window":"30s","minimum_calls":20,"open":"30s",'
    '"half_open_probes":1}',
    "--set", "duration=4m"]
LIBRARY_GRIDS = [
    ("5 knobs x 3 values (243 points)",
     ["retry.attempts=1,2,3", "breaker.failure_rate=0.3,0.5,0.7", "breaker.open=10s,30s,60s",
      "breaker.minimum_calls=5,10,20", "retry.backoff.exponential.base=250ms,500ms,1s"],
     [150, 364]),
    ("4 knobs x 5 values (625 points)",
     ["retry.attempts=1..5", "breaker.failure_rate=0.2..0.8", "breaker.open=5s..60s",
      "retry.backoff.exponential.base=250ms..2s"],
     [400, 937]),
]
LIBRARY_METRICS = [("--maximize", "success_rate"), ("--minimize", "latency_p99"),
                   ("--minimize", "latency_mean"), ("--minimize", "amplification")]
LIBRARY_CONSTRAINTS = [None, "success_rate>=0.7"]


def tune(fusebox, scen, knobs, metric, con, extra, out, jobs):
    cmd = [fusebox, "tune"] + scen + list(metric) + ["--no-charts", "-q", "--jobs", str(jobs),
                                                      "-o", out]
    for k in knobs:
        cmd += ["--knob", k]
    if con:
        cmd += ["--subject-to", con]
    cmd += extra
    r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if r.returncode not in (0, 1):
        sys.exit("%s: exit %d: %s" % (" ".join(cmd), r.returncode, r.stderr))
    with open(os.path.join(out, "tune.json")) as f:
        return json.load(f)


def rank(full, point, sense):
    pts = {e["point"]: e for e in full["evaluated"]}
    feas = [sense * e["objective"] for e in full["evaluated"] if e["feasible"]]
    e = pts[point]
    if not e["feasible"]:
        return len(feas)
    return sum(1 for v in feas if v < sense * e["objective"])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("fusebox")
    ap.add_argument("--search", default="halving,nlopt,direct")
    ap.add_argument("--set", default="small", choices=["small", "library"])
    ap.add_argument("--grids", default="0,1", help="which grids (0: 3 values, 1: 5 values)")
    ap.add_argument("--budgets", help="these budgets instead of each grid's (comma-separated)")
    ap.add_argument("--metrics", help="only these objectives (comma-separated metric names)")
    ap.add_argument("--cache", help="keep the full grids' tune.json here (reused when present)")
    ap.add_argument("--jobs", type=int, default=2)
    a = ap.parse_args()
    searches = a.search.split(",")
    if a.set == "small":
        scen, grids, metrics, constraints = ["tests/e2e/tune"], GRIDS, METRICS, CONSTRAINTS
    else:
        scen, grids, metrics, constraints = LIBRARY + FLAGSHIP, LIBRARY_GRIDS, LIBRARY_METRICS, \
            LIBRARY_CONSTRAINTS
    grids = [grids[int(g)] for g in a.grids.split(",")]
    if a.metrics:
        metrics = [m for m in metrics if m[1] in a.metrics.split(",")]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for gi, (gname, knobs, budgets) in enumerate(grids):
            if a.budgets:
                budgets = [int(b) for b in a.budgets.split(",")]
            sums = {(b, s): [0, 0, 0] for b in budgets for s in searches}  # rank sum, best, noise
            for metric in metrics:
                sense = -1 if metric[0] == "--maximize" else 1
                for con in constraints:
                    key = "%s-%s-%s-%s" % (a.set, gname.split(" ")[0] + gname.split(" ")[3],
                                           metric[1], con or "none")
                    cached = os.path.join(a.cache, key + ".json") if a.cache else None
                    if cached and os.path.exists(cached):
                        full = json.load(open(cached))
                    else:
                        full = tune(a.fusebox, scen, knobs, metric, con, ["--exhaustive"],
                                    os.path.join(tmp, "full"), a.jobs)
                        if cached:
                            os.makedirs(a.cache, exist_ok=True)
                            json.dump(full, open(cached, "w"))
                    best = full["recommendation"]
                    line = "%s | %s%s |" % (gname.split(" (")[0], metric[1],
                                            " s.t. " + con if con else "")
                    for b in budgets:
                        for s in searches:
                            d = tune(a.fusebox, scen, knobs, metric, con,
                                     ["--budget", str(b), "--search", s],
                                     os.path.join(tmp, "s"), a.jobs)
                            rec = d["recommendation"]
                            k = rank(full, rec["point"], sense)
                            obj = {e["point"]: e for e in full["evaluated"]}[rec["point"]]["objective"]
                            within = abs(obj - best["objective"]) <= best["noise"]
                            sums[(b, s)][0] += k
                            sums[(b, s)][1] += k == 0
                            sums[(b, s)][2] += within
                            line += " %s@%d rank %d (%d runs)%s |" % (
                                s, b, k, d["runs"]["search"], "" if within else " OUTSIDE NOISE")
                    print(line, flush=True)
            for b in budgets:
                rows.append((gname, b, [sums[(b, s)] for s in searches]))
    n = len(metrics) * len(constraints)
    print()
    print("| grid | budget | " + " | ".join("%s: rank sum (best in, within noise)" % s
                                            for s in searches) + " |")
    print("|---|---|" + "---|" * len(searches))
    for gname, b, r in rows:
        print("| %s | %d | %s |" % (gname, b, " | ".join(
            "%d (%d of %d, %d of %d)" % (x[0], x[1], n, x[2], n) for x in r)))


if __name__ == "__main__":
    main()
