//! End to end: the real binary in a pseudo-terminal (tmux), on the offline demo provider.
//! Needs tmux (CI installs it); without tmux the tests say so and fail.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed unwrap is a failed test

use crate::support;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use support::tmux::Tmux;

/// Runs taco in a shell that records the terminal mode after taco exits.
fn launch(home: &Path, work: &Path) -> Tmux {
    launch_with(home, work, "")
}

/// Like `launch`, with extra arguments for taco (already shell-quoted).
fn launch_with(home: &Path, work: &Path, args: &str) -> Tmux {
    let stty = format!("stty -a > '{}/stty.txt'; ", home.display());
    support::tmux::launch_taco(home, work, args, &stty, (160, 45))
}

/// Runs `taco exec` to the end with the same clean environment as the TUI.
fn exec(home: &Path, work: &Path, args: &[&str]) {
    support::tmux::exec_taco(home, work, args);
}

fn session_files(home: &Path) -> usize {
    support::cli::session_files(home).len()
}

fn wait_for_file(path: &Path) -> String {
    let deadline = Instant::now() + Duration::from_secs(15);
    while Instant::now() < deadline {
        if let Ok(text) = std::fs::read_to_string(path)
            && !text.is_empty()
        {
            return text;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!("{} never appeared", path.display());
}

#[test]
fn approve_the_demo_write_then_quit_with_ctrl_c_twice() {
    if !crate::support::needs::tmux() {
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("notes.txt"), "hello\n").unwrap();
    let tmux = launch(home.path(), work.path());
    let screen = tmux.wait_for("Welcome to taco");
    assert!(
        screen.contains("demo"),
        "the status line names the auto-selected provider:\n{screen}"
    );

    tmux.text("hi");
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_for_ready("Approve write_file");
    assert!(
        screen.contains("list_dir"),
        "list_dir shows in the stack or timeline:\n{screen}"
    );
    assert!(
        screen.contains("taco-demo-note.md"),
        "the dialog shows the arguments:\n{screen}"
    );
    tmux.keys(&["y", "Enter"]);
    tmux.wait_for("I wrote a short note");
    assert!(
        work.path().join("taco-demo-note.md").exists(),
        "the approved write happened"
    );

    tmux.keys(&["C-c"]);
    tmux.keys(&["C-c"]);
    tmux.wait_for("EXITED");
    let stty = wait_for_file(&home.path().join("stty.txt"));
    assert!(
        stty.contains(" icanon") && stty.contains(" echo"),
        "the terminal is back in cooked mode:\n{stty}"
    );
}

#[test]
fn typing_into_an_opening_approval_never_answers_it() {
    if !crate::support::needs::tmux() {
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    // A long guard, so a slow machine cannot let it lapse while the letters still arrive
    // (the quiet gap and the default 400 ms are the app tests' business), and a slow demo,
    // so the dialog opens while we type.
    let config = home.path().join("config/taco");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(
        config.join("config.toml"),
        "[tui]\ndialog_guard_ms = 3000\n\n[providers.demo.options]\npace_ms = 150\n",
    )
    .unwrap();
    let tmux = launch(home.path(), work.path());
    tmux.wait_for("Welcome to taco");
    tmux.text("hi");
    tmux.keys(&["Enter"]);
    // The first turn ends with this; the write is asked for about a second later.
    tmux.wait_for("Let me look");

    // Letters one at a time, like a person, until the dialog has been up for a while.
    let sentence = "also try this and then tell me why, any time now: yes, that and a note";
    let mut typed = String::new();
    let mut before = None;
    let mut after = 0;
    for c in sentence.chars() {
        tmux.text(&c.to_string());
        typed.push(c);
        std::thread::sleep(Duration::from_millis(40));
        if before.is_none() && tmux.screen().contains("Approve write_file") {
            before = Some(typed.len());
        }
        if before.is_some() {
            after += 1;
            if after == 12 {
                break;
            }
        }
    }
    let before = before.unwrap_or_else(|| panic!("the dialog never opened while typing {typed:?}"));
    assert!(
        before > 1,
        "typing started before the dialog opened: {typed:?}"
    );

    let screen = tmux.wait_for(&typed);
    assert!(
        screen.contains("Approve write_file") && screen.contains("Tab to answer"),
        "the dialog is still open and waits for the user:\n{screen}"
    );
    assert!(
        !work.path().join("taco-demo-note.md").exists(),
        "no letter approved the write:\n{screen}"
    );

    // The guard lapses; a deliberate y approves.
    tmux.wait_for_ready("Approve write_file");
    tmux.keys(&["y", "Enter"]);
    let screen = tmux.wait_for("I wrote a short note");
    assert!(work.path().join("taco-demo-note.md").exists());
    assert!(
        screen.contains(&typed),
        "the typed message is still in the composer:\n{screen}"
    );
    // The first Ctrl-C clears that draft (into the history); then cancel, then quit.
    tmux.keys(&["C-c"]);
    tmux.keys(&["C-c"]);
    tmux.keys(&["C-c"]);
    tmux.wait_for("EXITED");
}

#[test]
fn deny_the_demo_write_with_n() {
    if !crate::support::needs::tmux() {
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let tmux = launch(home.path(), work.path());
    tmux.wait_for("Welcome to taco");
    tmux.text("hi");
    tmux.keys(&["Enter"]);
    tmux.wait_for_ready("Approve write_file");
    tmux.keys(&["n", "Enter"]);
    tmux.wait_for("Reason for the model");
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_for("denied");
    assert!(
        !work.path().join("taco-demo-note.md").exists(),
        "no file after a denial:\n{screen}"
    );
    tmux.wait_for("so I left the workspace untouched");
    tmux.text("/quit");
    tmux.keys(&["Enter"]);
    tmux.wait_for("EXITED");
    let stty = wait_for_file(&home.path().join("stty.txt"));
    assert!(stty.contains(" icanon"), "{stty}");
}

#[test]
fn resume_an_exec_session_in_the_tui_and_clear_starts_a_new_one() {
    if !crate::support::needs::tmux() {
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    exec(
        home.path(),
        work.path(),
        &["-p", "demo", "--approve", "all", "say hello"],
    );
    assert_eq!(session_files(home.path()), 1);
    let tmux = launch_with(home.path(), work.path(), "-p demo --resume");
    let screen = tmux.wait_for("Resumed session");
    assert!(
        screen.contains("say hello"),
        "the earlier request is back:\n{screen}"
    );
    tmux.wait_for("I wrote a short note");
    assert_eq!(
        session_files(home.path()),
        1,
        "a resumed session appends to its file"
    );
    tmux.text("/clear");
    tmux.keys(&["Enter"]);
    tmux.wait_for("New conversation");
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(
        session_files(home.path()),
        1,
        "/clear alone leaves no empty session behind"
    );
    tmux.text("and now?");
    tmux.keys(&["Enter"]);
    let deadline = Instant::now() + Duration::from_secs(10);
    while session_files(home.path()) < 2 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(
        session_files(home.path()),
        2,
        "the first message after /clear starts a new session file"
    );
    tmux.text("/quit");
    tmux.keys(&["Enter"]);
    tmux.wait_for("EXITED");
}

#[test]
fn a_launch_that_records_nothing_leaves_no_session() {
    if !crate::support::needs::tmux() {
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let tmux = launch_with(home.path(), work.path(), "-p demo");
    tmux.wait_for("tool stack");
    tmux.text("/quit");
    tmux.keys(&["Enter"]);
    tmux.wait_for("EXITED");
    assert_eq!(session_files(home.path()), 0);
    // `taco --resume` then has nothing empty to pick.
    let tmux = launch_with(home.path(), work.path(), "-p demo --resume");
    let screen = tmux.wait_for("EXITED");
    assert!(screen.contains("no saved session"), "{screen}");
}

#[test]
fn trace_opens_an_exec_trace_read_only() {
    if !crate::support::needs::tmux() {
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let trace = work.path().join("run.trace");
    exec(
        home.path(),
        work.path(),
        &["-p", "demo", "--trace", trace.to_str().unwrap(), "hi"],
    );
    let tmux = launch_with(home.path(), work.path(), "trace run.trace");
    let screen = tmux.wait_for("read-only");
    assert!(
        screen.contains("list_dir") && screen.contains("write_file"),
        "{screen}"
    );
    tmux.keys(&["Tab"]);
    tmux.keys(&["Tab"]);
    tmux.keys(&["Home"]);
    tmux.keys(&["Down"]);
    tmux.keys(&["Enter"]);
    tmux.wait_for("messages sent");
    tmux.keys(&["C-c"]);
    tmux.keys(&["C-c"]);
    tmux.wait_for("EXITED");
}

#[test]
fn mcp_servers_start_behind_the_first_frame_and_a_broken_one_is_said_once() {
    if !crate::support::needs::tmux() {
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let config = home.path().join("mcp.toml");
    // A short path to the fixture, so /mcp's line for it has the same width wherever the
    // target directory is (a long one wrapped "ready, 9 tools" onto the next row).
    let fixture = home.path().join("fx");
    std::os::unix::fs::symlink(support::mcp::fixture(), &fixture).unwrap();
    std::fs::write(
        &config,
        format!(
            "[mcp.servers.fixture]\ncommand = {:?}\n\n[mcp.servers.broken]\ncommand = \"no-such-mcp-server-here\"\n",
            fixture.display().to_string()
        ),
    )
    .unwrap();
    let tmux = launch_with(
        home.path(),
        work.path(),
        &format!("-p demo -c '{}'", config.display()),
    );
    tmux.wait_for("Welcome to taco");
    let screen = tmux.wait_for("MCP server broken");
    assert_eq!(screen.matches("was not found").count(), 1, "{screen}");
    let screen = tmux.wait_for_mcp("mcp__fixture__log");
    assert!(
        screen.contains("ready, 9") && screen.contains("mcp__fixture__echo"),
        "{screen}"
    );
    assert!(
        !screen.contains("send the request again"),
        "no request failed: {screen}"
    );
    // This test's own server, by the path it was started by (its home's link): other tests'
    // fixtures run at the same time.
    let running = Command::new("pgrep")
        .args(["-f", &fixture.display().to_string()])
        .output()
        .unwrap();
    assert!(
        !running.stdout.is_empty(),
        "the fixture is found while it runs"
    );
    tmux.text("/quit");
    tmux.keys(&["Enter"]);
    tmux.wait_for("EXITED");
    // Quitting ended the server: no fixture process is left.
    let left = Command::new("pgrep")
        .args(["-f", &fixture.display().to_string()])
        .output()
        .unwrap();
    assert!(left.stdout.is_empty(), "a server outlived taco: {:?}", left);
}

/// Like `launch`, on a screen of `width` × `height`.
fn launch_at(home: &Path, work: &Path, width: u16, height: u16) -> Tmux {
    let taco = env!("CARGO_BIN_EXE_taco");
    let path = std::env::var("PATH").unwrap_or_default();
    let command = format!(
        "cd '{work}' && env -i PATH='{path}' HOME='{home}' XDG_CONFIG_HOME='{home}/config' XDG_STATE_HOME='{home}/state' TERM=xterm-256color '{taco}'; echo EXITED; sleep 60",
        work = work.display(),
        home = home.display(),
    );
    Tmux::start(&command, width, height)
}

#[test]
fn a_sixty_word_prompt_shows_whole_at_120_columns() {
    if !crate::support::needs::tmux() {
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let tmux = launch_at(home.path(), work.path(), 120, 40);
    tmux.wait_for("Welcome to taco");
    let words: Vec<String> = (1..=60).map(|i| format!("word{i}")).collect();
    tmux.text(&words.join(" "));
    let screen = tmux.wait_for("word60");
    for word in &words {
        // Followed by a blank: `word1` is not taken for the start of `word10`.
        assert!(
            screen.contains(&format!("{word} ")),
            "{word} shows:\n{screen}"
        );
    }
    tmux.keys(&["C-c"]);
    tmux.wait_for("draft cleared");
    tmux.keys(&["C-c"]);
    tmux.keys(&["C-c"]);
    tmux.wait_for("EXITED");
}

#[test]
fn the_prompt_history_is_recalled_after_a_restart() {
    if !crate::support::needs::tmux() {
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let tmux = launch(home.path(), work.path());
    tmux.wait_for("Welcome to taco");
    tmux.text("remember this prompt please");
    tmux.keys(&["Enter"]);
    tmux.wait_for_ready("Approve write_file");
    // With the dialog open Ctrl-C cancels at once; the second quits.
    tmux.keys(&["C-c"]);
    tmux.keys(&["C-c"]);
    tmux.wait_for("EXITED");
    drop(tmux);
    let file = home.path().join("state/taco/prompt-history.jsonl");
    let text = std::fs::read_to_string(&file).unwrap();
    assert_eq!(text, "\"remember this prompt please\"\n");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&file).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    let tmux = launch(home.path(), work.path());
    let screen = tmux.wait_for("Welcome to taco");
    assert!(!screen.contains("remember this prompt"), "{screen}");
    tmux.keys(&["Up"]);
    tmux.wait_for("remember this prompt please");
    tmux.keys(&["C-c"]);
    tmux.keys(&["C-c"]);
    tmux.keys(&["C-c"]);
    tmux.wait_for("EXITED");
}

#[test]
fn at_completes_a_file_and_the_chat_shows_it_attached() {
    if !crate::support::needs::tmux() {
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(work.path().join("src")).unwrap();
    std::fs::write(
        work.path().join("src/main.rs"),
        "fn main() { attached() }\n",
    )
    .unwrap();
    std::fs::write(work.path().join("README.md"), "# readme\n").unwrap();
    let tmux = launch(home.path(), work.path());
    tmux.wait_for("Welcome to taco");
    tmux.text("explain @mai");
    // The finder lists the file (its title counts what matched).
    tmux.wait_for("files · 1 of 2");
    tmux.keys(&["Tab"]);
    tmux.wait_for("explain @src/main.rs");
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_for("[@src/main.rs · 25 B]");
    assert!(
        !screen.contains("attached()"),
        "the chat shows the chip, not the file:\n{screen}"
    );
    tmux.wait_for_ready("Approve write_file");
    // With the dialog open Ctrl-C cancels at once; the second quits.
    tmux.keys(&["C-c"]);
    tmux.keys(&["C-c"]);
    tmux.wait_for("EXITED");
}
