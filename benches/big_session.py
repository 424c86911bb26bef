#!/usr/bin/env python3
"""Issue 15: builds a large session file that taco itself wrote.

taco (`exec` on the offline demo provider, in a workspace of 20 files so each run's tool
output has some bulk) writes a two-run session; its second run is then repeated, with fresh
request and call ids and later timestamps, until the file is MEGABYTES MB (about 12 KB
a run). Every line is one taco wrote, so the loader meets exactly what it meets in life.

    python3 benches/big_session.py TACO HOME MEGABYTES [--sessions N]

Writes `HOME/.local/share/taco/sessions/<id>.jsonl` (its workdir is `HOME/work`) of about
MEGABYTES MB and prints its path. With
`--sessions N`, also writes N-1 small sessions (3 runs each, other ids and workdirs) beside it,
for `taco sessions`.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import uuid

CALL_ID = re.compile(r'"(demo_[a-z_]+?)_(\d+)"')


def seed(taco, home, workdir):
    """Two demo runs written by taco; returns (path, lines)."""
    env = {"PATH": os.environ.get("PATH", ""), "HOME": home}
    for i, args in enumerate(
        [["list the files here"], ["write a note", "--resume"]]
    ):
        subprocess.run(
            [taco, "exec", "-p", "demo", *args],
            cwd=workdir,
            env=env,
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    sessions = os.path.join(home, ".local", "share", "taco", "sessions")
    names = sorted(n for n in os.listdir(sessions) if n.endswith(".jsonl"))
    path = os.path.join(sessions, names[-1])
    with open(path, encoding="utf-8") as f:
        return path, f.read().splitlines()


def split_runs(lines):
    """Header, then each run's lines (a run starts at its run_started event)."""
    header, runs = lines[0], []
    for line in lines[1:]:
        if '"type":"run_started"' in line:
            runs.append([])
        runs[-1].append(line)
    return header, runs


def shifted(line, k, offset_ms):
    """A run's line as run k: new ids, timestamps moved by offset_ms."""
    value = json.loads(line)
    if "timestamp" in value:
        value["timestamp"] += offset_ms
    if "request_id" in value:
        value["request_id"] = str(uuid.UUID(int=k + 1))
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return CALL_ID.sub(lambda m: f'"{m.group(1)}_{k}x{m.group(2)}"', text)


def write_session(path, header, runs, count, gap_ms=60_000):
    first, repeat = runs[0], runs[-1]
    with open(path, "w", encoding="utf-8") as out:
        out.write(header + "\n")
        for line in first:
            out.write(line + "\n")
        for k in range(1, count):
            for line in repeat:
                out.write(shifted(line, k, k * gap_ms) + "\n")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("taco")
    parser.add_argument("home")
    parser.add_argument("megabytes", type=float)
    parser.add_argument("--sessions", type=int, default=1)
    args = parser.parse_args()
    workdir = os.path.join(args.home, "work")
    os.makedirs(workdir, exist_ok=True)
    for i in range(20):
        name = f"module_{i:02d}_with_a_fairly_descriptive_name.rs"
        with open(os.path.join(workdir, name), "w") as f:
            f.write("fn main() {}\n" * (i + 1))
    path, lines = seed(args.taco, args.home, workdir)
    header, runs = split_runs(lines)
    per_run = sum(len(line) + 1 for line in runs[-1])
    count = max(2, int(args.megabytes * 1_000_000 / per_run))
    write_session(path, header, runs, count)
    base = json.loads(header)
    sessions = os.path.dirname(path)
    for n in range(1, args.sessions):
        other = dict(base)
        other["id"] = f"20250101-{n // 3600 % 24:02d}{n // 60 % 60:02d}{n % 60:02d}-{n:06x}"
        other["workdir"] = f"/tmp/project-{n % 50}"
        other["started"] = base["started"] - n * 3_600_000
        write_session(
            os.path.join(sessions, other["id"] + ".jsonl"),
            json.dumps(other, separators=(",", ":")),
            runs,
            3,
        )
    print(path)


if __name__ == "__main__":
    sys.exit(main())
