//! Rewind from the timeline, end to end (issue 29): the real binary in tmux against a
//! loopback OpenAI-compatible model that writes a file and then runs a shell command that
//! changes it and creates another (both approved); after the run, `r` on the write's row in
//! the timeline opens the rewind overlay, `f` and Enter restore the files, and the workspace
//! is byte for byte as it was before the write, the shell's new file gone.
//! Needs tmux and git (CI installs both); without them the test says so and fails.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed unwrap is a failed test

use crate::support;

use std::path::Path;

use support::TestServer;
use support::cli::{text_turn, tool_turn};
use support::tmux::Tmux;

/// A config that talks to `server` as an OpenAI-compatible provider, failing at once.
fn openai_config(home: &Path, server: &TestServer) {
    let dir = home.join("config/taco");
    std::fs::create_dir_all(&dir).unwrap();
    let text = format!(
        "provider = \"local\"\n\n[providers.local]\nkind = \"openai\"\nbase_url = \"{}/v1\"\nmodel = \"coder\"\n\n[providers.local.options]\nmax_attempts = 1\n",
        server.url()
    );
    std::fs::write(dir.join("config.toml"), text).unwrap();
}

/// Approves the dialog that shows `needle` once it takes keys.
fn approve(tmux: &Tmux, needle: &str) {
    tmux.wait_for_ready(needle);
    tmux.keys(&["y", "Enter"]);
}

#[test]
fn r_on_the_writes_row_takes_the_files_back_to_before_it() {
    if !crate::support::needs::tmux() {
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let notes = work.path().join("notes.txt");
    let before: &[u8] = b"first line\nkept as it was\n";
    std::fs::write(&notes, before).unwrap();
    let server = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(TestServer::start(vec![
            tool_turn(
                "w1",
                "write_file",
                r#"{"path": "notes.txt", "content": "rewritten by the model\n"}"#,
            ),
            tool_turn(
                "s1",
                "shell",
                r#"{"command": "printf 'and more\\n' >> notes.txt && printf 'made\\n' > made.txt"}"#,
            ),
            text_turn(&["Both done."]),
        ]));
    openai_config(home.path(), &server);
    let tmux = support::tmux::launch_taco(home.path(), work.path(), "", "", (150, 45));
    tmux.wait_for("Welcome to taco");
    tmux.text("rewrite the notes");
    tmux.keys(&["Enter"]);
    approve(&tmux, "Approve write_file");
    let screen = tmux.wait_until("the shell's approval", |s| {
        s.contains("Approve shell") || s.contains("Run shell unsandboxed")
    });
    let shell = if screen.contains("Approve shell") {
        "Approve shell"
    } else {
        "Run shell unsandboxed"
    };
    approve(&tmux, shell);
    tmux.wait_for("Both done.");
    // The run's end: what it changed, from its checkpoints (the shell's file too).
    tmux.wait_until("the run's changes", |s| {
        s.contains("2 files changed") && s.contains("made.txt") && s.contains("idle")
    });
    assert_eq!(
        std::fs::read(&notes).unwrap(),
        b"rewritten by the model\nand more\n"
    );
    assert!(work.path().join("made.txt").exists());

    // The timeline, its tool rows only: the first is the write's call.
    tmux.keys(&["Tab"]);
    tmux.keys(&["Tab"]);
    tmux.keys(&["Home"]);
    tmux.keys(&["f"]);
    tmux.keys(&["f"]);
    tmux.wait_for("timeline · tools");
    tmux.keys(&["Home"]);
    tmux.keys(&["r"]);
    // The overlay opens at once, reading; the preview follows.
    tmux.wait_for("rewind to before write_file");
    let screen = tmux.wait_for_ready("Files that change");
    assert!(
        screen.contains("rewind to before write_file") && screen.contains("made.txt"),
        "the overlay lists the files, the shell's too:\n{screen}"
    );
    assert!(
        screen.contains("Conversation"),
        "the conversation's side shows:\n{screen}"
    );
    tmux.keys(&["f"]);
    tmux.wait_for("f › restore 2 files");
    tmux.keys(&["Enter"]);
    tmux.wait_for("Rewound.");

    assert_eq!(std::fs::read(&notes).unwrap(), before, "byte for byte");
    assert!(
        !work.path().join("made.txt").exists(),
        "the shell's new file is gone"
    );
    tmux.text("/quit");
    tmux.keys(&["Enter"]);
    tmux.wait_for("EXITED");
}
