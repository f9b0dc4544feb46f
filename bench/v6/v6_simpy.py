#!/usr/bin/python3
"""v6_simpy.py SECONDS RATE SEED [OUTDIR] - bench/v6/v6.json's model in SimPy (Debian python3-simpy3).

Poisson arrivals at RATE/s; a provider with 100 slots, a FIFO queue of 2,000
and exponential service of mean 1 s that serves an attempt to its end even
when its client has given up; each request makes up to 3 attempts, the next at
once after a 2 s attempt timeout. Arrivals stop at SECONDS and the run goes
on until the last request has ended, as fusebox's does. Prints one line: requests, successes,
attempts, mean latency of the successes (s) and the events SimPy processed.

With OUTDIR it also keeps the figures `fusebox run` writes for the same model
(bench/v6_bench.sh compares the two doing the same work): every ended
request's latency, its percentiles (p50, p90, p99, p99.9, max, mean; p99 of the
successes), attempts per request, retries, timeouts and peaks in
OUTDIR/report.json, and a row per simulated second (arrivals, ended, successes,
errors, in flight, the second's p50 and p99, attempts, timeouts, in service,
queue) in OUTDIR/timeseries.csv, as fusebox's report.json and timeseries.csv
hold them. Percentiles are exact (nearest rank of the sorted values), where
fusebox reads them from a histogram.
"""
import json
import math
import os
import random
import sys

import simpy

SLOTS, QUEUE, SERVICE_S, TIMEOUT_S, ATTEMPTS = 100, 2000, 1.0, 2.0, 3


def percentile(sorted_values, p):
    """The nearest-rank percentile: the value of rank ceil(p% of n); 0 when empty."""
    if not sorted_values:
        return 0.0
    rank = max(1, min(len(sorted_values), math.ceil(p * len(sorted_values) / 100.0)))
    return sorted_values[rank - 1]


class Figures:
    """What fusebox's report.json and timeseries.csv hold for this model."""

    def __init__(self):
        self.latencies, self.ok_latencies = [], []
        self.per_request = [0] * (ATTEMPTS + 1)
        self.timeouts = self.in_flight = self.in_flight_peak = self.busy_peak = 0
        self.rows = []
        self.tick = dict(arrivals=0, ended=0, success=0, errors=0, attempts=0, timeouts=0, lat=[])

    def arrival(self):
        self.tick["arrivals"] += 1
        self.in_flight += 1
        self.in_flight_peak = max(self.in_flight_peak, self.in_flight)

    def attempt(self, busy):
        self.tick["attempts"] += 1
        self.busy_peak = max(self.busy_peak, busy)

    def timeout(self):
        self.timeouts += 1
        self.tick["timeouts"] += 1

    def end(self, latency, ok, attempts):
        self.in_flight -= 1
        self.latencies.append(latency)
        self.per_request[attempts] += 1
        self.tick["ended"] += 1
        self.tick["lat"].append(latency)
        if ok:
            self.ok_latencies.append(latency)
            self.tick["success"] += 1
        else:
            self.tick["errors"] += 1

    def row(self, t, slots):
        k = self.tick
        lat = sorted(k["lat"])
        self.rows.append((t, k["arrivals"], k["ended"], k["success"], k["errors"], self.in_flight,
                          percentile(lat, 50) * 1e3, percentile(lat, 99) * 1e3, k["attempts"],
                          k["timeouts"], slots.count, len(slots.queue)))
        self.tick = dict(arrivals=0, ended=0, success=0, errors=0, attempts=0, timeouts=0, lat=[])

    def write(self, out, model):
        lat, ok = sorted(self.latencies), sorted(self.ok_latencies)
        report = {
            "requests": model.requests, "ended": len(lat), "successes": model.ok,
            "errors": len(lat) - model.ok, "success_rate": model.ok / len(lat) if lat else 0.0,
            "attempts": model.attempts, "retries": model.attempts - model.requests,
            "timeouts": self.timeouts,
            "attempts_per_request": {str(n): c for n, c in enumerate(self.per_request) if n},
            "latency_ms": {"p50": percentile(lat, 50) * 1e3, "p90": percentile(lat, 90) * 1e3,
                           "p99": percentile(lat, 99) * 1e3, "p99.9": percentile(lat, 99.9) * 1e3,
                           "max": (lat[-1] if lat else 0.0) * 1e3,
                           "mean": (sum(lat) / len(lat) if lat else 0.0) * 1e3},
            "success_latency_p99_ms": percentile(ok, 99) * 1e3,
            "in_flight_peak": self.in_flight_peak, "in_service_peak": self.busy_peak,
        }
        with open(os.path.join(out, "report.json"), "w") as f:
            json.dump(report, f, indent=2)
        with open(os.path.join(out, "timeseries.csv"), "w") as f:
            f.write("t_s,arrivals,ended,success,errors,in_flight,p50_ms,p99_ms,attempts,timeouts,"
                    "in_service,queue\n")
            for r in self.rows:
                f.write("%.3f,%d,%d,%d,%d,%d,%.3f,%.3f,%d,%d,%d,%d\n" % r)


