#!/usr/bin/env python3
"""schema_cases.py DIR - write the schema-versus-loader cases for tests/e2e/schema.sh.

Every case is one small valid scenario (BASE) changed in one place. DIR/valid/NAME.json
must pass both docs/scenario.schema.json and `fusebox validate`; DIR/invalid/NAME.json
must fail both, and DIR/invalid/NAME.path holds the start of the loader's message
after the file name (the JSON path it must name). DIR/loader-only/ holds files that break
a rule between values, which a JSON Schema cannot state: the schema accepts them, the
loader rejects them with the path in NAME.path.
"""
import copy
import json
import os
import sys

BASE = {
    "$schema": "../docs/scenario.schema.json",
    "name": "schema-case",
    "description": "a small scenario that every case changes in one place",
    "seed": 1,
    "duration": "1m",
    "traffic": [
        {"class": "chat", "arrivals": {"poisson": "5/s"},
         "prompt_tokens": {"lognormal": {"median": 1000, "p99": 4000}}, "completion_tokens": 200},
        {"class": "tool-calls", "arrivals": {"constant": 1}, "target": "prices", "service": "5ms"},
    ],
    "pods": {"count": 2, "workers": 16, "queue": 8, "request_timeout": "30s"},
    "providers": [
        {"name": "primary", "context_window": 128000,
         "latency": {"ttft": {"lognormal": {"median": "500ms", "p99": "2s"}}, "per_output_token": "5ms"},
         "capacity": {"concurrency": 50, "rpm": 6000},
         "price": {"input_per_mtok": 2.5, "output_per_mtok": 10},
         "faults": [{"at": "20s", "for": "10s", "outage": {"status": 503}}]},
        {"name": "backup", "latency": {"ttft": "800ms"}},
        {"name": "prices", "kind": "tool", "latency": {"ttft": "100ms"}, "price": {"per_call": 0.001}},
    ],
    "policy": {
        "retry": {"attempts": 3, "backoff": {"exponential": {"base": "500ms", "max": "10s"}},
                  "jitter": "full"},
        "breaker": {"failure_rate": 0.5, "window": "10s", "minimum_calls": 5, "open": "15s"},
        "fallback": ["primary", "backup"],
    },
    "variants": {"a": {}, "b": {"retry": {"attempts": 2}}},
    "slo": {"latency": "5s"},
    "expect": ["a.success_rate >= 0"],
}

DELETE = object()


def at(doc, path):
    """The parent container and the last key of a path given as a list."""
    cur = doc
    for k in path[:-1]:
        cur = cur[k]
    return cur, path[-1]


def mutate(changes):
    doc = copy.deepcopy(BASE)
    for path, value in changes:
        parent, key = at(doc, path)
        if value is DELETE:
            del parent[key]
        else:
            parent[key] = value
    return doc


P0 = ["providers", 0]
T0 = ["traffic", 0]
VB = ["variants", "b"]
HPA = {"metric": "in_flight", "target": 8, "max": 6}
F0 = ["providers", 0, "faults", 0]
POL = ["policy"]
BRK = ["policy", "breaker"]

