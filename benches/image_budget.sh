#!/usr/bin/env bash
# Issue 30.5: what an image in the prompt costs `taco exec` (CPU, wall, peak RSS) against the
# reference server: no image, an 800×600 PNG (sent as it is) and a 4032×3024 PNG (12 MP,
# downscaled to 1568 px and re-encoded). Needs a release build and python3.
#   bash benches/image_budget.sh [runs]
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

# Gradient PNGs written with zlib alone (no imaging library needed).
python3 - "$scratch" <<'PY'
import struct, sys, zlib
def png(path, w, h):
    row = bytearray()
    for x in range(w):
        row += bytes((x * 255 // w, 0, (x * 3) & 255))
    rows = []
    for y in range(h):
        r = bytearray(row)
        r[1::3] = bytes([y * 255 // h]) * w
        rows.append(b"\x00" + bytes(r))
    def chunk(t, d):
        return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xFFFFFFFF)
    data = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
    data += chunk(b"IDAT", zlib.compress(b"".join(rows), 6)) + chunk(b"IEND", b"")
    open(path, "wb").write(data)
png(sys.argv[1] + "/small.png", 800, 600)
png(sys.argv[1] + "/photo.png", 4032, 3024)
PY
printf '[providers.openai.options]\nvision = true\nmax_attempts = 1\n' >"$scratch/taco.toml"

python3 benches/reference_server.py --per-read 64 >"$scratch/port" 2>/dev/null </dev/null &
server=$!
for _ in $(seq 50); do [ -s "$scratch/port" ] && break; sleep 0.1; done
port=$(cat "$scratch/port")
for prompt in "hi" "describe $scratch/small.png" "describe $scratch/photo.png"; do
  for _ in $(seq "$runs"); do
    /usr/bin/time -f "[${prompt##*/}] user=%U sys=%S wall=%e max_rss_kb=%M" \
      env -i PATH="$PATH" HOME="$scratch" TACO_CONFIG="$scratch/taco.toml" "$taco" exec \
      -p openai --base-url "http://127.0.0.1:$port/v1" -m m "$prompt" >/dev/null
  done
done
