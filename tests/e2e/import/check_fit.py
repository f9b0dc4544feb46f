#!/usr/bin/env python3
"""check_fit.py - does an imported scenario's fault timeline match the one that ran?

  check_fit.py SCENARIO TRUTH PROVIDER=TRUTH_PROVIDER... [--offset-ms X] [--edge-ms E]
               [--attempts-per-s R] [--log TRACE]

SCENARIO is what `fusebox import` wrote; TRUTH a scenario (or {"providers": [...]}) whose
providers' faults ran (the mock's timeline, the live run's scenario, litellm_gen.py's
truth, which has "deployments" instead). Times in TRUTH are moved by --offset-ms (the
moment the log's first request arrived, on the truth's clock) before comparing.

For every answering fault that ran (outage, rate_limit, hang, reset): a fitted fault of
the same kind (and status) must overlap it, with both edges within E ms (or within four
times the mean gap between the attempts it hits, 4 / (rate x fraction), when that is
longer: an edge is known only as well as the attempts around it show it; with --log, the
OTLP trace that was imported, the attempts themselves: an edge is off by chance when the
attempts on that provider between the fitted edge and the true one would have met fewer
than 4 hits on average, attempts x fraction <= 4, the same four hits the rate assumes,
counted where the arrivals actually were: a Poisson stream leaves gaps) and its fraction
within 3 standard deviations of a proportion over the attempts it covers (its length x
--attempts-per-s, the log's rate of attempts on that provider) plus 0.05; a Retry-After
that ran must be fitted
within 10%. A fitted fault that matches nothing that ran fails too, unless it is noise
(fewer than 3 attempts' worth). For every `slow` fault that ran over every answer: a fitted
one over every answer must overlap it, with both edges as above (a fraction of 1) and its
factor within 10% (the wire's own time is not slowed, so a little under). Prints one line
per comparison; exit 1 on a mismatch.
"""
import json
import math
import re
import sys


def dur_ms(s):
    m = re.fullmatch(r"([0-9.]+)(us|ms|s|m|min|h)", s)
    mul = {"us": 1e-3, "ms": 1, "s": 1e3, "m": 6e4, "min": 6e4, "h": 3.6e6}[m.group(2)]
    return float(m.group(1)) * mul


def kinds(faults, offset=0.0):
    out = []
    for f in faults:
        kind = next(k for k in f if k not in ("at", "for"))
        if kind not in ("outage", "rate_limit", "hang", "reset"):
            continue
        body = f[kind]
        status = body.get("status", 429 if kind == "rate_limit" else 503 if kind == "outage" else 0)
        at = dur_ms(f["at"]) if isinstance(f["at"], str) else f["at"] * 1e3
        length = dur_ms(f["for"]) if isinstance(f["for"], str) else f["for"] * 1e3
        ra = body.get("retry_after")
        ra = (dur_ms(ra) if isinstance(ra, str) else ra * 1e3) if ra is not None else None
        out.append({"kind": "hang" if kind == "hang" else kind if kind != "outage" else "status",
                    "status": status, "at": at - offset, "end": at + length - offset,
                    "fraction": body.get("fraction", 1.0), "retry_after": ra})
    for f in out:
        if f["kind"] == "rate_limit":
            f["kind"] = "status"
    return out


def slows(faults, offset=0.0):
    out = []
    for f in faults:
        body = f.get("slow")
        if body is None or body.get("fraction", 1.0) < 1:
            continue
        at = dur_ms(f["at"]) if isinstance(f["at"], str) else f["at"] * 1e3
        length = dur_ms(f["for"]) if isinstance(f["for"], str) else f["for"] * 1e3
        out.append({"at": at - offset, "end": at + length - offset, "factor": body["factor"]})
    return out


def log_attempts(path):
    """The attempts of an OTLP/JSON trace (HTTP spans, else GenAI spans standing for their
    attempt), as {provider: [start ms from the first request]}: the import's clock."""
    d = json.load(open(path))
    spans = [x for r in d["resourceSpans"] for ss in r.get("scopeSpans", []) for x in ss["spans"]]
    attrs = {x["spanId"]: {a["key"]: list(a["value"].values())[0] for a in x.get("attributes", [])}
             for x in spans}
    by_id = {x["spanId"]: x for x in spans}
    genai = [x for x in spans if {"gen_ai.operation.name", "gen_ai.provider.name",
                                  "gen_ai.system"} & set(attrs[x["spanId"]])]
    http = [x for x in spans if "http.request.method" in attrs[x["spanId"]]] or genai
    origin = min(int(x["startTimeUnixNano"]) for x in genai)

    def provider(x):
        while x is not None:
            a = attrs[x["spanId"]]
            for k in ("fusebox.provider", "gen_ai.provider.name", "gen_ai.system"):
                if k in a:
                    return a[k]
            x = by_id.get(x.get("parentSpanId"))
        return None

    out = {}
    for x in http:
        out.setdefault(provider(x), []).append((int(x["startTimeUnixNano"]) - origin) / 1e6)
    return out


def edge_ok(fitted, true, fraction, e, starts):
    """Is a fitted edge as close to the true one as the attempts around it allow?"""
    if abs(fitted - true) <= e[0]:
        return True
    if starts is None:
        return abs(fitted - true) <= e[1]
    lo, hi = min(fitted, true), max(fitted, true)
    return sum(lo < t < hi for t in starts) * fraction <= 4


