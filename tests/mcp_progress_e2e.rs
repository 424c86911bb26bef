//! An MCP call's progress in the real binary, in tmux (issue 28.3): the fixture's `slow`
//! tool reports 40 steps; while it runs, its stack frame reads `fixture · slow` with `n/40`
//! (a bar too where the pane has room), and its chat cell shows the report with its bar.
//! Needs tmux (CI installs it); without tmux the tests say so and fail.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed unwrap is a failed test

use crate::support;
use support::TestServer;
use support::cli::{text_turn, tool_turn};
use support::mcp::fixture;

#[test]
fn progress_shows_on_the_frame_and_under_the_chat_cell() {
    if !crate::support::needs::tmux() {
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let server = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(TestServer::start(vec![
            tool_turn(
                "s1",
                "mcp__fixture__slow",
                r#"{"steps": 40, "delay_ms": 150}"#,
            ),
            text_turn(&["all steps done"]),
        ]));
    let dir = home.path().join("config/taco");
    std::fs::create_dir_all(&dir).unwrap();
    let text = format!(
        "provider = \"local\"\n\n[providers.local]\nkind = \"openai\"\nbase_url = \"{}/v1\"\nmodel = \"coder\"\n\n[providers.local.options]\nmax_attempts = 1\n\n[mcp.servers.fixture]\ncommand = {:?}\n",
        server.url(),
        fixture().display().to_string()
    );
    std::fs::write(dir.join("config.toml"), text).unwrap();
    let tmux = support::tmux::launch_taco(home.path(), work.path(), "", "", (160, 40));
    tmux.wait_for("Welcome to taco");
    tmux.text("count slowly");
    tmux.keys(&["Enter"]);
    // `slow` is marked destructive: it asks, whatever the policy.
    tmux.wait_for_ready("Approve fixture · slow?");
    tmux.keys(&["y", "Enter"]);
    // The stack pane is 30 columns here: its frame keeps the count (`7/40`) rather than the
    // bar; the chat cell has room for the bar.
    let running = tmux.wait_until("progress on the frame and the cell", |s| {
        let frame = s.lines().any(|l| {
            (l.split("fixture · slow ").nth(1))
                .and_then(|rest| rest.split_whitespace().next())
                .is_some_and(|count| count.ends_with("/40"))
        });
        frame && s.contains("⋯ ▰")
    });
    assert!(!running.contains("mcp__fixture__slow"), "{running}");
    tmux.wait_for("all steps done");
    tmux.text("/quit");
    tmux.keys(&["Enter"]);
    tmux.wait_for("EXITED");
}