# name -> changes; each must be accepted by both
VALID = {
    # a layer given as a library preset: its keys are the preset's table's (docs/presets.md)
    "preset-layers": [(POL, DELETE), (VB, {"layers": [
        {"name": "cb", "preset": "resilience4j", "failureRateThreshold": 50,
         "waitDurationInOpenState": "PT30S", "slidingWindowType": "TIME_BASED", "maxAttempts": 2},
        {"name": "sdk", "preset": "openai-python", "max_retries": 3, "timeout": 60}]})],
    "preset-envoy-objects": [(POL, DELETE), (VB, {"layers": [
        {"name": "gw", "preset": "envoy", "retry_on": "5xx,reset",
         "retry_back_off": {"base_interval": "0.05s"}, "per_try_timeout": {"seconds": 2}}]})],
    "breaker-false": [(BRK, False)],
    "breaker-null": [(BRK, None)],
    "breaker-count-window": [(BRK, {"window": 50, "minimum_calls": 10})],
    "breaker-time-mode-buckets": [(BRK, {"mode": "time", "window": "20s", "buckets": 5,
                                         "slow_call": "3s", "slow_rate": 0.8})],
    "breaker-consecutive-growth": [(BRK, {"consecutive_failures": 3, "open": "5s",
                                          "open_growth": "exponential", "open_max": "2m",
                                          "open_jitter": 0.1, "half_open_probes": 2,
                                          "probe_lease": "10s", "honor_retry_after": False,
                                          "state": "closed"})],
    "breaker-shared": [(BRK + ["scope"], "shared"), (BRK + ["sync_delay"], "250ms")],
    "per-pod-source": [(T0 + ["source"], "per_pod")],
    "shared-source": [(T0 + ["source"], "shared")],
    "serial-client": [(["traffic", 1, "serial"], True)],
    "serial-replay": [(T0 + ["arrivals"], {"replay": {"at_ms": [0, 100, 100, 2500]}}),
                      (T0 + ["serial"], True)],
    "resubmit": [(T0 + ["resubmit"], {"probability": 0.5, "think": {"exponential": "2s"},
                                      "max": 2})],
    "resubmit-defaults": [(T0 + ["resubmit"], {"probability": 1})],
    "autoscale-variant": [(VB + ["autoscale"], {
        "metric": "in_flight", "target": 8, "min": 2, "max": 6, "period": "30s", "window": "1m",
        "tolerance": 0.05, "delay": "10s", "cold_start": "20s",
        "scale_up": {"pods": 1, "period": "1m", "stabilization": "30s", "select": "min"},
        "scale_down": {"percent": 50, "stabilization": "2m"}})],
    "autoscale-policy-utilization": [(POL + ["autoscale"],
                                      {"metric": "utilization", "target": 0.7, "max": 4}),
                                     (["variants", "a", "autoscale"], False)],
    "autoscale-layered": [(POL, DELETE), (VB, {"layers": [{"name": "app"}], "autoscale": HPA})],
    "autoscale-scale-down-disabled": [(VB + ["autoscale"], dict(HPA, scale_down={"select":
                                                                                 "disabled"}))],
    "store-outages": [(BRK + ["scope"], "shared"), (BRK + ["store_outage"], "local"),
                      (["breaker_store"], {"outages": [{"at": "10s", "for": "5s"},
                                                       {"at": "30s", "for": "10s"}]})],
    "store-outage-fail-closed": [(BRK + ["scope"], "shared"),
                                 (BRK + ["store_outage"], "fail_closed")],
    "jitter-proportional": [(POL + ["retry", "jitter"], {"proportional": 0.2})],
    "jitter-decorrelated": [(POL + ["retry", "jitter"], "decorrelated")],
    "backoff-constant": [(POL + ["retry", "backoff"], {"constant": "2s"})],
    "backoff-linear-object": [(POL + ["retry", "backoff"], {"linear": {"base": "1s", "max": "5s"}})],
    "backoff-none": [(POL + ["retry", "backoff"], "none")],
    "backoff-multiplier": [(POL + ["retry", "backoff"],
                            {"exponential": {"base": "100ms", "max": "1m", "multiplier": 3}})],
    "retry-everything": [(POL + ["retry"], {
        "attempts": 5, "cap": "after_jitter", "retry_after": "as_is", "retry_after_max": "2m",
        "giveup_above_max": True, "attempt_timeout": "5s", "deadline": "20s",
        "budget": {"quota": {"capacity": 100, "retry_cost": 5, "timeout_cost": 10,
                             "refund": 1}}})],
    "retry-budget-token-bucket": [(POL + ["retry", "budget"],
                                   {"token_bucket": {"max": 10, "ratio": 0.1}})],
    "names-of-the-rule": [(["name"], "v1.2_b-c")],
    "name-starting-with-a-digit": [(["name"], "9lives")],
    "durations-in-other-units": [(["duration"], "1.5min"), (["tick"], "500ms"),
                                 (["slo", "latency"], ".5s"), (F0 + ["at"], "20000ms"),
                                 (F0 + ["for"], "1e4ms")],
    "durations-compound": [(["duration"], "20m15s"), (["slo", "latency"], "1m0.5s")],
    "rates-in-other-units": [(["traffic", 0, "arrivals", "poisson"], "300/min"),
                             (["traffic", 0, "spikes"], [{"at": "10s", "for": "5s",
                                                          "rate": "0.01/d"}]),
                             (["traffic", 0, "ramp"], [{"at": "0s", "rate": 5},
                                                       {"at": "30s", "rate": "10/s"}])],
    "replayed-arrivals": [(["traffic", 0, "arrivals"], {"replay": {"at_ms": [0, 0, 12.5, 59999]}})],
    "closed-arrivals": [(["traffic", 0, "arrivals"],
                         {"closed": {"users": 20, "think": {"exponential": "2s"}}})],
    "bursts-and-diurnal": [(["traffic", 0, "bursts"], [{"at": "5s", "count": 100},
                                                       {"at": "30s", "count": 50, "over": "2s"}]),
                           (["traffic", 0, "diurnal"], {"amplitude": 0.5, "period": "1h",
                                                        "peak": "0s"})],
    "distributions": [(["traffic", 0, "prompt_tokens"], {"uniform": {"min": 10, "max": 20}}),
                      (["traffic", 0, "completion_tokens"], {"exponential": {"mean": 300}}),
                      (["traffic", 1, "service"], {"constant": "1ms"}),
                      (P0 + ["latency", "error"], {"exponential": {"mean": "20ms"}})],
    "every-fault-kind": [(P0 + ["faults"], [
        {"at": "1s", "for": "1s", "outage": {"status": 529, "fraction": 0.5,
                                             "retry_after": "2s", "error": "overloaded"}},
        {"at": "2s", "for": "1s", "rate_limit": {"fraction": 0.3, "retry_after": "0s",
                                                 "retry_fraction": 0.8, "sampling": "even"}},
        {"at": "3s", "for": "1s", "hang": {"fraction": 0.1, "retry_fraction": 0}},
        {"at": "4s", "for": "1s", "slow": {"factor": 3, "retry_fraction": [0.5, 1]}},
        {"at": "5s", "for": "1s", "brownout": {"capacity": 0.25}},
        {"at": "6s", "for": "1s", "midstream": {"after_tokens": 50, "mode": "cut"}},
        {"at": "7s", "for": "1s", "reset": {}},
        {"at": "8s", "for": "1s", "policy": {"fraction": 0.6}},
        {"at": "9s", "for": "1m", "description": "flapping", "flap": {"period": "10s"}},
        {"at": "10s", "for": "1s", "slow": {"factor": {"lognormal": {"median": 2, "p99": 8}}}},
        {"at": "11s", "for": "1s",
         "slow": {"factor": {"empirical": {"values": [2.2, 4.6], "weights": [3, 1]}}}},
    ])],
    "policy-extras": [(POL + ["degraded"], {"latency": "5ms"}), (POL + ["stream"], "resume"),
                      (POL + ["context_window_check"], True),
                      (POL + ["classify"], {"rate_limit_trips": True, "timeout_trips": False,
                                            "honor_should_retry": False}),
                      (POL + ["rate_limit"], {"primary": {"rpm": 100, "mode": "reject"},
                                              "backup": {"tpm": 100000, "max_wait": "5s"}}),
                      (POL + ["overrides"], {"prices": {"timeout": "2s",
                                                        "breaker": {"consecutive_failures": 2}},
                                             "backup": {"breaker": False}})],
    "class-order-and-stream": [(["traffic", 0, "order"], ["backup", "primary"]),
                               (["traffic", 0, "stream"], True)],
    "provider-extras": [(P0 + ["capacity"], {"concurrency": 10, "queue": 0, "tpm": 1000000,
                                             "overload_status": 529, "retry_after": False}),
                        (P0 + ["keeps_working"], False), (P0 + ["kind"], "llm")],
    "spillover-and-limits": [(["spillover"], {"hold": "10s", "error_margin": 0.05,
                                              "latency_factor": 2}),
                             (["limits"], {"in_flight": 10000, "events": 100000,
                                           "requests": 1000000})],
    "no-variants": [(["variants"], DELETE), (["expect"], ["success_rate >= 0"])],
    "retry-on": [(POL + ["retry", "retry_on"], [429, 503, "timeout", "rejected"])],
    "budget-deposit": [(POL + ["retry", "budget"], {"deposit": {"max": 5, "deposit": 0.2,
                                                              "cost": 1, "threshold": 2}})],
    "budget-retry-breaker": [(POL + ["retry", "budget"], {"retry_breaker": {
        "window": "20s", "buckets": 20, "failure_ratio": 0.2, "minimum_requests": 10}})],
    "layers": [(POL, DELETE), (["variants", "b"], {"layers": [
        {"name": "app", "retry": {"attempts": 2, "attempt_timeout": "20s"}},
        {"name": "gateway", "fallback": ["primary", "backup"],
         "breaker": {"consecutive_failures": 5, "open": "30s"}},
        {"name": "sdk", "retry": {"attempts": 3, "retry_on": [429, 500]}}]})],
    "class-stacks": [(POL, DELETE), (["variants", "b"], {
        "layers": [{"name": "gateway", "fallback": ["primary", "backup"]}, {"name": "sdk"}],
        "classes": {"chat": {"layers": [{"name": "app", "retry": {"attempts": 2}}, "gateway",
                                        "sdk"]},
                    "tool-calls": {"retry": {"attempts": 2}}}})],
    "provider-load-and-codel": [(P0 + ["latency", "load"], {"in_service": 0.01, "queued": 0.001}),
                                (P0 + ["capacity"], {"concurrency": 10, "queue": 100,
                                                     "discipline": "codel",
                                                     "codel": {"target": "100ms",
                                                               "interval": "1s"},
                                                     "efficiency": {"queue_above": 20,
                                                                    "share": 0.6}})],
    "provider-lifo-and-drop-expired": [(P0 + ["capacity", "discipline"], "lifo"),
                                       (["providers", 1, "capacity"],
                                        {"concurrency": 5, "discipline": "drop_expired",
                                         "overload_status": 429})],
    "provider-unlimited-in-service-load": [(["providers", 1, "latency", "load"],
                                            {"in_service": 0.5})],
    # a stack of its own beside the top-level policy, as fusebox run --policy adds one
    "variant-without-top-level-policy": [(["variants", "c"], {
        "inherit_policy": False, "layers": [{"name": "sdk", "retry": {"attempts": 2}}]})],
    "one-layer-variant-without-top-level-policy": [(["variants", "b", "inherit_policy"], False)],
    "concurrency-limits": [(POL + ["concurrency_limit"], {
        "primary": {"algorithm": "aimd", "min": 5, "initial": 10, "max": 100,
                    "backoff_ratio": 0.8, "timeout": "2s", "timeout_drops": True},
        "backup": {"algorithm": "gradient2", "min": 1, "smoothing": 0.3, "queue_size": 2,
                   "long_window": 100, "rtt_tolerance": 2},
        "prices": {"algorithm": "fixed", "limit": 5}})],
    "hedging": [(POL + ["hedging"], {"max_attempts": 3, "delay": "300ms", "target": "next",
                                     "cancel": False})],
    "hedging-percentile-at-once": [(POL + ["hedging"], {"percentile": 95, "window": 50,
                                                        "delay": "0s"})],
    "connections": [(POL + ["connections"], {"max": 20, "per_provider": 10, "keepalive": 5,
                                             "setup": {"lognormal": {"median": "50ms",
                                                                     "p99": "300ms"}}})],
    "provider-network": [(P0 + ["network"], {"latency": {"uniform": {"min": "5ms",
                                                                     "max": "20ms"}}})],
    # the log's figures of an imported incident (fusebox import writes them)
    "observed": [(["observed"], {
        "variant": "a", "requests": 300, "attempts": 340, "retries": 40, "success_rate": 0.99,
        "latency_p50": 0.6, "latency_p90": 1.4, "latency_p99": 3.2,
        "attempts_per_request": {"1": 265, "2": 30, "3": 5}, "status": {"200": 297, "503": 40,
                                                                       "timeout": 3},
        "end": {"success": 297, "exhausted": 3},
        "windows": [{"name": "primary fault 0 (outage)", "start_s": 20, "end_s": 30,
                     "requests": 50, "attempts": 90, "success_rate": 0.96, "latency_p50": 1.1,
                     "latency_p90": 2.0, "latency_p99": 3.0}],
        "noise": {"attempts": 12.5, "latency_p99": 0.4, "attempts/request 2": 0.02}})],
}

