#!/usr/bin/env bash
# DESIGN §10: `taco exec` CPU and peak RSS on the reference stream (20,000 events), 64 and
# 1 events per socket read. Needs a release build (`cargo build --release`) and python3.
#   bash benches/exec_budget.sh [runs]
set -euo pipefail
cd "$(dirname "$0")/.."
taco="${CARGO_TARGET_DIR:-target}/release/taco"
runs="${1:-3}"
home=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$home"' EXIT
for per_read in 64 1; do
  exec 3< <(python3 benches/reference_server.py --per-read "$per_read")
  read -r port <&3
  for _ in $(seq "$runs"); do
    /usr/bin/time -f "per_read=$per_read user=%U sys=%S max_rss_kb=%M" \
      env -i PATH="$PATH" HOME="$home" "$taco" exec -p openai --base-url "http://127.0.0.1:$port/v1" -m m hi >/dev/null
  done
  kill %% 2>/dev/null || true
done
