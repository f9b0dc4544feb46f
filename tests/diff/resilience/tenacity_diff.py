"""tenacity_diff.py - the real tenacity (Debian's python3-tenacity) against fusebox's preset.

    /usr/bin/python3 tenacity_diff.py DRIVER CASES_JSON

For each "tenacity" case, one request per script line ("retry OUTCOME K": the
first K attempts end with OUTCOME, -1 for all) runs through fusebox's driver
(the preset's layer fed to core/) and through tenacity.Retrying with a
recording sleep. tenacity is handed the random numbers fusebox drew, so the
jittered waits compare exactly (within 1 us: fusebox counts microseconds).
The outcomes raise stand-ins for the openai exception classes, with openai's
hierarchy, so that retry_if_exception_type(...) is tested as users write it.
Prints "ok NAME" or "not ok NAME: why" per case.
"""
import json
import subprocess
import sys
import types

import tenacity


class APIError(Exception):
    pass


class APIStatusError(APIError):
    pass


class RateLimitError(APIStatusError):
    pass


class InternalServerError(APIStatusError):
    pass


class APIConnectionError(APIError):
    pass


class APITimeoutError(APIConnectionError):
    pass


openai = types.SimpleNamespace(APIError=APIError, RateLimitError=RateLimitError,
                               InternalServerError=InternalServerError,
                               APITimeoutError=APITimeoutError)
RAISES = {"fail": InternalServerError, "ratelimit": RateLimitError, "timeout": APITimeoutError}


def fusebox(driver, case):
    keys = json.dumps(case["fusebox"])[1:-1]
    out = subprocess.run([driver, keys], input="\n".join(case["script"]) + "\n",
                         capture_output=True, text=True, check=True).stdout
    return [json.loads(line) for line in out.splitlines() if line]


def exception_class(name):
    return Exception if name == "Exception" else getattr(openai, name.split(".", 1)[1])


def retrying(lib, sleeps):
    kw = {"sleep": sleeps.append, "reraise": True}
    if "stop_after_attempt" in lib:
        kw["stop"] = tenacity.stop_after_attempt(lib["stop_after_attempt"])
    if "wait" in lib:
        name, args = lib["wait"]
        kw["wait"] = getattr(tenacity, name)(**args) if isinstance(args, dict) \
            else getattr(tenacity, name)(args)
    if "retry_if_exception_type" in lib:
        kinds = tuple(exception_class(n) for n in lib["retry_if_exception_type"])
        kw["retry"] = tenacity.retry_if_exception_type(kinds)
    return tenacity.Retrying(**kw)


def library(case, mine):
    draws, cur = [], []
    for e in mine:
        if "retry" in e:
            cur += e["u"]
        elif "attempts" in e:
            draws.append(cur)
            cur = []
    log = []
    for line, us in zip(case["script"], draws):
        _, outcome, k = line.split()
        k = int(k)
        us = list(us)

        def uniform(a, b):
            if not us:
                raise AssertionError("tenacity drew more random numbers than fusebox")
            return a + (b - a) * us.pop(0)

        tenacity.wait.random.uniform = uniform
        sleeps, attempts = [], [0]

        def call():
            attempts[0] += 1
            if k < 0 or attempts[0] <= k:
                raise RAISES[outcome]()
            return "ok"

        end = "success"
        try:
            retrying(case["lib"], sleeps)(call)
        except APIError:
            stop = case["lib"].get("stop_after_attempt")
            end = "attempts" if stop is not None and attempts[0] >= stop else "not_retryable"
        for n, s in enumerate(sleeps, 1):
            log.append({"retry": n, "delay_us": round(s * 1e6)})
        log.append({"attempts": attempts[0], "end": end})
    return log


def differ(mine, theirs):
    for i in range(max(len(mine), len(theirs))):
        a = dict(mine[i]) if i < len(mine) else None
        b = theirs[i] if i < len(theirs) else None
        if a is not None:
            a.pop("u", None)
        same = a is not None and b is not None and a.keys() == b.keys() and all(
            abs(a[k] - b[k]) <= 1 if k == "delay_us" else a[k] == b[k] for k in a)
        if not same:
            return "entry %d: fusebox %s, tenacity %s" % (i, a, b)
    return None


def main():
    driver, cases_file = sys.argv[1:3]
    with open(cases_file) as f:
        cases = json.load(f)["tenacity"]
    for case in cases:
        try:
            mine = fusebox(driver, case)
            why = differ(mine, library(case, mine))
        except Exception as e:  # a crash is a failed case, with its reason
            why = "%s: %s" % (type(e).__name__, e)
        print("not ok %s: %s" % (case["name"], why) if why else "ok " + case["name"])


main()
