#!/usr/bin/env python3
"""sessions_gen.py TRACE TRUTH [SEED]: an OTLP/JSON trace of conversations, for the import's
sessions (docs/import.md, "Sessions").

300 conversations start at uniform times over 10 minutes, each of 1 to 8 requests (250 to
350 ms each, answered by "openai"); each next request of a conversation comes an exponential
think time (mean 8 s, drawn here) after the one before ended. Half the conversations name
themselves on the GenAI span (gen_ai.conversation.id), half on an application span around it
(session.id), as the two conventions allow. TRUTH gets the think times drawn, their mean, and
the requests' count.
"""
import json
import random
import sys

T0_MS = 1796000000000
THINK_MEAN_MS = 8000.0


def main():
    trace, truth = sys.argv[1], sys.argv[2]
    rng = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 5)
    spans, thinks, tid = [], [], 0

    def span(trace_id, span_id, parent, start, end, attrs):
        s = {"traceId": "%032x" % trace_id, "spanId": "%016x" % span_id, "name": "chat m",
             "kind": 3, "startTimeUnixNano": "%d" % round((T0_MS + start) * 1e6),
             "endTimeUnixNano": "%d" % round((T0_MS + end) * 1e6),
             "attributes": [{"key": k, "value": v} for k, v in attrs]}
        if parent:
            s["parentSpanId"] = "%016x" % parent
        spans.append(s)

    for c in range(300):
        t = rng.uniform(0, 600000)
        turns = rng.randint(1, 8)
        for k in range(turns):
            d = 250 + rng.uniform(0, 100)
            tid += 1
            genai = [("gen_ai.operation.name", {"stringValue": "chat"}),
                     ("gen_ai.provider.name", {"stringValue": "openai"}),
                     ("gen_ai.request.model", {"stringValue": "m"}),
                     ("gen_ai.usage.output_tokens", {"intValue": "10"})]
            conv = "conv-%d" % c
            if c % 2 == 0:
                span(tid, 1, 0, t, t + d, genai + [("gen_ai.conversation.id", {"stringValue": conv})])
            else:
                span(tid, 1, 0, t - 1, t + d + 1, [("session.id", {"stringValue": conv})])
                span(tid, 2, 1, t, t + d, genai)
            if k + 1 < turns:
                think = rng.expovariate(1 / THINK_MEAN_MS)
                thinks.append(think)
                t += d + think
    with open(trace, "w") as f:
        json.dump({"resourceSpans": [{"resource": {}, "scopeSpans": [{"scope": {}, "spans": spans}]}]}, f)
    with open(truth, "w") as f:
        json.dump({"requests": tid, "sessions": 300, "gaps": len(thinks),
                   "think_mean_ms": sum(thinks) / len(thinks), "think_truth_ms": THINK_MEAN_MS}, f)


if __name__ == "__main__":
    main()
