//! Issue 29.1: what a checkpoint costs. For workspaces of 10,000 and 100,000 files (100 per
//! directory, ~200 bytes each, a `.gitignore`), it times the first
//! snapshot (every file hashed: the one that runs in the background), then checkpoints with
//! nothing changed and with one file changed, and prints p50 and p90 of each against the
//! budget (30 ms for 10,000 files, 300 ms for 100,000, when little changed).
//! `cargo bench --bench checkpoint [-- SIZES]` (sizes default `10000,100000`).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed unwrap is a failed run

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use taco::checkpoint::{Limits, Point, Store};
use taco::clock::SystemClock;

const RUNS: usize = 30;

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index.min(sorted.len() - 1)]
}

fn make_workspace(ws: &Path, files: usize) {
    std::fs::write(ws.join(".gitignore"), "target/\n*.log\n").unwrap();
    for i in 0..files {
        let dir = ws.join(format!("src/m{:04}", i / 100));
        if i % 100 == 0 {
            std::fs::create_dir_all(&dir).unwrap();
        }
        let body = format!(
            "// file {i}\npub fn f{i}() -> usize {{\n    {i}\n}}\n{}\n",
            "x".repeat(140)
        );
        std::fs::write(dir.join(format!("f{i}.rs")), body).unwrap();
    }
}

fn report(name: &str, mut times: Vec<Duration>, budget: Duration) {
    times.sort();
    let (p50, p90) = (percentile(&times, 0.5), percentile(&times, 0.9));
    let verdict = if p90 <= budget { "within" } else { "OVER" };
    println!(
        "{name:<44} p50 {:>7.1} ms  p90 {:>7.1} ms  ({verdict} {} ms)",
        p50.as_secs_f64() * 1e3,
        p90.as_secs_f64() * 1e3,
        budget.as_millis()
    );
}

fn bench(files: usize) {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    make_workspace(&ws, files);
    let store = Store::open_in(
        &dir.path().join("state"),
        &ws,
        Limits::default(),
        Arc::new(SystemClock),
    )
    .unwrap();
    let budget = Duration::from_millis(if files <= 10_000 { 30 } else { 300 });
    let started = Instant::now();
    let first = store.checkpoint("first").unwrap();
    println!(
        "{files} files: first snapshot {:.0} ms (in the background), store {} KB",
        started.elapsed().as_secs_f64() * 1e3,
        store.size() / 1024
    );
    // Files written in the same second as the index are "racily clean" and re-read by git;
    // a session's checkpoints come seconds apart, so let the clock move on once.
    std::thread::sleep(Duration::from_millis(1100));
    store.checkpoint("settle").unwrap();
    let mut unchanged = Vec::new();
    for _ in 0..RUNS {
        let t = Instant::now();
        let cp = store.checkpoint("same").unwrap();
        unchanged.push(t.elapsed());
        assert!(!cp.changed);
    }
    report(
        &format!("{files} files, nothing changed"),
        unchanged,
        budget,
    );
    let mut one = Vec::new();
    let target = ws.join("src/m0000/f0.rs");
    for run in 0..RUNS {
        std::fs::write(&target, format!("// edited {run}\n")).unwrap();
        let t = Instant::now();
        let cp = store.checkpoint("edit").unwrap();
        one.push(t.elapsed());
        assert!(cp.changed);
    }
    report(&format!("{files} files, one changed"), one, budget);
    let mut new_files = Vec::new();
    for run in 0..RUNS {
        for k in 0..10 {
            std::fs::write(ws.join(format!("src/m0001/new{run}_{k}.rs")), "new\n").unwrap();
        }
        let t = Instant::now();
        store.checkpoint("shell").unwrap();
        new_files.push(t.elapsed());
    }
    report(&format!("{files} files, ten created"), new_files, budget);
    let mut diffs = Vec::new();
    for _ in 0..RUNS {
        let t = Instant::now();
        let changes = store
            .changes(&Point::Checkpoint(first.id.clone()), &Point::Workspace)
            .unwrap();
        diffs.push(t.elapsed());
        assert!(!changes.is_empty());
    }
    report(
        &format!("{files} files, changes(first, workspace)"),
        diffs,
        budget,
    );
}

fn main() {
    let sizes: Vec<usize> = std::env::args()
        .skip(1)
        .find(|a| !a.starts_with('-'))
        .map(|a| a.split(',').filter_map(|n| n.parse().ok()).collect())
        .unwrap_or_else(|| vec![10_000, 100_000]);
    for files in sizes {
        bench(files);
    }
}
