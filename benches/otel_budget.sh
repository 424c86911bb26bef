#!/usr/bin/env bash
# Issue 31's budget: what OpenTelemetry export costs `taco exec` on the reference stream
# (20,000 events, 64 per socket read): CPU (user+sys), peak RSS and wall time with export off,
# on to a loopback OTLP/HTTP collector that accepts every export, on to a dead one (nothing
# listens) and on to a slow one (each export answered after 1 s). Medians of N runs.
# Needs a release build (`cargo build --release`) and python3.
#   bash benches/otel_budget.sh [runs]
set -euo pipefail
cd "$(dirname "$0")/.."
taco="${TACO_BIN:-${CARGO_TARGET_DIR:-target}/release/taco}"
runs="${1:-5}"
scratch=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  rm -rf "$scratch"
}
trap cleanup EXIT

python3 benches/reference_server.py --per-read 64 >"$scratch/port" 2>/dev/null </dev/null &
pids+=($!)
# The collector: 200 with an empty protobuf body to every POST; counts what it got.
cat >"$scratch/collector.py" <<'PY'
import http.server, sys, time
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        n = int(self.headers.get("content-length", 0))
        self.rfile.read(n)
        if len(sys.argv) > 2:
            time.sleep(float(sys.argv[2]))
        with open(sys.argv[1], "a") as f:
            f.write(f"{n}\n")
        self.send_response(200)
        self.send_header("content-type", "application/x-protobuf")
        self.send_header("content-length", "0")
        self.end_headers()
    def log_message(self, *a):
        pass
s = http.server.HTTPServer(("127.0.0.1", 0), H)
print(s.server_address[1], flush=True)
s.serve_forever()
PY
python3 "$scratch/collector.py" "$scratch/exports" >"$scratch/cport" 2>/dev/null </dev/null &
pids+=($!)
python3 "$scratch/collector.py" "$scratch/slow_exports" 1.0 >"$scratch/sport" 2>/dev/null </dev/null &
pids+=($!)
for _ in $(seq 50); do [ -s "$scratch/port" ] && [ -s "$scratch/cport" ] && [ -s "$scratch/sport" ] && break; sleep 0.1; done
port=$(cat "$scratch/port")
cport=$(cat "$scratch/cport")
sport=$(cat "$scratch/sport")
# A port nothing listens on.
dport=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
cat >"$scratch/run.py" <<'PY'
import os, resource, subprocess, sys, time
start = time.monotonic()
subprocess.run(sys.argv[2:], check=False)
wall = time.monotonic() - start
r = resource.getrusage(resource.RUSAGE_CHILDREN)
with open(sys.argv[1], "w") as f:
    f.write(f"{r.ru_utime + r.ru_stime:.4f} {r.ru_maxrss} {wall:.3f}\n")
PY

for mode in off on dead slow; do
  : >"$scratch/cpu"; : >"$scratch/rss"; : >"$scratch/wall"
  for _ in $(seq "$runs"); do
    extra=()
    case "$mode" in
      on) extra=(OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:$cport") ;;
      dead) extra=(OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:$dport") ;;
      slow) extra=(OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:$sport") ;;
    esac
    # getrusage of the child: CPU in microseconds (time(1) rounds to 10 ms).
    python3 "$scratch/run.py" "$scratch/t" \
      env -i PATH="$PATH" HOME="$scratch" "${extra[@]}" "$taco" exec -p openai \
      --base-url "http://127.0.0.1:$port/v1" -m m hi >/dev/null 2>"$scratch/err"
    read -r cpu rss wall <"$scratch/t"
    echo "$cpu" >>"$scratch/cpu"
    echo "$rss" >>"$scratch/rss"
    echo "$wall" >>"$scratch/wall"
  done
  echo "otel=$mode stderr lines mentioning OpenTelemetry (last run): $(grep -c OpenTelemetry "$scratch/err" || true)"
  total=$(awk '{s += $1} END {printf "%.3f", s}' "$scratch/cpu")
  echo "otel=$mode runs=$runs cpu_s_median=$(median <"$scratch/cpu") cpu_s_total=$total max_rss_kb_median=$(median <"$scratch/rss") wall_s_median=$(median <"$scratch/wall")"
done
echo "exports received: $(wc -l <"$scratch/exports" 2>/dev/null || echo 0)"
echo "binary: $(stat -c %s "$taco") bytes"