def truth_faults(truth, name):
    if "deployments" in truth:  # litellm_gen.py: seconds, "status" or "timeout"
        out = []
        for f in truth["deployments"][name]["faults"]:
            kind = "hang" if f.get("timeout") else ("rate_limit" if f["status"] == 429 else "outage")
            body = {"fraction": f["fraction"]}
            if kind != "hang":
                body["status"] = f["status"]
            if f.get("retry_after"):
                body["retry_after"] = "%gms" % (f["retry_after"] * 1e3)
            out.append({"at": "%gms" % (f["at"] * 1e3), "for": "%gms" % (f["for"] * 1e3), kind: body})
        return out
    return next(p for p in truth["providers"] if p["name"] == name).get("faults", [])


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    opts = dict(a[2:].split("=", 1) for a in sys.argv[1:] if a.startswith("--"))
    offset, edge = float(opts.get("offset-ms", 0)), float(opts.get("edge-ms", 1000))
    scenario, truth = json.load(open(args[0])), json.load(open(args[1]))
    bad = 0
    attempts = log_attempts(opts["log"]) if "log" in opts else None
    for pair in args[2:]:
        fitted_name, truth_name = pair.split("=")
        prov = next(p for p in scenario["providers"] if p["name"] == fitted_name)
        fitted = kinds(prov.get("faults", []))
        ran = kinds(truth_faults(truth, truth_name), offset)
        used = set()
        for t in ran:
            cands = [i for i, f in enumerate(fitted) if f["kind"] == t["kind"] and
                     f["status"] == t["status"] and f["at"] < t["end"] and t["at"] < f["end"]]
            if not cands:
                print("MISS  %s: %s %s from %.0f to %.0f ms ran, nothing fitted" %
                      (fitted_name, t["kind"], t["status"] or "", t["at"], t["end"]))
                bad += 1
                continue
            i = max(cands, key=lambda i: min(fitted[i]["end"], t["end"]) - max(fitted[i]["at"], t["at"]))
            f = fitted[i]
            used.add(i)
            n = max(1.0, (f["end"] - f["at"]) / 1e3 * float(opts.get("attempts-per-s", 10)))
            tol = 3 * math.sqrt(max(t["fraction"] * (1 - t["fraction"]), 0.01) / n) + 0.05
            e = (edge, max(edge, 4e3 / (float(opts.get("attempts-per-s", 10)) * t["fraction"])))
            starts = attempts.get(fitted_name, []) if attempts is not None else None
            ok = (edge_ok(f["at"], t["at"], t["fraction"], e, starts) and
                  edge_ok(f["end"], t["end"], t["fraction"], e, starts) and
                  abs(f["fraction"] - t["fraction"]) <= tol)
            if t["retry_after"] is not None:
                ok &= f["retry_after"] is not None and abs(f["retry_after"] - t["retry_after"]) <= 0.1 * t["retry_after"]
            print("%s  %s: %s %s ran %.0f-%.0f ms at %.2f%s, fitted %.0f-%.0f ms at %.3f%s "
                  "(edges within %.0f ms%s, fraction within %.3f)" %
                  ("ok  " if ok else "BAD ", fitted_name, t["kind"], t["status"] or "", t["at"],
                   t["end"], t["fraction"],
                   " ra %.0f ms" % t["retry_after"] if t["retry_after"] is not None else "",
                   f["at"], f["end"], f["fraction"],
                   " ra %.0f ms" % f["retry_after"] if f["retry_after"] is not None else "",
                   e[1] if starts is None else e[0],
                   "" if starts is None else " or 4 hits' worth of the log's attempts", tol))
            bad += not ok
        fitted_slow = slows(prov.get("faults", []))
        for t in slows(truth_faults(truth, truth_name), offset):
            cands = [f for f in fitted_slow if f["at"] < t["end"] and t["at"] < f["end"]]
            if not cands:
                print("MISS  %s: slow %.2fx from %.0f to %.0f ms ran, nothing fitted" %
                      (fitted_name, t["factor"], t["at"], t["end"]))
                bad += 1
                continue
            f = max(cands, key=lambda f: min(f["end"], t["end"]) - max(f["at"], t["at"]))
            e = (edge, max(edge, 4e3 / float(opts.get("attempts-per-s", 10))))
            starts = attempts.get(fitted_name, []) if attempts is not None else None
            ok = (edge_ok(f["at"], t["at"], 1.0, e, starts) and
                  edge_ok(f["end"], t["end"], 1.0, e, starts) and
                  abs(f["factor"] - t["factor"]) <= 0.1 * t["factor"])
            print("%s  %s: slow ran %.0f-%.0f ms at %.2fx, fitted %.0f-%.0f ms at %.2fx (edges "
                  "as above, factor within 10%%)" %
                  ("ok  " if ok else "BAD ", fitted_name, t["at"], t["end"], t["factor"],
                   f["at"], f["end"], f["factor"]))
            bad += not ok
        for i, f in enumerate(fitted):
            n = (f["end"] - f["at"]) / 1e3 * float(opts.get("attempts-per-s", 10))
            if i not in used and f["fraction"] * n >= 3:
                print("EXTRA %s: %s %s fitted %.0f-%.0f ms at %.3f, nothing like it ran" %
                      (fitted_name, f["kind"], f["status"] or "", f["at"], f["end"], f["fraction"]))
                bad += 1
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
