#!/usr/bin/env bash
# DESIGN §10: writes layout/hot-functions.txt, the functions the release link places first
# (build.rs): those `taco exec` runs on the reference stream, then those a live TUI session
# runs (benches/live_session.sh, RUNS runs, default 30), as callgrind names them. The names
# carry their crates' hashes: run it again after a toolchain or dependency update (a stale
# name is skipped by the linker, so an old list only packs less). Needs valgrind, python3,
# tmux and curl; ends with the normal release build, linked with the new list.
#   bash benches/layout_profile.sh [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-30}"
scratch=$(mktemp -d)
server=""
cleanup() {
  [ -n "$server" ] && kill "$server" 2>/dev/null
  rm -rf "$scratch"
}
trap cleanup EXIT

# The names are the release build's own: build.rs keeps the symbol table, nothing else changes.
TACO_KEEP_SYMBOLS=1 cargo build --release
cp target/release/taco "$scratch/taco"
grind=(valgrind --tool=callgrind --demangle=no --log-file="$scratch/valgrind.log")

python3 benches/reference_server.py --per-read 64 >"$scratch/port" 2>/dev/null </dev/null &
server=$!
for _ in $(seq 50); do [ -s "$scratch/port" ] && break; sleep 0.1; done
mkdir "$scratch/home"
env -i PATH="$PATH" HOME="$scratch/home" "${grind[@]}" --callgrind-out-file="$scratch/exec.cg" \
  "$scratch/taco" exec -p openai --base-url "http://127.0.0.1:$(cat "$scratch/port")/v1" \
  -m m hi >/dev/null
kill "$server"
wait "$server" 2>/dev/null || true
server=""

cat >"$scratch/tui" <<WRAP
#!/bin/sh
exec ${grind[*]} --callgrind-out-file=$scratch/tui.cg $scratch/taco "\$@"
WRAP
chmod +x "$scratch/tui"
TACO_BIN="$scratch/tui" bash benches/live_session.sh "$runs"

python3 - "$scratch" >layout/hot-functions.txt <<'PY'
import subprocess, sys
scratch = sys.argv[1]
binary = f"{scratch}/taco"
nm = subprocess.run(["nm", "--defined-only", binary], capture_output=True, text=True, check=True)
code = {p[2] for p in (l.split() for l in nm.stdout.splitlines()) if len(p) == 3 and p[1] in "tTwW"}

def ran(profile):
    """The binary's functions the profile saw run, the costliest first."""
    out = subprocess.run(["callgrind_annotate", "--threshold=100", profile],
                         capture_output=True, text=True, check=True).stdout
    names = []
    for line in out.splitlines():
        if not line.endswith(f"[{binary}]"):
            continue
        name = line.rsplit(" [", 1)[0].split(":", 1)[-1].split("'", 1)[0]
        if name in code and name not in names:
            names.append(name)
    return names

def inputs_hash():
    """FNV-1a (64 bits) of `rustc -vV`, Cargo.toml and Cargo.lock: build.rs warns when the
    list was made for others (its names carry hashes of them)."""
    h = 0xcbf29ce484222325
    version = subprocess.run(["rustc", "-vV"], capture_output=True, check=True).stdout
    for part in (version, open("Cargo.toml", "rb").read(), open("Cargo.lock", "rb").read()):
        for b in part:
            h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"

exec_fns = ran(f"{scratch}/exec.cg")
tui_fns = [n for n in ran(f"{scratch}/tui.cg") if n not in set(exec_fns)]
print("# The functions the release link places first (build.rs; DESIGN §10), made by")
print("# benches/layout_profile.sh: what `taco exec` ran on the reference stream, then what a")
print(f"# live TUI session ran besides. {len(exec_fns)} + {len(tui_fns)} names.")
print(f"# made for: {inputs_hash()} (FNV-1a of rustc -vV, Cargo.toml, Cargo.lock)")
for n in exec_fns + tui_fns:
    print(n)
PY
wc -l layout/hot-functions.txt
cargo build --release
