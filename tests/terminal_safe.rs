//! Nothing outside the TUI prints untrusted text raw (issue 26): a model's answer, a
//! provider's error, an MCP server's stderr and a saved session's prompt carry an OSC 0
//! title and an OSC 52 clipboard write; after `taco exec` (text and `--json`), `taco
//! sessions` and `taco mcp list` run in a tmux pane with `set-clipboard on`, the pane's title
//! and tmux's paste buffers are as they were, and the screen shows the sequences as inert
//! text (`^[]0;…`). A control pane that prints the same bytes raw proves the pane would
//! have shown the attack. Needs tmux (CI installs it).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed unwrap is a failed test

use crate::support;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::json;
use support::cli::*;
use support::tmux::Tmux;
use support::{Reply, TestServer};

/// An OSC 0 title and an OSC 52 clipboard write ("pwned"), with their C1 forms.
const ATTACK: &str =
    "\x1b]0;pwned\x07 \x1b]2;pwned2\x1b\\ \x1b]52;c;cHduZWQ=\x07 \u{9d}0;c1\u{9c} \u{9b}2J";

/// What the pane shows and kept after `command` ran in it.
struct Pane {
    title: String,
    buffers: String,
    screen: String,
}

/// Runs `command` in a fresh tmux pane of its own server, with `set-clipboard on` and the
/// title `original` set before it starts, until it prints `EXITED`.
fn run_in_pane(dir: &Path, command: &str) -> Pane {
    let go = dir.join(format!("go-{}", rand_suffix()));
    let script = format!(
        "while [ ! -e '{go}' ]; do sleep 0.05; done; {command}; echo EXITED; sleep 60",
        go = go.display()
    );
    let tmux = Tmux::start(&script, 160, 40);
    assert!(
        tmux.run(&["set", "-g", "set-clipboard", "on"])
            .status
            .success()
    );
    assert!(
        tmux.run(&["select-pane", "-t", "t", "-T", "original"])
            .status
            .success()
    );
    std::fs::write(&go, "").unwrap();
    let screen = tmux.wait_for("EXITED");
    // Let tmux finish reading what the program wrote.
    std::thread::sleep(Duration::from_millis(200));
    Pane {
        title: tmux.pane_format("#{pane_title}"),
        buffers: String::from_utf8_lossy(&tmux.run(&["list-buffers"]).stdout).into_owned(),
        screen,
    }
}

fn rand_suffix() -> String {
    format!("{:?}", Instant::now()).replace(|c: char| !c.is_ascii_alphanumeric(), "")
}

fn assert_untouched(pane: &Pane, what: &str) {
    assert_eq!(
        pane.title, "original",
        "{what} retitled the pane; the screen:\n{}",
        pane.screen
    );
    assert!(
        pane.buffers.trim().is_empty(),
        "{what} wrote the clipboard: {}; the screen:\n{}",
        pane.buffers,
        pane.screen
    );
}

/// `taco` under a clean environment in `work` with `home`, as a shell command.
fn taco_command(home: &Path, work: &Path, args: &str) -> String {
    format!(
        "cd '{work}' && env -i PATH='{path}' HOME='{home}' XDG_CONFIG_HOME='{home}/config' XDG_STATE_HOME='{home}/state' TERM=xterm-256color '{taco}' {args}",
        work = work.display(),
        home = home.display(),
        path = std::env::var("PATH").unwrap_or_default(),
        taco = env!("CARGO_BIN_EXE_taco"),
    )
}

/// A config with an MCP server that writes the attack to stderr and exits.
fn hostile_mcp_config(home: &Path) -> std::path::PathBuf {
    let config = home.join("hostile.toml");
    let script = r"printf '\033]0;pwned\007 \033]52;c;cHduZWQ=\007 server says\n' >&2; exit 3";
    std::fs::write(
        &config,
        format!(
            "[providers.openai.options]\nmax_attempts = 1\n\n[mcp.servers.bad]\ncommand = \"sh\"\nargs = [\"-c\", {}]\n",
            toml_string(script)
        ),
    )
    .unwrap();
    config
}

