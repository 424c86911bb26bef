//! Sessions on disk as the binary writes them (DESIGN §8): session files, `--resume` after a
//! crash, `taco sessions`, `taco trace` errors, and the audit log / secrets guarantees.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed unwrap is a failed test

use crate::support;

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::json;
use support::cli::*;
use support::{Reply, TestServer};
use taco::conversation::Role;
use taco::session::{self, Entry};

/// Every file below `dir`, recursively.
fn files_below(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                todo.push(path);
            } else {
                out.push(path);
            }
        }
    }
    out
}

#[tokio::test]
async fn exec_writes_a_session_that_sessions_lists() {
    let (home, work) = setup();
    let server = TestServer::start(vec![
        tool_turn("c1", "list_dir", "{}"),
        text_turn(&["Just ", "hello.txt."]),
    ])
    .await;
    let mut cmd = taco(home.path(), work.path());
    openai_args(&mut cmd, &server);
    cmd.arg("what files are here?");
    let run = finish(&mut cmd).await;
    assert_eq!(run.code, 0, "{}", run.stderr);

    let path = only_session(home.path());
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
        0o600
    );
    let loaded = session::load(&path).unwrap();
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    let header = loaded.header.unwrap();
    assert_eq!(
        (header.provider.as_str(), header.model.as_str()),
        ("openai", "m1")
    );
    assert_eq!(header.workdir, work.path().canonicalize().unwrap());
    let roles: Vec<Role> = loaded
        .entries
        .iter()
        .filter_map(|e| match e {
            Entry::Message(m) => Some(m.role),
            Entry::Event(_) => None,
        })
        .collect();
    assert_eq!(
        roles,
        [
            Role::System,
            Role::User,
            Role::Assistant,
            Role::Tool,
            Role::Assistant
        ]
    );
    let kinds: Vec<&str> = loaded
        .entries
        .iter()
        .filter_map(|e| match e {
            Entry::Event(e) => Some(e.kind()),
            Entry::Message(_) => None,
        })
        .collect();
    assert!(!kinds.contains(&"delta"), "no deltas in session files");
    assert_eq!(kinds.first(), Some(&"run_started"));
    assert_eq!(kinds.last(), Some(&"final"));

    let mut list = taco(home.path(), work.path());
    list.arg("sessions");
    let listed = finish(&mut list).await;
    assert_eq!(listed.code, 0, "{}", listed.stderr);
    assert!(listed.stdout.contains(&header.id), "{}", listed.stdout);
    assert!(
        listed.stdout.contains("what files are here?"),
        "{}",
        listed.stdout
    );
    // Both model calls count, though their lines are written compacted (a file read without
    // putting back what compaction left out showed 0 turns).
    let row = listed
        .stdout
        .lines()
        .find(|l| l.starts_with(&header.id))
        .unwrap();
    // Id, kind, last activity ("just now"), turns, outcome.
    let columns: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(
        columns[1..6],
        ["exec", "just", "now", "2", "answered"],
        "{row}"
    );
}

#[tokio::test]
async fn a_session_killed_mid_run_resumes_with_everything_before_the_torn_line() {
    let (home, work) = setup();
    let hang = Reply::sse(vec![format!(
        "data: {}\n\n",
        chunk(json!({"content": "Thinking about"}), None)
    )])
    .hold(Duration::from_secs(60));
    let server = TestServer::start(vec![
        tool_turn("c1", "read_file", "{\"path\": \"hello.txt\"}"),
        hang,
    ])
    .await;
    let mut cmd = taco(home.path(), work.path());
    openai_args(&mut cmd, &server);
    cmd.arg("read hello.txt and think");
    let mut child = cmd.spawn().unwrap();
    for _ in 0..400 {
        if server.requests().len() >= 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert_eq!(server.requests().len(), 2, "the second model call started");
    tokio::time::sleep(Duration::from_millis(200)).await;
    unsafe { libc::kill(child.id().unwrap() as i32, libc::SIGKILL) };
    let _ = child.wait().await;

    // A crash can leave half a line behind; make sure there is one.
    let path = only_session(home.path());
    let mut text = std::fs::read_to_string(&path).unwrap();
    text.push_str("{\"timestamp\":17000,\"request_id\":\"x\",\"type\":\"llm_c");
    std::fs::write(&path, text).unwrap();

    let loaded = session::load(&path).unwrap();
    assert_eq!(loaded.warnings.len(), 1, "{:?}", loaded.warnings);
    let messages = loaded.messages();
    assert_eq!(
        messages[1].content.as_deref(),
        Some("read hello.txt and think")
    );
    assert_eq!(messages[2].tool_calls[0].id, "c1");
    assert!(
        messages[3].content.as_deref().unwrap().contains("hi there"),
        "the tool result was saved before the crash"
    );
    assert!(
        loaded
            .entries
            .iter()
            .any(|e| matches!(e, Entry::Event(ev) if ev.kind() == "tool_result"))
    );

    // A headless run that was killed is no conversation `--resume` without an id takes.
    let mut cmd = taco(home.path(), work.path());
    cmd.args(["exec", "-p", "demo", "hi", "--resume"]);
    let run = finish(&mut cmd).await;
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("no conversation to resume")
            && run
                .stderr
                .contains("1 saved session is a headless run that did not answer"),
        "{}",
        run.stderr
    );

    // Resume it by id, headless: the conversation goes on from there.
    let server = TestServer::start(vec![text_turn(&["It said hi there."])]).await;
    let mut cmd = taco(home.path(), work.path());
    openai_args(&mut cmd, &server);
    let id = path.file_stem().unwrap().to_str().unwrap();
    cmd.args(["what did it say?", &format!("--resume={id}")]);
    let run = finish(&mut cmd).await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout, "It said hi there.\n");
    assert!(
        run.stderr.contains("incomplete") || run.stderr.contains("interrupted"),
        "{}",
        run.stderr
    );
    let sent = server.requests()[0].json();
    let sent_messages = sent["messages"].as_array().unwrap();
    assert_eq!(sent_messages[1]["content"], "read hello.txt and think");
    assert_eq!(sent_messages[3]["role"], "tool");
    assert_eq!(sent_messages.last().unwrap()["content"], "what did it say?");
    // The same file grew; the torn fragment is left behind as one bad line.
    let again = session::load(&path).unwrap();
    let last_user = again.entries.iter().rev().find_map(|e| match e {
        Entry::Message(m) if m.role == Role::User => m.content.clone(),
        _ => None,
    });
    assert_eq!(last_user.as_deref(), Some("what did it say?"));
}

