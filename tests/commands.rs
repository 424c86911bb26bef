//! Custom commands, `!` and `/init` (issue 30.4): `taco exec "/name args"` against a loopback
//! OpenAI-style server (the text, its arguments, the tools offered and the model in the
//! request body), the user's commands, a bad file; in the app: the popup, `/help`, what a
//! command and `!cmd` send, and the shell cell.

use crate::support;

use std::path::Path;

use ratatui::crossterm::event::KeyCode;
use serde_json::Value;
use support::app::{Harness, info, screen_text};
use support::cli::{finish, taco, text_turn, tool_turn};
use support::{RecordedRequest, TestServer};
use taco::event::{EventData, UserShell, UserShellState};
use taco::orchestrator::request::RequestOptions;
use taco::orchestrator::task::Op;
use taco::tui::app::{App, AppInfo, Command};

pub const REVIEW: &str = "---\ndescription: Review a pull request\nargument-hint: <number>\nallowed-tools: read_file, list_dir\nmodel: m2\n---\nReview pull request $1 carefully ($ARGUMENTS).\n";

pub fn write(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A config whose provider `local` talks to `server` with model `m1`.
pub fn config(home: &Path, server: &TestServer) {
    let text = format!(
        "provider = \"local\"\n\n[providers.local]\nkind = \"openai\"\nbase_url = \"{}/v1\"\nmodel = \"m1\"\n\n[providers.local.options]\nmax_attempts = 1\n",
        server.url()
    );
    write(home, "config/taco/config.toml", &text);
}

pub fn tools_of(request: &RecordedRequest) -> Vec<String> {
    let body = request.json();
    (body["tools"].as_array().into_iter().flatten())
        .map(|t| t["function"]["name"].as_str().unwrap().to_string())
        .collect()
}

pub fn last_user(request: &RecordedRequest) -> String {
    let body = request.json();
    (body["messages"].as_array().unwrap().iter())
        .rev()
        .find(|m| m["role"] == "user")
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_string()
}

#[tokio::test]
async fn exec_runs_a_project_command_with_its_arguments_tools_and_model() {
    let (home, work) = support::cli::setup();
    let server = TestServer::start(vec![text_turn(&["Looks good."])]).await;
    config(home.path(), &server);
    write(work.path(), ".taco/commands/review-pr.md", REVIEW);
    let mut cmd = taco(home.path(), work.path());
    cmd.args(["exec", "/review-pr 123 now"]);
    let run = finish(&mut cmd).await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert_eq!(run.stdout, "Looks good.\n");
    assert!(
        run.stderr
            .contains("running the project command /review-pr"),
        "{}",
        run.stderr
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(
        last_user(&requests[0]),
        "Review pull request 123 carefully (123 now)."
    );
    assert_eq!(requests[0].json()["model"], "m2", "the command's model");
    assert_eq!(
        tools_of(&requests[0]),
        ["list_dir", "read_file"],
        "only the command's tools are offered"
    );
}

#[tokio::test]
async fn exec_runs_a_user_command_and_a_project_one_of_the_same_name_wins() {
    let (home, work) = support::cli::setup();
    let server = TestServer::start(vec![text_turn(&["one"]), text_turn(&["two"])]).await;
    config(home.path(), &server);
    let user = home.path().join("config/taco/commands");
    write(
        &user,
        "notes/summarize.md",
        "Summarize $ARGUMENTS in one line.",
    );
    write(&user, "review-pr.md", "the user's review");
    write(work.path(), ".taco/commands/review-pr.md", REVIEW);
    let mut cmd = taco(home.path(), work.path());
    cmd.args(["exec", "/notes:summarize hello.txt"]);
    let run = finish(&mut cmd).await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert!(
        run.stderr.contains("the user command /notes:summarize"),
        "{}",
        run.stderr
    );
    let mut cmd = taco(home.path(), work.path());
    cmd.args(["exec", "/review-pr 7"]);
    let run = finish(&mut cmd).await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let requests = server.requests();
    assert_eq!(last_user(&requests[0]), "Summarize hello.txt in one line.");
    assert_eq!(
        requests[0].json()["model"],
        "m1",
        "no model asked: the session's"
    );
    assert_eq!(
        tools_of(&requests[0]).len(),
        10,
        "no tools named: every tool"
    );
    assert_eq!(
        last_user(&requests[1]),
        "Review pull request 7 carefully (7).",
        "the project's command, not the user's"
    );
}

#[tokio::test]
async fn exec_says_why_a_bad_command_file_is_not_a_command_and_sends_the_line() {
    let (home, work) = support::cli::setup();
    let server = TestServer::start(vec![text_turn(&["ok"])]).await;
    config(home.path(), &server);
    write(
        work.path(),
        ".taco/commands/broken.md",
        "---\ndescription: x\nReview it\n",
    );
    let mut cmd = taco(home.path(), work.path());
    cmd.args(["exec", "/broken"]);
    let run = finish(&mut cmd).await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert!(
        run.stderr
            .contains("broken.md is not a command: its front matter has no closing"),
        "{}",
        run.stderr
    );
    assert_eq!(last_user(&server.requests()[0]), "/broken");
}

#[tokio::test]
async fn exec_init_asks_for_agents_md_and_writes_it_when_approved() {
    let (home, work) = support::cli::setup();
    let server = TestServer::start(vec![
        tool_turn(
            "w1",
            "write_file",
            r##"{"path": "AGENTS.md", "content": "# Agents\nRun cargo test.\n"}"##,
        ),
        text_turn(&["Wrote AGENTS.md."]),
    ])
    .await;
    config(home.path(), &server);
    let mut cmd = taco(home.path(), work.path());
    cmd.args(["exec", "--approve", "all", "/init"]);
    let run = finish(&mut cmd).await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let prompt = last_user(&server.requests()[0]);
    assert_eq!(prompt, taco::custom_commands::INIT_PROMPT);
    assert_eq!(
        std::fs::read_to_string(work.path().join("AGENTS.md")).unwrap(),
        "# Agents\nRun cargo test.\n"
    );
}

/// An app in a workspace with project commands, and a user's command folder.
fn app_with_commands() -> (Harness, tempfile::TempDir, tempfile::TempDir) {
    let work = tempfile::tempdir().unwrap();
    let user = tempfile::tempdir().unwrap();
    write(work.path(), ".taco/commands/review-pr.md", REVIEW);
    write(
        work.path(),
        ".taco/commands/frontend/test.md",
        "Run the frontend tests.",
    );
    write(
        work.path(),
        ".taco/commands/help.md",
        "shadowed by the built-in",
    );
    write(
        user.path(),
        "mine.md",
        "---\ndescription: My own command\n---\nDo $ARGUMENTS",
    );
    let info = AppInfo {
        workdir: work.path().display().to_string(),
        user_commands: Some(user.path().to_path_buf()),
        tools: ["read_file", "list_dir", "shell"]
            .iter()
            .map(|n| taco::tui::commands::ToolInfo {
                name: n.to_string(),
                description: String::new(),
                schema: Value::Null,
                policy: String::new(),
                usage: None,
            })
            .collect(),
        ..info()
    };
    let mut h = Harness::new();
    h.app = App::new(info, h.t0);
    (h, work, user)
}

#[test]
fn the_popup_lists_custom_commands_marked_with_their_source() {
    let (mut h, work, _user) = app_with_commands();
    h.type_text("/r");
    let (_, items, _) = h.app.popup().unwrap();
    assert!(items.contains(&"/review-pr".to_string()), "{items:?}");
    let screen = h.screen(100, 24);
    let text = screen_text(&screen);
    assert!(text.contains("(project) Review a pull request"), "{text}");
    let shown = text.replace(&work.path().display().to_string(), "<workspace>");
    insta::assert_snapshot!("custom_commands_popup", shown);
    // The user's command, and a namespaced one.
    for _ in 0..2 {
        h.key(KeyCode::Backspace);
    }
    h.type_text("/mine");
    let text = screen_text(&h.screen(100, 24));
    assert!(text.contains("(user) My own command"), "{text}");
    for _ in 0..5 {
        h.key(KeyCode::Backspace);
    }
    h.type_text("/front");
    let (_, items, _) = h.app.popup().unwrap();
    assert_eq!(items.first().map(String::as_str), Some("/frontend:test"));
}

#[test]
fn help_lists_custom_commands_and_the_skipped_files() {
    let (mut h, _work, _user) = app_with_commands();
    h.command("/help");
    // The custom commands are the last section: scrolled to the end.
    for _ in 0..10 {
        h.key(KeyCode::PageDown);
    }
    let text = screen_text(&h.screen(120, 60));
    assert!(text.contains("Custom commands"), "{text}");
    assert!(text.contains("/review-pr <number>"), "{text}");
    assert!(text.contains("project · Review a pull request"), "{text}");
    assert!(text.contains("user · My own command"), "{text}");
    assert!(text.contains("built-in command, which wins"), "{text}");
}

#[test]
fn a_command_sends_its_text_with_its_options_and_shows_the_line_typed() {
    let (mut h, _work, _user) = app_with_commands();
    let sent = h.command("/review-pr 42");
    let options = RequestOptions {
        tools: Some(vec!["read_file".into(), "list_dir".into()]),
        model: Some("m2".into()),
    };
    assert_eq!(
        sent,
        [Command::Op(Op::SubmitWith(
            "Review pull request 42 carefully (42).".into(),
            options
        ))]
    );
    let text = screen_text(&h.screen(100, 30));
    assert!(text.contains("› /review-pr 42"), "{text}");
    assert!(text.contains("asks for model m2"), "{text}");
    // While it runs, another command goes back into the editor.
    assert!(h.command("/mine x").is_empty());
    let text = screen_text(&h.screen(100, 30));
    assert!(text.contains("/mine x"), "{text}");
    // A command without front matter options is a plain request; `/init` is one too.
    let (mut h, _work, _user) = app_with_commands();
    assert_eq!(
        h.command("/mine the dishes"),
        [Command::Op(Op::Submit("Do the dishes".into()))]
    );
    let (mut h, _work, _user) = app_with_commands();
    assert_eq!(
        h.command("/init"),
        [Command::Op(Op::Submit(
            taco::custom_commands::INIT_PROMPT.into()
        ))]
    );
}

fn shell(state: UserShellState, exit_code: Option<i32>, output: &str) -> EventData {
    EventData::UserShell(Box::new(UserShell {
        id: "user-shell-1".into(),
        command: "ls".into(),
        state,
        exit_code,
        output: output.into(),
        error: None,
        duration_ms: 12,
        sandbox: None,
    }))
}

#[test]
fn bang_runs_a_command_only_when_nothing_runs_and_shows_its_cell() {
    let mut h = Harness::new();
    assert_eq!(
        h.command("!ls -a"),
        [Command::Op(Op::UserShell("ls -a".into()))]
    );
    assert!(h.app.is_busy());
    // Another `!` meanwhile goes back into the editor.
    assert!(h.command("!pwd").is_empty());
    h.event(shell(UserShellState::Running, None, ""));
    let text = screen_text(&h.screen(100, 24));
    assert!(
        text.contains("! ls") && text.contains("running · Esc cancels"),
        "{text}"
    );
    let lines: String = (1..=10).map(|i| format!("line {i}\n")).collect();
    h.event(shell(UserShellState::Exited, Some(0), &lines));
    assert!(!h.app.is_busy(), "its end frees the app");
    let text = screen_text(&h.screen(100, 24));
    assert!(text.contains("exit 0"), "{text}");
    assert!(
        text.contains("line 10") && !text.contains("line 4\n"),
        "{text}"
    );
    assert!(
        text.contains("4 earlier lines · Ctrl-O shows them"),
        "{text}"
    );
    insta::assert_snapshot!("bang_cell", h.screen(100, 24).backend());
    // Esc while it runs cancels it like a request.
    for _ in 0..4 {
        h.key(KeyCode::Backspace);
    }
    h.command("!sleep 9");
    assert_eq!(h.key(KeyCode::Esc), [Command::Op(Op::Cancel)]);
    // An empty `!` runs nothing.
    let mut h = Harness::new();
    assert!(h.command("!").is_empty());
}
