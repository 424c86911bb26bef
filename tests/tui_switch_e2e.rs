//! Switching without restarting, end to end (issue 14.5): the real binary in tmux with two
//! loopback OpenAI-compatible servers configured as two providers — `/model` switches to the
//! second between prompts, and `--resume` continues with it; `/resume` reopens the TUI on an
//! older session in place.
//! Needs tmux (CI installs it); without tmux the tests say so and fail.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed unwrap is a failed test

use crate::support;

use std::path::Path;

use serde_json::json;
use support::cli::{session_files, sessions_dir, text_turn};
use support::tmux::Tmux;
use support::{Reply, TestServer};

/// Runs taco in a clean environment (no keys) at 120×35.
fn launch(home: &Path, work: &Path) -> Tmux {
    support::tmux::launch_taco(home, work, "", "", (120, 35))
}

use support::tmux::exec_taco as exec;

fn models(ids: &[&str]) -> Reply {
    let data: Vec<_> = ids
        .iter()
        .map(|id| json!({"id": id, "object": "model"}))
        .collect();
    Reply::status(200).json(&json!({"object": "list", "data": data}))
}

fn servers(alpha: Vec<Reply>, beta: Vec<Reply>) -> (TestServer, TestServer) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    runtime.block_on(async {
        (
            TestServer::start(alpha).await,
            TestServer::start(beta).await,
        )
    })
}

fn write_config(home: &Path, alpha: &TestServer, beta: &TestServer) {
    let dir = home.join("config/taco");
    std::fs::create_dir_all(&dir).unwrap();
    let text = format!(
        "provider = \"alpha\"\n\n\
         [providers.alpha]\nkind = \"openai\"\nbase_url = \"{}/v1\"\nmodel = \"model-a\"\n\
         [providers.alpha.options]\nmax_attempts = 1\n\n\
         [providers.beta]\nkind = \"openai\"\nbase_url = \"{}/v1\"\nmodel = \"model-b\"\n\
         [providers.beta.options]\nmax_attempts = 1\n",
        alpha.url(),
        beta.url()
    );
    std::fs::write(dir.join("config.toml"), text).unwrap();
}

/// (method, path, model asked for) of each request a server got.
fn requests(server: &TestServer) -> Vec<(String, String, Option<String>)> {
    (server.requests().iter())
        .map(|r| {
            let model = (r.method == "POST")
                .then(|| r.json()["model"].as_str().map(String::from))
                .flatten();
            (r.method.clone(), r.path.clone(), model)
        })
        .collect()
}

