//! Hostile MCP servers (issue 28.1, `examples/mcp_hostile.rs`): each way a server can try to
//! exhaust taco, run against the real binary under a 1 GiB address-space limit, its peak
//! RSS sampled. taco stays alive, stays small, and says what the server did.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed unwrap is a failed test

use std::path::Path;
use std::time::Duration;

use serde_json::Value;
use tokio::io::AsyncReadExt;
use tokio::process::Command;

use crate::support;
use support::TestServer;
use support::cli::*;
use support::mcp::hostile;

/// Peak RSS allowed: the issue's ~100 MB, with room for a debug build.
const PEAK_KB: u64 = 150 * 1024;

/// How a limited run ended.
struct Limited {
    code: i32,
    stdout: String,
    stderr: String,
    peak_kb: u64,
}

/// A config naming the hostile server in `mode` (with `args`), and `more` lines.
fn config(home: &Path, mode: &str, args: &[&str], more: &str) -> std::path::PathBuf {
    let path = home.join("hostile.toml");
    let mut all = vec![mode.to_string()];
    all.extend(args.iter().map(|a| a.to_string()));
    std::fs::write(
        &path,
        format!(
            "[providers.openai.options]\nmax_attempts = 1\n\n[mcp.servers.evil]\ncommand = {:?}\nargs = {:?}\nstartup_timeout_secs = 3\npolicy = \"allow\"\n{more}",
            hostile().display().to_string(),
            all
        ),
    )
    .unwrap();
    path
}

/// Runs `cmd` under a 1 GiB address-space limit, sampling its peak RSS (VmHWM) until it ends.
async fn limited(mut cmd: Command) -> Limited {
    cmd.env("MALLOC_ARENA_MAX", "2");
    // SAFETY: setrlimit is async-signal-safe; nothing else runs between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            let limit = libc::rlimit {
                rlim_cur: 1 << 30,
                rlim_max: 1 << 30,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = cmd.spawn().unwrap();
    let pid = child.id().unwrap();
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let stdout = tokio::spawn(async move {
        let mut text = String::new();
        let _ = out.read_to_string(&mut text).await;
        text
    });
    let stderr = tokio::spawn(async move {
        let mut text = String::new();
        let _ = err.read_to_string(&mut text).await;
        text
    });
    let deadline = tokio::time::Instant::now() + Duration::from_secs(90);
    let mut peak = 0;
    let status = loop {
        // Sampled before each wait: a run shorter than one wait still has a figure.
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
        for line in status.lines() {
            if let Some(kb) = line.strip_prefix("VmHWM:") {
                let kb = kb.trim().trim_end_matches("kB").trim().parse().unwrap_or(0);
                peak = peak.max(kb);
            }
        }
        if let Ok(status) = tokio::time::timeout(Duration::from_millis(20), child.wait()).await {
            break status.unwrap();
        }
        assert!(tokio::time::Instant::now() < deadline, "taco did not end");
    };
    Limited {
        code: status.code().unwrap_or(-1),
        stdout: stdout.await.unwrap(),
        stderr: stderr.await.unwrap(),
        peak_kb: peak,
    }
}

/// `taco mcp list` with the hostile server in `mode`.
async fn list(mode: &str, args: &[&str], more: &str) -> Limited {
    let (home, work) = setup();
    let path = config(home.path(), mode, args, more);
    let mut cmd = taco(home.path(), work.path());
    cmd.arg("-c").arg(&path).args(["mcp", "list"]);
    let ended = limited(cmd).await;
    eprintln!("mcp_hostile {mode}: peak RSS {} MB", ended.peak_kb / 1024);
    assert!(ended.peak_kb < PEAK_KB, "{mode}: peak {} kB", ended.peak_kb);
    ended
}

/// `taco exec --json` where the model calls `calls` of the hostile server in `mode`; also
/// returns the model server (what each request offered) and the home dir (logs, sessions).
async fn exec(
    mode: &str,
    calls: &[(&str, &str, &str)],
) -> (Limited, TestServer, tempfile::TempDir) {
    exec_with(mode, vec![tool_turns(calls), text_turn(&["done"])]).await
}

/// Like [`exec`], with the model's replies given.
async fn exec_with(
    mode: &str,
    replies: Vec<support::Reply>,
) -> (Limited, TestServer, tempfile::TempDir) {
    let (home, work) = setup();
    let server = TestServer::start(replies).await;
    let path = config(home.path(), mode, &[], "");
    let mut cmd = taco(home.path(), work.path());
    cmd.arg("-c").arg(&path);
    openai_args(&mut cmd, &server);
    cmd.args(["--json", "--approve", "all", "go"]);
    let ended = limited(cmd).await;
    eprintln!("mcp_hostile {mode}: peak RSS {} MB", ended.peak_kb / 1024);
    assert!(ended.peak_kb < PEAK_KB, "{mode}: peak {} kB", ended.peak_kb);
    assert_eq!(ended.code, 0, "{mode}: {}", ended.stderr);
    (ended, server, home)
}

/// Bytes of the files under `dir` whose name starts with `prefix`, each.
fn files_named(dir: &Path, prefix: &str) -> Vec<(String, u64)> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                pending.push(path);
            } else if entry.file_name().to_string_lossy().starts_with(prefix) {
                found.push((path.display().to_string(), entry.metadata().unwrap().len()));
            }
        }
    }
    found
}

