#!/usr/bin/env python3
"""check_fit.py - does an imported scenario's fault timeline match the one that ran?

  check_fit.py SCENARIO TRUTH PROVIDER=TRUTH_PROVIDER... [--offset-ms X] [--edge-ms E]

SCENARIO is what `fusebox import` wrote; TRUTH a scenario (or {"providers": [...]}) whose
providers' faults ran (the mock's timeline, the live run's scenario, litellm_gen.py's
truth, which has "deployments" instead). Times in TRUTH are moved by --offset-ms (the
moment the log's first request arrived, on the truth's clock) before comparing.

For every answering fault that ran (outage, rate_limit, hang, reset): a fitted fault of
the same kind (and status) must overlap it, with both edges within E ms (or within four
times the mean gap between the attempts it hits, 4 / (rate x fraction), when that is
longer: an edge is known only as well as the attempts around it show it) and its fraction
within 3 standard deviations of a proportion over the attempts it covers (its length x
--attempts-per-s, the log's rate of attempts on that provider) plus 0.05; a Retry-After
that ran must be fitted
within 10%. A fitted fault that matches nothing that ran fails too, unless it is noise
(fewer than 3 attempts' worth). Prints one line per comparison; exit 1 on a mismatch.
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
            e = max(edge, 4e3 / (float(opts.get("attempts-per-s", 10)) * t["fraction"]))
            ok = (abs(f["at"] - t["at"]) <= e and abs(f["end"] - t["end"]) <= e and
                  abs(f["fraction"] - t["fraction"]) <= tol)
            if t["retry_after"] is not None:
                ok &= f["retry_after"] is not None and abs(f["retry_after"] - t["retry_after"]) <= 0.1 * t["retry_after"]
            print("%s  %s: %s %s ran %.0f-%.0f ms at %.2f%s, fitted %.0f-%.0f ms at %.3f%s "
                  "(edges within %.0f ms, fraction within %.3f)" %
                  ("ok  " if ok else "BAD ", fitted_name, t["kind"], t["status"] or "", t["at"],
                   t["end"], t["fraction"],
                   " ra %.0f ms" % t["retry_after"] if t["retry_after"] is not None else "",
                   f["at"], f["end"], f["fraction"],
                   " ra %.0f ms" % f["retry_after"] if f["retry_after"] is not None else "",
                   e, tol))
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
