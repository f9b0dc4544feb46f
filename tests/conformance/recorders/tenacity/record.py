"""record.py - record tenacity's own decisions for tests/conformance/tenacity-VERSION/.

    python3 record.py TENACITY_DIR OUT_PARENT [SEED [COUNT]]

TENACITY_DIR is tenacity's package folder (Debian's python3-tenacity:
/usr/lib/python3/dist-packages/tenacity); it is imported from there, whatever
else is installed. Each script line "retry OUTCOME K" is one call through
tenacity.Retrying (its first K attempts raise OUTCOME's exception, -1: all) with
a sleep that records instead of sleeping. The outcomes raise stand-ins for the
openai exception classes, with openai's hierarchy, so retry_if_exception_type
is recorded as users write it. tenacity's random numbers are fusebox's
generator (core/rng.c, PCG32) seeded (42, 7), as the replay seeds fusebox's:
each retry records the draws tenacity took for it ("u") and its wait in whole
microseconds, rounded down ("delay_us"). Writes OUT_PARENT/tenacity-VERSION/
cases.jsonl: the named edge cases, then COUNT random sequences drawn from SEED.
"""
import importlib
import json
import math
import os
import sys
import types

M64 = (1 << 64) - 1


class FbRng:
    """core/rng.c's fb_rng_seed and fb_rng_uniform."""

    def __init__(self, seed, stream):
        self.state = 0
        self.inc = ((stream << 1) | 1) & M64
        self.u32()
        self.state = (self.state + seed) & M64
        self.u32()

    def u32(self):
        old = self.state
        self.state = (old * 6364136223846793005 + self.inc) & M64
        x = ((((old >> 18) ^ old) >> 27) & 0xFFFFFFFF)
        rot = old >> 59
        return ((x >> rot) | (x << ((32 - rot) & 31))) & 0xFFFFFFFF

    def uniform(self):
        hi = self.u32()
        lo = self.u32()
        return (((hi << 32) | lo) >> 11) * 2.0 ** -53

    def below(self, n):
        return math.floor(self.uniform() * n)

    def between(self, a, b):
        return a + self.below(b - a + 1)

    def pick(self, xs):
        return xs[self.below(len(xs))]

    def chance(self, p):
        return self.uniform() < p


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
EXCEPTIONS = ["Exception", "openai.APIError", "openai.RateLimitError", "openai.APITimeoutError",
              "openai.InternalServerError"]
WAITS = ["wait_fixed", "wait_exponential", "wait_exponential_jitter", "wait_random_exponential"]


def load(folder):
    folder = os.path.abspath(folder)
    if not os.path.isfile(os.path.join(folder, "__init__.py")):
        sys.exit("record.py: %s is not tenacity's package folder (Debian: apt-get install "
                 "python3-tenacity; /usr/lib/python3/dist-packages/tenacity)" % folder)
    sys.path.insert(0, os.path.dirname(folder))
    mod = importlib.import_module(os.path.basename(folder))
    if os.path.dirname(os.path.abspath(mod.__file__)) != folder:
        sys.exit("record.py: imported tenacity from %s, not %s" % (mod.__file__, folder))
    version = None
    parent = os.path.dirname(folder)
    for name in sorted(os.listdir(parent)):
        if name.startswith("tenacity-") and name.endswith((".dist-info", ".egg-info")):
            version = name[len("tenacity-"):].split(".dist-info")[0].split(".egg-info")[0]
            version = version.split("-py")[0]
    if version is None:
        sys.exit("record.py: no tenacity-VERSION.dist-info or .egg-info beside %s" % folder)
    return mod, version


def exception_class(name):
    return Exception if name == "Exception" else getattr(openai, name.split(".", 1)[1])


