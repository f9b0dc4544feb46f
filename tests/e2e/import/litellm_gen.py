#!/usr/bin/env python3
"""litellm_gen.py OUT TRUTH - LiteLLM StandardLoggingPayload records of a known bad hour.

Writes OUT (JSON lines, one record per call, the fields of LiteLLM's StandardLoggingPayload:
docs.litellm.ai/docs/proxy/logging_spec; litellm/types/utils.py at BerriAI/litellm commit
001c64f) and TRUTH (JSON: the timeline and the policy that produced them), so that
tests/e2e/import.sh can check what `fusebox import` fits against what was there.

The records are made by a small seeded model of a gateway, not by LiteLLM itself (which
does not run here): requests arrive as a Poisson process; each tries the primary
deployment up to ATTEMPTS times (exponential backoff without jitter, a 429's Retry-After
waited as is), then the backup the same way; each attempt meets the deployment's fault
timeline (a share of attempts answered with a status, or hanging until the 10 s client
timeout); answers take a lognormal time to first token plus a time per output token;
streamed requests record their first token in completionStartTime. Deterministic: the same
seed writes the same bytes.
"""
import json
import math
import random
import sys

SEED = 11
DURATION = 600.0  # seconds of arrivals
RATE = 4.0  # requests per second
T0 = 1796000000.0  # unix seconds of the first moment
ATTEMPTS = 3
BASE, MULT = 1.0, 2.0  # backoff: 1 s, 2 s
TIMEOUT = 10.0
RETRY_AFTER = 2.0

DEPLOYMENTS = {
    "openai-primary": {
        "custom_llm_provider": "openai", "model": "gpt-4o", "api_base": "https://api.openai.com/v1",
        "ttft_median": 0.40, "ttft_p99": 1.20, "per_token": 0.012, "error": 0.05,
        "max_input_tokens": 128000, "input_cost_per_token": 2.5e-06, "output_cost_per_token": 1e-05,
        "faults": [
            {"at": 60, "for": 120, "status": 429, "fraction": 0.5, "retry_after": RETRY_AFTER},
            {"at": 300, "for": 120, "status": 500, "fraction": 0.9},
            {"at": 480, "for": 60, "timeout": True, "fraction": 0.3},
        ],
    },
    "azure-backup": {
        "custom_llm_provider": "azure", "model": "azure/gpt-4o",
        "api_base": "https://example-eastus.openai.azure.com",
        "ttft_median": 0.60, "ttft_p99": 1.50, "per_token": 0.015, "error": 0.08,
        "max_input_tokens": 128000, "input_cost_per_token": 2.75e-06,
        "output_cost_per_token": 1.1e-05,
        "faults": [{"at": 330, "for": 60, "status": 503, "fraction": 0.2}],
    },
}
ORDER = ["openai-primary", "azure-backup"]
ERROR_CLASS = {429: "RateLimitError", 500: "InternalServerError", 503: "ServiceUnavailableError"}


def lognormal(rng, median, p99):
    sigma = math.log(p99 / median) / 2.3263478740408408
    return median * math.exp(sigma * rng.gauss(0, 1))


def fault_at(dep, t):
    return [f for f in dep["faults"] if f["at"] <= t < f["at"] + f["for"]]


