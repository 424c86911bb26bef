//! Caps on what tools take and give (issue 26.4 and 26.8), through `taco exec` as a process
//! against a loopback OpenAI-compatible server: at most `[tools] max_parallel` shell commands
//! at once (the rest queued, visibly), compounding edits refused before they are built (the
//! binary under a 1 GB address-space limit), results within `max_output_bytes` once escaped.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed unwrap is a failed test

use crate::support;

use std::path::Path;

use serde_json::{Value, json};
use support::TestServer;
use support::cli::*;

/// `n` shell calls that each log their start and end (ns) into `log.txt` around a sleep.
fn sleepers(n: usize, secs: u32) -> Vec<(String, String)> {
    (0..n)
        .map(|i| {
            let command = format!(
                "echo \"s $(date +%s%N)\" >> log.txt; sleep {secs}; echo \"e $(date +%s%N)\" >> log.txt"
            );
            (format!("c{i}"), json!({ "command": command }).to_string())
        })
        .collect()
}

/// The most commands that ran at once, from their logged starts and ends.
fn peak(log: &str) -> usize {
    let mut marks: Vec<(u128, i32)> = log
        .lines()
        .map(|line| {
            let (kind, at) = line.split_once(' ').unwrap();
            // An end before a start at the same instant.
            (at.parse().unwrap(), if kind == "s" { 1 } else { -1 })
        })
        .collect();
    assert_eq!(
        marks.iter().filter(|(_, d)| *d == 1).count() * 2,
        marks.len()
    );
    marks.sort();
    let (mut now, mut most) = (0i32, 0i32);
    for (_, delta) in marks {
        now += delta;
        most = most.max(now);
    }
    most as usize
}

/// Runs one batch of `calls` with `--approve all --json`; returns the output lines.
async fn run_batch(
    work: &Path,
    home: &Path,
    calls: &[(String, String)],
    config: Option<&str>,
) -> Vec<Value> {
    let list: Vec<(&str, &str, &str)> = (calls.iter())
        .map(|(id, args)| (id.as_str(), "shell", args.as_str()))
        .collect();
    let server = TestServer::start(vec![tool_turns(&list), text_turn(&["done"])]).await;
    let mut cmd = taco(home, work);
    openai_args(&mut cmd, &server);
    if let Some(config) = config {
        let path = home.join("taco.toml");
        std::fs::write(&path, config).unwrap();
        cmd.env("TACO_CONFIG", path);
    }
    cmd.args(["--approve", "all", "--json", "run them"]);
    let run = finish(&mut cmd).await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    json_lines(&run.stdout)
}

/// (id, state) of each `stack_push`, in order.
fn pushes(lines: &[Value]) -> Vec<(String, String)> {
    (lines.iter())
        .filter(|l| l["type"] == "stack_push")
        .map(|l| {
            let frame = &l["data"];
            let id = frame["id"].as_str().unwrap().to_string();
            (id, frame["state"].as_str().unwrap().to_string())
        })
        .collect()
}

/// Twelve `sleep`ing shell calls in one batch: at most 8 run at once (measured inside the
/// commands), the other 4 are pushed as `queued`, then as `running` when a slot frees; all
/// twelve end well. The old code ran all twelve at once and had no `queued` state.
#[tokio::test]
async fn twelve_shell_calls_run_at_most_eight_at_once_and_the_rest_are_queued_visibly() {
    let (home, work) = setup();
    let calls = sleepers(12, 2);
    let lines = run_batch(work.path(), home.path(), &calls, None).await;
    let log = std::fs::read_to_string(work.path().join("log.txt")).unwrap();
    let most = peak(&log);
    assert!(most <= 8, "{most} ran at once:\n{log}");
    assert!(most >= 4, "they do run side by side: {most}");
    let pushed = pushes(&lines);
    let queued: Vec<&str> = (pushed.iter())
        .filter(|(_, state)| state == "queued")
        .map(|(id, _)| id.as_str())
        .collect();
    assert_eq!(
        queued,
        ["c8", "c9", "c10", "c11"],
        "in call order: {pushed:?}"
    );
    for (id, _) in &calls {
        let states: Vec<&str> = (pushed.iter())
            .filter(|(i, _)| i == id)
            .map(|(_, s)| s.as_str())
            .collect();
        // Approved (`--approve all`), then queued for a slot or running at once.
        let expected: &[&str] = if queued.contains(&id.as_str()) {
            &["awaiting_approval", "queued", "running"]
        } else {
            &["awaiting_approval", "running"]
        };
        assert_eq!(states, expected, "{id}");
    }
    let ok = (lines.iter())
        .filter(|l| l["type"] == "tool_result" && l["data"]["status"] == "ok")
        .count();
    assert_eq!(ok, 12);
    // A queued call's time is its own run, not its wait.
    for line in lines.iter().filter(|l| l["type"] == "tool_result") {
        let ms = line["data"]["duration_ms"].as_u64().unwrap();
        assert!(ms < 3900, "{line}");
    }
}