def retrying(tenacity, lib, sleeps):
    kw = {"sleep": sleeps.append, "reraise": True}
    if "stop_after_attempt" in lib:
        kw["stop"] = tenacity.stop_after_attempt(lib["stop_after_attempt"])
    for w in WAITS:
        if w in lib:
            args = lib[w]
            kw["wait"] = getattr(tenacity, w)(**args) if isinstance(args, dict) \
                else getattr(tenacity, w)(args)
    if "retry_if_exception_type" in lib:
        kinds = tuple(exception_class(n) for n in lib["retry_if_exception_type"])
        kw["retry"] = tenacity.retry_if_exception_type(kinds)
    return tenacity.Retrying(**kw)


def record(tenacity, lib, script):
    rng = FbRng(42, 7)
    drawn = []

    def random():
        u = rng.uniform()
        drawn.append(u)
        return u

    # random.uniform(a, b) is a + (b - a) * random.random() (CPython's Lib/random.py).
    tenacity.wait.random = types.SimpleNamespace(random=random,
                                                 uniform=lambda a, b: a + (b - a) * random())
    log = []
    for line in script:
        _, outcome, k = line.split()
        k = int(k)
        sleeps, attempts = [], [0]
        draws = []

        def sleep(s):
            sleeps.append(s)
            draws.append(list(drawn))
            del drawn[:]

        def call():
            attempts[0] += 1
            if k < 0 or attempts[0] <= k:
                raise RAISES[outcome]()
            return "ok"

        end = "success"
        try:
            r = retrying(tenacity, lib, [])
            r.sleep = sleep
            r(call)
        except APIError as e:
            # tenacity asks retry= first: an exception it does not retry is raised as it is,
            # whatever the stop; one it retries is raised when stop= says so.
            kinds = tuple(exception_class(n) for n in lib.get("retry_if_exception_type", ["Exception"]))
            end = "attempts" if isinstance(e, kinds) else "not_retryable"
        if drawn:
            raise AssertionError("tenacity drew numbers after its last wait")
        for n, (s, u) in enumerate(zip(sleeps, draws), 1):
            log.append({"retry": n, "delay_us": math.floor(s * 1e6), "u": u})
        log.append({"attempts": attempts[0], "end": end})
    return log