#[tokio::test]
async fn resume_without_a_session_or_with_an_unknown_id_is_a_clear_error() {
    let (home, work) = setup();
    let mut cmd = taco(home.path(), work.path());
    cmd.args(["exec", "-p", "demo", "hi", "--resume"]);
    let run = finish(&mut cmd).await;
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("session"), "{}", run.stderr);
    let mut cmd = taco(home.path(), work.path());
    cmd.args([
        "exec",
        "-p",
        "demo",
        "--resume=20990101-000000-ffffff",
        "hi",
    ]);
    let run = finish(&mut cmd).await;
    assert_eq!(run.code, 2, "{}", run.stderr);
}

#[tokio::test]
async fn trace_reports_missing_and_corrupt_files() {
    let (home, work) = setup();
    let mut cmd = taco(home.path(), work.path());
    cmd.args(["trace", "nope.jsonl"]);
    let run = finish(&mut cmd).await;
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("nope.jsonl"), "{}", run.stderr);
    std::fs::write(
        work.path().join("junk.jsonl"),
        "this is not json\nneither is this\n",
    )
    .unwrap();
    let mut cmd = taco(home.path(), work.path());
    cmd.args(["trace", "junk.jsonl"]);
    let run = finish(&mut cmd).await;
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("junk.jsonl") && run.stderr.contains("not a taco"),
        "{}",
        run.stderr
    );
}

#[tokio::test]
async fn the_audit_log_has_no_content_and_no_file_has_the_key() {
    const MARKER: &str = "ZEBRA-7731";
    const KEY: &str = "sk-test-KNOWN-KEY-0042";
    let (home, work) = setup();
    let command = format!("{{\"command\": \"echo {MARKER}-output\"}}");
    let server = TestServer::start(vec![
        tool_turn("s1", "shell", &command),
        text_turn(&["The output was ", MARKER]),
    ])
    .await;
    let trace = work.path().join("run.trace");
    let mut cmd = taco(home.path(), work.path());
    openai_args(&mut cmd, &server);
    cmd.env("OPENAI_API_KEY", KEY).args([
        "--approve",
        "all",
        "--trace",
        trace.to_str().unwrap(),
        &format!("please echo {MARKER}"),
    ]);
    let run = finish(&mut cmd).await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains(MARKER));

    let audit_dir = home.path().join(".local/state/taco");
    let audits: Vec<PathBuf> = files_below(&audit_dir)
        .into_iter()
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("audit"))
        })
        .collect();
    assert!(
        !audits.is_empty(),
        "an audit log was written in {}",
        audit_dir.display()
    );
    let audit: String = audits
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    for record in ["message_received", "tool_executed", "message_complete"] {
        assert!(audit.contains(record), "{record} missing from {audit}");
    }
    assert!(
        !audit.contains(MARKER),
        "the audit log holds content: {audit}"
    );

    // The session file has the conversation (that is its job), but no file has the key.
    let mut all = files_below(home.path());
    all.extend(files_below(work.path()));
    assert!(all.iter().any(|p| p.starts_with(sessions_dir(home.path()))));
    for path in all {
        let bytes = std::fs::read(&path).unwrap();
        assert!(
            !String::from_utf8_lossy(&bytes).contains(KEY),
            "{} contains the key",
            path.display()
        );
    }
    assert!(!run.stdout.contains(KEY) && !run.stderr.contains(KEY));
}
