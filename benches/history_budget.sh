#!/usr/bin/env bash
# Issue 15: what history costs. Builds session files taco wrote (benches/big_session.py), then
# measures on the release binary:
#   - `taco --resume` on a 40 MB (and, with --big, a 400 MB) session: first frame (from the
#     log), CPU and peak RSS of the whole launch (quit right after the first frame);
#   - `taco exec --resume` on the 40 MB session: CPU and peak RSS;
#   - `taco sessions` over 1,000 and 10,000 sessions: wall time (the first listing builds the
#     session index, as after a lost one).
# Needs a release build, python3, tmux and GNU time.
#   bash benches/history_budget.sh [--big]
set -euo pipefail
cd "$(dirname "$0")/.."
taco="$(realpath "${TACO_BIN:-${CARGO_TARGET_DIR:-target}/release/taco}")"
big="${1:-}"
scratch=$(mktemp -d)
socket="taco-history-$$"
trap 'tmux -L "$socket" kill-server 2>/dev/null || true; rm -rf "$scratch"' EXIT

# The first frame of `taco --resume` in HOME, then quit; prints the log line and time's line.
resume_tui() {
  local home="$1" label="$2"
  local log="$home/.local/state/taco/taco.log"
  : >"$log" 2>/dev/null || true
  tmux -L "$socket" new-session -d -s t -x 200 -y 50 \
    "cd $home/work && env -i PATH=$PATH HOME=$home TERM=xterm-256color \
     /usr/bin/time -o $home/time -f 'user=%U sys=%S max_rss_kb=%M' $taco -p demo --resume"
  for _ in $(seq 600); do
    grep -q "first frame" "$log" 2>/dev/null && break
    sleep 0.05
  done
  sleep 0.5
  tmux -L "$socket" send-keys -t t C-c
  sleep 0.2
  tmux -L "$socket" send-keys -t t C-c
  for _ in $(seq 200); do [ -s "$home/time" ] && break; sleep 0.05; done
  tmux -L "$socket" kill-server 2>/dev/null || true
  local ms
  ms=$(grep -h "first frame" "$log" | tail -1 | grep -o 'ms_since_launch=[0-9.]*' || echo "?")
  echo "$label tui --resume: $ms $(cat "$home/time" 2>/dev/null || echo 'time: ?')"
  rm -f "$home/time"
}

sizes=(40)
[ "$big" = "--big" ] && sizes+=(400)
for mb in "${sizes[@]}"; do
  home="$scratch/h$mb"
  mkdir -p "$home"
  file=$(python3 benches/big_session.py "$taco" "$home" "$mb")
  # The file was just written: let its pages reach the disk before anything is timed.
  sync
  echo "${mb} MB session: $(wc -c <"$file") bytes, $(wc -l <"$file") lines, $(grep -c '"type":"run_started"' "$file") runs"
  # The file was written by this script, so the session index has no row for it yet: the
  # first resume builds it (as after a lost index); the next ones find it.
  resume_tui "$home" "${mb} MB (index built)"
  resume_tui "$home" "${mb} MB"
  resume_tui "$home" "${mb} MB"
  if [ "$mb" = 40 ]; then
    for _ in 1 2 3; do
      (cd "$home/work" && env -i PATH="$PATH" HOME="$home" /usr/bin/time \
        -f "40 MB exec --resume: user=%U sys=%S max_rss_kb=%M" \
        "$taco" exec -p demo "hi" --resume 2>&1 >/dev/null | tail -1)
    done
  fi
done

for n in 1000 10000; do
  home="$scratch/s$n"
  mkdir -p "$home"
  python3 benches/big_session.py "$taco" "$home" 0.05 --sessions "$n" >/dev/null
  for _ in 1 2 3; do
    start=$(date +%s%N)
    env -i PATH="$PATH" HOME="$home" "$taco" sessions >/dev/null
    echo "taco sessions over $n sessions: $(( ($(date +%s%N) - start) / 1000000 )) ms"
  done
done