/// `[tools] max_parallel = 3`: six calls, three at once.
#[tokio::test]
async fn max_parallel_comes_from_the_config() {
    let (home, work) = setup();
    let calls = sleepers(6, 1);
    let lines = run_batch(
        work.path(),
        home.path(),
        &calls,
        Some("[tools]\nmax_parallel = 3\n"),
    )
    .await;
    let log = std::fs::read_to_string(work.path().join("log.txt")).unwrap();
    assert!(peak(&log) <= 3, "{log}");
    let queued = (pushes(&lines).iter())
        .filter(|(_, state)| state == "queued")
        .count();
    assert_eq!(queued, 3);
}

/// 40 `replace_all` edits that each double a 12-byte file: the approval preview and the run
/// refuse them at the first that would pass the 8 MiB cap. The whole binary runs under a
/// 1 GB address-space limit (the old code allocated 4 GiB and more before anyone was asked,
/// and was killed by the allocation failure) and ends cleanly with the error reported.
#[tokio::test]
async fn forty_doubling_edits_end_cleanly_under_a_1_gb_address_space_limit() {
    let (home, work) = setup();
    std::fs::write(work.path().join("a.txt"), "a".repeat(12)).unwrap();
    let edits: Vec<Value> = (0..40)
        .map(|_| json!({"old_string": "a", "new_string": "aa", "replace_all": true}))
        .collect();
    let args = json!({"path": "a.txt", "edits": edits}).to_string();
    let server = TestServer::start(vec![
        tool_turn("c1", "edit_file", &args),
        text_turn(&["refused"]),
    ])
    .await;
    let mut cmd = taco(home.path(), work.path());
    openai_args(&mut cmd, &server);
    cmd.env("MALLOC_ARENA_MAX", "2")
        .args(["--approve", "all", "--json", "double it"]);
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
    let run = finish(&mut cmd).await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let lines = json_lines(&run.stdout);
    let asked = (lines.iter())
        .find(|l| l["type"] == "approval_requested")
        .expect("the edit was asked about");
    assert!(
        asked["data"].get("diff").is_none(),
        "no diff was built: {asked}"
    );
    let result = (lines.iter()).find(|l| l["type"] == "tool_result").unwrap();
    assert_eq!(result["data"]["status"], "failed");
    let error = result["data"]["error"].as_str().unwrap();
    assert!(
        error.starts_with(&format!(
            "edit 20: the file would grow to {} bytes, over edit_file's limit of 8388608 bytes",
            12 << 20
        )),
        "{error}"
    );
    // The model was told, and the file is as it was.
    let requests = server.requests();
    let told = requests[1].json()["messages"][3]["content"].to_string();
    assert!(told.contains("would grow to"), "{told}");
    assert_eq!(
        std::fs::read_to_string(work.path().join("a.txt")).unwrap(),
        "a".repeat(12)
    );
}

/// What the model gets as a tool message stays within `max_output_bytes` once serialized,
/// even when the result is full of characters JSON escapes: a command's output, and an
/// invalid-arguments error that quotes a huge argument (the old code sent that error whole).
#[tokio::test]
async fn tool_messages_full_of_escapes_fit_the_cap() {
    let (home, work) = setup();
    let noisy = "printf '\\001\"\\\\\\n%.0s' $(seq 1 30000)";
    let shell = json!({ "command": noisy }).to_string();
    let huge = "\u{1}\"\\\n".repeat(20_000);
    let invalid = json!({ "command": "true", "timeout_secs": huge }).to_string();
    let server = TestServer::start(vec![
        tool_turns(&[("c1", "shell", &shell), ("c2", "shell", &invalid)]),
        text_turn(&["done"]),
    ])
    .await;
    let config = home.path().join("taco.toml");
    std::fs::write(&config, "[tools]\nmax_output_bytes = 4096\n").unwrap();
    let mut cmd = taco(home.path(), work.path());
    openai_args(&mut cmd, &server);
    cmd.env("TACO_CONFIG", &config)
        .args(["--approve", "all", "escape"]);
    let run = finish(&mut cmd).await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let requests = server.requests();
    let sent = requests[1].json();
    let messages = sent["messages"].as_array().unwrap();
    let tools: Vec<&str> = (messages.iter())
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap())
        .collect();
    assert_eq!(tools.len(), 2);
    for content in &tools {
        assert!(
            content.len() <= 4096,
            "{} bytes: {}",
            content.len(),
            &content[..200]
        );
        let parsed: Value = serde_json::from_str(content).unwrap();
        assert!(parsed.is_object());
    }
    let output: Value = serde_json::from_str(tools[0]).unwrap();
    assert!(
        output["stdout"]
            .as_str()
            .unwrap()
            .starts_with("\u{1}\"\\\n"),
        "{output}"
    );
    let error: Value = serde_json::from_str(tools[1]).unwrap();
    let error = error["error"].as_str().unwrap();
    assert!(
        error.starts_with("invalid arguments for shell") && error.ends_with(" bytes]"),
        "{error}"
    );
}
