//! `!cmd`, `/init` and a custom command in the real binary in tmux (issue 30.4): the shell
//! cell, its output carried by the next message once, a cancel, the session file and the
//! audit log; `/init` writing `AGENTS.md` through an approval; a command's model and tools
//! for its request alone. Needs tmux (CI installs it).

use crate::support;

use std::path::Path;

use crate::commands::{REVIEW, config, last_user, tools_of, write};
use support::cli::{text_turn, tool_turn};
use support::tmux::{Tmux, launch_taco};
use support::{Reply, TestServer};

fn server(replies: Vec<Reply>) -> TestServer {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(TestServer::start(replies))
}

fn start(home: &Path, work: &Path) -> Tmux {
    let tmux = launch_taco(home, work, "", "", (140, 40));
    tmux.wait_for("Welcome to taco");
    tmux
}

/// Every file under `dir` whose name starts with `prefix`, read and joined.
fn read_all(dir: &Path, prefix: &str) -> String {
    let mut out = String::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        if entry.file_name().to_string_lossy().starts_with(prefix) {
            out.push_str(&std::fs::read_to_string(entry.path()).unwrap_or_default());
        }
    }
    out
}

#[test]
fn bang_ls_shows_a_cell_and_the_next_message_carries_its_output_once() {
    if !crate::support::needs::tmux() {
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("hello-bang.txt"), "hi\n").unwrap();
    let server = server(vec![
        text_turn(&["first answer"]),
        text_turn(&["second answer"]),
    ]);
    config(home.path(), &server);
    let tmux = start(home.path(), work.path());
    tmux.text("!ls");
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_for("exit 0");
    assert!(screen.contains("! ls"), "{screen}");
    assert!(screen.contains("hello-bang.txt"), "{screen}");
    assert!(
        server.requests().is_empty(),
        "nothing is sent to the model by itself"
    );
    tmux.text("what is in there?");
    tmux.keys(&["Enter"]);
    tmux.wait_for("first answer");
    tmux.text("and now?");
    tmux.keys(&["Enter"]);
    tmux.wait_for("second answer");
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let first = last_user(&requests[0]);
    assert!(
        first.starts_with("what is in there?\n\n[The user ran this command"),
        "{first}"
    );
    assert!(
        first.contains("`ls` (exit code 0)") && first.contains("hello-bang.txt"),
        "{first}"
    );
    assert_eq!(last_user(&requests[1]), "and now?", "carried once");
    let all = requests[1].json().to_string();
    assert_eq!(all.matches("The user ran this command").count(), 1, "{all}");
    // Recorded as the user's command: in the session file, and in the audit log without
    // the command or its output.
    let sessions = read_all(&home.path().join(".local/share/taco/sessions"), "");
    assert!(sessions.contains("\"type\":\"user_shell\""), "{sessions}");
    let audit = read_all(&home.path().join("state/taco"), "audit.jsonl");
    assert!(audit.contains("\"event\":\"user_command\""), "{audit}");
    assert!(!audit.contains("hello-bang"), "{audit}");
}

#[test]
fn bang_is_cancelled_with_esc_and_the_app_is_free_again() {
    if !crate::support::needs::tmux() {
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let server = server(vec![text_turn(&["unused"])]);
    config(home.path(), &server);
    let tmux = start(home.path(), work.path());
    tmux.text("!sleep 30 && echo finished-$((1 + 1))");
    tmux.keys(&["Enter"]);
    tmux.wait_for("running · Esc cancels");
    tmux.keys(&["Escape"]);
    let screen = tmux.wait_for("■ cancelled");
    assert!(!screen.contains("finished-2"), "{screen}");
    tmux.text("!echo again-$((40 + 2))");
    tmux.keys(&["Enter"]);
    tmux.wait_for("again-42");
    assert!(server.requests().is_empty());
}

#[test]
fn init_writes_agents_md_through_an_approval() {
    if !crate::support::needs::tmux() {
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let server = server(vec![
        tool_turn(
            "w1",
            "write_file",
            r##"{"path": "AGENTS.md", "content": "# Agents\n\nRun cargo test.\n"}"##,
        ),
        text_turn(&["Wrote AGENTS.md for you."]),
    ]);
    config(home.path(), &server);
    let tmux = start(home.path(), work.path());
    tmux.text("/init");
    tmux.keys(&["Enter"]);
    tmux.wait_for_ready("Approve write_file");
    assert!(
        !work.path().join("AGENTS.md").exists(),
        "not before it is approved"
    );
    tmux.keys(&["y", "Enter"]);
    tmux.wait_for("Wrote AGENTS.md for you.");
    assert_eq!(
        std::fs::read_to_string(work.path().join("AGENTS.md")).unwrap(),
        "# Agents\n\nRun cargo test.\n"
    );
    let requests = server.requests();
    assert_eq!(last_user(&requests[0]), taco::custom_commands::INIT_PROMPT);
}

#[test]
fn a_command_uses_its_model_and_tools_for_its_request_alone() {
    if !crate::support::needs::tmux() {
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    write(work.path(), ".taco/commands/review-pr.md", REVIEW);
    let server = server(vec![text_turn(&["reviewed"]), text_turn(&["plain"])]);
    config(home.path(), &server);
    let tmux = start(home.path(), work.path());
    tmux.text("/review-pr 5");
    tmux.keys(&["Enter"]);
    tmux.wait_for("reviewed");
    tmux.text("thanks");
    tmux.keys(&["Enter"]);
    tmux.wait_for("plain");
    let requests = server.requests();
    assert_eq!(
        last_user(&requests[0]),
        "Review pull request 5 carefully (5)."
    );
    assert_eq!(requests[0].json()["model"], "m2");
    assert_eq!(tools_of(&requests[0]), ["list_dir", "read_file"]);
    assert_eq!(
        requests[1].json()["model"],
        "m1",
        "the session's model again"
    );
    assert_eq!(tools_of(&requests[1]).len(), 10, "every tool again");
}
