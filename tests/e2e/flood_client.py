#!/usr/bin/env python3
"""flood_client.py PORT PID SECONDS - a bounded flood of garbage and valid requests at once,
for tests/e2e/stress.sh, against the mock on 127.0.0.1:PORT (process PID).

For SECONDS, at the same time:
  - 6 clients send valid chat completions over keep-alive connections (whole and streamed)
    and count what they get: 200s, 503s (--max-memory), other statuses, timeouts, failures;
  - 12 clients send garbage, one connection each time: random bytes, a bad request line,
    a 40 KiB header, a lying Content-Length, broken chunking, bodies that are not JSON or
    not UTF-8, JSON nested 100,000 deep, bad fault specs, unknown paths, headers cut halfway;
and once, 48 clients each hold a 3 MiB body all but its last byte (144 MiB in the mock at
once unless --max-memory turns them away), then finish it.
The mock's resident memory is sampled every 100 ms. Prints one JSON object: the counts,
the statuses the big bodies got, and rss_kb_start / rss_kb_peak / rss_kb_end.
"""
import http.client
import json
import random
import socket
import sys
import threading
import time

PORT, PID, LIFE_S = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
DEADLINE = time.monotonic() + LIFE_S
BODY = b'{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hello"}],"max_tokens":8}'
STREAM = (b'{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}],"max_tokens":4,'
          b'"stream":true}')
lock = threading.Lock()
counts = {"valid_200": 0, "valid_503": 0, "valid_timeout": 0, "valid_failed": 0,
          "valid_other_statuses": [], "garbage_sent": 0, "big_statuses": []}


def rss_kb():
    with open(f"/proc/{PID}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def add(key, n=1):
    with lock:
        counts[key] += n


def valid(k):
    conn = None
    while time.monotonic() < DEADLINE:
        try:
            if conn is None:
                conn = http.client.HTTPConnection("127.0.0.1", PORT, timeout=20)
            conn.request("POST", "/v1/chat/completions", STREAM if k % 2 else BODY,
                         {"Content-Type": "application/json"})
            r = conn.getresponse()
            r.read()
            if r.status in (200, 503):
                add(f"valid_{r.status}")
            else:
                with lock:
                    counts["valid_other_statuses"].append(r.status)
        except (socket.timeout, TimeoutError):
            add("valid_timeout")
            conn = None
        except (OSError, http.client.HTTPException):
            add("valid_failed")  # the connection failed under a valid request
            conn = None


def nested(n):
    return b'{"model":"m","messages":' + b"[" * n + b"]" * n + b"}"


def garbage_item(rng):
    head = b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
    pick = rng.randrange(11)
    if pick == 0:
        return bytes(rng.getrandbits(8) for _ in range(rng.randrange(1, 4096)))
    if pick == 1:
        return b"GARBAGE / HTTP/9.9\r\n\r\n"
    if pick == 2:
        return head + b"X-Big: " + b"a" * 40960 + b"\r\n\r\n"
    if pick == 3:
        return head + b"Content-Length: 999999\r\n\r\n{\"model\":"  # then the client leaves
    if pick == 4:
        return head + b"Transfer-Encoding: chunked\r\n\r\nzz\r\nnot a chunk\r\n"
    if pick == 5:
        b = b'{"model": "m", "messages": [{"role": "user", "content": "\xff\xfe"}]}'
        return head + b"Content-Length: %d\r\n\r\n" % len(b) + b
    if pick == 6:
        b = nested(100000)
        return head + b"Content-Length: %d\r\n\r\n" % len(b) + b
    if pick == 7:
        spec = b"x-fusebox-fault: 429-retry-after-\xff-times--1\r\n"
        return head + spec + b"Content-Length: %d\r\n\r\n" % len(BODY) + BODY
    if pick == 8:
        return b"DELETE /v1/nothing/here?x=" + b"%" * 9000 + b" HTTP/1.1\r\nHost: x\r\n\r\n"
    if pick == 9:
        return head + b"Content-Length: 5\r\n\r\n{]]]]"
    return head[: rng.randrange(1, len(head))]  # headers cut halfway


def garbage(k):
    rng = random.Random(k)
    while time.monotonic() < DEADLINE:
        try:
            s = socket.create_connection(("127.0.0.1", PORT), timeout=5)
            s.sendall(garbage_item(rng))
            s.settimeout(0.2 if rng.random() < 0.5 else 2)
            try:
                s.recv(65536)
            except OSError:
                pass
            s.close()
            add("garbage_sent")
        except OSError:
            time.sleep(0.01)


def big(k, barrier):
    size = 3 << 20
    status = 0
    try:
        s = socket.create_connection(("127.0.0.1", PORT), timeout=30)
        s.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n"
                  b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n" % size)
        chunk = b" " * (1 << 16)
        sent = 0
        try:
            while sent < size - 1:
                n = min(len(chunk), size - 1 - sent)
                s.sendall(chunk[:n])
                sent += n
        except OSError:
            pass  # refused while sending: the answer says why
        try:
            barrier.wait(timeout=30)
        except threading.BrokenBarrierError:
            pass
        try:
            s.sendall(b"}")
        except OSError:
            pass
        data = s.recv(256)
        if data.startswith(b"HTTP/1.1 "):
            status = int(data[9:12])
        s.close()
    except OSError:
        status = -1
    with lock:
        counts["big_statuses"].append(status)


def main():
    rss0 = rss_kb()
    peak = [rss0]
    stop = threading.Event()

    def sample():
        while not stop.is_set():
            try:
                peak[0] = max(peak[0], rss_kb())
            except OSError:
                return
            time.sleep(0.1)

    sampler = threading.Thread(target=sample)
    sampler.start()
    barrier = threading.Barrier(48)
    ts = [threading.Thread(target=valid, args=(k,)) for k in range(6)]
    ts += [threading.Thread(target=garbage, args=(k,)) for k in range(12)]
    ts += [threading.Thread(target=big, args=(k, barrier)) for k in range(48)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    time.sleep(1)
    stop.set()
    sampler.join()
    counts.update(rss_kb_start=rss0, rss_kb_peak=peak[0], rss_kb_end=rss_kb())
    counts["big_statuses"] = sorted(counts["big_statuses"])
    counts["valid_other_statuses"] = sorted(set(counts["valid_other_statuses"]))
    print(json.dumps(counts))


main()
