//! A long session resumes from its end (issue 15.1): `--resume` reads what the next request
//! can send, and that request is the one a whole read would have made — with the history
//! limit, and with a compaction in force.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed unwrap is a failed test

use crate::support;

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use support::TestServer;
use support::cli::*;

const RUNS: usize = 400;

/// A session of `RUNS` runs (a question and an answer each) as taco writes them, with a
/// compaction after run `compacted_at` keeping from message `kept_from` on.
fn session(home: &Path, work: &Path, compaction: Option<(usize, usize)>) -> (PathBuf, Vec<String>) {
    let dir = sessions_dir(home);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("20260101-000000-abcdef.jsonl");
    let workdir = work.canonicalize().unwrap();
    let mut lines = vec![
        json!({"type": "session", "version": 2, "id": "20260101-000000-abcdef",
            "provider": "openai", "model": "m1", "workdir": workdir, "started": 1}),
        json!({"type": "message", "timestamp": 1, "data": {"role": "system", "content": "old system prompt"}}),
    ];
    let mut contents = vec!["old system prompt".to_string()];
    for run in 1..=RUNS {
        let rid = format!("r{run}");
        let question = format!("question {run}");
        let answer = format!("answer {run}: {}", "words ".repeat(40));
        lines.push(
            json!({"timestamp": run, "request_id": rid, "type": "run_started",
            "data": {"prompt": question, "provider": "openai", "model": "m1", "max_turns": 10}}),
        );
        lines.push(json!({"type": "message", "timestamp": run, "data": {"role": "user", "content": question}}));
        lines.push(
            json!({"timestamp": run, "request_id": rid, "type": "llm_call", "data": {
            "turn": 1, "model": "m1", "duration_ms": 1, "content": answer, "tool_calls": [],
            "usage": {"input_tokens": 10, "output_tokens": 10}, "message_count": 2,
            "new_messages_from": "message_lines", "tools": []}}),
        );
        lines.push(json!({"type": "message", "timestamp": run, "data": {"role": "assistant", "content": answer}}));
        lines.push(json!({"timestamp": run, "request_id": rid, "type": "final",
            "data": {"content": answer, "turns": 1, "usage": {"input_tokens": 10, "output_tokens": 10}}}));
        contents.push(question);
        contents.push(answer);
        if let Some((at, kept_from)) = compaction
            && at == run
        {
            lines.push(json!({"timestamp": run, "request_id": rid, "type": "compacted", "data": {
                "trigger": "auto", "before_tokens": 9000, "after_tokens": 900, "summarized": kept_from - 1,
                "kept_from": kept_from, "summary": "SUMMARY-OF-THE-PAST",
                "usage": {"input_tokens": 5, "output_tokens": 5}, "duration_ms": 3}}));
        }
    }
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&path, text).unwrap();
    (path, contents)
}

async fn resume(home: &Path, work: &Path) -> (Vec<Value>, String) {
    let server = TestServer::start(vec![text_turn(&["ok"])]).await;
    let mut cmd = taco(home, work);
    openai_args(&mut cmd, &server);
    cmd.args(["one more", "--resume"]);
    let run = finish(&mut cmd).await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    let sent = server.requests()[0].json();
    (sent["messages"].as_array().unwrap().clone(), run.stderr)
}

