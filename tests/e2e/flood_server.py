#!/usr/bin/env python3
"""flood_server.py MODE [SECONDS] - a misbehaving HTTP target for tests/e2e/live.sh.

Listens on 127.0.0.1 and a free port, prints its base URL on stdout, and serves each
connection on a thread until SECONDS (default 60) have passed, then exits by itself.
GET /v1/models (the live driver's probe) gets a 200 in every mode but `silent`; what a
POST gets depends on MODE:

  body     200, content-length 10 GB, and bytes as fast as loopback takes them
  sse      200 text/event-stream, then one endless `data:` line
  trickle  200 text/event-stream, one byte every 10 ms, forever
  reset    the connection is reset (RST) without an answer
  silent   nothing, not even to the probe: the connection stays open
  late     a chat completion after 60 ms that says it was planned to take 10 ms
           (x-fusebox-plan-us: 10000, as fusebox's mock says it): 50 ms late
  ontime   the same after 10 ms: on time
"""
import socket
import struct
import sys
import threading
import time

MODE = sys.argv[1]
LIFE_S = float(sys.argv[2]) if len(sys.argv) > 2 else 60.0
CHUNK = b"x" * (1 << 20)


def read_request(c):
    buf = b""
    while b"\r\n\r\n" not in buf:
        d = c.recv(65536)
        if not d:
            return None
        buf += d
    head, _, rest = buf.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        k, _, v = line.partition(b":")
        if k.strip().lower() == b"content-length":
            length = int(v.strip())
    while len(rest) < length:
        d = c.recv(65536)
        if not d:
            return None
        rest += d
    return head.split(b" ")[0]


def flood(c, deadline):
    if MODE == "body":
        c.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                  b"content-length: 10000000000\r\n\r\n")
    else:
        c.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\ndata: ")
    while time.monotonic() < deadline:
        if MODE == "trickle":
            c.sendall(b"x")
            time.sleep(0.01)
        else:
            c.sendall(CHUNK)


ANSWER = (b'{"id":"chatcmpl-1","object":"chat.completion","model":"m","choices":[{"index":0,'
          b'"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],'
          b'"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}')


def answer(c):
    time.sleep(0.06 if MODE == "late" else 0.01)
    c.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
              b"x-fusebox-plan-us: 10000\r\ncontent-length: %d\r\n\r\n" % len(ANSWER) + ANSWER)


def serve(c, deadline):
    try:
        while time.monotonic() < deadline:
            method = read_request(c)
            if method is None:
                return
            if method == b"GET":
                c.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                          b"content-length: 11\r\n\r\n{\"data\":[]}")
            elif MODE == "reset":
                c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                return
            elif MODE in ("late", "ontime"):
                answer(c)
            else:
                flood(c, deadline)
                return
    except OSError:
        pass
    finally:
        c.close()


def main():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(256)
    s.settimeout(0.2)
    print("http://127.0.0.1:%d" % s.getsockname()[1], flush=True)
    deadline = time.monotonic() + LIFE_S
    held = []
    while time.monotonic() < deadline:
        try:
            c, _ = s.accept()
        except socket.timeout:
            continue
        if MODE == "silent":
            held.append(c)  # never answered, never closed until the end
            continue
        threading.Thread(target=serve, args=(c, deadline), daemon=True).start()


main()
