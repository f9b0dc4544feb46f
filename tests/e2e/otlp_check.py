#!/usr/bin/env python3
"""otlp_check.py TRACE REPORT - is TRACE (from `fusebox live --otlp`) OTLP/JSON that says what
REPORT (the same run's report.json) says?

Checks the layout of opentelemetry-proto v1.11.0's JSON encoding (resourceSpans[].scopeSpans[]
.spans[], lowerCamelCase keys, hex ids, integer enums, int64 as decimal strings, attributes as
{key, value: {stringValue|intValue|doubleValue|boolValue|arrayValue}}), the span tree (one root
per logical request, every attempt its child, inside its time), the attributes the semantic
conventions require, and that the counts match the report: one root span per request, one child
per attempt, per variant. Prints what it checked, or the first problem (exit 1).
"""
import json
import re
import sys

HEX32 = re.compile(r"^[0-9a-f]{32}$")
HEX16 = re.compile(r"^[0-9a-f]{16}$")
DIGITS = re.compile(r"^-?[0-9]+$")
VALUE_KINDS = {"stringValue", "intValue", "doubleValue", "boolValue", "arrayValue"}
SPAN_KEYS = {"traceId", "spanId", "parentSpanId", "name", "kind", "startTimeUnixNano",
             "endTimeUnixNano", "attributes", "status"}


class Bad(Exception):
    pass


def need(cond, what):
    if not cond:
        raise Bad(what)


def value_of(v, where):
    need(isinstance(v, dict) and len(v) == 1 and next(iter(v)) in VALUE_KINDS,
         f"{where}: a value is one of {sorted(VALUE_KINDS)}: {v}")
    kind, x = next(iter(v.items()))
    if kind == "stringValue":
        need(isinstance(x, str), f"{where}: stringValue is a string")
    elif kind == "intValue":
        need(isinstance(x, str) and DIGITS.match(x), f"{where}: intValue is a decimal string")
        x = int(x)
    elif kind == "doubleValue":
        need(isinstance(x, (int, float)) and not isinstance(x, bool), f"{where}: doubleValue")
    elif kind == "boolValue":
        need(isinstance(x, bool), f"{where}: boolValue is true or false")
    else:
        need(isinstance(x, dict) and isinstance(x.get("values"), list), f"{where}: arrayValue")
        x = [value_of(e, where) for e in x["values"]]
    return x


def attributes(lst, where):
    need(isinstance(lst, list), f"{where}: attributes is a list")
    out = {}
    for a in lst:
        need(isinstance(a, dict) and set(a) == {"key", "value"}, f"{where}: {{key, value}}: {a}")
        need(a["key"] not in out, f"{where}: attribute {a['key']} twice")
        out[a["key"]] = value_of(a["value"], f"{where} {a['key']}")
    return out


def span_of(s, where):
    need(isinstance(s, dict) and set(s) <= SPAN_KEYS, f"{where}: unknown keys {set(s) - SPAN_KEYS}")
    need(HEX32.match(s.get("traceId", "")) and s["traceId"] != "0" * 32, f"{where}: traceId")
    need(HEX16.match(s.get("spanId", "")) and s["spanId"] != "0" * 16, f"{where}: spanId")
    need("parentSpanId" not in s or HEX16.match(s["parentSpanId"]), f"{where}: parentSpanId")
    need(s.get("kind") == 3, f"{where}: kind is 3 (SPAN_KIND_CLIENT)")
    for k in ("startTimeUnixNano", "endTimeUnixNano"):
        need(isinstance(s.get(k), str) and DIGITS.match(s[k]), f"{where}: {k} a decimal string")
    start, end = int(s["startTimeUnixNano"]), int(s["endTimeUnixNano"])
    need(1e18 < start <= end, f"{where}: start {start} <= end {end}, unix nanoseconds")
    need("status" not in s or s["status"] == {"code": 2}, f"{where}: status is {{code: 2}}")
    a = attributes(s.get("attributes"), where)
    need("error.type" in a or "status" not in s, f"{where}: an error status has an error.type")
    return start, end, a


