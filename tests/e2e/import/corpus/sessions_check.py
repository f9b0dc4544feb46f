#!/usr/bin/env python3
"""sessions_check.py META SCENARIO: a conversation-mode corpus trace (corpus_trace.cjs with
SESSIONS) against the scenario `fusebox import` wrote from it.

Checks that the scenario replays the traffic as sessions (docs/import.md, "Sessions"): a class
whose arrivals.replay has "turns" and "think"; its sessions' turns, as a multiset, are the
conversations' turn counts the driver drew (every conversation, every turn); and the fitted
think time's mean is within the noise of the mean of the think times the driver drew: three
standard errors of that mean (their standard deviation over the square root of their count),
plus how late the client kept them on average (the gap it kept from a call's settling to its
conversation's next start, less the think time drawn: its timers and event loop); and the
recorded think times (think_ms) are the gaps it kept, one each, their mean within 5 ms. Prints what
it compared; exit 0 when all hold, 1 when one does not, 2 on bad input.
"""
import json
import math
import sys
from collections import Counter


def seconds(v):
    """A scenario duration ("1500ms", "1234567us", a number of milliseconds) in seconds."""
    if isinstance(v, (int, float)):
        return v / 1e3
    for unit, f in (("us", 1e-6), ("ms", 1e-3), ("s", 1.0)):
        if v.endswith(unit):
            return float(v[:-len(unit)]) * f
    raise ValueError("not a duration: %r" % v)


def dist_mean(d):
    """The mean of a scenario distribution of durations, and its form."""
    if not isinstance(d, dict):
        return seconds(d), "constant"
    (form, p), = d.items()
    if form == "exponential":
        return seconds(p["mean"] if isinstance(p, dict) else p), form
    if form == "lognormal":
        med, p99 = seconds(p["median"]), seconds(p["p99"])
        sigma = math.log(p99 / med) / 2.3263478740408408
        return med * math.exp(sigma * sigma / 2), form
    if form == "uniform":
        return (seconds(p["min"]) + seconds(p["max"])) / 2, form
    if form == "empirical":
        v, w = [seconds(x) for x in p["values"]], p.get("weights") or [1] * len(p["values"])
        return sum(a * b for a, b in zip(v, w)) / sum(w), form
    raise ValueError("unknown distribution %r" % form)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    try:
        meta, scn = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
    except (OSError, ValueError) as e:
        print("sessions_check.py: %s" % e, file=sys.stderr)
        return 2
    recs, sess = meta.get("requests"), meta.get("sessions")
    if not sess:
        print("sessions_check.py: %s: no \"sessions\" (not a conversation-mode run)" % sys.argv[1], file=sys.stderr)
        return 2
    if not recs or sum(r.get("think_ms") is not None for r in recs) < 2:
        print("sessions_check.py: %s: fewer than 2 think times in \"requests\"" % sys.argv[1], file=sys.stderr)
        return 2
    fails = 0

    def check(ok, what):
        nonlocal fails
        print("%s %s" % ("ok:  " if ok else "FAIL:", what))
        fails += not ok

    drawn_turns = Counter(Counter(r["session"] for r in recs).values())
    replays = [(c["class"], c["arrivals"]["replay"]) for c in scn.get("traffic", [])
               if "replay" in c.get("arrivals", {})]
    with_sessions = [(n, r) for n, r in replays if "turns" in r and "think" in r]
    check(len(with_sessions) == 1,
          "one class replayed as sessions (arrivals.replay with turns and think): %d of %d replayed classes"
          % (len(with_sessions), len(replays)))
    if len(with_sessions) != 1:
        return 1
    cls, rep = with_sessions[0]
    turns = Counter(rep["turns"])
    check(turns == drawn_turns,
          "class %s: %d sessions of %d requests, turns %s; the driver: %d conversations of %d requests, turns %s"
          % (cls, len(rep["turns"]), sum(rep["turns"]), dict(sorted(turns.items())), sess["conversations"],
             len(recs), dict(sorted(drawn_turns.items()))))
    thinks = [r["think_ms"] / 1e3 for r in recs if r.get("think_ms") is not None]
    kept = [(r["gap_ms"] - r["think_ms"]) / 1e3 for r in recs if r.get("gap_ms") is not None]
    n = len(thinks)
    m = sum(thinks) / n
    sd = math.sqrt(sum((x - m) ** 2 for x in thinks) / (n - 1))
    late = sum(kept) / len(kept) if kept else 0.0
    try:
        fit, form = dist_mean(rep["think"])
    except (ValueError, KeyError, TypeError) as e:
        print("sessions_check.py: %s: traffic[class %s].arrivals.replay.think: %s" % (sys.argv[2], cls, e),
              file=sys.stderr)
        return 2
    tol = 3 * sd / math.sqrt(n) + max(0.0, late)
    check(abs(fit - m) <= tol,
          "think time: fitted %s of mean %.3fs; the driver drew %d of mean %.3fs (sd %.3fs; scripted: "
          "exponential of mean %.3fs), kept %.1f ms late on average: within 3 standard errors and that "
          "lateness (+-%.3fs): off by %.3fs"
          % (form, fit, n, m, sd, sess["think_mean_ms"] / 1e3, 1e3 * late, tol, fit - m))
    # the recorded think times (think_ms), the as-was replay's own: one per gap the client
    # kept (from a call's settling to its conversation's next start), their mean that one's
    # within 5 ms (the spans' ends against the client's own clock)
    rec = rep.get("think_ms") or []
    gaps = [r["gap_ms"] for r in recs if r.get("gap_ms") is not None]
    g = sum(gaps) / len(gaps) if gaps else 0.0
    r = sum(rec) / len(rec) if rec else float("nan")
    check(len(rec) == len(gaps) and abs(r - g) <= 5,
          "recorded think times (think_ms): %d of mean %.1f ms; the client kept %d gaps of mean %.1f ms"
          % (len(rec), r, len(gaps), g))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
