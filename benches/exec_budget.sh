#!/usr/bin/env bash
# DESIGN §10: `taco exec` CPU and peak RSS on the reference stream (20,000 events), 64 and
# 1 events per socket read. Needs a release build (`cargo build --release`) and python3.
#   bash benches/exec_budget.sh [runs]
# For each stream it also times `curl -N` reading the same bytes (when curl is installed): the
# floor a one-event-per-read stream costs any reader, since each event is a wake-up and a
# receive in the kernel. On the paced stream it samples /proc for taco's anonymous memory (heap
# and stacks: what taco itself owns), apart from the binary's mapped pages.
# With aichat installed (on PATH, or AICHAT=path) it streams the same reply through aichat in
# the same sitting, taco and aichat in turn, and prints both medians of peak RSS and their
# ratio (issue 33: taco ≤ 0.9× aichat).
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
aichat="${AICHAT:-$(command -v aichat || true)}"

# Prints the median of the numbers on stdin.
median() { sort -n | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2}'; }

# Writes aichat's config for the server on port $1 (an OpenAI-compatible client, model m).
aichat_config() {
  mkdir -p "$scratch/.config/aichat"
  cat >"$scratch/.config/aichat/config.yaml" <<YAML
model: local:m
stream: true
save: false
clients:
  - type: openai-compatible
    name: local
    api_base: http://127.0.0.1:$1/v1
    api_key: x
    models:
      - name: m
YAML
}

# Prints the largest RssAnon and RssFile (kB) seen while process $1 runs.
sample_rss() {
  local pid=$1 anon=0 file=0 a f
  while [ -r "/proc/$pid/status" ]; do
    a=$(awk '/^RssAnon:/{print $2}' "/proc/$pid/status" 2>/dev/null || true)
    f=$(awk '/^RssFile:/{print $2}' "/proc/$pid/status" 2>/dev/null || true)
    [ -n "$a" ] && [ "$a" -gt "$anon" ] && anon=$a
    [ -n "$f" ] && [ "$f" -gt "$file" ] && file=$f
    sleep 0.05
  done
  echo "rss_anon_kb=$anon rss_file_kb=$file"
}

for per_read in 64 1; do
  python3 benches/reference_server.py --per-read "$per_read" >"$scratch/port" 2>/dev/null </dev/null &
  server=$!
  for _ in $(seq 50); do [ -s "$scratch/port" ] && break; sleep 0.1; done
  port=$(cat "$scratch/port")
  : >"$scratch/taco.rss"
  : >"$scratch/aichat.rss"
  [ -n "$aichat" ] && aichat_config "$port"
  for _ in $(seq "$runs"); do
    /usr/bin/time -o "$scratch/time" -f "per_read=$per_read user=%U sys=%S max_rss_kb=%M" \
      env -i PATH="$PATH" HOME="$scratch" "$taco" exec -p openai \
      --base-url "http://127.0.0.1:$port/v1" -m m hi >/dev/null
    cat "$scratch/time"
    sed 's/.*max_rss_kb=//' "$scratch/time" >>"$scratch/taco.rss"
    if [ -n "$aichat" ]; then
      /usr/bin/time -o "$scratch/time" -f "per_read=$per_read peer=aichat user=%U sys=%S max_rss_kb=%M" \
        env -i PATH="$PATH" HOME="$scratch" "$aichat" hi >/dev/null
      cat "$scratch/time"
      sed 's/.*max_rss_kb=//' "$scratch/time" >>"$scratch/aichat.rss"
    fi
  done
  if [ -n "$aichat" ]; then
    t=$(median <"$scratch/taco.rss")
    a=$(median <"$scratch/aichat.rss")
    echo "per_read=$per_read median max_rss_kb: taco=$t aichat=$a ratio=$(awk -v t="$t" -v a="$a" 'BEGIN {printf "%.2f", t / a}')"
  fi
  if [ "$per_read" = 1 ]; then
    env -i PATH="$PATH" HOME="$scratch" "$taco" exec -p openai \
      --base-url "http://127.0.0.1:$port/v1" -m m hi >/dev/null &
    echo "per_read=1 taco $(sample_rss $!)"
    wait $! || true
  fi
  if command -v curl >/dev/null; then
    for _ in $(seq "$runs"); do
      /usr/bin/time -f "per_read=$per_read baseline=curl user=%U sys=%S max_rss_kb=%M" \
        curl -sN -X POST -H 'content-type: application/json' -d '{}' \
        "http://127.0.0.1:$port/v1/chat/completions" >/dev/null
    done
  fi
  kill "$server"
  wait "$server" 2>/dev/null || true
  server=""
  : >"$scratch/port"
done
