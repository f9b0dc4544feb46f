#!/bin/sh
# layers_bench.sh - what nesting retry layers costs the simulator: the same
# outage with 1 to 4 layers of 2 attempts each. A provider call that fails
# is retried (1+1)^L times, so the calls grow as 2^L; the events per call
# (and per layer attempt) should stay flat, i.e. a deeper stack costs no
# more than the calls it makes. Prints figures; never fails on a stopwatch.
set -u
FUSEBOX=${BUILD:-build/release}/fusebox
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
python3 - "$OUT/layers.json" <<'EOF'
import json, sys
layer = lambda n, route: dict({"name": n, "retry": {"attempts": 2, "backoff": {"constant": "100ms"},
                                                 "jitter": "none"}}, **({"fallback": ["p"]} if route else {}))
variants = {}
for depth in range(1, 5):
    variants["depth%d" % depth] = {"layers": [layer("l%d" % i, i == depth - 1) for i in range(depth)]}
json.dump({"name": "layers-bench", "seed": 1, "duration": "10m",
           "traffic": [{"class": "chat", "arrivals": {"poisson": "200/s"}, "completion_tokens": 50}],
           "pods": {"count": 20, "workers": 1000, "queue": 1000, "request_timeout": "60s"},
           "providers": [{"name": "p", "latency": {"ttft": "200ms", "per_output_token": "1ms"},
                          "faults": [{"at": "2m", "for": "6m", "outage": {"status": 503}}]}],
           "variants": variants}, open(sys.argv[1], "w"))
EOF
echo "1 to 4 nested layers of 2 attempts, 200 requests/s, a 6-minute outage in 10 minutes"
printf '  %-7s %10s %12s %12s %10s %14s %12s %10s\n' depth calls "layer tries" events "ev/call" \
    "ev/layer try" "M events/s" "ns/call"
for d in 1 2 3 4; do
    "$FUSEBOX" run "$OUT/layers.json" --variant "depth$d" --no-charts -q --stats \
        -o "$OUT/d$d" 2>"$OUT/stats$d" || { echo "  depth $d: run failed"; continue; }
    python3 - "$OUT/d$d/report.json" "$OUT/stats$d" "$d" <<'EOF'
import json, re, sys
r = json.load(open(sys.argv[1]))
v = r["variants"]["depth" + sys.argv[3]]
calls = v["summary"]["attempts"]
tries = sum(l.get("attempts", 0) for l in v.get("layers", {}).values()) if isinstance(v.get("layers"), dict) \
    else sum(l.get("attempts", 0) for l in v.get("layers", []))
st = open(sys.argv[2]).read()
m = re.search(r"(\d+) events in ([0-9.]+) s wall \(([0-9.]+) M events/s\)", st)
ev, wall, rate = int(m.group(1)), float(m.group(2)), float(m.group(3))
print("  %-7s %10d %12d %12d %10.2f %14.2f %12.2f %10.0f" % (
    sys.argv[3], calls, tries, ev, ev / max(calls, 1), ev / max(tries, 1), rate,
    wall * 1e9 / max(calls, 1)))
EOF
done