class Model:
    def __init__(self, env, rng, figures):
        self.env, self.rng, self.fig = env, rng, figures
        self.slots = simpy.Resource(env, capacity=SLOTS)
        self.requests = self.ok = self.attempts = self.ended = 0
        self.latency_sum = 0.0

    def serve(self, done):
        """One attempt at the provider: queued, served, then its reply (to nobody if gone)."""
        with self.slots.request() as slot:
            yield slot
            yield self.env.timeout(self.rng.expovariate(1.0 / SERVICE_S))
        done.succeed()

    def request(self):
        start = self.env.now
        self.requests += 1
        fig = self.fig
        if fig:
            fig.arrival()
        for n in range(1, ATTEMPTS + 1):
            self.attempts += 1
            if fig:
                fig.attempt(self.slots.count)
            if len(self.slots.queue) >= QUEUE:
                continue  # the queue is full: refused at once, retried
            done = self.env.event()
            self.env.process(self.serve(done))
            got = yield done | self.env.timeout(TIMEOUT_S)
            if done in got:
                self.ok += 1
                self.ended += 1
                self.latency_sum += self.env.now - start
                if fig:
                    fig.end(self.env.now - start, True, n)
                return
            if fig:
                fig.timeout()
        self.ended += 1
        if fig:
            fig.end(self.env.now - start, False, ATTEMPTS)

    def arrivals(self, rate, seconds):
        """Arrivals until the end of traffic; the requests in flight then run to their end."""
        while True:
            yield self.env.timeout(self.rng.expovariate(rate))
            if self.env.now >= seconds:
                return
            self.env.process(self.request())

    def ticks(self, seconds):
        """A row at the end of every simulated second of traffic."""
        t = 0
        while t < seconds:
            yield self.env.timeout(1.0)
            self.fig.row(t, self.slots)
            t += 1


def main():
    seconds, rate, seed = float(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
    out = sys.argv[4] if len(sys.argv) > 4 else None
    env = simpy.Environment()
    figures = Figures() if out else None
    model = Model(env, random.Random(seed), figures)
    env.process(model.arrivals(rate, seconds))
    if figures:
        env.process(model.ticks(seconds))
    events = 0
    # as fusebox: the traffic window, then until the last request has ended
    while env.peek() <= seconds or model.ended < model.requests:
        env.step()
        events += 1
    mean = model.latency_sum / model.ok if model.ok else 0.0
    if figures:
        figures.write(out, model)
    print(f"simpy: {model.requests} requests, {model.ok} ok, {model.attempts} attempts, "
          f"mean latency {mean:.3f} s, {events} events")


if __name__ == "__main__":
    main()
