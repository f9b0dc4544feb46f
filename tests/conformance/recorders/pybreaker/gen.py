#!/usr/bin/env python3
"""gen.py - the pybreaker conformance cases, without their "expect" (runner.py adds it).

    python3 gen.py --seed SEED --random N > cases.jsonl

The named edge cases of both modes, then N random sequences in mode "call" and N in mode
"calling", drawn from SEED (Python's random.Random: the same seed writes the same cases).
"call": sequential `call T OUTCOME [DUR]` lines, each starting after the previous one ended
(call() holds the breaker's lock for the whole call, so calls cannot overlap). "calling":
`admit T ID` / `result T ID OUTCOME`, overlapping. There are no `state` lines: pybreaker's
state moves from open to half-open only when a call is made.
"""
import argparse
import json
import random
import sys


def config(mode="call", fail_max=None, reset_ms=None, success_threshold=None):
    """The preset's keys and pybreaker's keyword arguments (reset_ms: milliseconds)."""
    fb = {"preset": "pybreaker"}
    lib = {}
    if fail_max is not None:
        fb["fail_max"] = lib["fail_max"] = fail_max
    if reset_ms is not None:
        fb["reset_timeout"] = lib["reset_timeout"] = round(reset_ms / 1000, 6)
    if success_threshold is not None:
        fb["success_threshold"] = lib["success_threshold"] = success_threshold
    if mode == "calling":
        fb["mode"] = "calling"
    lib["calls"] = "breaker.call(func)" if mode == "call" else "with breaker.calling():"
    return fb, lib


def case(name, cfg, script, **extra):
    fb, lib = cfg
    c = {"name": name}
    c.update(extra)
    c.update({"fusebox": fb, "lib": lib, "script": script})
    return c


def edge_cases():
    E = []
    C = "call: "
    E.append(case(C + "fail_max 5: 4 failures stay closed, the 5th opens", config(),
                  [f"call {i} fail" for i in range(6)]))
    E.append(case(C + "a success resets the counter", config(fail_max=3),
                  ["call 0 fail", "call 1 fail", "call 2 ok", "call 3 fail", "call 4 fail",
                   "call 5 fail", "call 6 ok"]))
    E.append(case(C + "fail_max 1: the first failure opens", config(fail_max=1),
                  ["call 0 ratelimit", "call 1 ok"]))
    for before, label in ((1, "1 ms"), (0.001, "1 us")):
        E.append(case(C + f"reset_timeout 1 s: rejected {label} before, half-open exactly at it",
                      config(fail_max=1, reset_ms=1000),
                      ["call 10 fail", f"call {1010 - before:.3f} ok", "call 1010 ok",
                       "call 1011 fail"]))
    E.append(case(C + "reset_timeout 60 s by default", config(fail_max=1),
                  ["call 0 fail", "call 59999.999 ok", "call 60000 ok"]))
    E.append(case(C + "opened_at is when the failing call ended", config(fail_max=1, reset_ms=1000),
                  ["call 0 fail 500", "call 1499 ok", "call 1500 ok 20"]))
    E.append(case(C + "half-open: a failure opens again from its end",
                  config(fail_max=1, reset_ms=100),
                  ["call 0 fail", "call 100 fail 30", "call 229 ok", "call 230 ok"]))
    E.append(case(C + "success_threshold 3: three successes close, one failure before reopens",
                  config(fail_max=1, reset_ms=100, success_threshold=3),
                  ["call 0 fail", "call 100 ok", "call 101 ok", "call 102 fail", "call 202 ok",
                   "call 203 ok", "call 204 ok", "call 205 fail"]))
    E.append(case(C + "after closing, the counter starts at 0",
                  config(fail_max=2, reset_ms=100),
                  ["call 0 fail", "call 1 fail", "call 101 ok", "call 102 fail", "call 103 ok",
                   "call 104 fail", "call 105 fail"]))
    E.append(case(C + "a timeout and a 429 are failures",
                  config(fail_max=2), ["call 0 ratelimit", "call 1 fail 30", "call 40 ok"]))
    G = "calling: "
    E.append(case(G + "half-open admits every caller",
                  config("calling", fail_max=1, reset_ms=100),
                  ["admit 0 0", "result 1 0 fail", "admit 101 1", "admit 102 2", "admit 103 3",
                   "result 104 2 ok", "admit 105 4", "result 106 1 ok", "result 107 3 ok"]))
    E.append(case(G + "a closed call's failure in half-open re-opens (the counter is still at fail_max)",
                  config("calling", fail_max=2, reset_ms=100),
                  ["admit 0 0", "admit 0 1", "admit 0 2", "result 1 0 fail", "result 2 1 fail",
                   "admit 102 3", "result 103 2 fail", "admit 104 4", "admit 203 5",
                   "result 204 5 ok"]))
    E.append(case(G + "a closed call's failure in open re-opens from now",
                  config("calling", fail_max=1, reset_ms=1000),
                  ["admit 0 0", "call 1 fail", "result 500 0 fail", "admit 1001 1", "admit 1499.999 2",
                   "admit 1500 3", "result 1501 3 ok"]))
    E.append(case(G + "a half-open call's failure after the breaker closed opens it",
                  config("calling", fail_max=1, reset_ms=100),
                  ["call 0 fail", "admit 100 0", "admit 100 1", "result 101 0 ok",
                   "admit 102 2", "result 103 1 fail", "admit 104 3", "result 105 2 ok"]))
    E.append(case(G + "a half-open call's success closes an open breaker",
                  config("calling", fail_max=1, reset_ms=100),
                  ["call 0 fail", "admit 100 0", "admit 100 1", "result 101 0 fail",
                   "admit 102 2", "result 103 1 ok", "admit 104 3", "result 105 3 ok"]))
    E.append(case(G + "success_threshold 2: the successes of half-open calls count, a closed call's do not",
                  config("calling", fail_max=1, reset_ms=100, success_threshold=2),
                  ["admit 0 0", "admit 0 1", "result 1 0 fail", "admit 101 2", "admit 101 3",
                   "result 102 1 ok", "result 103 2 ok", "admit 104 4", "result 105 3 ok",
                   "admit 106 5"]))
    E.append(case(G + "a success resets the counter: a late closed failure then does not re-open",
                  config("calling", fail_max=2, reset_ms=100, success_threshold=2),
                  ["admit 0 0", "admit 0 1", "admit 0 2", "result 1 0 fail", "result 2 1 fail",
                   "admit 102 3", "result 103 3 ok", "result 104 2 fail", "admit 105 4"]))
    E.append(case(G + "a cancelled block is a failure",
                  config("calling", fail_max=1, reset_ms=100),
                  ["admit 0 0", "result 1 0 cancel", "admit 2 1", "admit 101 2",
                   "result 102 2 cancel", "admit 103 3"]))
    E.append(case(G + "a timeout and a 429 are failures",
                  config("calling", fail_max=2),
                  ["admit 0 0", "admit 0 1", "result 30 0 timeout", "result 31 1 ratelimit",
                   "admit 32 2"]))
    E.append(case(G + "many in flight in closed: fail_max reached by the 5th, the 6th re-opens",
                  config("calling", reset_ms=1000),
                  [f"admit 0 {i}" for i in range(6)] + [f"result {10 + i} {i} fail" for i in range(6)]
                  + ["admit 1014 6", "admit 1015 7"]))
    return E


