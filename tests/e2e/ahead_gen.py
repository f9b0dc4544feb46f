#!/usr/bin/env python3
"""ahead_gen.py SEED DIR N - write N random storm scenarios into DIR (ahead-001.json, ...).

Each is a provider outage met by a retry loop that retries at once (the shape whose
answers the simulator handles ahead of their turn: docs/engine.md, "Answers handled
ahead"), with the knobs that decide where handling ahead must stop drawn at random: the
tick, the request timeout, the attempt timeout against the error latency, the attempt
count, a retry deadline, the fault's kind, status, fraction, retry share and latency, a
second fault, a fallback provider, the capacity (overload after the outage), classes with
their own tokens, and variants that must not go ahead (a backoff, a breaker); every third
is overloaded before its fault, with short attempt timeouts (attempts left in the provider's
queue, served later: they draw from their request's stream).
tests/e2e/ahead.sh runs each with and without handling ahead and compares the bytes.
Seeded: the same SEED writes the same files.
"""
import json
import os
import random
import sys


def dur(rng, lo_ms, hi_ms):
    return "%dms" % rng.randint(lo_ms, hi_ms)


def lognormal(rng, median_ms, spread):
    return {"lognormal": {"median": "%dms" % median_ms, "p99": "%dms" % int(median_ms * spread)}}


def fault(rng, at_s, for_s):
    kind = rng.choice(["outage", "outage", "outage", "rate_limit", "reset"])
    body = {}
    if kind == "outage":
        body["status"] = rng.choice([500, 502, 503, 503, 529])
    if kind != "reset" and rng.random() < 0.2:
        body["retry_after"] = "%ds" % rng.randint(1, 5)
    r = rng.random()
    if r < 0.15:
        body["fraction"] = round(rng.uniform(0.3, 0.95), 2)
    elif r < 0.25:
        body["retry_fraction"] = round(rng.uniform(0.3, 0.95), 2)
    if kind == "outage" and rng.random() < 0.2:
        body["latency"] = lognormal(rng, rng.randint(5, 400), rng.uniform(2, 8))
    return {"at": "%ds" % at_s, "for": "%ds" % for_s, kind: body}


def naive(rng, hazard):
    retry = {"attempts": rng.choice([2, 3, 5, 20, 1000]), "backoff": "none", "retry_after": "ignore"}
    if hazard:
        retry["attempt_timeout"] = dur(rng, 100, 600)
    elif rng.random() < 0.7:
        retry["attempt_timeout"] = dur(rng, 100, 4000)
    if rng.random() < 0.25:
        retry["deadline"] = "%ds" % rng.randint(2, 30)
    return {"description": "retry at once", "retry": retry}


def scenario(rng, i):
    hazard = i % 3 == 0
    minutes = rng.randint(2, 4)
    at_s = rng.randint(10, 60)
    for_s = rng.randint(20, minutes * 60 - at_s)
    faults = [fault(rng, at_s, for_s)]
    if rng.random() < 0.3:
        at2 = rng.randint(at_s, at_s + for_s)
        faults.append(fault(rng, at2, rng.randint(5, 60)))
    chat = {
        "class": "chat",
        "arrivals": {"poisson": "%d/s" % rng.randint(5, 40)},
        "prompt_tokens": {"lognormal": {"median": 800, "p99": 5000}},
        "completion_tokens": {"lognormal": {"median": 200, "p99": 600}},
    }
    traffic = [chat]
    if rng.random() < 0.5:
        traffic.append({"class": "pages", "arrivals": {"poisson": "%d/s" % rng.randint(2, 20)},
                        "target": "none", "service": lognormal(rng, 20, 10)})
    if rng.random() < 0.3:
        traffic.append({"class": "batch", "arrivals": {"poisson": "%d/s" % rng.randint(1, 5)},
                        "prompt_tokens": 2000, "completion_tokens": 100})
    primary = {
        "name": "openai",
        "latency": {"ttft": lognormal(rng, rng.randint(100, 800), rng.uniform(2, 6)),
                    "per_output_token": "5ms",
                    "error": lognormal(rng, rng.randint(5, 600), rng.uniform(1.5, 12))},
        # often overloaded before the fault: attempts time out in its queue, and it keeps them
        "capacity": {"concurrency": rng.randint(2, 60), "queue": rng.randint(0, 300)},
        "faults": faults,
    }
    if hazard:
        # every third: overloaded before the fault, so that requests that retry through it
        # still have attempts queued there (the provider keeps them), served at its own time
        primary["capacity"] = {"concurrency": rng.randint(2, 8), "queue": rng.randint(50, 300)}
        primary["latency"]["ttft"] = lognormal(rng, rng.randint(500, 900), 3)
    if rng.random() < 0.4:
        primary["capacity"]["rpm"] = rng.randint(600, 20000)
    providers = [primary]
    policy = {"fallback": ["openai"]}
    if rng.random() < 0.5:
        providers.append({"name": "anthropic",
                          "latency": {"ttft": lognormal(rng, 600, 4), "per_output_token": "8ms"},
                          "capacity": {"concurrency": rng.randint(50, 400), "queue": 100}})
        policy = {"fallback": ["openai", "anthropic"]}
    variants = {"naive": naive(rng, hazard), "naive2": naive(rng, False)}
    variants["backoff"] = {"description": "must not go ahead: a backoff",
                           "retry": {"attempts": 5, "backoff": {"exponential": {"base": "100ms"}},
                                     "jitter": "full"}}
    variants["breaker"] = {"description": "must not go ahead: a breaker",
                           "retry": {"attempts": 50, "backoff": "none"},
                           "breaker": {"failure_rate": 0.5, "window": "10s", "minimum_calls": 10,
                                       "open": "5s"}}
    return {
        "name": "ahead-%03d" % i,
        "description": "a random storm for tests/e2e/ahead.sh",
        "seed": rng.randint(1, 10**6),
        "duration": "%dm" % minutes,
        "tick": rng.choice(["1s", "1s", "250ms", "5s"]),
        "traffic": traffic,
        "pods": {"count": rng.randint(1, 6), "workers": rng.randint(4, 64),
                 "queue": rng.randint(0, 200), "request_timeout": "%ds" % rng.randint(3, 60)},
        "providers": providers,
        "policy": policy,
        "variants": variants,
    }


def main():
    seed, out, n = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    rng = random.Random(seed)
    os.makedirs(out, exist_ok=True)
    for i in range(1, n + 1):
        with open(os.path.join(out, "ahead-%03d.json" % i), "w") as f:
            json.dump(scenario(rng, i), f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