# The named edge cases: (name, tenacity's arguments, script[, why it is skipped: not modelled]).
EDGES = [
    ("stop_after_attempt(3) with wait_exponential_jitter(): 1 + U(0, 1) s, then 2 + U(0, 1) s",
     {"stop_after_attempt": 3, "wait_exponential_jitter": {}},
     ["retry fail -1", "retry fail 1", "retry fail 0"]),
    ("wait_exponential_jitter(initial=0.5, max=3, exp_base=3, jitter=0.25) is capped after the jitter",
     {"stop_after_attempt": 6,
      "wait_exponential_jitter": {"initial": 0.5, "max": 3, "exp_base": 3, "jitter": 0.25}},
     ["retry fail -1", "retry fail -1"]),
    ("wait_exponential_jitter(jitter=0) adds uniform(0, 0): a draw it does not use",
     {"stop_after_attempt": 4, "wait_exponential_jitter": {"jitter": 0}}, ["retry fail -1"]),
    ("wait_exponential(multiplier=1, max=10): 1, 2, 4, 8, 10 s",
     {"stop_after_attempt": 6, "wait_exponential": {"multiplier": 1, "max": 10}},
     ["retry fail -1"]),
    ("wait_exponential with max below the multiplier waits max every time",
     {"stop_after_attempt": 4, "wait_exponential": {"multiplier": 5, "max": 2}}, ["retry fail -1"]),
    ("wait_exponential(exp_base=1) waits the multiplier every time",
     {"stop_after_attempt": 4, "wait_exponential": {"multiplier": 0.3, "exp_base": 1}},
     ["retry fail -1"]),
    ("wait_exponential over 40 attempts: 2^38 s is capped by nothing",
     {"stop_after_attempt": 40, "wait_exponential": {}}, ["retry fail -1"]),
    ("wait_random_exponential(multiplier=0.5, max=4): uniform(0, min(0.5 * 2^(n-1), 4))",
     {"stop_after_attempt": 7, "wait_random_exponential": {"multiplier": 0.5, "max": 4}},
     ["retry fail -1", "retry ratelimit 4"]),
    ("wait_random_exponential defaults: uniform(0, 2^(n-1)) with no cap",
     {"stop_after_attempt": 12, "wait_random_exponential": {}}, ["retry fail -1"]),
    ("wait_fixed(2) and a success on the 3rd call",
     {"stop_after_attempt": 4, "wait_fixed": 2}, ["retry fail 2", "retry timeout -1"]),
    ("wait_fixed(0.001): a millisecond", {"stop_after_attempt": 3, "wait_fixed": 0.001},
     ["retry fail -1"]),
    ("the default wait_none retries at once", {"stop_after_attempt": 5},
     ["retry fail -1", "retry ratelimit 3"]),
    ("stop_after_attempt(1): no retry", {"stop_after_attempt": 1, "wait_fixed": 1},
     ["retry fail -1", "retry fail 0"]),
    ("stop_after_attempt exactly met by the success: the last call succeeds",
     {"stop_after_attempt": 3}, ["retry fail 2", "retry fail 3"]),
    ("no stop (stop_never): a success after 50 failures", {"wait_fixed": 0.5}, ["retry fail 50"]),
    ("retry_if_exception_type(openai.RateLimitError) retries a 429 and raises a 503 at once",
     {"stop_after_attempt": 4, "wait_fixed": 1, "retry_if_exception_type": ["openai.RateLimitError"]},
     ["retry ratelimit -1", "retry fail -1", "retry timeout -1"]),
    ("retry_if_exception_type(openai.InternalServerError, openai.APITimeoutError)",
     {"stop_after_attempt": 3,
      "retry_if_exception_type": ["openai.InternalServerError", "openai.APITimeoutError"]},
     ["retry fail -1", "retry timeout -1", "retry ratelimit -1"]),
    ("retry_if_exception_type(openai.APIError) retries every error",
     {"stop_after_attempt": 2, "retry_if_exception_type": ["openai.APIError"]},
     ["retry fail -1", "retry timeout -1", "retry ratelimit -1"]),
    ("retry_if_exception_type(Exception) retries every error",
     {"stop_after_attempt": 3, "retry_if_exception_type": ["Exception"]},
     ["retry fail -1", "retry timeout 1"]),
    ("wait_exponential_jitter(initial=0) waits the jitter alone", {"stop_after_attempt": 3,
     "wait_exponential_jitter": {"initial": 0}}, ["retry fail -1"],
     "wait_exponential_jitter(initial=0): tenacity waits uniform(0, jitter); fusebox's backoff "
     "cannot start at 0 (0 is its default), so it waits nothing"),
    ("wait_random_exponential(multiplier=0) draws uniform(0, 0)", {"stop_after_attempt": 3,
     "wait_random_exponential": {"multiplier": 0}}, ["retry fail -1"],
     "wait_random_exponential(multiplier=0): both wait 0, but tenacity draws a number for it and "
     "fusebox does not, so later draws differ"),
    ("a non-retried error after retried ones stops at once",
     {"stop_after_attempt": 5, "retry_if_exception_type": ["openai.RateLimitError"]},
     ["retry timeout 1", "retry ratelimit 2"]),
]


