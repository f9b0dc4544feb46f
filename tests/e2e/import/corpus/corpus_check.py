#!/usr/bin/env python3
"""corpus_check.py - one corpus trace's truth against its imported scenario's replays.

    corpus_check.py FUSEBOX NAME META LOG SCENARIO OUTDIR RESULTS [SEEDS]

Truth is what the run itself recorded, never what the import infers: the client script's own
record (META, written by corpus_trace.cjs: per logical request its key, its latency and how it
ended) and the mock's log (LOG, GET /__fusebox/log: per attempt its x-fusebox-key, its status;
status 0 for a hang the client timed out, or a reset). SCENARIO, the imported scenario, is run
with `FUSEBOX run SCENARIO --variant as-was --seed K` for each K of SEEDS (default 1-10) into
OUTDIR/seed-K; each replay's report.json (variants["as-was"]: "summary", and "breakdown" per
the issue-21 contract) is compared with the truth within issue 21's tolerances: counts within
2% (at least 2), latency quantiles within 10% (or, on a cliff of the truth's distribution,
within 10% of its own quantiles at q -+ d: fusebox's own rule, asked of
tests/tools/quantile_verdict beside FUSEBOX; docs/import.md, "Fidelity"), each
attempts-per-request bucket within 2 points of the share of requests.

Prints one table (figure, truth, replay min..max over the seeds, tolerance, ok/MISS; a MISS
says "bias" when every seed lies on one side of the truth ("bias, near" when the nearest seed is
within twice the tolerance), "spread" when the truth lies within
the seeds' range; a figure the report lacks is MISSING, naming the field) and writes RESULTS:
one line per figure, "figure<TAB>ok|MISS|MISSING<TAB>detail". Exit 0 when it compared, 2 on
bad input.

META may instead be LiteLLM records (a .jsonl written by ../litellm_gen.py; LOG is then
ignored): their generator's own account of each call is the truth.
"""
import json
import os
import subprocess
import sys
from collections import Counter


