#!/usr/bin/env bash
# Issue 32: what serving a run over ACP costs against `taco exec` on the same reference stream
# (20,000 events, 64 per socket read): CPU (user+sys) and peak RSS of the taco process, and the
# session/update lines the client got. The client is a few lines of Python over the pipe
# (initialize, session/new, session/prompt, read to the prompt's response). Medians are left to
# the reader; each run is printed.
# Needs a release build (`cargo build --release`) and python3.
#   bash benches/acp_budget.sh [runs]
set -euo pipefail
cd "$(dirname "$0")/.."
taco="${TACO_BIN:-${CARGO_TARGET_DIR:-target}/release/taco}"
runs="${1:-3}"
scratch=$(mktemp -d)
server=""
cleanup() {
  [ -n "$server" ] && kill "$server" 2>/dev/null
  rm -rf "$scratch"
}
trap cleanup EXIT

python3 benches/reference_server.py --per-read 64 >"$scratch/port" 2>/dev/null </dev/null &
server=$!
for _ in $(seq 50); do [ -s "$scratch/port" ] && break; sleep 0.1; done
port=$(cat "$scratch/port")
mkdir -p "$scratch/work"

cat >"$scratch/client.py" <<'PY'
import json, subprocess, sys
cmd, work = sys.argv[1:-1], sys.argv[-1]
p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
def send(obj):
    p.stdin.write((json.dumps(obj) + "\n").encode()); p.stdin.flush()
def until(id_):
    n = 0
    for line in p.stdout:
        msg = json.loads(line)
        if msg.get("id") == id_ and "method" not in msg:
            return msg, n
        n += msg.get("method") == "session/update"
    raise SystemExit("taco acp closed its output")
send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1, "clientCapabilities": {}}})
until(1)
send({"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": work, "mcpServers": []}})
sid = until(2)[0]["result"]["sessionId"]
send({"jsonrpc": "2.0", "id": 3, "method": "session/prompt", "params": {"sessionId": sid, "prompt": [{"type": "text", "text": "hi"}]}})
done, updates = until(3)
p.stdin.close(); p.wait()
print(f"updates={updates} stop={done['result']['stopReason']}", file=sys.stderr)
PY

for _ in $(seq "$runs"); do
  /usr/bin/time -f "exec user=%U sys=%S max_rss_kb=%M" \
    env -i PATH="$PATH" HOME="$scratch" "$taco" exec -p openai \
    --base-url "http://127.0.0.1:$port/v1" -m m hi >/dev/null
  env -i PATH="$PATH" HOME="$scratch" python3 "$scratch/client.py" \
    /usr/bin/time -f "acp  user=%U sys=%S max_rss_kb=%M" \
    "$taco" -p openai --base-url "http://127.0.0.1:$port/v1" -m m acp "$scratch/work"
done