def tstr(t):
    return f"{t:.3f}".rstrip("0").rstrip(".")


def gap(rng, reset_ms):
    r = rng.random()
    if r < 0.45:
        return rng.randint(0, 20)
    if r < 0.55:
        return 0
    if r < 0.8:
        return reset_ms + rng.choice([-1, -0.001, 0, 0, 0.001, 1])
    if r < 0.9:
        return rng.randint(0, 3000) + rng.randint(0, 999) / 1000
    return rng.randint(20, int(reset_ms) + 50)


def random_config(rng, mode):
    fail_max = rng.choice([None, 1, 1, 2, 3, 5])
    reset = rng.choice([None, rng.randint(1, 100), rng.randint(100, 3000),
                        rng.randint(1000, 3000000) / 1000])
    st = rng.choice([None, 1, 2, 3])
    return config(mode, fail_max, reset, st), (60000 if reset is None else reset)


def random_call(i, rng):
    cfg, reset_ms = random_config(rng, "call")
    t, script = 0.0, []
    for _ in range(rng.randint(5, 40)):
        t = round(t + max(gap(rng, reset_ms), 0), 3)
        outcome = rng.choice(["ok"] * 9 + ["fail"] * 9 + ["ratelimit"])
        if rng.random() < 0.3:
            d = rng.choice([1, 5, 30, rng.randint(0, int(reset_ms) + 5)])
            script.append(f"call {tstr(t)} {outcome} {d}")
            t += d
        else:
            script.append(f"call {tstr(t)} {outcome}")
    return case(f"random call {i:04d}", cfg, script, random=i)


def random_calling(i, rng):
    cfg, reset_ms = random_config(rng, "calling")
    t, script, free, flying = 0.0, [], list(range(16)), []
    outcomes = ["ok"] * 9 + ["fail"] * 8 + ["ratelimit", "timeout", "cancel"]
    for _ in range(rng.randint(5, 40)):
        t = round(t + max(gap(rng, reset_ms), 0), 3)
        if flying and (rng.random() < 0.45 or not free):
            cid = flying.pop(rng.randrange(len(flying)))
            free.append(cid)
            script.append(f"result {tstr(t)} {cid} {rng.choice(outcomes)}")
        else:
            cid = free.pop(rng.randrange(len(free)))
            flying.append(cid)
            script.append(f"admit {tstr(t)} {cid}")
    return case(f"random calling {i:04d}", cfg, script, random=i)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--random", type=int, default=2000)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    out = sys.stdout
    for c in edge_cases():
        out.write(json.dumps(c) + "\n")
    for i in range(a.random):
        out.write(json.dumps(random_call(i, rng)) + "\n")
    for i in range(a.random):
        out.write(json.dumps(random_calling(i, rng)) + "\n")


if __name__ == "__main__":
    main()
