//! Sessions you find again (issue 27): `--resume` without an id is "my last conversation
//! here" — a person's TUI session, or a run that answered — however many headless runs
//! failed or were killed since; `taco sessions` says which is which. The real binary: the TUI
//! in tmux, `exec` as a process, every model a loopback server.
//! Needs tmux (CI installs it); without tmux the tests say so and fail.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed unwrap is a failed test

use crate::support;

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;
use support::cli::{chunk, no_retries, sessions_dir, text_turn};
use support::tmux::{Tmux, launch_taco};
use support::{Reply, TestServer};

/// A loopback OpenAI-compatible server answering `replies` in turn.
fn server(replies: Vec<Reply>) -> TestServer {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(TestServer::start(replies))
}

/// `taco ARGS` in `work`, in the clean environment the TUI runs in.
fn taco(home: &Path, work: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_taco"));
    cmd.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("XDG_STATE_HOME", home.join("state"))
        .current_dir(work)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .args(args);
    cmd
}

/// `taco exec` against `server` with `args` after the provider's, to its end.
fn exec(home: &Path, work: &Path, server: &TestServer, args: &[&str]) -> Output {
    let url = format!("{}/v1", server.url());
    let mut all = vec!["exec", "-p", "openai", "--base-url", &url, "-m", "m1"];
    all.extend_from_slice(args);
    taco(home, work, &all).output().unwrap()
}

/// A `taco exec` run of `prompt` killed (SIGKILL) while the model has said nothing yet.
fn killed_run(home: &Path, work: &Path, prompt: &str) {
    let hanging = server(vec![
        Reply::sse(vec![format!(
            "data: {}\n\n",
            chunk(json!({"role": "assistant"}), None)
        )])
        .hold(Duration::from_secs(60)),
    ]);
    let url = format!("{}/v1", hanging.url());
    let args = [
        "exec",
        "-p",
        "openai",
        "--base-url",
        &url,
        "-m",
        "m1",
        prompt,
    ];
    let mut child = taco(home, work, &args).spawn().unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while hanging.requests().is_empty() {
        assert!(Instant::now() < deadline, "the run never asked the model");
        std::thread::sleep(Duration::from_millis(25));
    }
    child.kill().unwrap();
    child.wait().unwrap();
}

/// The TUI against `server`, with `extra` arguments.
fn tui(home: &Path, work: &Path, server: &TestServer, extra: &str) -> Tmux {
    let args = format!("-p openai --base-url '{}/v1' -m m1 {extra}", server.url());
    launch_taco(home, work, &args, "", (120, 35))
}

fn quit(tmux: &Tmux) {
    tmux.keys(&["C-c"]);
    tmux.keys(&["C-c"]);
    tmux.wait_for("EXITED");
}

/// The id of the session `exec`'s stderr says was resumed.
fn resumed_id(stderr: &str) -> &str {
    let at = stderr
        .find("Resumed session '")
        .unwrap_or_else(|| panic!("no session was resumed:\n{stderr}"));
    let rest = &stderr[at + "Resumed session '".len()..];
    &rest[..rest.find('\'').unwrap()]
}

/// The ids of the session files.
fn ids(home: &Path) -> Vec<String> {
    let ids: Vec<String> = std::fs::read_dir(sessions_dir(home))
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().into_string().unwrap();
            name.strip_suffix(".jsonl").map(String::from)
        })
        .collect();
    ids
}

