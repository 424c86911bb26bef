//! Syntax highlighting cost (issue 13). Before criterion runs, the first highlight of a
//! 200-line Rust block (grammar loaded, its regexes compiled) is timed in fresh processes,
//! since it happens once per process; criterion then times a block seen for the first time
//! (grammar warm), the same block again (cached), one more line of a streamed block, and a
//! 64 KiB JSON payload (the JSON cap) seen for the first time.
//!
//!   cargo bench --bench highlight

use std::hint::black_box;
use std::process::Command;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use taco::tui::highlight;

/// Set in the child processes that time a cold first highlight.
const COLD: &str = "TACO_BENCH_HIGHLIGHT_COLD";

/// 200 lines of ordinary Rust; `seed` makes the text differ so the cache cannot answer.
fn block(seed: usize) -> String {
    let mut out = String::new();
    for i in 0..20 {
        out.push_str(&format!(
            "/// Loads item {i} (seed {seed}).\n\
             pub fn load_{i}(path: &str, limit: usize) -> Result<Vec<String>, Error> {{\n\
             \x20   let text = std::fs::read_to_string(path)?; // the whole file\n\
             \x20   let mut out = Vec::with_capacity(limit.min(1_024));\n\
             \x20   for (n, line) in text.lines().enumerate().take(limit) {{\n\
             \x20       if line.starts_with(\"#\") || n % {m} == 0 {{ continue; }}\n\
             \x20       out.push(format!(\"{{n}}: {{line}}\"));\n\
             \x20   }}\n\
             \x20   Ok(out)\n\
             }}\n",
            m = i + 2
        ));
    }
    out
}

/// The process's resident set in KiB (Linux; 0 elsewhere).
fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// In a child: one cold highlight; its time in microseconds and the RSS it added in KiB.
fn cold_child() {
    let code = block(0);
    let before = rss_kib();
    let start = Instant::now();
    let painted = highlight::code("rust", &code);
    let took = start.elapsed();
    assert!(painted.is_some_and(|p| p.line(199).is_some()));
    println!("{} {}", took.as_micros(), rss_kib().saturating_sub(before));
}

/// Medians of five cold first highlights, each in a new process.
fn report_cold() {
    let Ok(exe) = std::env::current_exe() else {
        return;
    };
    let runs: Vec<(u64, u64)> = (0..5)
        .filter_map(|_| Command::new(&exe).env(COLD, "1").output().ok())
        .filter_map(|out| {
            let text = String::from_utf8(out.stdout).ok()?;
            let mut parts = text.split_whitespace().map(|p| p.parse().ok());
            Some((parts.next()??, parts.next()??))
        })
        .collect();
    let median = |mut v: Vec<u64>| {
        v.sort_unstable();
        v.get(v.len() / 2).copied().unwrap_or(0)
    };
    let time = median(runs.iter().map(|r| r.0).collect());
    let rss = median(runs.iter().map(|r| r.1).collect());
    println!(
        "first highlight of 200 lines of Rust (grammar load + regex compile + highlight), \
         median of {} processes: {:.1} ms, +{:.1} MiB RSS",
        runs.len(),
        time as f64 / 1000.0,
        rss as f64 / 1024.0
    );
}

fn bench(c: &mut Criterion) {
    if std::env::var_os(COLD).is_some() {
        cold_child();
        std::process::exit(0);
    }
    report_cold();
    let mut group = c.benchmark_group("highlight_rust_200_lines");
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(3));
    group.sample_size(20);
    let mut seed = 1;
    group.bench_function("new_block", |b| {
        b.iter(|| {
            seed += 1;
            black_box(highlight::code("rust", &block(seed)))
        })
    });
    let cached = block(0);
    highlight::code("rust", &cached);
    group.bench_function("cached_block", |b| {
        b.iter(|| black_box(highlight::code("rust", &cached)))
    });
    // A streamed answer: the block grows a line at a time, each step highlighted again.
    let lines: Vec<String> = block(7).lines().map(|l| format!("{l}\n")).collect();
    let mut text = String::new();
    let mut next = 0;
    group.bench_function("streamed_line", |b| {
        b.iter(|| {
            if next == lines.len() {
                text.clear();
                next = 0;
                text.push_str(&format!("// round {seed}\n"));
                seed += 1;
            }
            text.push_str(&lines[next]);
            next += 1;
            black_box(highlight::code("rust", &text))
        })
    });
    group.finish();

    let mut group = c.benchmark_group("highlight_json_64k");
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(3));
    group.sample_size(20);
    let item = "  \"key\": {\"name\": \"a value\", \"n\": 12.5, \"ok\": true},\n";
    let body = item.repeat(highlight::MAX_JSON_BYTES / item.len());
    group.bench_function("new_payload", |b| {
        b.iter(|| {
            seed += 1;
            black_box(highlight::code(
                "json",
                &format!("{{\"seed\": {seed},\n{body}}}"),
            ))
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
