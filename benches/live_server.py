#!/usr/bin/env python3
"""A loopback OpenAI-compatible server for a long live TUI session (benches/live_session.sh).

    python3 benches/live_server.py [--port P] [--burst]

With --burst each reply is written at once instead of paced (the TUI draws a frame or two an
answer, not dozens): the same session, written many times faster, for 20,000-run measures of
memory (`BURST=1 bash benches/live_session.sh 20000`).

Each request's last message decides the reply:
  - a user message "run N …": every fifth run (N % 5 == 0) one call to a built-in tool that
    needs no approval (read_file, list_dir, search_files in turn); else the answer;
  - a tool result: the answer.
The answer is a streamed Markdown reply of about 300 tokens (headings, a list, a table, a
Rust code block, inline code), one SSE event per word, paced so frames are drawn mid-stream;
every third run streams a short reasoning first. The words vary with N, as real answers do.

GET /count answers how many answers (finished runs) were streamed in full, and how many
requests came; GET /wait?n=N answers the same once N answers are done (or after 60 s): the
driver paces on it, one request a run, so polling costs the measured process no CPU.
GET /v1/models lists the one model "m". Prints the port on stdout, then serves until
killed. Loopback only.
"""
import argparse
import http.server
import json
import socket
import socketserver
import sys
import threading
import time

TOOLS = [
    ("read_file", {"path": "notes.md"}),
    ("list_dir", {"path": "src"}),
    ("search_files", {"pattern": "fn [a-z_]+", "glob": "*.rs"}),
]

BURST = False
LOCK = threading.Condition()
FINISHED = 0
REQUESTS = 0


def run_number(messages):
    """N of the newest "run N" user message, else 0."""
    for message in reversed(messages):
        if message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, list):
                content = " ".join(p.get("text", "") for p in content if isinstance(p, dict))
            words = (content or "").split()
            if len(words) >= 2 and words[0] == "run" and words[1].rstrip(":").isdigit():
                return int(words[1].rstrip(":"))
            return 0
    return 0


def answer(n):
    """The Markdown answer of run n (about 300 tokens)."""
    k = n % 17
    return f"""## Run {n}: what the module does

The loader reads the file in **{4 + k} chunks** and keeps only the tail it needs, so a
session of *any* size opens quickly. Here is how the parts fit together, step by step:

1. `open_tail` walks backwards in 1 MiB chunks until run {n} is covered.
2. Each line is typed by its first bytes, so most lines are never parsed.
3. The index row (size, mtime, {k * 3} turns) says where the newest compaction starts.
4. What was skipped still counts in the session's tokens and cost.

| part | lines | cost per run |
|---|---|---|
| reader | {120 + k} | {k}.{n % 10} µs |
| index | {80 + 2 * k} | 0.{k} µs |
| tail | {200 + k} | {3 * k} µs |

```rust
/// Reads the newest {k + 1} runs of a session.
pub fn read_tail(path: &Path, runs: usize) -> io::Result<Vec<Entry>> {{
    let mut file = File::open(path)?;
    let end = file.seek(SeekFrom::End(0))?;
    let mut found = Vec::with_capacity(runs * {k + 2});
    for chunk in Chunks::backwards(&mut file, end, 1 << 20) {{
        let chunk = chunk?;
        found.extend(chunk.lines().filter(|l| l.starts_with(b"{{")).map(Entry::parse));
        if found.len() >= runs {{
            break;
        }}
    }}
    Ok(found)
}}
```

A few things to watch:

- The `Chunks` iterator must not split a UTF-8 character; it cuts at line ends only.
- A torn last line (a crash mid-write) is skipped with a warning, never an error.
- Run {n} used {1000 + 37 * k} tokens in and {200 + 11 * k} out.

> Note: nothing here allocates per line beyond the entries kept.

That is all for run {n}; ask again if you want the index format in detail.
"""


def reasoning(n):
    return (f"The user asks about run {n}. I should explain the loader, show the code and "
            f"list the parts with their sizes. Keep it short and concrete. ") * 2


HEAD = {"id": "c", "object": "chat.completion.chunk", "model": "m"}


def sse(delta, finish=None):
    body = {**HEAD, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    return ("data: " + json.dumps(body) + "\n\n").encode()


def usage(prompt, completion):
    body = {**HEAD, "choices": [], "usage": {"prompt_tokens": prompt, "completion_tokens": completion}}
    return ("data: " + json.dumps(body) + "\n\n").encode()


def words(text):
    """The text cut after each space or newline: one piece per token, roughly."""
    out, start = [], 0
    for i, c in enumerate(text):
        if c in " \n":
            out.append(text[start:i + 1])
            start = i + 1
    if start < len(text):
        out.append(text[start:])
    return out


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):
        if self.path == "/count" or self.path.startswith("/wait?n="):
            wanted = int(self.path.partition("=")[2] or 0)
            with LOCK:
                LOCK.wait_for(lambda: FINISHED >= wanted, timeout=60)
                body = f"{FINISHED} {REQUESTS}\n".encode()
            self.reply(200, "text/plain", body)
        elif self.path.endswith("/models"):
            self.reply(200, "application/json", json.dumps({"data": [{"id": "m"}]}).encode())
        else:
            self.reply(404, "text/plain", b"not found\n")

    def reply(self, status, kind, body):
        self.send_response(status)
        self.send_header("content-type", kind)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        global FINISHED, REQUESTS
        length = int(self.headers.get("content-length", "0"))
        request = json.loads(self.rfile.read(length) or b"{}")
        messages = request.get("messages", [])
        n = run_number(messages)
        last = messages[-1].get("role") if messages else None
        with LOCK:
            REQUESTS += 1
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("connection", "close")
        self.end_headers()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        prompt = 500 + 40 * len(messages)
        if last == "user" and n > 0 and n % 5 == 0:
            name, args = TOOLS[(n // 5) % len(TOOLS)]
            call = {"index": 0, "id": f"call_{n}", "type": "function",
                    "function": {"name": name, "arguments": json.dumps(args)}}
            self.send([sse({"role": "assistant", "content": None}),
                       sse({"content": f"Let me look at the workspace for run {n} first."}),
                       sse({"tool_calls": [call]}),
                       sse({}, "tool_calls"), usage(prompt, 30), b"data: [DONE]\n\n"])
        else:
            events = [sse({"role": "assistant", "content": ""})]
            if n % 3 == 0:
                events += [sse({"reasoning_content": w}) for w in words(reasoning(n))]
            pieces = words(answer(n))
            events += [sse({"content": w}) for w in pieces]
            events += [sse({}, "stop"), usage(prompt, len(pieces)), b"data: [DONE]\n\n"]
            self.send(events)
            with LOCK:
                FINISHED += 1
                LOCK.notify_all()
        self.close_connection = True

    def send(self, events):
        if BURST:
            self.wfile.write(b"".join(events))
            self.wfile.flush()
            return
        # Eight events a write, 3 ms apart: ~300 tokens arrive over ~0.1 s, as a fast model
        # streams, so the TUI draws frames while the answer grows.
        for i in range(0, len(events), 8):
            self.wfile.write(b"".join(events[i:i + 8]))
            self.wfile.flush()
            time.sleep(0.003)

    def log_message(self, *args):
        pass


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--burst", action="store_true")
    args = parser.parse_args()
    global BURST
    BURST = args.burst
    with socketserver.ThreadingTCPServer(("127.0.0.1", args.port), Handler) as server:
        server.daemon_threads = True
        print(server.server_address[1], flush=True)
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            sys.exit(0)


if __name__ == "__main__":
    main()
