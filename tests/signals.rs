//! Nothing outlives taco (issue 9.5): SIGTERM, SIGHUP and SIGQUIT during a running tool, in
//! `exec` and in the TUI. The tool's processes — also one that escaped its process group
//! with `setsid` — are gone, the terminal is restored, the session file loads, and taco
//! exits 128 + signal.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed unwrap is a failed test

use crate::support;

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::json;
use support::TestServer;
use support::cli::*;
use support::tmux::Tmux;

/// Pids of processes whose command line is exactly `command` (arguments joined by spaces).
fn processes(command: &str) -> Vec<i32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|s| s.parse().ok()) else {
            continue;
        };
        if let Ok(raw) = std::fs::read(entry.path().join("cmdline")) {
            let line = raw
                .split(|&b| b == 0)
                .filter(|a| !a.is_empty())
                .map(|a| String::from_utf8_lossy(a).into_owned())
                .collect::<Vec<_>>()
                .join(" ");
            if line == command {
                found.push(pid);
            }
        }
    }
    found
}

/// Kills leftovers when a test fails, so a failure does not leave sleeps behind either.
struct Leftovers(Vec<String>);

impl Drop for Leftovers {
    fn drop(&mut self) {
        for command in &self.0 {
            for pid in processes(command) {
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
        }
    }
}

/// Two sleeps with arguments unique to this test: one in the command's process group, one
/// escaped from it with `setsid`.
fn sleeps(tag: u32) -> (String, [String; 2], Leftovers) {
    let base = 700_000 + (std::process::id() % 1000) * 100 + tag;
    let inner = format!("sleep {base}1");
    let escaped = format!("sleep {base}2");
    let shell = format!("setsid {escaped} & {inner}");
    let leftovers = Leftovers(vec![inner.clone(), escaped.clone()]);
    (shell, [inner, escaped], leftovers)
}

fn wait_until(what: &str, mut ready: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !ready() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn assert_all_gone(commands: &[String]) {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let left: Vec<(String, Vec<i32>)> = commands
            .iter()
            .map(|c| (c.clone(), processes(c)))
            .filter(|(_, pids)| !pids.is_empty())
            .collect();
        if left.is_empty() {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "still running after taco exited: {left:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn session_text(home: &Path) -> String {
    let path = only_session(home);
    let loaded = taco::session::load(&path).expect("the session file loads");
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    std::fs::read_to_string(&path).unwrap()
}

#[tokio::test]
async fn exec_ends_its_tools_on_sigterm_sighup_and_sigquit() {
    if !crate::support::needs::tmux() {
        return;
    }
    for (tag, signal, code) in [
        (1, libc::SIGTERM, 143),
        (2, libc::SIGHUP, 129),
        (3, libc::SIGQUIT, 131),
    ] {
        let (home, work) = setup();
        let (shell, commands, _leftovers) = sleeps(tag);
        let server = TestServer::start(vec![
            tool_turn("s1", "shell", &json!({ "command": shell }).to_string()),
            text_turn(&["never reached"]),
        ])
        .await;
        let mut cmd = taco(home.path(), work.path());
        openai_args(&mut cmd, &server);
        cmd.args(["--approve", "all", "--json", "sleep please"]);
        let child = cmd.spawn().unwrap();
        let pid = child.id().unwrap() as i32;
        wait_until("both sleeps", || {
            commands.iter().all(|c| !processes(c).is_empty())
        });
        unsafe { libc::kill(pid, signal) };
        let output = tokio::time::timeout(Duration::from_secs(20), child.wait_with_output())
            .await
            .expect("taco exits on the signal")
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(
            output.status.code(),
            Some(code),
            "signal {signal}: {stderr}"
        );
        assert!(stderr.contains("stopped by SIG"), "{stderr}");
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            stdout.lines().last().unwrap().contains("\"cancelled\""),
            "{stdout}"
        );
        assert_all_gone(&commands);
        let session = session_text(home.path());
        assert!(
            session.contains("\"tool_result\""),
            "the cancelled call is recorded"
        );
    }
}

/// A TUI in tmux whose first request runs the two sleeps of `tag`; returns once they run.
/// `then` is shell run after taco exits, `{home}` standing for its home (taco replaces the
/// shell when it is empty, so closing the pane closes taco's terminal).
struct RunningTui {
    tmux: Tmux,
    commands: [String; 2],
    home: tempfile::TempDir,
    _work: tempfile::TempDir,
    _server: TestServer,
    _leftovers: Leftovers,
}

async fn tui_running_sleeps(tag: u32, then: &str) -> RunningTui {
    let (home, work) = setup();
    let (shell, commands, leftovers) = sleeps(tag);
    let server = TestServer::start(vec![
        tool_turn("s1", "shell", &json!({ "command": shell }).to_string()),
        text_turn(&["never reached"]),
    ])
    .await;
    let config = home.path().join("taco.toml");
    std::fs::write(&config, "[tools.policy]\nshell = \"allow\"\n").unwrap();
    let (exec, after) = if then.is_empty() {
        ("exec ", String::new())
    } else {
        (
            "",
            format!(
                "; {}",
                then.replace("{home}", &home.path().display().to_string())
            ),
        )
    };
    let command = format!(
        "cd '{work}' && {exec}env -i PATH='{path}' HOME='{home}' XDG_STATE_HOME='{home}/state' TERM=xterm-256color '{taco}' -c '{config}' -p openai --base-url '{url}/v1' -m m1{after}",
        work = work.path().display(),
        home = home.path().display(),
        path = std::env::var("PATH").unwrap_or_default(),
        taco = env!("CARGO_BIN_EXE_taco"),
        config = config.display(),
        url = server.url(),
    );
    let tmux = Tmux::start(&command, 140, 40);
    tmux.wait_for("tool stack");
    tmux.text("sleep please");
    tmux.keys(&["Enter"]);
    wait_until("both sleeps", || {
        commands.iter().all(|c| !processes(c).is_empty())
    });
    RunningTui {
        tmux,
        commands,
        home,
        _work: work,
        _server: server,
        _leftovers: leftovers,
    }
}

#[tokio::test]
async fn the_tui_restores_the_terminal_and_ends_its_tools_on_sigterm() {
    if !crate::support::needs::tmux() {
        return;
    }
    let after = "echo EXIT=$?; stty -a > '{home}/stty.txt'; echo EXITED; sleep 60";
    let tui = tui_running_sleeps(4, after).await;
    let (tmux, commands, home) = (&tui.tmux, &tui.commands[..], &tui.home);
    assert_eq!(
        tmux.pane_format("#{alternate_on}"),
        "1",
        "the TUI is on the alternate screen"
    );
    let shell: i32 = tmux.pane_format("#{pane_pid}").parse().unwrap();
    let taco_pid = tacos_under(shell);
    assert_eq!(taco_pid.len(), 1, "one taco in the pane: {taco_pid:?}");
    unsafe { libc::kill(taco_pid[0], libc::SIGTERM) };
    let screen = tmux.wait_for("EXITED");
    assert!(screen.contains("EXIT=143"), "{screen}");
    assert_all_gone(commands);
    // Cooked mode again, and every screen mode taco turned on is off.
    let stty = std::fs::read_to_string(home.path().join("stty.txt")).unwrap();
    let flags: Vec<&str> = stty.split_whitespace().collect();
    for flag in ["icanon", "echo", "isig", "icrnl"] {
        assert!(flags.contains(&flag), "stty -a lacks {flag}: {stty}");
    }
    assert_eq!(tmux.pane_format("#{alternate_on}"), "0");
    assert_eq!(tmux.pane_format("#{mouse_any_flag}"), "0");
    assert_eq!(tmux.pane_format("#{mouse_sgr_flag}"), "0");
    assert_eq!(tmux.pane_format("#{cursor_flag}"), "1");
    let session = session_text(home.path());
    assert!(session.contains("\"cancelled\""), "{session}");
}

#[tokio::test]
async fn a_closed_terminal_ends_the_tui_and_its_tools() {
    if !crate::support::needs::tmux() {
        return;
    }
    // Every field is bound so the server and the leftover guard live to the end.
    let RunningTui {
        tmux,
        commands,
        home,
        _work,
        _server,
        _leftovers,
    } = tui_running_sleeps(5, "").await;
    let taco_pid: i32 = tmux.pane_format("#{pane_pid}").parse().unwrap();
    // The terminal goes away under taco (its pty is closed; the kernel sends SIGHUP).
    drop(tmux);
    wait_until("taco to exit", || {
        std::fs::read_to_string(format!("/proc/{taco_pid}/stat"))
            .map_or(true, |stat| stat.contains(") Z "))
    });
    assert_all_gone(&commands);
    let session = session_text(home.path());
    assert!(session.contains("\"cancelled\""), "{session}");
}

/// Pids of the taco binary whose parent is `parent`.
fn tacos_under(parent: i32) -> Vec<i32> {
    let exe = std::fs::canonicalize(env!("CARGO_BIN_EXE_taco")).unwrap();
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|s| s.parse().ok()) else {
            continue;
        };
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        let ppid = stat
            .rfind(')')
            .and_then(|i| stat[i + 1..].split_whitespace().nth(1))
            .and_then(|p| p.parse::<i32>().ok());
        if ppid == Some(parent)
            && std::fs::read_link(entry.path().join("exe")).is_ok_and(|e| e == exe)
        {
            found.push(pid);
        }
    }
    found
}