def check_root(a, where):
    for k in ("gen_ai.operation.name", "gen_ai.provider.name", "gen_ai.request.model",
              "fusebox.outcome", "fusebox.attempts"):
        need(k in a, f"{where}: root span has {k}")
    need(a["gen_ai.operation.name"] == "chat", f"{where}: operation chat")
    need(a["gen_ai.provider.name"] in ("openai", "anthropic"), f"{where}: a well-known provider")
    ok = a["fusebox.outcome"] in ("success", "degraded")
    need(ok == ("error.type" not in a), f"{where}: error.type if and only if it failed")


def check_child(a, where):
    for k in ("http.request.method", "server.address", "server.port", "url.full",
              "gen_ai.operation.name", "gen_ai.provider.name", "gen_ai.request.model"):
        need(k in a, f"{where}: attempt span has {k}")
    need(a.get("http.request.resend_count", 1) >= 1, f"{where}: resend_count >= 1 when set")
    status = a.get("http.response.status_code")
    if status is not None and status >= 400:
        need(a.get("error.type") == str(status), f"{where}: error.type is the status")


def check_variant(rs, where, summary):
    need(set(rs) == {"resource", "scopeSpans"}, f"{where}: resource and scopeSpans")
    res = attributes(rs["resource"]["attributes"], where + " resource")
    need(res.get("service.name") == "fusebox-live", f"{where}: service.name")
    ss = rs["scopeSpans"]
    need(isinstance(ss, list) and len(ss) == 1 and ss[0]["scope"]["name"] == "fusebox",
         f"{where}: one scope, fusebox")
    roots, children, ids = {}, [], set()
    for i, s in enumerate(ss[0]["spans"]):
        w = f"{where} span {i}"
        start, end, a = span_of(s, w)
        need(s["spanId"] not in ids, f"{w}: spanId unique")
        ids.add(s["spanId"])
        if "parentSpanId" in s:
            check_child(a, w)
            children.append((s, start, end, a, w))
        else:
            check_root(a, w)
            need(s["traceId"] not in roots, f"{w}: one root per trace")
            roots[s["traceId"]] = (s, start, end, a)
    resends = {}
    for s, start, end, a, w in children:
        root = roots.get(s["traceId"])
        need(root is not None and s["parentSpanId"] == root[0]["spanId"], f"{w}: its root is there")
        need(root[1] <= start and end <= root[2], f"{w}: inside its root's time")
        resends.setdefault(s["traceId"], []).append(a.get("http.request.resend_count", 0))
    for t, rc in resends.items():
        need(sorted(rc) == list(range(len(rc))), f"{where}: trace {t} resend counts {sorted(rc)}")
        need(roots[t][3]["fusebox.attempts"] == len(rc), f"{where}: trace {t}: attempts")
    need(len(roots) == summary["requests"],
         f"{where}: {len(roots)} root spans for {summary['requests']} requests")
    need(len(children) == summary["attempts"],
         f"{where}: {len(children)} attempt spans for {summary['attempts']} attempts")
    return res["fusebox.variant"], len(roots), len(children)


def main():
    doc = json.load(open(sys.argv[1]))
    report = json.load(open(sys.argv[2]))
    try:
        need(set(doc) == {"resourceSpans"}, "the top level is {resourceSpans}")
        variants = report["variants"]
        need(len(doc["resourceSpans"]) == len(variants), "one resourceSpans entry per variant")
        for i, rs in enumerate(doc["resourceSpans"]):
            name = attributes(rs["resource"]["attributes"], "resource")["fusebox.variant"]
            v, r, c = check_variant(rs, f"resourceSpans[{i}] ({name})",
                                    variants[name]["summary"])
            print(f"{v}: {r} requests, {c} attempts")
    except (Bad, KeyError, TypeError) as e:
        print(f"not OTLP/JSON as it should be: {e}")
        sys.exit(1)


main()
