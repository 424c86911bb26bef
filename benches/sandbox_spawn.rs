//! Issue 26: what the sandbox costs per command. The real `shell` tool runs `true` in a temp
//! workspace 300 times in each setup — no sandbox (only the capability drop and the fd
//! marking every tool child gets), Landlock alone (the guard of `eb8318c`), Landlock with the
//! read-only mount namespace, Landlock with the seccomp filter — and prints p50 and p90 of a
//! call. `cargo bench --bench sandbox_spawn`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed unwrap is a failed run

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use taco::sandbox::{Metadata, NAMESPACE_SWITCH, Sandbox, SandboxMode};
use taco::tools::builtin::Shell;
use taco::tools::{Tool, ToolContext, ToolSettings};
use tokio_util::sync::CancellationToken;

const RUNS: usize = 300;

fn context(ws: &Path, sandbox: Sandbox) -> ToolContext {
    ToolContext {
        workdir: ws.to_path_buf(),
        settings: Arc::new(ToolSettings {
            sandbox,
            ..ToolSettings::default()
        }),
        cancel: CancellationToken::new(),
        call: String::new(),
        progress: None,
        seen: None,
        trace: None,
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index.min(sorted.len() - 1)]
}

fn main() {
    let dir = tempfile::tempdir().expect("temp dir");
    let ws = dir.path().canonicalize().expect("canonical");
    let none = |_: &str| None;
    let seccomp_env = |name: &str| (name == NAMESPACE_SWITCH).then(|| "1".to_string());
    let namespace = Sandbox::resolve(SandboxMode::WorkspaceWrite, false, Vec::new(), &ws, &none);
    let seccomp = Sandbox::resolve(
        SandboxMode::WorkspaceWrite,
        false,
        Vec::new(),
        &ws,
        &seccomp_env,
    );
    let landlock_only = Sandbox {
        metadata: Metadata::Unchecked,
        ..namespace.clone()
    };
    let off = Sandbox::resolve(SandboxMode::Off, false, Vec::new(), &ws, &none);
    println!("namespace guard: {:?}", namespace.metadata);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    for (name, sandbox) in [
        ("sandbox off", off),
        ("Landlock only", landlock_only),
        ("Landlock + mount namespace", namespace),
        ("Landlock + seccomp", seccomp),
    ] {
        let ctx = context(&ws, sandbox);
        let mut times: Vec<Duration> = (0..RUNS)
            .map(|_| {
                let start = Instant::now();
                let result = runtime.block_on(Shell.call(json!({"command": "true"}), &ctx));
                assert!(result.is_ok(), "{name}: {result:?}");
                start.elapsed()
            })
            .collect();
        times.sort();
        println!(
            "{name:28} p50 {:>6.2} ms  p90 {:>6.2} ms",
            percentile(&times, 0.5).as_secs_f64() * 1e3,
            percentile(&times, 0.9).as_secs_f64() * 1e3
        );
    }
}
