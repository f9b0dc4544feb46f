#!/usr/bin/env python3
"""tests/fuzz/seeds.py - write the fuzz targets' seed corpora (tests/fuzz/corpus/NAME/) again.

Run from the repository root: python3 tests/fuzz/seeds.py (`--dict FILE`: the dictionary
alone, into FILE; e2e schema_fresh checks the committed one is current). The scenario and sim seeds come
from scenarios/ (minified, descriptions dropped; the sim's shortened to fit its harness); the
mock's and live's are written here, from the formats in docs/mock.md and the official SDKs'
streams (the mock's route-*: a request line and headers for its routing, every endpoint and
error). Files a fuzzer found (regress-*) are not touched: they are regression tests.
It also writes tests/fuzz/scenario.dict (sim.dict links to it): libFuzzer's dictionary of the
scenario's keys and names, from docs/scenario.schema.json, so mutations spell real keys.
"""
import glob
import json
import os
import sys

OUT = "tests/fuzz/corpus"


def write(target, name, data):
    os.makedirs(f"{OUT}/{target}", exist_ok=True)
    with open(f"{OUT}/{target}/{name}", "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


def strip(v):
    if isinstance(v, dict):
        return {k: strip(x) for k, x in v.items() if k not in ("description", "incident")}
    if isinstance(v, list):
        return [strip(x) for x in v]
    return v


def mini(v):
    return json.dumps(v, separators=(",", ":"))


SETS = {
    "retry-storm": ["variants.tuned.retry.attempts=5", "pods.count=3", "naive.success_rate >= 0.9"],
    "hedging": ["seed=7", "tuned.latency_p99 <= 15s"],
    "flapping": ["duration=10m", "tuned.success_rate - naive.success_rate > 0.01"],
    "rate-limit-storm": ["providers.openai.capacity.rpm=600"],
}


def scenarios():
    for path in sorted(glob.glob("scenarios/*.json")):
        name = os.path.basename(path)[:-5]
        sc = strip(json.load(open(path)))
        text = mini(sc)
        if name in SETS:
            text += "\0" + "\n".join(SETS[name])
        write("scenario", name, text)
        # the sim's: 4 minutes of traffic, faults moved into them, at most 4 pods
        sc["duration"] = "4m"
        if "pods" in sc and sc["pods"].get("count", 1) > 4:
            sc["pods"]["count"] = 4
        for p in sc.get("providers", []):
            for f in p.get("faults", []):
                if "at" in f:
                    f["at"] = "30s"
                if "for" in f:
                    f["for"] = "90s"
        write("sim", name, mini(sc))


CHAT = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hello"}],
        "max_tokens": 8}