#[test]
fn resume_takes_the_persons_session_over_newer_headless_runs_that_did_not_answer() {
    if !crate::support::needs::tmux() {
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let (home, work) = (home.path(), work.path());

    // A person asks in the TUI.
    let first = server(vec![text_turn(&["The answer is blue."])]);
    let tmux = tui(home, work, &first, "");
    tmux.wait_for("Welcome to taco");
    tmux.text("what colour is the sky here?");
    tmux.keys(&["Enter"]);
    tmux.wait_for("The answer is blue.");
    quit(&tmux);
    drop(tmux);
    let tui_id = match &ids(home)[..] {
        [one] => one.clone(),
        other => panic!("one session: {other:?}"),
    };

    // Then two headless runs: one fails at once, one is killed before the model answers.
    let failing = server(vec![Reply::status(500).body("upstream broke")]);
    let config = no_retries(home);
    let config = config.to_str().unwrap();
    let out = exec(home, work, &failing, &["-c", config, "check the build"]);
    assert_ne!(out.status.code(), Some(0), "the run failed");
    killed_run(home, work, "run the nightly checks");
    assert_eq!(ids(home).len(), 3);

    // `taco sessions` says which is which, newest activity first.
    let out = taco(home, work, &["sessions"]).output().unwrap();
    assert!(out.status.success());
    let listing = String::from_utf8(out.stdout).unwrap();
    assert!(
        !listing.contains('\x1b'),
        "no escapes into a pipe: {listing:?}"
    );
    let lines: Vec<&str> = listing.lines().collect();
    let columns: Vec<&str> = (lines[0].split("  "))
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .collect();
    assert_eq!(
        columns,
        [
            "ID",
            "KIND",
            "LAST ACTIVE",
            "TURNS",
            "OUTCOME",
            "TOKENS IN/OUT",
            "WORKDIR",
            "FIRST PROMPT"
        ],
        "{listing}"
    );
    // Kind, last activity ("just now"), turns and outcome of the row with `prompt`, and
    // where it is.
    let row = |prompt: &str| -> (usize, Vec<&str>) {
        let at = (lines.iter())
            .position(|l| l.ends_with(prompt))
            .unwrap_or_else(|| panic!("{prompt}:\n{listing}"));
        (at, lines[at].split_whitespace().skip(1).take(5).collect())
    };
    let (nightly, cells) = row("run the nightly checks");
    assert_eq!(cells, ["exec", "just", "now", "0", "empty"], "{listing}");
    let (build, cells) = row("check the build");
    assert_eq!(cells, ["exec", "just", "now", "0", "failed"], "{listing}");
    let (person, cells) = row("what colour is the sky here?");
    assert_eq!(cells, ["tui", "just", "now", "1", "answered"], "{listing}");
    assert_eq!(
        (nightly, build, person),
        (1, 2, 3),
        "newest first:\n{listing}"
    );

    // `taco --resume` reopens the person's conversation, and it goes on.
    let next = server(vec![text_turn(&["Still blue."])]);
    let tmux = tui(home, work, &next, "--resume");
    let screen = tmux.wait_for("Resumed session");
    assert!(
        screen.contains(&format!("Resumed session {tui_id}")),
        "{screen}"
    );
    assert!(screen.contains("what colour is the sky here?"), "{screen}");
    tmux.text("and at night?");
    tmux.keys(&["Enter"]);
    tmux.wait_for("Still blue.");
    quit(&tmux);
    let sent = next.requests()[0].json().to_string();
    assert!(
        sent.contains("what colour is the sky here?") && sent.contains("The answer is blue."),
        "{sent}"
    );
    assert_eq!(ids(home).len(), 3, "appended, no new session");

    // A headless run that answered is a conversation too, once it is the newest; a killed
    // one after it is still passed over.
    let answering = server(vec![
        text_turn(&["Fresh answer."]),
        text_turn(&["Followed up."]),
    ]);
    let before = ids(home);
    let out = exec(home, work, &answering, &["a fresh question"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Ids sort by start only to the second: the new one is the one not there before.
    let answered_id = (ids(home).into_iter())
        .find(|id| !before.contains(id))
        .unwrap();
    killed_run(home, work, "another nightly run");
    let out = exec(home, work, &answering, &["follow up", "--resume"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(resumed_id(&stderr), answered_id, "{stderr}");
    let sent = answering.requests()[1].json().to_string();
    assert!(sent.contains("a fresh question"), "{sent}");
}