#[test]
fn model_picker_switches_to_the_second_server_and_resume_keeps_it() {
    if !crate::support::needs::tmux() {
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let (alpha, beta) = servers(
        vec![
            text_turn(&["answer from alpha"]),
            models(&["model-a", "model-a2"]),
        ],
        vec![
            models(&["model-b", "model-b-large"]),
            text_turn(&["answer from beta"]),
            text_turn(&["resumed on beta"]),
        ],
    );
    write_config(home.path(), &alpha, &beta);
    let tmux = launch(home.path(), work.path());
    tmux.wait_for("Welcome to taco");
    // The status line is drawn in the same frame as the welcome, but a capture can land
    // while that frame is still being written (seen under load): wait for it too.
    tmux.wait_until("the status line", |screen| screen.contains("alpha model-a"));

    tmux.text("first question");
    tmux.keys(&["Enter"]);
    tmux.wait_for("answer from alpha");

    tmux.text("/model");
    tmux.keys(&["Enter"]);
    // The second server's own list arrives in the picker, and the first server's too (the
    // two lists come in their own time: under load a frame may show one before the other).
    let screen = tmux.wait_until("both servers' lists in the picker", |screen| {
        screen.contains("model-b-large") && screen.contains("model-a2")
    });
    assert!(screen.contains("switch model"), "{screen}");
    tmux.text("b-large");
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_for("beta model-b-large │");
    assert!(
        !screen.contains("switch model"),
        "the picker closed:\n{screen}"
    );

    tmux.text("second question");
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_for("answer from beta");
    assert!(screen.contains("beta model-b-large │"), "{screen}");
    assert_eq!(
        requests(&alpha),
        [
            (
                "POST".into(),
                "/v1/chat/completions".into(),
                Some("model-a".into())
            ),
            ("GET".into(), "/v1/models".into(), None),
        ]
    );
    assert_eq!(
        requests(&beta)[1],
        (
            "POST".into(),
            "/v1/chat/completions".into(),
            Some("model-b-large".into())
        ),
        "the second request reached the second server"
    );
    // It carried the whole conversation.
    let sent = beta.requests()[1].json().to_string();
    assert!(
        sent.contains("first question") && sent.contains("answer from alpha"),
        "{sent}"
    );

    tmux.keys(&["C-c"]);
    tmux.keys(&["C-c"]);
    tmux.wait_for("EXITED");

    // The session file keeps the switch, and --resume continues on the second server.
    let files = session_files(home.path());
    assert_eq!(files.len(), 1);
    let text = std::fs::read_to_string(&files[0]).unwrap();
    assert!(text.contains(r#""type":"model_switched""#), "{text}");
    let out = exec(home.path(), work.path(), &["third question", "--resume"]);
    assert!(out.contains("resumed on beta"), "{out}");
    assert_eq!(
        requests(&beta)[2].2.as_deref(),
        Some("model-b-large"),
        "--resume took the model the session switched to"
    );
    assert_eq!(
        alpha.requests().len(),
        2,
        "nothing more went to the first server"
    );
}

#[test]
fn resume_picker_switches_to_an_older_session_in_place() {
    if !crate::support::needs::tmux() {
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    exec(
        home.path(),
        work.path(),
        &["-p", "demo", "older prompt about llamas"],
    );
    // Session ids sort by their start time in milliseconds.
    std::thread::sleep(std::time::Duration::from_millis(20));
    exec(
        home.path(),
        work.path(),
        &["-p", "demo", "newer prompt about alpacas"],
    );
    let before = session_files(home.path()).len();
    assert_eq!(before, 2);

    let tmux = launch(home.path(), work.path());
    tmux.wait_for("Welcome to taco");
    // A session that cannot be opened is said, and taco goes on.
    tmux.text("/resume no-such-session");
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_for("Could not resume session");
    assert!(screen.contains("no session"), "{screen}");
    tmux.text("/resume");
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_for("older prompt about llamas");
    assert!(screen.contains("resume a session"), "{screen}");
    let (newer, older) = (
        screen.find("newer prompt about alpacas").unwrap(),
        screen.find("older prompt about llamas").unwrap(),
    );
    assert!(newer < older, "newest first:\n{screen}");
    tmux.text("llamas");
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_for("Resumed session");
    assert!(
        !screen.contains("resume a session"),
        "the picker closed:\n{screen}"
    );
    assert!(
        screen.contains("older prompt about llamas"),
        "the chat shows it:\n{screen}"
    );
    assert!(!screen.contains("newer prompt about alpacas"), "{screen}");
    assert_eq!(
        tmux.pane_format("#{alternate_on}"),
        "1",
        "the screen stayed in the alternate screen"
    );

    // What is sent now is appended to the older session, not a new one.
    tmux.text("follow up on llamas");
    tmux.keys(&["Enter"]);
    tmux.wait_for_ready("Approve write_file");
    tmux.keys(&["n", "Enter"]);
    tmux.wait_for("Reason for the model");
    tmux.keys(&["Enter"]);
    tmux.wait_for("You said: “follow up on llamas”");
    tmux.keys(&["C-c"]);
    tmux.keys(&["C-c"]);
    tmux.wait_for("EXITED");
    let sessions = taco::session::list(&sessions_dir(home.path()));
    assert_eq!(sessions.len(), 2, "no new session");
    let older = sessions
        .iter()
        .find(|s| s.first_prompt.as_deref() == Some("older prompt about llamas"))
        .unwrap();
    let text = std::fs::read_to_string(&older.path).unwrap();
    assert!(text.contains("follow up on llamas"), "{text}");
}
