#!/usr/bin/env bash
# Issue 12: the TUI's first frame does not wait for MCP servers. Starts taco in tmux with a
# server that takes 5 s to start (the fixture behind `sleep 5`), reads the `first frame` line
# of the log, and the time the server's tools took to appear in `taco mcp list`.
# Needs a release build, the fixture (`cargo build --release --example mcp_fixture`) and tmux.
#   bash benches/mcp_first_frame.sh
set -euo pipefail
cd "$(dirname "$0")/.."
target="${CARGO_TARGET_DIR:-target}/release"
taco="$target/taco"
fixture="$target/examples/mcp_fixture"
scratch=$(mktemp -d)
trap 'tmux kill-session -t taco-ff 2>/dev/null || true; rm -rf "$scratch"' EXIT
cat >"$scratch/config.toml" <<TOML
[mcp.servers.slow]
command = "sh"
args = ["-c", "sleep 5; exec $fixture"]
startup_timeout_secs = 20
TOML
mkdir -p "$scratch/home"
tmux new-session -d -s taco-ff -x 120 -y 35 \
  "env HOME=$scratch/home XDG_STATE_HOME=$scratch/home/state $taco -c $scratch/config.toml -p demo"
sleep 2
grep -h "first frame" "$scratch"/home/state/taco/taco.log* | tail -1
tmux kill-session -t taco-ff
start=$(date +%s.%N)
env HOME="$scratch/home" "$taco" -c "$scratch/config.toml" mcp list | head -1
echo "mcp list with the 5 s server: $(echo "$(date +%s.%N) - $start" | bc) s"
