//! A model call in flight in the real binary, in tmux (issue 27): while a loopback
//! OpenAI-compatible server streams an answer slowly, the timeline has the call's row from
//! its start, its tokens so far growing, its time to first byte and its elapsed time; when
//! the answer ends, the finished row takes its place.
//! Needs tmux (CI installs it); without tmux the tests say so and fail.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed unwrap is a failed test

use crate::support;

use std::path::Path;
use std::time::Duration;

use support::TestServer;
use support::cli::text_turn;

/// A config that talks to `server` as an OpenAI-compatible provider.
fn openai_config(home: &Path, server: &TestServer) {
    let dir = home.join("config/taco");
    std::fs::create_dir_all(&dir).unwrap();
    let text = format!(
        "provider = \"local\"\n\n[providers.local]\nkind = \"openai\"\nbase_url = \"{}/v1\"\nmodel = \"coder\"\n\n[providers.local.options]\nmax_attempts = 1\n",
        server.url()
    );
    std::fs::write(dir.join("config.toml"), text).unwrap();
}

/// The estimated tokens on the live row (`◇ llm turn 1 · ~N tok`), when it shows.
fn live_tokens(screen: &str) -> Option<u64> {
    let after = screen.split("◇ llm turn 1 · ~").nth(1)?;
    let digits: String = after.chars().take_while(char::is_ascii_digit).collect();
    after[digits.len()..]
        .starts_with(" tok")
        .then(|| digits.parse().ok())?
}

#[test]
fn a_slow_stream_has_a_live_row_that_the_finished_row_replaces() {
    if !crate::support::needs::tmux() {
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    // 40 pieces of 24 characters, one every 200 ms: eight seconds of streaming.
    let pieces: Vec<String> = (0..40)
        .map(|i| format!("piece {i:02} of the answer. "))
        .collect();
    let parts: Vec<&str> = pieces.iter().map(String::as_str).collect();
    let reply = text_turn(&parts).chunk_delay(Duration::from_millis(200));
    let server = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(TestServer::start(vec![reply]));
    openai_config(home.path(), &server);
    let tmux = support::tmux::launch_taco(home.path(), work.path(), "", "", (200, 40));
    tmux.wait_for("Welcome to taco");
    tmux.text("explain the answer");
    tmux.keys(&["Enter"]);

    // In flight: its row, what it streamed so far, its time to first byte, its clock.
    let first = tmux.wait_until("the model call's live row", |s| {
        live_tokens(s).is_some_and(|n| n > 0) && s.contains("ttft")
    });
    assert!(
        !first.contains("◆ llm turn 1"),
        "no finished row yet:\n{first}"
    );
    assert!(
        !first.contains("piece 39"),
        "the stream is still going:\n{first}"
    );
    let before = live_tokens(&first).unwrap();
    // Updated while it streams: more tokens on the same row.
    let later = tmux.wait_until("the live row to grow", |s| {
        live_tokens(s).is_some_and(|n| n > before)
    });
    assert_eq!(
        later.matches("llm turn 1").count(),
        1,
        "one row for the call:\n{later}"
    );

    // Ended: the finished row took the live row's place.
    let done = tmux.wait_until("the finished row", |s| {
        s.contains("◆ llm turn 1") && s.contains("idle")
    });
    assert!(!done.contains('◇'), "nothing is in flight:\n{done}");
    assert_eq!(
        done.matches("llm turn 1").count(),
        1,
        "the live row was replaced, not kept:\n{done}"
    );
    assert!(done.contains("piece 39 of the answer."), "{done}");
    tmux.text("/quit");
    tmux.keys(&["Enter"]);
    tmux.wait_for("EXITED");
}