def random_case(g):
    lib = {}
    if g.chance(0.85):
        lib["stop_after_attempt"] = g.between(1, 8)
    w = g.below(5)
    nums = [0, 0.001, 0.1, 0.25, 0.5, 1, 2, 3, 10]
    if w == 0:
        lib["wait_fixed"] = g.pick(nums)
    elif w in (1, 3):
        a = {}
        if g.chance(0.6):
            a["multiplier"] = g.pick(nums[1:])
        if g.chance(0.5):
            a["max"] = g.pick(nums[1:] + [60])
        if g.chance(0.4):
            a["exp_base"] = g.pick([1, 1.5, 2, 3])
        lib[WAITS[w]] = a
    elif w == 2:
        a = {}
        if g.chance(0.6):
            a["initial"] = g.pick(nums[1:])
        if g.chance(0.5):
            a["max"] = g.pick(nums[1:] + [60])
        if g.chance(0.4):
            a["exp_base"] = g.pick([1, 1.5, 2, 3])
        if g.chance(0.5):
            a["jitter"] = g.pick([0, 0.1, 1, 5])
        lib[WAITS[w]] = a
    if g.chance(0.4):
        kinds = [e for e in EXCEPTIONS if g.chance(0.35)]
        lib["retry_if_exception_type"] = kinds or [g.pick(EXCEPTIONS)]
    stop = lib.get("stop_after_attempt")
    script = []
    for _ in range(g.between(1, 4)):
        o = g.pick(["fail", "fail", "ratelimit", "timeout"])
        k = g.between(0, (stop or 10) + 1) if stop is None or g.chance(0.4) else -1
        script.append("retry %s %d" % (o, k))
    return lib, script


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: python3 record.py TENACITY_DIR OUT_PARENT [SEED [COUNT]]\n"
                 "  TENACITY_DIR: /usr/lib/python3/dist-packages/tenacity (Debian: python3-tenacity)")
    tenacity, version = load(sys.argv[1])
    out = sys.argv[2]
    seed = int(sys.argv[3]) if len(sys.argv) > 3 else 20
    count = int(sys.argv[4]) if len(sys.argv) > 4 else 2000
    cases = []
    for edge in EDGES:
        cases.append((edge[0], None) + edge[1:])
    g = FbRng(seed, 3)
    for i in range(1, count + 1):
        lib, script = random_case(g)
        cases.append(("random %d" % i, i, lib, script, None))
    folder = os.path.join(out, "tenacity-" + version)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "cases.jsonl"), "w") as f:
        for case in cases:
            name, random, lib, script = case[:4]
            skip = case[4] if len(case) > 4 else None
            line = {"name": name}
            if random is not None:
                line["random"] = random
            if skip:
                line["skip"] = skip
            line.update({"fusebox": dict({"preset": "tenacity"}, **lib), "lib": lib,
                         "script": script, "expect": record(tenacity, lib, script)})
            f.write(json.dumps(line, separators=(",", ":")) + "\n")
    with open(os.path.join(folder, "SOURCE.md"), "w") as f:
        f.write("""# tenacity %(v)s

Recorded from tenacity %(v)s (Debian's python3-tenacity), tenacity.Retrying run
with a recording sleep, by tests/conformance/recorders/tenacity/record.py:

    /usr/bin/python3 tests/conformance/recorders/tenacity/record.py \\
        /usr/lib/python3/dist-packages/tenacity tests/conformance %(seed)d %(count)d

%(edges)d named edge cases, then %(count)d random sequences drawn from seed %(seed)d
(%(n)d cases). "lib" holds tenacity's arguments: stop_after_attempt(n), the wait
function named by its key with its keyword arguments, retry_if_exception_type over
stand-ins for the openai exception classes; "fusebox" the same keys as the preset
takes them. tenacity's random numbers are fusebox's generator (core/rng.c) seeded
(42, 7), as the replay seeds fusebox's: each retry's "u" lists the draws tenacity
took for it, "delay_us" its wait in whole microseconds (rounded down). The edge
cases with a "skip" are recorded but not modelled (docs/presets.md lists them);
the random sequences give initial and multiplier values above 0.
`make conformance-record TENACITY_SRC=DIR` re-records.
""" % {"v": version, "seed": seed, "count": count, "edges": len(EDGES), "n": len(cases)})
    print("%s: %d cases" % (folder, len(cases)))


main()
