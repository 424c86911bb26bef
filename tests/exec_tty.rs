//! `taco exec` in a terminal streams its answer line by line (issue 14.7), and `taco` without
//! a terminal says to use `taco exec`. Needs tmux (CI installs it).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed unwrap is a failed test

use crate::support;

use std::time::Duration;

use serde_json::json;
use support::cli::*;
use support::tmux::Tmux;
use support::{Reply, TestServer};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_first_line_of_a_slow_answer_shows_before_the_stream_ends() {
    if !crate::support::needs::tmux() {
        return;
    }
    let (home, work) = setup();
    let mut payloads = vec![chunk(
        json!({"content": "First line of a slow answer.\n"}),
        None,
    )];
    for i in 0..20 {
        payloads.push(chunk(json!({"content": format!("more {i} ")}), None));
    }
    payloads.push(chunk(json!({"content": "\nLAST LINE"}), Some("stop")));
    let slow = Reply::sse(sse(&payloads)).chunk_delay(Duration::from_millis(200));
    let server = TestServer::start(vec![slow]).await;
    let taco = env!("CARGO_BIN_EXE_taco");
    let path = std::env::var("PATH").unwrap_or_default();
    let command = format!(
        "cd '{work}' && env -i PATH='{path}' HOME='{home}' TERM=xterm-256color '{taco}' exec -p openai --base-url '{url}/v1' -m m1 hi; echo EXITED; sleep 60",
        work = work.path().display(),
        home = home.path().display(),
        url = server.url(),
    );
    let tmux = tokio::task::spawn_blocking(move || {
        let tmux = Tmux::start(&command, 120, 20);
        let screen = tmux.wait_for("First line of a slow answer.");
        (tmux, screen)
    })
    .await
    .unwrap();
    let (tmux, screen) = tmux;
    assert!(
        !screen.contains("LAST LINE") && !screen.contains("EXITED"),
        "the first line came only at the end:\n{screen}"
    );
    let screen = tokio::task::spawn_blocking(move || tmux.wait_for("EXITED"))
        .await
        .unwrap();
    assert!(screen.contains("LAST LINE"), "{screen}");
}

#[tokio::test]
async fn taco_without_a_terminal_says_to_use_exec() {
    let (home, work) = setup();
    let run = finish(&mut taco(home.path(), work.path())).await;
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("needs a terminal"), "{}", run.stderr);
    assert!(run.stderr.contains("taco exec"), "{}", run.stderr);
    assert!(
        !run.stderr.contains('`'),
        "plain text, no Markdown: {}",
        run.stderr
    );
    assert!(run.stdout.is_empty());
}
