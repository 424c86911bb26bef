#!/usr/bin/env bash
# Issue 15: the memory and frame times of a long live TUI session. Starts the release taco TUI
# in tmux at 200×60 against a loopback OpenAI-compatible server (benches/live_server.py), in a
# temp HOME and workdir, and drives it through RUNS runs (default 2,000): each types a prompt
# and Enter, then waits for the server's count of finished answers. Answers are ~300-token
# Markdown replies streamed word by word; every fifth run first calls a built-in tool that
# needs no approval (read_file, list_dir, search_files in turn), so the chat's tool cells, the
# stack and the timeline fill as in real use. Prints taco's VmRSS every 100 runs, its memory
# at the end (/proc/PID/smaps_rollup), then quits taco with its quit key (Ctrl-C twice) and
# prints the log's `tui quit` line: frames drawn, draw p50/p99/max, peak RSS (VmHWM).
# BURST=1 has the server write each reply at once (a frame or two an answer instead of
# dozens): the same session many times faster, for the 20,000-run memory figure.
# Needs a release build (`cargo build --release`), python3 and tmux.
#   bash benches/live_session.sh [RUNS]
#   BURST=1 bash benches/live_session.sh 20000
# MALLOC_ARENA_MAX=N is passed to taco (glibc's arenas: measuring them against memory and CPU).
set -euo pipefail
cd "$(dirname "$0")/.."
taco="$(realpath "${TACO_BIN:-${CARGO_TARGET_DIR:-target}/release/taco}")"
runs="${1:-2000}"
scratch=$(mktemp -d)
socket="taco-live-$$"
server=""
cleanup() {
  tmux -L "$socket" kill-server 2>/dev/null || true
  if [ -n "$server" ]; then
    kill "$server" 2>/dev/null || true
    wait "$server" 2>/dev/null || true
  fi
  rm -rf "$scratch"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

home="$scratch/home"
work="$scratch/work"
log="$home/.local/state/taco/taco.log"
mkdir -p "$home" "$work/src"
# A workspace for the tools to read: a notes file of a few KiB and some Rust sources.
for i in $(seq 60); do
  echo "- item $i: the loader keeps the tail of a session and an index of the rest ($i)"
done >"$work/notes.md"
for f in loader index tail reader writer; do
  for i in $(seq 40); do
    printf 'pub fn %s_%d(input: &str) -> usize {\n    input.len() + %d\n}\n\n' "$f" "$i" "$i"
  done >"$work/src/$f.rs"
done

# Fails with what the screen shows; "$1" says what was awaited.
fail() {
  echo "live_session: $1" >&2
  tmux -L "$socket" capture-pane -p -t t 2>/dev/null | tail -20 >&2 || true
  exit 1
}

# Waits up to $1 seconds for the command in the remaining arguments to succeed.
wait_until() {
  local limit=$(( $1 * 20 ))
  shift
  for _ in $(seq "$limit"); do
    "$@" && return 0
    sleep 0.05
  done
  return 1
}

burst=()
[ "${BURST:-0}" = 1 ] && burst=(--burst)
python3 benches/live_server.py "${burst[@]}" >"$scratch/port" 2>"$scratch/server.err" </dev/null &
server=$!
wait_until 10 test -s "$scratch/port" || fail "the server did not start"
port=$(cat "$scratch/port")
# Waits (at most 60 s, in the server) for the Nth answer to be streamed whole.
answered() {
  local done
  done=$(curl -s --max-time 65 "http://127.0.0.1:$port/wait?n=$1" | cut -d' ' -f1)
  [ "${done:-0}" -ge "$1" ]
}

tmux -L "$socket" new-session -d -s t -x 200 -y 60 \
  "cd $work && echo \$\$ >$scratch/pid && exec env -i PATH=$PATH HOME=$home TERM=xterm-256color \
   ${MALLOC_ARENA_MAX:+MALLOC_ARENA_MAX=$MALLOC_ARENA_MAX} \
   $taco -p openai --base-url http://127.0.0.1:$port/v1 -m m"
wait_until 30 grep -q "first frame" "$log" 2>/dev/null || fail "no first frame in 30 s"
pid=$(cat "$scratch/pid")
alive() { [ -r "/proc/$pid/status" ]; }
vm() { awk -v k="$1:" '$1 == k {print $2}' "/proc/$pid/status"; }

echo "taco pid $pid, server port $port, $runs runs at 200x60; load average $(cut -d' ' -f1-3 /proc/loadavg)"
start=$(date +%s)
for i in $(seq "$runs"); do
  tmux -L "$socket" send-keys -t t -l "run $i: explain how the loader reads the session"
  tmux -L "$socket" send-keys -t t Enter
  answered "$i" || fail "run $i did not finish in 60 s"
  alive || fail "taco exited during run $i"
  if [ $(( i % 100 )) = 0 ] || [ "$i" = "$runs" ]; then
    echo "runs=$i rss_kb=$(vm VmRSS) anon_kb=$(vm RssAnon) elapsed_s=$(( $(date +%s) - start ))"
  fi
done
# The last answer is on screen and the run over (the stack empty) before the end is measured.
sleep 1
echo "load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "after $runs runs: $(grep -E '^(Rss|Anonymous|Private_Dirty)' "/proc/$pid/smaps_rollup" | tr -s ' ' | tr '\n' ' ')"
read -r utime stime < <(awk '{print $14, $15}' "/proc/$pid/stat")
ticks=$(getconf CLK_TCK)
echo "taco cpu: user=$(( utime / ticks ))s sys=$(( stime / ticks ))s; server: $(curl -s --max-time 5 "http://127.0.0.1:$port/count" | awk '{print $1 " answers, " $2 " requests"}')"
session=$(ls -t "$home"/.local/share/taco/sessions/*.jsonl 2>/dev/null | head -1 || true)
[ -n "$session" ] && echo "session file: $(wc -c <"$session") bytes, $(wc -l <"$session") lines"

tmux -L "$socket" send-keys -t t C-c
sleep 0.2
tmux -L "$socket" send-keys -t t C-c
wait_until 10 eval '! alive' || fail "taco did not quit in 10 s"
wait_until 5 grep -q "tui quit" "$log" || fail "no tui quit line in the log"
grep -h "tui quit" "$log" | tail -1
