#!/usr/bin/env bash
# DESIGN §10: `taco exec` CPU and peak RSS on the reference stream (20,000 events), 64 and
# 1 events per socket read. Needs a release build (`cargo build --release`) and python3.
#   bash benches/exec_budget.sh [runs]
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
for per_read in 64 1; do
  python3 benches/reference_server.py --per-read "$per_read" >"$scratch/port" 2>/dev/null </dev/null &
  server=$!
  for _ in $(seq 50); do [ -s "$scratch/port" ] && break; sleep 0.1; done
  port=$(cat "$scratch/port")
  for _ in $(seq "$runs"); do
    /usr/bin/time -f "per_read=$per_read user=%U sys=%S max_rss_kb=%M" \
      env -i PATH="$PATH" HOME="$scratch" "$taco" exec -p openai \
      --base-url "http://127.0.0.1:$port/v1" -m m hi >/dev/null
  done
  kill "$server"
  wait "$server" 2>/dev/null || true
  server=""
  : >"$scratch/port"
done