fn contents(messages: &[Value]) -> Vec<String> {
    messages
        .iter()
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[tokio::test]
async fn with_no_known_window_the_request_holds_the_newest_messages_as_a_whole_read_would() {
    let (home, work) = setup();
    let (path, all) = session(home.path(), work.path(), None);
    let (sent, stderr) = resume(home.path(), work.path()).await;
    // The history limit (50) keeps the newest messages from a question on; then the prompt.
    let mut expected = all[all.len() - 48..].to_vec();
    expected.push("one more".into());
    assert_eq!(contents(&sent[1..]), expected);
    assert_ne!(
        sent[0]["content"], "old system prompt",
        "today's system prompt is sent"
    );
    // The count says the whole session, though only its end was read.
    assert!(
        stderr.contains(&format!("({} messages)", all.len())),
        "{stderr}"
    );
    // The earlier part is still in the file, untouched, and the new run follows it.
    let loaded = taco::session::load(&path).unwrap();
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    let messages = loaded.messages();
    assert_eq!(messages.len(), all.len() + 2);
    assert_eq!(messages[1].content.as_deref(), Some("question 1"));
}

#[tokio::test]
async fn a_compaction_in_force_is_kept_with_everything_from_its_cut() {
    let (home, work) = setup();
    // After run 390 a compaction kept from run 300's question (message 599) on.
    let kept_from = 2 * 300 - 1;
    let (_, all) = session(home.path(), work.path(), Some((390, kept_from)));
    let (sent, _) = resume(home.path(), work.path()).await;
    assert!(
        sent[1]["content"]
            .as_str()
            .unwrap()
            .contains("SUMMARY-OF-THE-PAST"),
        "{:?}",
        sent[1]
    );
    let mut expected = all[kept_from..].to_vec();
    expected.push("one more".into());
    assert_eq!(contents(&sent[2..]), expected);
    assert_eq!(sent[2]["content"], "question 300");
}

#[test]
fn the_tui_resumes_a_long_session_from_its_end_and_says_where_the_rest_is() {
    if !crate::support::needs::tmux() {
        return;
    }
    let (home, work) = setup();
    session(home.path(), work.path(), None);
    let tmux =
        support::tmux::launch_taco(home.path(), work.path(), "-p demo --resume", "", (120, 40));
    let screen = tmux.wait_for("earlier ones stay in the session file");
    // The newest run is on screen; the first one was never read.
    assert!(
        screen.contains("question 400") || screen.contains("answer 400"),
        "{screen}"
    );
    assert!(!screen.contains("question 1\n"), "{screen}");
    assert!(screen.contains("(801 messages)"), "{screen}");
    // The session's tokens are the whole file's, read or not: 400 runs of 10 in, 10 out.
    assert!(screen.contains("↑4000 ↓4000 tok"), "{screen}");
}

/// The app's screen at 120×40, as text.
fn screen(app: &mut taco::tui::app::App, now: std::time::Instant) -> String {
    let mut terminal = ratatui::Terminal::new(ratatui::backend::TestBackend::new(120, 40)).unwrap();
    terminal
        .draw(|f| app.render(f.area(), f.buffer_mut(), now))
        .unwrap();
    terminal.backend().to_string()
}

#[test]
fn scrolling_back_to_the_top_reads_earlier_runs_until_the_first_without_moving_the_view() {
    use taco::tui::app::{App, Command};
    let (home, work) = setup();
    let (path, _) = session(home.path(), work.path(), None);
    let size = std::fs::metadata(&path).unwrap().len();
    // What a resume shows: the newest entries; the rest stays in the file.
    let tail = taco::session::earlier(&path, size, 1_000).unwrap();
    assert!(tail.has_earlier());
    let mut info = support::app::info();
    info.earlier = Some(taco::startup::Earlier {
        path: path.clone(),
        before: tail.from,
    });
    let now = std::time::Instant::now();
    let mut app = App::new(info, now);
    app.replay(&tail.loaded.entries, now);
    screen(&mut app, now);
    assert!(
        app.want_earlier().is_none(),
        "the chat shows its end: nothing to read yet"
    );
    let rows_read = app.timeline.len();

    // Up to the top of what was read: the runs before it are asked for, once.
    app.chat.scroll_up(1_000_000);
    let before = screen(&mut app, now);
    let Some(Command::LoadEarlier(asked)) = app.want_earlier() else {
        panic!("the top of the chat asks for earlier runs");
    };
    assert_eq!(asked.before, tail.from);
    assert!(app.want_earlier().is_none(), "one read at a time");
    app.prepend_earlier(
        taco::session::earlier(&asked.path, asked.before, 1_000),
        now,
    );
    assert!(app.timeline.len() > rows_read);
    // The view stays on the history it showed: its first run is now at the top, and the
    // runs just read are above it.
    let after = screen(&mut app, now);
    let first = before.find("› question").expect(&before);
    let first = &before[first..first + "› question 201".len()];
    // (under the pane's border and the blank line before a message)
    assert!(
        after.lines().nth(2).unwrap().contains(first),
        "{first}\n{after}"
    );
    assert!(!after.contains("Welcome to taco"), "{after}");
    assert!(
        after.contains("earlier runs read; scroll up for more"),
        "{after}"
    );

    // On to the first run: then nothing more is asked for.
    let mut reads = 1;
    loop {
        app.chat.scroll_up(1_000_000);
        screen(&mut app, now);
        let Some(Command::LoadEarlier(asked)) = app.want_earlier() else {
            break;
        };
        reads += 1;
        assert!(reads < 20, "each read goes further back");
        app.prepend_earlier(
            taco::session::earlier(&asked.path, asked.before, 1_000),
            now,
        );
    }
    // 400 runs of three rows each (run, model call, final), every one once.
    assert_eq!(app.timeline.len(), 3 * RUNS);
    let top = screen(&mut app, now);
    assert!(top.contains("start of the session"), "{top}");
    assert!(
        top.contains("question 1 ") || top.contains("question 1\n") || top.contains("question 1│"),
        "{top}"
    );
    // The greeting stays above the earliest run.
    let greeting = top.find("Welcome to taco").expect(&top);
    assert!(greeting < top.find("question 1").unwrap(), "{top}");
}

#[test]
fn a_long_trace_opens_at_its_end_and_scrolling_back_reads_the_rest() {
    if !crate::support::needs::tmux() {
        return;
    }
    let (home, work) = setup();
    let (path, _) = session(home.path(), work.path(), None);
    let args = format!("trace {}", path.display());
    let tmux = support::tmux::launch_taco(home.path(), work.path(), &args, "", (120, 40));
    // The newest run is at the bottom; the first was never read.
    let screen = tmux.wait_for("answer 400");
    assert!(!screen.contains("question 1\n"), "{screen}");
    // Up past the top of what was read: the runs before it are read and shown above.
    let pages = vec!["PPage"; 60];
    tmux.keys(&pages);
    let screen = tmux.wait_for("earlier runs read; scroll up for more");
    assert!(!screen.contains("answer 400"), "{screen}");
}

#[test]
fn a_damaged_line_in_the_earlier_part_is_said_when_it_is_read() {
    use taco::tui::app::{App, Command};
    let (home, work) = setup();
    let (path, _) = session(home.path(), work.path(), None);
    // Line 5 (of the first run) is damaged; the end of the file is whole.
    let text = std::fs::read_to_string(&path).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines[4] = "{\"type\":\"final\",\"timestamp\":1,\"request_id\":\"r1\",\"data\":{broken";
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let size = std::fs::metadata(&path).unwrap().len();
    let tail = taco::session::earlier(&path, size, 1_000).unwrap();
    assert!(tail.loaded.warnings.is_empty(), "the end is whole");
    let mut info = support::app::info();
    info.earlier = Some(taco::startup::Earlier {
        path: path.clone(),
        before: tail.from,
    });
    let now = std::time::Instant::now();
    let mut app = App::new(info, now);
    app.replay(&tail.loaded.entries, now);
    loop {
        screen(&mut app, now);
        app.chat.scroll_up(1_000_000);
        screen(&mut app, now);
        let Some(Command::LoadEarlier(asked)) = app.want_earlier() else {
            break;
        };
        app.prepend_earlier(
            taco::session::earlier(&asked.path, asked.before, 1_000),
            now,
        );
    }
    app.chat.scroll_to_bottom();
    let bottom = screen(&mut app, now);
    assert!(bottom.contains("it was skipped"), "{bottom}");
}
