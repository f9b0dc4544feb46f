#!/usr/bin/env python3
"""stress_caps.py DIR - one scenario per cap, for tests/e2e/stress.sh: DIR/NAME.json, each a
small scenario taken just past one cap (the limits.* that stop a run, the loader's array and
count caps), and on stdout one line per scenario: NAME, a tab, the text its error must hold.
The replayed arrivals' cap (1,000,000) is left to tests/unit/test_scenario.c: its file would
be megabytes.
"""
import copy
import json
import sys

OUT = sys.argv[1]
BASE = {
    "name": "cap", "seed": 1, "duration": "1m",
    "traffic": [{"class": "chat", "arrivals": {"poisson": "20/s"}, "prompt_tokens": 100,
                 "completion_tokens": 50}],
    "pods": {"count": 2, "workers": 8, "queue": 16, "request_timeout": "30s"},
    "providers": [{"name": "p0", "latency": {"ttft": "200ms"}, "capacity": {"concurrency": 100}}],
    "policy": {"fallback": ["p0"]},
    "variants": {"v": {}},
}


def case(name, says, edit):
    sc = copy.deepcopy(BASE)
    edit(sc)
    with open(f"{OUT}/{name}.json", "w") as f:
        json.dump(sc, f)
    print(f"{name}\t{says}")


def stuck(sc, limits):
    """A provider that answers after the run: every request stays in flight."""
    sc["providers"][0]["latency"]["ttft"] = "10m"
    sc["pods"]["workers"] = 1000
    sc["limits"] = limits


def many(n, item):
    return [item(i) for i in range(n)]


def layers(sc):
    del sc["policy"]  # with layers, the chain belongs inside one
    layer = lambda i: {"name": f"l{i}", "retry": {"attempts": 2}}  # noqa: E731
    sc["variants"] = {"v": {"layers": many(5, layer)}}


def serial(sc):
    sc["traffic"][0].update(serial=True, arrivals={"constant": "1000/s"})
    sc["providers"][0]["latency"]["ttft"] = "10m"
    sc["limits"] = {"requests": 100}


T0 = BASE["traffic"][0]
P0 = BASE["providers"][0]
# the caps that stop a run: exit 2, the report marked incomplete
case("in_flight", "in-flight cap reached (limits.in_flight = 50)",
     lambda sc: stuck(sc, {"in_flight": 50}))
case("events", "event queue cap reached (limits.events = 64)",
     lambda sc: stuck(sc, {"events": 64}))
case("requests", "request cap reached (limits.requests = 100)",
     lambda sc: sc.update(limits={"requests": 100}))
case("serial_backlog", "a serial client's backlog exceeds limits.requests (100)", serial)
# the caps the loader checks: exit 2 before anything runs
case("duration", "1m of simulated traffic exceeds limits.duration (30s)",
     lambda sc: sc.update(limits={"duration": "30s"}))
case("classes", "at most 16 traffic classes",
     lambda sc: sc.update(traffic=many(17, lambda i: dict(T0, **{"class": f"c{i}"}))))
case("variants", "at most 16 variants",
     lambda sc: sc.update(variants={f"v{i}": {} for i in range(17)}))
case("providers", "at most 8 providers",
     lambda sc: sc.update(providers=many(9, lambda i: dict(P0, name=f"p{i}"))))
case("faults", "at most 32 faults per provider",
     lambda sc: sc["providers"][0].update(faults=many(33, lambda i: {
         "at": f"{i}s", "for": "1s", "outage": {"status": 503}})))
case("expect", "at most 64 expectations",
     lambda sc: sc.update(expect=["v.success_rate >= 0.5"] * 65))
case("ramp", "at most 32 ramp points",
     lambda sc: sc["traffic"][0].update(ramp=many(33, lambda i: {"at": f"{i}s", "rate": "10/s"})))
case("spikes", "at most 32 spikes",
     lambda sc: sc["traffic"][0].update(spikes=many(33, lambda i: {
         "at": f"{i}s", "for": "1s", "rate": "30/s"})))
case("bursts", "at most 32 bursts",
     lambda sc: sc["traffic"][0].update(bursts=many(33, lambda i: {"at": f"{i}s", "count": 2})))
case("layers", "at most 4 layers in a stack", layers)
case("retry_on", "at most 16 entries",
     lambda sc: sc.update(variants={"v": {"retry": {"attempts": 2,
                                                    "retry_on": many(17, lambda i: 500 + i)}}}))
case("store_outages", "at most 32 store outages",
     lambda sc: sc.update(breaker_store={"outages": many(33, lambda i: {
         "at": f"{i}s", "for": "1s"})}))
case("pods", "pods.count: expected an integer in [1, 10000]",
     lambda sc: sc["pods"].update(count=10001))
