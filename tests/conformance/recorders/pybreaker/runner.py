#!/usr/bin/env python3
"""runner.py - conformance cases run through pybreaker's own code under a fake clock.

    python3 runner.py SRC < cases-without-expect.jsonl > cases.jsonl

SRC is pybreaker's repository (src/pybreaker/__init__.py is imported from it, unmodified).
pybreaker reads the time only through datetime.now(UTC); the module's name `datetime` is
replaced by a subclass whose now() reads the fake clock. Each case's "fusebox" keys say the
mode: "call" (breaker.call(func): the script's `call T OUTCOME [DUR]`, func moving the clock
to T + DUR before it returns or raises) or "calling" (`with breaker.calling():` entered at
`admit T ID` and left at `result T ID OUTCOME`, by returning or by raising). What pybreaker
decided is written as "expect", in the driver's output (tests/diff/resilience/driver.c).
"""
import json
import sys
from datetime import datetime, timedelta, timezone

sys.path.insert(0, sys.argv[1] + "/src")
import pybreaker  # noqa: E402

EPOCH = datetime(2024, 1, 1, tzinfo=timezone.utc)
NOW_US = [0]


class FakeDatetime(datetime):
    @classmethod
    def now(cls, tz=None):
        return EPOCH + timedelta(microseconds=NOW_US[0])


pybreaker.datetime = FakeDatetime


class Failure(Exception):
    """An error answer (raise_for_status) or a timeout."""


class Cancelled(BaseException):
    """The caller gave up (asyncio.CancelledError is a BaseException too)."""


STATE = {"closed": "closed", "open": "open", "half-open": "half_open"}


def tval(us):
    return us // 1000 if us % 1000 == 0 else float(f"{us / 1000:.3f}")


def ms(s):
    return round(float(s) * 1000)


class Recorder(pybreaker.CircuitBreakerListener):
    def __init__(self, out):
        self.out = out
        self.active = True

    def state_change(self, cb, old_state, new_state):
        if self.active and old_state is not None and old_state.name != new_state.name:
            self.out.append({"t": tval(NOW_US[0]), "from": STATE[old_state.name],
                             "to": STATE[new_state.name]})


def raise_for(outcome):
    if outcome == "cancel":
        raise Cancelled()
    if outcome != "ok":
        raise Failure(outcome)


def run(case):
    out = []
    NOW_US[0] = 0
    lib = case["lib"]
    rec = Recorder(out)
    cb = pybreaker.CircuitBreaker(fail_max=lib.get("fail_max", 5),
                                  reset_timeout=lib.get("reset_timeout", 60),
                                  success_threshold=lib.get("success_threshold", 1),
                                  listeners=[rec])
    inflight = {}
    for line in case["script"]:
        f = line.split()
        if f[0] == "call":
            t, outcome = ms(f[1]), f[2]
            end = t + (ms(f[3]) if len(f) == 4 else 0)
            NOW_US[0] = t
            ran = []

            def func():
                ran.append(1)
                out.append({"t": tval(t), "call": "admitted"})  # after open -> half_open
                NOW_US[0] = end
                raise_for(outcome)

            try:
                cb.call(func)
            except (Exception, Cancelled):
                pass
            if not ran:
                out.append({"t": tval(t), "call": "rejected"})
        elif f[0] == "admit":
            t, cid = ms(f[1]), int(f[2])
            NOW_US[0] = t
            ctx = cb.calling()
            try:
                ctx.__enter__()
                inflight[cid] = ctx
                out.append({"t": tval(t), "call": "admitted"})
            except pybreaker.CircuitBreakerError:
                inflight.pop(cid, None)
                out.append({"t": tval(t), "call": "rejected"})
        elif f[0] == "result":
            t, cid, outcome = ms(f[1]), int(f[2]), f[3]
            NOW_US[0] = t
            ctx = inflight.pop(cid, None)
            if ctx is None:
                continue
            try:
                if outcome == "ok":
                    ctx.__exit__(None, None, None)
                else:
                    try:
                        raise_for(outcome)
                    except BaseException as e:  # noqa: B036 - the block's own exception
                        ctx.__exit__(type(e), e, e.__traceback__)
            except (Exception, Cancelled):
                pass
        else:
            raise SystemExit(f"runner.py: {case['name']}: no such command for pybreaker: {line}")
    # Blocks still open when the script ends never finish: closing their generators (as the
    # garbage collector would) throws GeneratorExit into generator_call, which pybreaker counts
    # as a failure. That is after the script, so it is not recorded.
    rec.active = False
    for ctx in inflight.values():
        try:
            ctx.gen.close()
        except (Exception, Cancelled):
            pass
    case["expect"] = out


def main():
    for line in sys.stdin:
        case = json.loads(line)
        run(case)
        sys.stdout.write(json.dumps(case, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main()