def quantile(xs, q):
    """The q-quantile of xs as fusebox reports it: the order statistic of rank ceil(q n)."""
    s = sorted(xs)
    k = max(1, -(-int(round(q * len(s) * 1e6)) // 1000000))
    return s[min(k, len(s)) - 1]


def latency_verdicts(tool, lat, q, vals):
    """fusebox's verdict (reports/breakdown.c, rep_latency_within) on each replay's q-quantile
    in vals against the truth's latencies lat, through tests/tools/quantile_verdict: a dict
    value -> "ok" (within 10%), "cliff" (within 10% of the truth at a rank within q -+ d only)
    or "miss", and the band ({"from", "to", "lo", "hi"})."""
    r = subprocess.run([tool, repr(q)] + ["%.9f" % v for v in vals], capture_output=True, text=True,
                       input="\n".join("%.9f" % x for x in lat))
    if r.returncode != 0:
        sys.exit("corpus_check.py: %s exited %d: %s" % (tool, r.returncode, r.stderr.strip()))
    d = json.loads(r.stdout)
    return dict(zip(vals, d["verdicts"])), d


def attempt_status(e):
    """An attempt's answer in the contract's words: the HTTP status, or timeout/reset/broken."""
    if e["status"] == 0:
        return "timeout" if (e.get("fault") or "").endswith(".hang") else "reset"
    if e["status"] == 200 and e.get("broken"):
        return "broken"
    return str(e["status"])


def litellm_truth(path):
    """The client record and the mock's log that LiteLLM records stand for: the records of
    litellm_gen.py are the generator's own account of each call (its model of a gateway is the
    truth), grouped by trace_id into logical requests; a 408 "Timeout" is an attempt that hung
    until the client's timeout."""
    calls = {}
    for line in open(path):
        if line.strip():
            r = json.loads(line)
            calls.setdefault(r["trace_id"], []).append(r)
    recs, entries = [], []
    for tid, rs in calls.items():
        rs.sort(key=lambda r: r["startTime"])
        last = rs[-1]
        if last["status"] == "success":
            end = {"end": "ok"}
        elif last["error_information"]["error_code"] == "408":
            end = {"end": "timeout"}
        else:
            end = {"end": "status", "status": int(last["error_information"]["error_code"])}
        recs.append(dict(key=tid, start_ms=1000 * rs[0]["startTime"],
                         latency_ms=1000 * (max(r["endTime"] for r in rs) - rs[0]["startTime"]), **end))
        for r in rs:
            code = 200 if r["status"] == "success" else int(r["error_information"]["error_code"])
            entries.append({"attempt": True, "key": tid, "model": r["model_id"], "status": 0 if code == 408 else code,
                            "fault": "timeout.hang" if code == 408 else None, "broken": False})
    return {"sdk": "litellm (gateway records)", "requests": recs}, {"dropped": 0, "entries": entries}


def truth_of(meta, log):
    recs = meta["requests"]
    keys = {r["key"] for r in recs}
    if log.get("dropped"):
        sys.exit("corpus_check.py: the mock's log dropped %d entries (raise --log-capacity)" % log["dropped"])
    att = [e for e in log["entries"] if e.get("attempt") and e.get("key") in keys]
    per = Counter(e["key"] for e in att)
    # a fallback: an attempt on another model (deployment) than its request's attempt before it
    fallbacks, prev = 0, {}
    for e in att:
        where = (e.get("path"), e.get("model"))
        fallbacks += e["key"] in prev and prev[e["key"]] != where
        prev[e["key"]] = where
    n = len(recs)
    ends = Counter(r["end"] for r in recs)
    lat = [r["latency_ms"] / 1000 for r in recs]
    return {
        "requests": n,
        "attempts": len(att),
        "retries": sum(max(0, per[k] - 1) for k in keys) - fallbacks,
        "fallbacks": fallbacks,
        "successes": ends["ok"],
        "errors_timeout": ends["timeout"],
        "errors_exhausted": ends["status"],
        "errors_other": n - ends["ok"] - ends["timeout"] - ends["status"],
        "latency_p50": quantile(lat, 0.50),
        "latency_p90": quantile(lat, 0.90),
        "latency_p99": quantile(lat, 0.99),
        "latencies": lat,
        "apr": Counter(per[k] for k in keys),
        "status": Counter(attempt_status(e) for e in att),
    }


def fmt(x, kind):
    if x is None:
        return "-"
    if kind == "lat":
        return "%.3fs" % x
    if kind == "share":
        return "%.1f%%" % (100 * x)
    return "%d" % x


def main():
    if len(sys.argv) not in (8, 9):
        sys.exit(__doc__)
    fusebox, name, meta_f, log_f, scn, outdir, results = sys.argv[1:8]
    lo, _, hi = (sys.argv[8] if len(sys.argv) == 9 else "1-10").partition("-")
    seeds = range(int(lo), int(hi or lo) + 1)
    try:
        if meta_f.endswith(".jsonl"):  # LiteLLM records: the generator's own account
            meta, log = litellm_truth(meta_f)
        else:
            meta, log = json.load(open(meta_f)), json.load(open(log_f))
    except (OSError, ValueError) as e:
        print("corpus_check.py: %s" % e, file=sys.stderr)
        return 2
    t = truth_of(meta, log)
    reps = []
    for k in seeds:
        d = os.path.join(outdir, "seed-%d" % k)
        r = subprocess.run([fusebox, "run", scn, "--variant", "as-was", "--seed", str(k), "-o", d,
                            "--no-charts", "-q"], capture_output=True, text=True)
        if r.returncode != 0:
            print("corpus_check.py: fusebox run --seed %d exited %d: %s" % (k, r.returncode, r.stderr.strip()),
                  file=sys.stderr)
            return 2
        reps.append(json.load(open(os.path.join(d, "report.json")))["variants"]["as-was"])

    # (figure, truth, replays or None, tolerance text, ok function, kind, missing field, note
    # function: what a latency's verdict adds, given whether it was ok)
    rows = []

    def count_row(fig, truth, vals, missing=None):
        tol = max(2, 0.02 * truth)
        rows.append((fig, truth, vals, "+-2%% (+-%.1f)" % tol if tol > 2 else "+-2 (2%< 2)",
                     lambda v: abs(v - truth) <= tol, "count", missing, None))

    s = [r["summary"] for r in reps]
    for fig in ("requests", "attempts", "retries", "fallbacks", "successes", "errors_timeout",
                "errors_exhausted"):
        count_row(fig, t[fig], [x[fig] for x in s])
    tool = os.path.join(os.path.dirname(os.path.abspath(fusebox)), "tests", "tools", "quantile_verdict")
    for fig in ("latency_p50", "latency_p90", "latency_p99"):
        tr, vals = t[fig], [x[fig] for x in s]
        # the seeds' values and the point halfway from the truth to the nearest (a "near" bias)
        near = min(vals, key=lambda v: abs(v - tr))
        verdict, band = latency_verdicts(tool, t["latencies"], int(fig[9:]) / 100,
                                         vals + [tr + (near - tr) / 2])
        where = "the truth's p%.4g..p%.4g (%.3fs..%.3fs)" % (100 * band["from"], 100 * band["to"],
                                                             band["lo"], band["hi"])

        def note(ok, verdict=verdict, vals=vals, where=where):
            if ok:
                n = sum(verdict[v] == "cliff" for v in vals)
                return " (on a cliff: %d of %d seeds within 10%% of %s)" % (n, len(vals), where) if n else ""
            return " (nor within 10%% of %s)" % where
        rows.append((fig, tr, vals, "+-10%", lambda v, verdict=verdict: verdict[v] != "miss", "lat",
                     None, note))
    have = all("breakdown" in r for r in reps)
    bd = [r.get("breakdown", {}) for r in reps]
    # attempts per request: the share of requests in each bucket, +-2 points
    apr_have = have and all("attempts_per_request" in b for b in bd)
    buckets = sorted(set(t["apr"]) | ({int(k) for b in bd for k in b.get("attempts_per_request", {})}
                                      if apr_have else set()))
    for b in buckets:
        tr = t["apr"].get(b, 0) / t["requests"]
        vals = ([b_.get("attempts_per_request", {}).get(str(b), 0) / x["requests"] for b_, x in zip(bd, s)]
                if apr_have else None)
        rows.append(("attempts_per_request[%d]" % b, tr, vals, "+-2 points",
                     lambda v, tr=tr: abs(v - tr) <= 0.02 + 1e-9, "share",
                     None if apr_have else 'variants["as-was"].breakdown.attempts_per_request', None))
    st_have = have and all("status" in b for b in bd)
    codes = sorted(set(t["status"]) | ({k for b in bd for k in b.get("status", {})} if st_have else set()),
                   key=lambda c: (not c.isdigit(), c.zfill(3)))
    for c in codes:
        if st_have:
            count_row("status[%s]" % c, t["status"].get(c, 0), [b.get("status", {}).get(c, 0) for b in bd])
        else:
            count_row("status[%s]" % c, t["status"].get(c, 0), None, 'variants["as-was"].breakdown.status')

    print("%s: %s client, %d requests; truth from the client's record and the mock's log, replay "
          "= fusebox run --variant as-was, seeds %d-%d" % (name, meta.get("sdk"), t["requests"], seeds[0], seeds[-1]))
    print("  %-26s %10s  %-25s %-16s %s" % ("figure", "truth", "replay min..max", "tolerance", ""))
    with open(results, "w") as out:
        for fig, tr, vals, tol, good, kind, missing, note in rows:
            extra = ""
            if vals is None:
                verdict, rng = "MISSING", "(no %s)" % missing
            else:
                verdict = "ok" if all(good(v) for v in vals) else "MISS"
                if verdict == "MISS":
                    # every seed on one side of the truth: a bias; else the seeds' own spread
                    # a bias whose nearest seed is within twice the tolerance is "near" (the
                    # point halfway from the truth to it is within the tolerance)
                    if min(vals) > tr or max(vals) < tr:
                        near = min(vals, key=lambda v: abs(v - tr))
                        verdict += " (bias, near)" if good(tr + (near - tr) / 2) else " (bias)"
                    else:
                        verdict += " (spread)"
                rng = "%s..%s" % (fmt(min(vals), kind), fmt(max(vals), kind))
                extra = note(verdict == "ok") if note else ""
            print("  %-26s %10s  %-25s %-16s %s" % (fig, fmt(tr, kind), rng, tol, verdict + (" (no %s)" % missing if vals is None else extra)))
            out.write("%s\t%s\t%s\n" % (fig, verdict, "truth %s, replay %s, tolerance %s%s" % (fmt(tr, kind), rng, tol, extra)
                                         if vals is not None else missing))
    return 0


if __name__ == "__main__":
    sys.exit(main())
