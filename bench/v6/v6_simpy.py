#!/usr/bin/python3
"""v6_simpy.py SECONDS RATE SEED - bench/v6/v6.json's model in SimPy (Debian python3-simpy3).

Poisson arrivals at RATE/s; a provider with 100 slots, a FIFO queue of 2,000
and exponential service of mean 1 s that serves an attempt to its end even
when its client has given up; each request makes up to 3 attempts, the next at
once after a 2 s attempt timeout. Prints one line: requests, successes,
attempts, mean latency of the successes (s) and the events SimPy processed.
"""
import random
import sys

import simpy

SLOTS, QUEUE, SERVICE_S, TIMEOUT_S, ATTEMPTS = 100, 2000, 1.0, 2.0, 3


class Model:
    def __init__(self, env, rng):
        self.env, self.rng = env, rng
        self.slots = simpy.Resource(env, capacity=SLOTS)
        self.requests = self.ok = self.attempts = 0
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
        for _ in range(ATTEMPTS):
            self.attempts += 1
            if len(self.slots.queue) >= QUEUE:
                continue  # the queue is full: refused at once, retried
            done = self.env.event()
            self.env.process(self.serve(done))
            got = yield done | self.env.timeout(TIMEOUT_S)
            if done in got:
                self.ok += 1
                self.latency_sum += self.env.now - start
                return

    def arrivals(self, rate):
        while True:
            yield self.env.timeout(self.rng.expovariate(rate))
            self.env.process(self.request())


def main():
    seconds, rate, seed = float(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
    env = simpy.Environment()
    model = Model(env, random.Random(seed))
    env.process(model.arrivals(rate))
    events = 0
    while env.peek() <= seconds:
        env.step()
        events += 1
    mean = model.latency_sum / model.ok if model.ok else 0.0
    print(f"simpy: {model.requests} requests, {model.ok} ok, {model.attempts} attempts, "
          f"mean latency {mean:.3f} s, {events} events")


if __name__ == "__main__":
    main()
