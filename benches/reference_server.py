#!/usr/bin/env python3
"""The DESIGN §10 reference workload: a loopback OpenAI-compatible server that streams a
20,000-token reply (one SSE event per token).

    python3 benches/reference_server.py [--per-read N] [--port P]

`--per-read` groups N events per socket write (64: the "64 events per read" budget; 1: as
real servers send). Prints the port on stdout, then serves until killed. Loopback only.
"""
import argparse
import http.server
import json
import socket
import socketserver
import time

TOKENS = 20_000


def events():
    head = {"id": "c", "object": "chat.completion.chunk", "model": "m"}
    out = []
    for i in range(TOKENS):
        delta = {"content": f"tok{i % 10} "}
        out.append("data: " + json.dumps({**head, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}) + "\n\n")
    out.append("data: " + json.dumps({**head, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}) + "\n\n")
    out.append("data: " + json.dumps({**head, "choices": [], "usage": {"prompt_tokens": 10, "completion_tokens": TOKENS}}) + "\n\n")
    out.append("data: [DONE]\n\n")
    return [e.encode() for e in out]


EVENTS = events()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    per_read = 64

    def do_POST(self):
        length = int(self.headers.get("content-length", "0"))
        self.rfile.read(length)
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("connection", "close")
        self.end_headers()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        for i in range(0, len(EVENTS), self.per_read):
            self.wfile.write(b"".join(EVENTS[i:i + self.per_read]))
            self.wfile.flush()
            if self.per_read == 1:
                # A pause between events, so each one arrives in a read of its own (as a
                # real server's tokens do), not coalesced by a client that fell behind.
                time.sleep(0.00005)
        self.close_connection = True

    def log_message(self, *args):
        pass


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--per-read", type=int, default=64)
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    Handler.per_read = max(1, args.per_read)
    with socketserver.ThreadingTCPServer(("127.0.0.1", args.port), Handler) as server:
        print(server.server_address[1], flush=True)
        server.serve_forever()


if __name__ == "__main__":
    main()