# name -> (changes, start of the loader's message after "FILE: ")
INVALID = {
    "preset-unknown-parameter": ([(POL, DELETE), (VB, {"layers": [
        {"name": "sdk", "preset": "openai-python", "max_retrie": 3}]})],
        "variants.b.layers[0].max_retrie: openai-python (openai (PyPI)"),
    "preset-parameter-out-of-range": ([(POL, DELETE), (VB, {"layers": [
        {"name": "sdk", "preset": "openai-python", "max_retries": -1}]})],
        "variants.b.layers[0].max_retries: openai-python: max_retries is an integer in [0, "),
    "preset-unknown-word": ([(POL, DELETE), (VB, {"layers": [
        {"name": "cb", "preset": "resilience4j", "slidingWindowType": "COUNT"}]})],
        "variants.b.layers[0].slidingWindowType: resilience4j: slidingWindowType has no 'COUNT'"),
    "preset-object-unknown-key": ([(POL, DELETE), (VB, {"layers": [
        {"name": "gw", "preset": "envoy", "retry_back_off": {"base_intervl": "0.05s"}}]})],
        "variants.b.layers[0].retry_back_off.base_intervl: envoy (Envoy"),
    "preset-unknown-name": ([(POL, DELETE), (VB, {"layers": [{"name": "sdk", "preset": "openai-pythn"}]})],
                            "variants.b.layers[0].preset: no preset named 'openai-pythn'"),
    "unknown-key": ([(["durration"], "1m")], "durration: unknown key"),
    "unknown-nested-key": ([(P0 + ["capacity", "concurency"], 5)],
                           "providers[0].capacity.concurency: unknown key"),
    "unknown-policy-key": ([(["variants", "b", "retries"], 2)], "variants.b.retries: unknown key"),
    "wrong-type-integer": ([(["pods", "workers"], "16")], "pods.workers: expected an integer"),
    "wrong-type-boolean": ([(P0 + ["keeps_working"], "yes")],
                           "providers[0].keeps_working: expected true or false"),
    "wrong-type-object": ([(["pods"], [])], "pods: expected an object"),
    "negative-duration": ([(F0 + ["at"], "-5s")],
                          "providers[0].faults[0].at: duration \"-5s\" is negative"),
    "bare-number-duration": ([(["pods", "request_timeout"], 30)],
                             "pods.request_timeout: expected a duration string"),
    "duration-without-unit": ([(["slo", "latency"], "5")], "slo.latency: cannot read duration"),
    "zero-duration": ([(["duration"], "0s")], "duration: duration must be greater than zero"),
    "unknown-enum": ([(["variants", "b", "stream"], "buffered")],
                     "variants.b.stream: unknown value \"buffered\""),
    "fraction-above-one": ([(F0 + ["outage", "fraction"], 1.5)],
                           "providers[0].faults[0].outage.fraction: 1.5 is out of range"),
    "retry-fraction-above-one": ([(F0 + ["outage", "retry_fraction"], 1.5)],
                                 "providers[0].faults[0].outage.retry_fraction: 1.5 is out of range"),
    "retry-fraction-item-above-one": ([(F0 + ["outage", "retry_fraction"], [0.5, 1.5])],
                                      "providers[0].faults[0].outage.retry_fraction[1]: 1.5 is "
                                      "out of range"),
    "retry-fraction-empty-list": ([(F0 + ["outage", "retry_fraction"], [])],
                                  "providers[0].faults[0].outage.retry_fraction: expected a "
                                  "number or a list of 1 to 8 numbers"),
    "retry-fraction-on-a-flap": ([(F0, {"at": "1s", "for": "1s",
                                        "flap": {"period": "2s", "retry_fraction": 0.5}})],
                                 "providers[0].faults[0].flap.retry_fraction: unknown key"),
    "slow-factor-below-one": ([(F0, {"at": "1s", "for": "1s", "slow": {"factor": 0.5}})],
                              "providers[0].faults[0].slow.factor: 0.5 is out of range"),
    "slow-factor-unknown-distribution": ([(F0, {"at": "1s", "for": "1s",
                                                "slow": {"factor": {"normal": 2}}})],
                                         "providers[0].faults[0].slow.factor.normal: unknown key"),
    "two-fault-kinds": ([(F0 + ["hang"], {})],
                        "providers[0].faults[0].hang: a fault has exactly one kind"),
    "fault-without-kind": ([(F0 + ["outage"], DELETE)], "providers[0].faults[0]: a fault needs"),
    "missing-arrivals": ([(["traffic", 0, "arrivals"], DELETE)],
                         "traffic[0]: missing required key 'arrivals'"),
    "missing-name": ([(["name"], DELETE)], "missing required key 'name'"),
    "reserved-provider-name": ([(["providers", 1, "name"], "llm"), (POL + ["fallback"], ["primary"])],
                               "providers[1].name: \"llm\" is reserved"),
    "bad-rate": ([(["traffic", 0, "arrivals", "poisson"], "5 per second")],
                 "traffic[0].arrivals.poisson: expected a rate"),
    "replay-negative-time": ([(["traffic", 0, "arrivals"], {"replay": {"at_ms": [5, -1]}})],
                             "traffic[0].arrivals.replay.at_ms[1]: -1 ms is before the start"),
    "replay-time-as-string": ([(["traffic", 0, "arrivals"], {"replay": {"at_ms": ["5s"]}})],
                              "traffic[0].arrivals.replay.at_ms[0]: expected a number"),
    "replay-without-times": ([(["traffic", 0, "arrivals"], {"replay": {}})],
                             "traffic[0].arrivals.replay: missing required key 'at_ms'"),
    "replay-unknown-key": ([(["traffic", 0, "arrivals"], {"replay": {"at_ms": [1], "at_s": [1]}})],
                           "traffic[0].arrivals.replay.at_s: unknown key 'at_s' (did you mean 'at_ms'?)"),
    "two-arrival-kinds": ([(["traffic", 0, "arrivals", "constant"], 2)],
                          "traffic[0].arrivals: expected exactly one of"),
    "consecutive-breaker-with-window": ([(BRK, {"mode": "consecutive", "window": "10s"})],
                                        "variants.a.breaker.window: a consecutive-failures"),
    "time-breaker-without-window": ([(BRK, {"failure_rate": 0.5})],
                                    "variants.a.breaker: a time-window breaker needs"),
    "scope-in-override": ([(POL + ["overrides"], {"backup": {"breaker": {"scope": "shared"}}})],
                          "variants.a.overrides.backup.breaker.scope: unknown key"),
    "breaker-true": ([(BRK, True)], "variants.a.breaker: expected an object"),
    "backoff-none-with-value": ([(POL + ["retry", "backoff"], {"none": "1s"})],
                                "variants.a.retry.backoff.none: \"none\" takes no parameters"),
    "multiplier-on-linear": ([(POL + ["retry", "backoff"],
                               {"linear": {"base": "1s", "multiplier": 2}})],
                             "variants.a.retry.backoff.linear.multiplier: only exponential"),
    "too-many-probes": ([(BRK + ["half_open_probes"], 17)],
                        "variants.a.breaker.half_open_probes: expected an integer in [1, 16]"),
    "bad-variant-name": ([(["variants", "bad name"], {})],
                         "variants.bad name: variant names start with a letter"),
    "variant-name-starts-with-a-digit": ([(["variants", "429-trips"], {})],
                                         "variants.429-trips: variant names start with a letter"),
    "description-not-a-string": ([(["providers", 0, "description"], 5)],
                                 "providers[0].description: expected a string"),
    "fault-description-not-a-string": ([(F0 + ["description"], 5)],
                                       "providers[0].faults[0].description: expected a string"),
    "distribution-two-kinds": ([(["traffic", 0, "prompt_tokens"],
                                 {"constant": 1, "uniform": {"min": 1, "max": 2}})],
                               "traffic[0].prompt_tokens: expected a number or an object"),
    "duration-distribution-number": ([(P0 + ["latency", "ttft"], 500)],
                                     "providers[0].latency.ttft: expected a duration string"),
    "count-distribution-string": ([(["traffic", 0, "completion_tokens"], "200")],
                                  "traffic[0].completion_tokens: expected a number"),
    "expect-not-string": ([(["expect"], [42])], "expect[0]: expected a string"),
    "limiter-without-limit": ([(POL + ["rate_limit"], {"primary": {"mode": "wait"}})],
                              "variants.a.rate_limit.primary: give rpm, tpm or both"),
    "jitter-fraction-above-one": ([(POL + ["retry", "jitter"], {"proportional": 2})],
                                  "variants.a.retry.jitter.proportional: 2 is out of range"),
    "attempts-zero": ([(POL + ["retry", "attempts"], 0)],
                      "variants.a.retry.attempts: expected an integer in [1, 1000]"),
    "status-out-of-range": ([(F0 + ["outage", "status"], 600)],
                            "providers[0].faults[0].outage.status: expected an integer in [100, 599]"),
    "brownout-without-capacity": ([(F0, {"at": "1s", "for": "1s", "brownout": {}})],
                                  "providers[0].faults[0].brownout: missing required key 'capacity'"),
    "retry-on-not-a-status": ([(POL + ["retry", "retry_on"], [42])],
                              "variants.a.retry.retry_on[0]: an HTTP status is an integer"),
    "inherit-policy-not-a-bool": ([(["variants", "b", "inherit_policy"], 0)],
                                  "variants.b.inherit_policy: expected true or false"),
    "inherit-policy-in-the-top-level-policy": ([(POL + ["inherit_policy"], False)],
                                               "policy.inherit_policy: unknown key"),
    "layer-without-name": ([(POL, DELETE), (["variants", "b"], {"layers": [{"retry": {}}]})],
                           "variants.b.layers[0]: missing required key 'name'"),
    "policy-key-beside-layers": ([(POL, DELETE),
                                  (["variants", "b"], {"retry": {"attempts": 2},
                                                       "layers": [{"name": "x"}]})],
                                 "variants.b.retry: with \"layers\""),
    "unknown-layer-key": ([(POL, DELETE), (["variants", "b"], {"layers": [{"name": "x",
                                                                             "retries": 2}]})],
                          "variants.b.layers[0].retries: unknown key"),
    "outage-with-status-200": ([(F0 + ["outage", "status"], 200)],
                               "providers[0].faults[0].outage.status: 200 is not an error status"),
    "overload-status-101": ([(P0 + ["capacity", "overload_status"], 101)],
                            "providers[0].capacity.overload_status: 101 is not an error status"),
    "unknown-discipline": ([(P0 + ["capacity", "discipline"], "drop-expired")],
                           "providers[0].capacity.discipline: unknown value \"drop-expired\""),
    "codel-without-settings": ([(P0 + ["capacity", "discipline"], "codel")],
                               "providers[0].capacity.discipline: \"codel\" needs \"codel\""),
    "codel-settings-without-codel": ([(P0 + ["capacity", "codel"],
                                       {"target": "1s", "interval": "5s"})],
                                     "providers[0].capacity.codel: needs \"discipline\": \"codel\""),
    "codel-without-interval": ([(P0 + ["capacity", "discipline"], "codel"),
                                (P0 + ["capacity", "codel"], {"target": "1s"})],
                               "providers[0].capacity.codel: missing required key 'interval'"),
    "discipline-without-concurrency": ([(["providers", 1, "capacity"], {"discipline": "lifo"})],
                                       "providers[1].capacity.discipline: acts on the queue"),
    "efficiency-without-concurrency": ([(["providers", 1, "capacity"],
                                         {"efficiency": {"queue_above": 1, "share": 0.5}})],
                                       "providers[1].capacity.efficiency: acts on the queue"),
    "efficiency-share-zero": ([(P0 + ["capacity", "efficiency"], {"queue_above": 1, "share": 0})],
                              "providers[0].capacity.efficiency.share: 0 is out of range"),
    "load-unknown-key": ([(P0 + ["latency", "load"], {"in_servce": 0.1})],
                         "providers[0].latency.load.in_servce: unknown key"),
    "resubmit-probability-above-one": ([(T0 + ["resubmit"], {"probability": 1.5})],
                                       "traffic[0].resubmit.probability: 1.5 is out of range"),
    "resubmit-negative-probability": ([(T0 + ["resubmit"], {"probability": -0.1})],
                                      "traffic[0].resubmit.probability: -0.1 is out of range"),
    "resubmit-max-zero": ([(T0 + ["resubmit"], {"probability": 0.5, "max": 0})],
                          "traffic[0].resubmit.max: expected an integer in [1, 100], got 0"),
    "resubmit-max-above-cap": ([(T0 + ["resubmit"], {"probability": 0.5, "max": 101})],
                               "traffic[0].resubmit.max: expected an integer in [1, 100], got 101"),
    "resubmit-negative-think": ([(T0 + ["resubmit"], {"probability": 0.5, "think": "-2s"})],
                                "traffic[0].resubmit.think: duration \"-2s\" is negative"),
    "resubmit-no-probability": ([(T0 + ["resubmit"], {"think": "2s"})],
                                "traffic[0].resubmit: missing required key 'probability'"),
    "resubmit-typo": ([(T0 + ["resubmit"], {"probabilty": 0.5, "probability": 0.5})],
                      "traffic[0].resubmit.probabilty: unknown key 'probabilty' (did you mean "
                      "'probability'?)"),
    "source-unknown": ([(T0 + ["source"], "per-pod")],
                       "traffic[0].source: unknown value \"per-pod\" (did you mean \"per_pod\"?)"),
    "serial-not-boolean": ([(["traffic", 1, "serial"], "yes")],
                           "traffic[1].serial: expected true or false"),
    "autoscale-no-target": ([(VB + ["autoscale"], {"metric": "in_flight", "max": 4})],
                            "variants.b.autoscale: missing required key 'target'"),
    "autoscale-min-zero": ([(VB + ["autoscale"], dict(HPA, min=0))],
                           "variants.b.autoscale.min: expected an integer in [1, 5000], got 0"),
    "autoscale-max-above-cap": ([(VB + ["autoscale"], dict(HPA, max=5001))],
                                "variants.b.autoscale.max: expected an integer in [1, 5000], got 5001"),
    "autoscale-negative-delay": ([(VB + ["autoscale"], dict(HPA, delay="-5s"))],
                                 "variants.b.autoscale.delay: duration \"-5s\" is negative"),
    "autoscale-negative-cold-start": ([(VB + ["autoscale"], dict(HPA, cold_start="-1s"))],
                                      "variants.b.autoscale.cold_start: duration \"-1s\" is "
                                      "negative"),
    "autoscale-zero-period": ([(VB + ["autoscale"], dict(HPA, period="0s"))],
                              "variants.b.autoscale.period: duration must be greater than zero"),
    "autoscale-metric-unknown": ([(VB + ["autoscale"], dict(HPA, metric="cpu"))],
                                 "variants.b.autoscale.metric: unknown value \"cpu\""),
    "autoscale-utilization-above-one": ([(VB + ["autoscale"], dict(HPA, metric="utilization",
                                                                   target=1.5))],
                                        "variants.b.autoscale.target: 1.5 is out of range"),
    "autoscale-tolerance-one": ([(VB + ["autoscale"], dict(HPA, tolerance=1))],
                                "variants.b.autoscale.tolerance: 1 is out of range"),
    "autoscale-true": ([(VB + ["autoscale"], True)], "variants.b.autoscale: expected an object"),
    "autoscale-in-a-layer": ([(POL, DELETE), (VB, {"layers": [{"name": "app", "autoscale": HPA}]})],
                             "variants.b.layers[0].autoscale: unknown key 'autoscale'"),
    "scale-up-select-unknown": ([(VB + ["autoscale"], dict(HPA, scale_up={"select": "fastest"}))],
                                "variants.b.autoscale.scale_up.select: unknown value \"fastest\""),
    "scale-up-negative-pods": ([(VB + ["autoscale"], dict(HPA, scale_up={"pods": -1}))],
                               "variants.b.autoscale.scale_up.pods: expected an integer in [0, 10000], got -1"),
    "store-outage-unknown": ([(BRK + ["scope"], "shared"), (BRK + ["store_outage"], "open")],
                             "variants.a.breaker.store_outage: unknown value \"open\""),
    "breaker-store-no-outages": ([(BRK + ["scope"], "shared"), (["breaker_store"], {})],
                                 "breaker_store: missing required key 'outages'"),
    "breaker-store-negative-at": ([(BRK + ["scope"], "shared"),
                                   (["breaker_store"], {"outages": [{"at": "-1s", "for": "5s"}]})],
                                  "breaker_store.outages[0].at: duration \"-1s\" is negative"),
    "breaker-store-zero-for": ([(BRK + ["scope"], "shared"),
                                (["breaker_store"], {"outages": [{"at": "1s", "for": "0s"}]})],
                               "breaker_store.outages[0].for: duration must be greater than zero"),
    "conclimit-unknown-algorithm": ([(POL + ["concurrency_limit"],
                                      {"primary": {"algorithm": "vegas"}})],
                                    "variants.a.concurrency_limit.primary.algorithm: unknown value"),
    "conclimit-without-algorithm": ([(POL + ["concurrency_limit"], {"primary": {"limit": 5}})],
                                    "variants.a.concurrency_limit.primary: missing required key "
                                    "'algorithm'"),
    "conclimit-fixed-without-limit": ([(POL + ["concurrency_limit"],
                                        {"primary": {"algorithm": "fixed"}})],
                                      "variants.a.concurrency_limit.primary: missing required key "
                                      "'limit'"),
    "conclimit-setting-of-another-algorithm": ([(POL + ["concurrency_limit"], {
        "primary": {"algorithm": "gradient2", "backoff_ratio": 0.9}})],
        "variants.a.concurrency_limit.primary.backoff_ratio: \"backoff_ratio\" is a setting of "
        "the aimd algorithm"),
    "conclimit-backoff-ratio-low": ([(POL + ["concurrency_limit"], {
        "primary": {"algorithm": "aimd", "backoff_ratio": 0.3}})],
        "variants.a.concurrency_limit.primary.backoff_ratio: 0.3 is out of range"),
    "hedging-too-many-attempts": ([(POL + ["hedging"], {"max_attempts": 11})],
                                  "variants.a.hedging.max_attempts: expected an integer in [2, 10]"),
    "hedging-window-without-percentile": ([(POL + ["hedging"], {"window": 10})],
                                          "variants.a.hedging: \"window\" is the percentile's"),
    "hedging-unknown-target": ([(POL + ["hedging"], {"target": "other"})],
                               "variants.a.hedging.target: unknown value \"other\""),
    "connections-without-a-maximum": ([(POL + ["connections"], {"setup": "1s"})],
                                      "variants.a.connections: a pool needs a maximum"),
    "connections-unknown-key": ([(POL + ["connections"], {"max": 5, "idle_timeout": "1s"})],
                                "variants.a.connections.idle_timeout: unknown key"),
    "network-without-latency": ([(P0 + ["network"], {})],
                                "providers[0].network: missing required key 'latency'"),
    # the scenario name never forms a path component (issue 14)
    "name-dot-dot": ([(["name"], "..")], "name: \"..\": a scenario name starts with a letter"),
    "name-dot": ([(["name"], ".")], "name: \".\": a scenario name starts with a letter"),
    "name-empty": ([(["name"], "")], "name: \"\": a scenario name starts with a letter"),
    "name-with-a-slash": ([(["name"], "a/b")], "name: \"a/b\": a scenario name"),
    "name-hidden": ([(["name"], ".x")], "name: \".x\": a scenario name"),
    "name-leading-dash": ([(["name"], "-x")], "name: \"-x\": a scenario name"),
    "name-with-dot-dot-inside": ([(["name"], "a..b")], "name: \"a..b\": a scenario name"),
    # only the documented forms of numbers in durations and rates
    "duration-hex": ([(["slo", "latency"], "0x10s")],
                     "slo.latency: cannot read duration \"0x10s\""),
    "duration-inf": ([(["slo", "latency"], "infs")], "slo.latency: cannot read duration"),
    "duration-signed": ([(["slo", "latency"], "+5s")], "slo.latency: cannot read duration"),
    "duration-compound-smaller-first": ([(["slo", "latency"], "15s1m")],
                                        "slo.latency: cannot read duration \"15s1m\""),
    "duration-exponent-without-digits": ([(["slo", "latency"], "1e+s")],
                                         "slo.latency: cannot read duration"),
    "rate-hex": ([(["traffic", 0, "arrivals", "poisson"], "0x10/s")],
                 "traffic[0].arrivals.poisson: expected a rate"),
    # habits from other tools get a hint (issue 15)
    "failure-rate-as-percent": ([(BRK + ["failure_rate"], 50)],
                                "variants.a.breaker.failure_rate: 50 is out of range [1e-06, 1] "
                                "(rates and shares are fractions: 50% is 0.5)"),
    "observed-bad-status": ([(["observed"], {"variant": "a", "requests": 1, "attempts": 1,
                                              "status": {"99": 1}})],
                            "observed.status.99: an answer is an HTTP status"),
    "observed-bad-end": ([(["observed"], {"variant": "a", "requests": 1, "attempts": 1,
                                           "end": {"ok": 1}})],
                         "observed.end.ok: unknown key"),
    "observed-no-attempts": ([(["observed"], {"variant": "a", "requests": 1})],
                             "observed: missing required key 'attempts'"),
    "observed-negative-noise": ([(["observed"], {"variant": "a", "requests": 1, "attempts": 1,
                                                 "noise": {"attempts": -1}})],
                                "observed.noise.attempts: expected a number >= 0"),
    "max-retries-for-attempts": ([(POL + ["retry", "max_retries"], 3)],
                                 "variants.a.retry.max_retries: unknown key 'max_retries' (fusebox "
                                 "counts attempts, the first call included: \"attempts\": 4)"),
}