BODIES = [
    (0, CHAT),
    (0, dict(CHAT, stream=True, stream_options={"include_usage": True}, n=2)),
    (0, dict(CHAT, response_format={"type": "json_schema", "json_schema": {"name": "x", "schema": {
        "type": "object", "properties": {"a": {"type": "string", "format": "email"},
                                         "b": {"type": "array", "items": {"enum": [1, 2]}}},
        "required": ["a", "b"]}}})),
    (0, dict(CHAT, tools=[{"type": "function", "function": {"name": "f", "parameters": {
        "type": "object", "properties": {"q": {"type": "integer"}}}}}], tool_choice="required")),
    (1, dict(CHAT, stream=True)),
    (2, {"model": "gpt-3.5-turbo-instruct", "prompt": "say", "max_tokens": 5, "stream": True}),
    (3, {"model": "gpt-4o", "input": "hi", "stream": True, "max_output_tokens": 6}),
    (4, {"model": "text-embedding-3-small", "input": ["a", "b"], "encoding_format": "base64",
         "dimensions": 8}),
    (5, {"model": "claude-3-5-sonnet", "max_tokens": 6, "stream": True,
         "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]}),
    (6, {"model": "claude-3-5-sonnet", "messages": [{"role": "user", "content": "hi"}]}),
    (7, {"contents": [{"role": "user", "parts": [{"text": "hi"}]}],
         "generationConfig": {"maxOutputTokens": 7}}),
    (8, {"contents": [{"parts": [{"text": "hi there"}]}]}),
]
SPECS = ["", "429-retry-after-ms-250-times-1", "500-times-2", "503-should-retry-false", "cut-3",
         "error-2", "stall-1-30s", "ttft-600ms", "tokens-50", "context-length", "content-filter",
         "refusal"]
TIMELINES = [
    [{"at": "1m", "for": "5m", "outage": {"status": 503}}],
    {"faults": [{"brownout": {"factor": 0.3}}, {"at": "2m", "flap": {"period": "30s"}},
                {"for": "10m", "errors": {"fraction": 0.5, "status": 429}}]},
]


def mock():
    for i, (api, body) in enumerate(BODIES):
        write("mock", f"api{api}-{i}", SPECS[i % len(SPECS)] + "\n" + chr(api) + mini(body))
    for i, tl in enumerate(TIMELINES):
        write("mock", f"timeline-{i}", "\n" + mini(tl))


# The routing's seeds: every endpoint of mockserver/route.c with what its clients send, then
# each error (404 per dialect, 405, 413, the control plane's), proxy mode and the refusals.
AZ = "api-version=2024-10-21"
ROUTES = [
    ("POST", "/v1/chat/completions", ["authorization: Bearer sk"]),
    ("POST", "/v1/completions", []),
    ("POST", "/v1/responses", []),
    ("POST", "/v1/embeddings", []),
    ("POST", "/v1/messages", ["anthropic-version: 2023-06-01", "x-api-key: k"]),
    ("POST", "/v1/messages/count_tokens", ["anthropic-version: 2023-06-01"]),
    ("GET", "/v1/models", []),
    ("GET", "/v1/models/gpt-4o", ["anthropic-version: 2023-06-01"]),
    ("POST", "/openai/deployments/gpt4o/chat/completions?" + AZ, ["api-key: k"]),
    ("POST", "/openai/deployments/d%2D1/completions?" + AZ + "&x=1", ["authorization: Bearer t"]),
    ("POST", "/openai/deployments/e/embeddings?" + AZ, ["api-key: k"]),
    ("POST", "/openai/responses?api-version=preview", ["api-key: k"]),
    ("POST", "/v1beta/models/gemini-2.5-flash:generateContent?key=k", []),
    ("POST", "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse", ["x-goog-api-key: k"]),
    ("POST", "/v1beta/models/g:countTokens", ["x-goog-api-key: k"]),
    ("GET", "/v1beta/models?key=k&pageSize=2", []),
    ("GET", "/v1beta/models/gemini-pro?key=k", []),
    ("POST", "/__fusebox/faults", []),
    ("POST", "/__fusebox/reset", []),
    ("GET", "/__fusebox/log", []),
    ("GET", "/__fusebox/stats", []),
    ("GET", "/__fusebox/verdict?max_attempts=3&format=junit", []),
    ("GET", "/nope", []),
    ("GET", "/v1/nope", ["anthropic-version: 2023-06-01"]),
    ("DELETE", "/openai/nope", []),
    ("GET", "/v1beta/nope", []),
    ("GET", "/v1/chat/completions", []),
    ("POST", "/v1/models/a%2Fb", []),
    ("POST", "/__fusebox/log", []),
    ("GET", "/__fusebox/nope", ["x-fuzz-proxy: 1"]),
    ("POST", "/v1/chat/completions", ["x-fuzz-too-large: 1"]),
    ("GET", "/v1/files?purpose=batch", ["x-fuzz-proxy: 1"]),
    ("PUT", "/v1beta/cachedContents", ["x-fuzz-proxy: 1"]),
    ("POST", "/openai/deployments/d/chat/completions", []),
    ("POST", "/openai/deployments/d/chat/completions?api-version=", ["api-key: k"]),
    ("POST", "/v1beta/models/g:streamGenerateContent?alt=json&key=k", []),
    ("POST", "/v1beta/models/g:generateContent", []),
]


def routes():
    for i, (method, target, headers) in enumerate(ROUTES):
        text = f"{method} {target} HTTP/1.1\n" + "".join(h + "\n" for h in headers) + "\n"
        write("mock", f"route-{i:02d}", text + SPECS[i % len(SPECS)] + "\n")


OPENAI_SSE = (
    'data: {"id":"chatcmpl-1","object":"chat.completion.chunk","model":"gpt-4o-mini",'
    '"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}\n\n'
    'data: {"id":"chatcmpl-1","choices":[{"index":0,"delta":{"content":" hello"}}]}\r\n\r\n'
    'data: {"id":"chatcmpl-1","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],'
    '"usage":{"prompt_tokens":12,"completion_tokens":2}}\n\n'
    ': keep-alive\n\ndata: [DONE]\n\n')
ANTHROPIC_SSE = (
    'event: message_start\ndata: {"type":"message_start","message":{"model":"claude-3-5-sonnet",'
    '"usage":{"input_tokens":9,"output_tokens":1}}}\n\n'
    'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
    '"delta":{"type":"text_delta","text":"hi"}}\r\r'
    'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn"},'
    '"usage":{"output_tokens":2}}\n\n'
    'event: message_stop\ndata: {"type":"message_stop"}\n\n')
LIVE = {
    "openai-stream": "\x10" + OPENAI_SSE,
    "anthropic-stream": "\x05" + ANTHROPIC_SSE,
    "anthropic-error-event": "\x03event: error\ndata: {\"type\":\"error\",\"error\":"
                             "{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n",
    "openai-error-body": "\x02{\"error\":{\"message\":\"Rate limit\",\"type\":\"requests\","
                         "\"code\":\"rate_limit_exceeded\"}}",
    "openai-success": "\x00{\"id\":\"chatcmpl-1\",\"model\":\"gpt-4o-mini\",\"choices\":[{\"index\""
                      ":0,\"message\":{\"role\":\"assistant\",\"content\":\"hi\"},\"finish_reason\":"
                      "\"content_filter\"}],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":1}}",
    "anthropic-success": "\x01{\"id\":\"msg_1\",\"type\":\"message\",\"model\":\"claude\",\"content\":"
                         "[{\"type\":\"text\",\"text\":\"hi\"}],\"stop_reason\":\"refusal\","
                         "\"usage\":{\"input_tokens\":5,\"output_tokens\":1}}",
    "long-line": "\x7f" + "data: " + "x" * 9000 + "\n\n",
}


def live():
    for name, text in LIVE.items():
        write("live", name, text)


def walk(v, keys, names):
    if isinstance(v, dict):
        for k, x in v.items():
            if k == "properties" and isinstance(x, dict):
                keys.update(x)
            if k == "enum" and isinstance(x, list):
                names.update(e for e in x if isinstance(e, str))
            walk(x, keys, names)
    elif isinstance(v, list):
        for x in v:
            walk(x, keys, names)


def dictionary(out="tests/fuzz/scenario.dict"):
    keys, names = set(), set()
    walk(json.load(open("docs/scenario.schema.json")), keys, names)
    words = {f'"{k}":' for k in keys} | {f'"{n}"' for n in names}
    words |= {'"250ms"', '"30s"', '"5m"', '"2h"', '"40/s"', '"600/m"', "1e308", "-1", "0.5"}
    with open(out, "w") as f:
        f.write("# written by tests/fuzz/seeds.py from docs/scenario.schema.json\n")
        for w in sorted(words):
            f.write('"' + w.replace("\\", "\\\\").replace('"', '\\"') + '"\n')


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--dict":  # the dictionary alone, into a file
        dictionary(sys.argv[2])
        sys.exit(0)
    dictionary()
    scenarios()
    mock()
    routes()
    live()
