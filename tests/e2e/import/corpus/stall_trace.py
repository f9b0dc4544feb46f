#!/usr/bin/env python3
"""A traced corpus run with a client that stalled at its start, made from a quiet one.

    stall_trace.py IN.trace.json OUT.trace.json [SEED [SHARE]]

Each request of the first 2 s, with probability SHARE (default 0.5), ends 30 to 800 ms later
(uniform, seeded): its GenAI span and the HTTP spans of its trace, as when a busy machine's
Node event loop reads the answers late. Prints the requests' p50, p90 and p99 (the rank
ceil(q n), as fusebox reports them) and how many were made late. docs/import.md ("Latency")
measures the burst's delay on such copies of out/e2e-import_corpus/slowdown.trace.json.
"""
import json
import math
import random
import sys


def main():
    src, dst = sys.argv[1], sys.argv[2]
    seed = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    share = float(sys.argv[4]) if len(sys.argv) > 4 else 0.5
    with open(src) as f:
        doc = json.load(f)
    rng = random.Random(seed)
    spans = [s for rs in doc['resourceSpans'] for ss in rs['scopeSpans'] for s in ss['spans']]
    gen = [s for s in spans if any(a['key'].startswith('gen_ai.') for a in s['attributes'])]
    gen.sort(key=lambda s: int(s['startTimeUnixNano']))
    t0 = int(gen[0]['startTimeUnixNano'])
    late = {}
    for s in gen:
        if int(s['startTimeUnixNano']) - t0 < 2_000_000_000 and rng.random() < share:
            late[s['traceId']] = int(rng.uniform(30, 800) * 1e6)
    for s in spans:
        if s['traceId'] in late:
            s['endTimeUnixNano'] = str(int(s['endTimeUnixNano']) + late[s['traceId']])
    with open(dst, 'w') as f:
        json.dump(doc, f)
    durs = sorted((int(s['endTimeUnixNano']) - int(s['startTimeUnixNano'])) / 1e9 for s in gen)
    n = len(durs)
    for q in (0.5, 0.9, 0.99):
        print('p%d %.4f' % (round(q * 100), durs[math.ceil(q * n) - 1]))
    print('late %d' % len(late))


if __name__ == '__main__':
    main()