def attempt(rng, name, t, req, n_call):
    dep = DEPLOYMENTS[name]
    outcome = None
    for f in fault_at(dep, t):
        if rng.random() < f["fraction"]:
            outcome = f
            break
    rec = {
        "id": "%s-%d" % (req["trace_id"], n_call),
        "trace_id": req["trace_id"],
        "call_type": "acompletion",
        "stream": req["stream"],
        "custom_llm_provider": dep["custom_llm_provider"],
        "model": dep["model"],
        "model_id": name,
        "model_group": "gpt-4o",
        "api_base": dep["api_base"],
        "startTime": round(T0 + t, 6),
        "metadata": {}, "cache_hit": False, "cache_key": None, "saved_cache_cost": 0.0,
        "request_tags": [], "end_user": None, "requester_ip_address": None,
        "messages": None, "response": None, "model_parameters": {"max_tokens": 1024},
        "model_map_information": {"model_map_key": dep["model"], "model_map_value": {
            "key": dep["model"], "max_tokens": 16384, "max_input_tokens": dep["max_input_tokens"],
            "max_output_tokens": 16384, "input_cost_per_token": dep["input_cost_per_token"],
            "output_cost_per_token": dep["output_cost_per_token"],
            "litellm_provider": dep["custom_llm_provider"], "mode": "chat"}},
    }
    rec["litellm_call_id"] = rec["id"]
    prompt, completion = req["prompt"], req["completion"]
    if outcome is None:
        ttft = lognormal(rng, dep["ttft_median"], dep["ttft_p99"])
        end = t + ttft + dep["per_token"] * completion
        cost = prompt * dep["input_cost_per_token"] + completion * dep["output_cost_per_token"]
        rec.update({"status": "success", "prompt_tokens": prompt, "completion_tokens": completion,
                    "total_tokens": prompt + completion, "response_cost": round(cost, 9),
                    "completionStartTime": round(T0 + (t + ttft if req["stream"] else end), 6),
                    "error_str": None, "error_information": None})
        ok, wait = True, 0.0
    else:
        end = t + (TIMEOUT if outcome.get("timeout") else dep["error"])
        status = 408 if outcome.get("timeout") else outcome["status"]
        cls = "Timeout" if outcome.get("timeout") else ERROR_CLASS[status]
        rec.update({"status": "failure", "prompt_tokens": prompt, "completion_tokens": 0,
                    "total_tokens": prompt, "response_cost": 0.0,
                    "completionStartTime": round(T0 + end, 6),
                    "error_str": "litellm.%s: the deployment failed" % cls,
                    "error_information": {"error_code": str(status), "error_class": cls,
                                          "llm_provider": dep["custom_llm_provider"],
                                          "error_message": "litellm.%s" % cls,
                                          "traceback": ""}})
        ok, wait = False, outcome.get("retry_after", 0.0)
    rec["endTime"] = round(T0 + end, 6)
    rec["response_time"] = round(end - t, 6)
    rec["hidden_params"] = {"model_id": name, "cache_key": None, "api_base": dep["api_base"],
                            "response_cost": rec["response_cost"], "additional_headers": {},
                            "litellm_overhead_time_ms": 1.0}
    return rec, ok, end, wait


def request(rng, t, k):
    req = {"trace_id": "trace-%06d" % k, "stream": rng.random() < 0.3,
           "prompt": int(lognormal(rng, 1200, 6000)), "completion": rng.randint(40, 400)}
    out, n_call = [], 0
    for name in ORDER:
        for a in range(ATTEMPTS):
            rec, ok, end, wait = attempt(rng, name, t, req, n_call)
            out.append(rec)
            n_call += 1
            if ok:
                return out
            if a + 1 < ATTEMPTS:
                t = end + (wait if wait > 0 else BASE * MULT ** a)
            else:
                t = end
    return out


def main():
    rng = random.Random(SEED)
    records, t, k = [], 0.0, 0
    while True:
        records.extend(request(rng, t, k))
        k += 1
        t += rng.expovariate(RATE)
        if t >= DURATION:
            break
    records.sort(key=lambda r: (r["endTime"], r["id"]))  # logged as calls end
    with open(sys.argv[1], "w") as f:
        for r in records:
            f.write(json.dumps(r, sort_keys=True) + "\n")
    truth = {"requests": k, "records": len(records), "attempts": ATTEMPTS, "base": BASE,
             "multiplier": MULT, "timeout": TIMEOUT, "retry_after": RETRY_AFTER, "order": ORDER,
             "deployments": {n: {"faults": d["faults"], "ttft_median": d["ttft_median"],
                                 "per_token": d["per_token"], "custom_llm_provider":
                                 d["custom_llm_provider"]} for n, d in DEPLOYMENTS.items()}}
    with open(sys.argv[2], "w") as f:
        json.dump(truth, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