# name -> (changes, start of the loader's message): rules between values, which the schema
# cannot state (a time against the duration, a key against another section); the schema
# accepts these files, the loader must not
LOADER_ONLY = {
    "slow-factor-median-below-one": ([(F0, {"at": "1s", "for": "1s", "slow": {"factor": {
        "lognormal": {"median": 0.5, "p99": 2}}}})],
        "providers[0].faults[0].slow.factor: a factor's median must be in [1, 1000] (got 0.5)"),
    "observed-unknown-variant": ([(["observed"], {"variant": "c", "requests": 1, "attempts": 1})],
                                 "observed.variant: no variant \"c\" in the scenario"),
    "replay-out-of-order": ([(["traffic", 0, "arrivals"], {"replay": {"at_ms": [5, 4]}})],
                            "traffic[0].arrivals.replay.at_ms[1]: replayed arrivals must be in "
                            "time order"),
    "replay-at-the-end": ([(["traffic", 0, "arrivals"], {"replay": {"at_ms": [60000]}})],
                          "traffic[0].arrivals.replay.at_ms[0]: an arrival at 60s is at or after "
                          "the end of traffic"),
    "fault-after-the-end": ([(F0 + ["at"], "2m")],
                            "providers[0].faults[0].at: the fault starts at 120s, at or after the "
                            "end of traffic"),
    "fault-at-the-end": ([(F0 + ["at"], "1m")], "providers[0].faults[0].at: the fault starts at 60s"),
    "spike-at-the-end": ([(["traffic", 0, "spikes"], [{"at": "1m", "for": "5s", "rate": 20}])],
                         "traffic[0].spikes[0].at: the spike starts at 60s"),
    "burst-after-the-end": ([(["traffic", 0, "bursts"], [{"at": "90s", "count": 5}])],
                            "traffic[0].bursts[0].at: the burst starts at 90s"),
    "queued-load-without-concurrency": ([(["providers", 1, "latency", "load"], {"queued": 0.1})],
                                        "providers[1].latency.load.queued: acts on the queue"),
    "efficiency-above-the-queue": ([(P0 + ["capacity", "queue"], 10),
                                    (P0 + ["capacity", "efficiency"],
                                     {"queue_above": 10, "share": 0.5})],
                                   "providers[0].capacity.efficiency: queue_above must be below"),
    "class-stack-unknown-layer": ([(POL, DELETE), (["variants", "b"], {
        "layers": [{"name": "x"}], "classes": {"chat": {"layers": ["y"]}}})],
                                  "variants.b.classes.chat.layers[0]: no layer named 'y'"),
    "two-routing-layers": ([(POL, DELETE), (["variants", "b"], {
        "layers": [{"name": "x", "fallback": ["primary"]}, {"name": "y", "fallback": ["backup"]}]})],
                           "variants.b: layers 'x' and 'y' both declare a fallback chain"),
    "autoscale-min-above-max": ([(VB + ["autoscale"], dict(HPA, min=5, max=3))],
                                "variants.b.autoscale.min: more than max pods"),
    "autoscale-count-below-min": ([(VB + ["autoscale"], dict(HPA, min=3))],
                                  "variants.b.autoscale.min: pods.count (2, the pods at the start) "
                                  "must lie in [min, max] = [3, 6]"),
    "autoscale-period-not-whole-seconds": ([(VB + ["autoscale"], dict(HPA, period="1500ms"))],
                                           "variants.b.autoscale.period: a whole number of "
                                           "seconds"),
    "autoscale-window-above-an-hour": ([(VB + ["autoscale"], dict(HPA, window="2h"))],
                                       "variants.b.autoscale.window: at most 1h"),
    "scale-up-no-policy": ([(VB + ["autoscale"], dict(HPA, scale_up={"pods": 0, "percent": 0}))],
                           "variants.b.autoscale.scale_up: give \"pods\", \"percent\" or both"),
    "per-pod-with-autoscale": ([(T0 + ["source"], "per_pod"), (VB + ["autoscale"], HPA)],
                               "traffic[0].source: per-pod sources model a fixed fleet of clients, "
                               "and variant b autoscales"),
    "per-pod-constant": ([(["traffic", 1, "source"], "per_pod")],
                         "traffic[1].source: per-pod sources are Poisson processes"),
    "serial-closed": ([(T0 + ["arrivals"], {"closed": {"users": 5}}), (T0 + ["serial"], True)],
                      "traffic[0].serial: a serial client follows a schedule"),
    "serial-bursts": ([(T0 + ["bursts"], [{"at": "5s", "count": 10}]), (T0 + ["serial"], True)],
                      "traffic[0].serial: a serial client has one call in flight"),
    "serial-per-pod": ([(T0 + ["source"], "per_pod"), (T0 + ["serial"], True)],
                       "traffic[0].serial: a serial client is one source"),
    "store-outage-without-shared": ([(["breaker_store"], {"outages": [{"at": "5s", "for": "5s"}]})],
                                    "breaker_store: no variant has a shared breaker"),
    "store-outage-per-pod-breaker": ([(BRK + ["store_outage"], "local")],
                                     "variants.a.breaker.store_outage: only a shared breaker"),
    "store-outage-after-the-end": ([(BRK + ["scope"], "shared"),
                                    (["breaker_store"], {"outages": [{"at": "2m", "for": "5s"}]})],
                                   "breaker_store.outages[0].at: the store outage starts at 120s"),
    "store-outages-overlap": ([(BRK + ["scope"], "shared"),
                               (["breaker_store"], {"outages": [{"at": "5s", "for": "10s"},
                                                                {"at": "10s", "for": "5s"}]})],
                              "breaker_store.outages[1]: store outages must be in time order"),
    "conclimit-initial-above-max": ([(POL + ["concurrency_limit"], {
        "primary": {"algorithm": "aimd", "initial": 300}})],
        "variants.a.concurrency_limit.primary.initial: 300 is outside [min, max] = [20, 200]"),
    "conclimit-min-above-max": ([(POL + ["concurrency_limit"], {
        "primary": {"algorithm": "gradient2", "min": 50, "max": 10, "initial": 20}})],
        "variants.a.concurrency_limit.primary: min (50) is above max (10)"),
    "conclimit-unknown-provider": ([(POL + ["concurrency_limit"], {
        "primry": {"algorithm": "fixed", "limit": 2}})], "variants.a.concurrency_limit.primry: "),
    "conclimit-outside-the-router": ([(POL, DELETE), (["variants", "b"], {"layers": [
        {"name": "app", "concurrency_limit": {"primary": {"algorithm": "fixed", "limit": 2}}},
        {"name": "gw", "fallback": ["primary", "backup"]}]})],
        "variants.b: layer 'app' is outside the routing layer"),
    "connections-per-provider-above-max": ([(POL + ["connections"], {"max": 2, "per_provider": 3})],
                                           "variants.a.connections.per_provider: 3 is above"),
    "hedging-not-innermost": ([(POL, DELETE), (["variants", "b"], {"layers": [
        {"name": "app", "hedging": {}}, {"name": "sdk"}]})],
        "variants.b: layer 'app': hedging belongs to the innermost layer"),
    "connections-not-innermost": ([(POL, DELETE), (["variants", "b"], {"layers": [
        {"name": "app", "connections": {"max": 4}}, {"name": "sdk"}]})],
        "variants.b: layer 'app': connections belong to the innermost layer"),
    "hedging-with-resumed-streams": ([(POL + ["hedging"], {}), (POL + ["stream"], "resume")],
                                     "variants.a: layer 'policy': hedging and stream \"resume\""),
    "hedging-next-inside-the-router": ([(POL, DELETE), (["variants", "b"], {"layers": [
        {"name": "gw", "fallback": ["primary", "backup"]},
        {"name": "sdk", "hedging": {"target": "next"}}]})],
        "variants.b: layer 'sdk': hedging to the \"next\" provider needs the chain"),
}


def write(path, doc):
    with open(path, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


def main():
    out = sys.argv[1]
    for sub in ("valid", "invalid", "loader-only"):
        os.makedirs(os.path.join(out, sub), exist_ok=True)
    write(os.path.join(out, "valid", "base.json"), BASE)
    for name, changes in VALID.items():
        write(os.path.join(out, "valid", name + ".json"), mutate(changes))
    for sub, cases in (("invalid", INVALID), ("loader-only", LOADER_ONLY)):
        for name, (changes, message) in cases.items():
            write(os.path.join(out, sub, name + ".json"), mutate(changes))
            with open(os.path.join(out, sub, name + ".path"), "w") as f:
                f.write(message + "\n")
    print("%d valid, %d invalid, %d loader-only cases in %s"
          % (len(VALID) + 1, len(INVALID), len(LOADER_ONLY), out))


if __name__ == "__main__":
    main()