fn toml_string(text: &str) -> String {
    serde_json::to_string(text).unwrap()
}

fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

#[test]
fn the_control_pane_shows_the_attack_would_work() {
    if !crate::support::needs::tmux() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let pane = run_in_pane(
        dir.path(),
        r"printf '\033]0;pwned\007\033]52;c;cHduZWQ=\007'",
    );
    assert_eq!(pane.title, "pwned");
    assert!(pane.buffers.contains("pwned"), "{}", pane.buffers);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exec_on_a_terminal_prints_answers_errors_and_server_stderr_inert() {
    if !crate::support::needs::tmux() {
        return;
    }
    let (home, work) = setup();
    // The answer carries the attack, cut inside its sequences across deltas.
    let (a, b) = ATTACK.split_at(5);
    let answer = Reply::sse(sse(&[
        chunk(json!({"content": format!("Answer {a}")}), None),
        chunk(json!({"content": format!("{b} end\n")}), None),
        chunk(json!({}), Some("stop")),
    ]));
    let error = Reply::status(400).json(&json!({"error": {"message": format!("bad request {ATTACK}"), "type": "invalid_request_error"}}));
    let server = TestServer::start(vec![answer.clone(), error, answer]).await;
    let config = hostile_mcp_config(home.path());
    let exec = |json: &str| {
        taco_command(
            home.path(),
            work.path(),
            &format!(
                "exec -c '{}' -p openai --base-url '{}/v1' -m m1 {json} hi",
                config.display(),
                server.url()
            ),
        )
    };
    let command = format!("{}; {}; {}", exec(""), exec(""), exec("--json"));
    let dir = home.path().to_path_buf();
    let pane = tokio::task::spawn_blocking(move || run_in_pane(&dir, &command))
        .await
        .unwrap();
    assert_untouched(&pane, "taco exec");
    // The text was there, shown inert: the answer, the provider's error, the server's stderr.
    assert!(
        pane.screen.contains("Answer ^[]0;pwned^G"),
        "{}",
        pane.screen
    );
    assert!(
        pane.screen.contains("bad request ^[]0;pwned^G"),
        "{}",
        pane.screen
    );
    assert!(
        pane.screen.contains("^[]52;c;cHduZWQ=^G server says"),
        "{}",
        pane.screen
    );
    assert_eq!(server.requests().len(), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_and_mcp_list_print_saved_and_server_text_inert() {
    if !crate::support::needs::tmux() {
        return;
    }
    let (home, work) = setup();
    // A session whose first prompt carries the attack.
    let server = TestServer::start(vec![text_turn(&["ok"])]).await;
    let out = Command::new(env!("CARGO_BIN_EXE_taco"))
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .env("XDG_CONFIG_HOME", home.path().join("config"))
        .env("XDG_STATE_HOME", home.path().join("state"))
        .current_dir(work.path())
        .args(["exec", "-p", "openai", "--base-url"])
        .arg(format!("{}/v1", server.url()))
        .args(["-m", "m1"])
        .arg(format!("please {ATTACK} now"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let config = hostile_mcp_config(home.path());
    let command = format!(
        "{}; {}",
        taco_command(home.path(), work.path(), "sessions"),
        taco_command(
            home.path(),
            work.path(),
            &format!("mcp list -c {}", shell_quote(&config.display().to_string()))
        )
    );
    let dir = home.path().to_path_buf();
    let pane = tokio::task::spawn_blocking(move || run_in_pane(&dir, &command))
        .await
        .unwrap();
    assert_untouched(&pane, "taco sessions and taco mcp list");
    assert!(
        pane.screen.contains("please ^[]0;pwned^G"),
        "{}",
        pane.screen
    );
    assert!(pane.screen.contains("server says"), "{}", pane.screen);
    assert!(
        pane.screen.contains("^[]52;c;cHduZWQ=^G"),
        "{}",
        pane.screen
    );
}