/// The MCP tool names the n-th model request offered.
fn offered(server: &TestServer, request: usize) -> Vec<String> {
    server.requests()[request].json()["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["function"]["name"].as_str())
        .filter(|n| n.starts_with("mcp__"))
        .map(String::from)
        .collect()
}

#[tokio::test]
async fn endless_pages_at_start_are_cut_and_the_server_withdrawn() {
    let ended = list("pages", &[], "").await;
    let said = format!("{}{}", ended.stdout, ended.stderr);
    assert!(said.contains("withdrawn"), "{said}");
    assert!(
        said.contains("more than 100 pages (endless pagination?)"),
        "{said}"
    );
    assert_eq!(
        said.matches("more than 100 pages").count(),
        1,
        "said once: {said}"
    );
}

#[tokio::test]
async fn a_listing_that_never_ends_or_never_comes_is_cut_by_its_time() {
    for mode in ["stall", "huge-line"] {
        let ended = list(mode, &[], "").await;
        let said = format!("{}{}", ended.stdout, ended.stderr);
        assert!(said.contains("within 3 s"), "{mode}: {said}");
    }
}

#[tokio::test]
async fn ten_thousand_tools_are_listed_but_only_max_tools_offered() {
    let ended = list("tools", &[], "").await;
    assert!(
        ended
            .stdout
            .contains("ready, 100 of its 10000 tools offered"),
        "{}",
        ended.stdout
    );
    assert!(
        ended.stdout.contains("and 9800 more tools"),
        "{}",
        ended.stdout
    );
    assert!(
        ended.stdout.contains("([mcp] max_tools)"),
        "{}",
        ended.stdout
    );
    let ended = list("tools", &["30"], "\n[mcp]\nmax_tools = 12\n").await;
    assert!(
        ended.stdout.contains("ready, 12 of its 30 tools offered"),
        "{}",
        ended.stdout
    );
}

#[tokio::test]
async fn the_model_is_offered_max_tools_of_ten_thousand() {
    let (_, server, _home) = exec("tools", &[("a", "mcp__evil__tool_0", "{}")]).await;
    let tools = offered(&server, 0);
    assert_eq!(tools.len(), 100, "{tools:?}");
    let bytes = server.requests()[0].json()["tools"].to_string().len();
    eprintln!("10,000 tools: the request's tools take {bytes} bytes");
    assert!(bytes < 64 * 1024, "{bytes}");
}

#[tokio::test]
async fn schemas_too_large_or_too_deep_are_not_offered_and_say_why() {
    let ended = list("schema", &[], "").await;
    let out = &ended.stdout;
    assert!(out.contains("ready, 1 of its 3 tools offered"), "{out}");
    assert!(out.contains("nests deeper than 32 levels"), "{out}");
    assert!(out.contains("KB (at most 64 KB)"), "{out}");
}

#[tokio::test]
async fn endless_pages_on_a_relist_withdraw_the_server_mid_run() {
    // The second reply streams slowly: the re-list happens meanwhile.
    let slow = tool_turns(&[("r", "read_file", r#"{"path": "hello.txt"}"#)])
        .chunk_delay(Duration::from_millis(300));
    let replies = vec![
        tool_turns(&[("t", "mcp__evil__trigger", "{}")]),
        slow,
        text_turn(&["done"]),
    ];
    let (ended, server, _home) = exec_with("relist-pages", replies).await;
    assert!(
        ended
            .stderr
            .contains("more than 100 pages (endless pagination?)"),
        "{}",
        ended.stderr
    );
    assert_eq!(
        ended.stderr.matches("endless pagination").count(),
        1,
        "said once: {}",
        ended.stderr
    );
    assert_eq!(offered(&server, 0), ["mcp__evil__trigger"]);
    assert!(
        offered(&server, 2).is_empty(),
        "withdrawn before the last request"
    );
}

#[tokio::test]
async fn an_endless_stderr_line_costs_one_buffer() {
    let (ended, _, home) = exec("stderr-line", &[("e", "mcp__evil__echo", "{}")]).await;
    let lines: Vec<Value> = ended
        .stdout
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    assert!(
        lines
            .iter()
            .any(|l| l["type"] == "tool_result" && l["data"]["status"] == "ok"),
        "{}",
        ended.stdout
    );
    for (path, size) in files_named(home.path(), "taco.log") {
        assert!(size <= 10 * 1024 * 1024, "{path}: {size}");
    }
}

#[tokio::test]
async fn a_progress_flood_reaches_the_session_file_a_few_times_a_second() {
    let (ended, _, home) = exec("progress", &[("f", "mcp__evil__flood", "{}")]).await;
    assert!(ended.stdout.contains("tool_result"), "{}", ended.stdout);
    let sessions = files_named(home.path(), "");
    let progress: usize = sessions
        .iter()
        .filter(|(p, _)| p.ends_with(".jsonl") && p.contains("sessions"))
        .map(|(p, _)| {
            std::fs::read_to_string(p)
                .unwrap()
                .lines()
                .filter(|l| l.contains("\"tool_progress\""))
                .count()
        })
        .sum();
    eprintln!("100,000 progress notifications: {progress} in the session file");
    assert!(progress <= 50, "{progress}");
}

/// `exec` keeps no diagnostic log (the TUI does: the gate and the cap are unit-tested in
/// `log_gate.rs` and `logging/capped.rs`): a flood of logs must not reach its output.
#[tokio::test]
async fn a_log_flood_stays_off_the_users_output() {
    let (ended, _, _home) = exec("log", &[("f", "mcp__evil__flood", "{}")]).await;
    assert!(ended.stdout.contains("tool_result"), "{}", ended.stdout);
    assert!(!ended.stdout.contains("of a flood"), "stdout has the flood");
    assert!(!ended.stderr.contains("of a flood"), "{}", ended.stderr);
}
