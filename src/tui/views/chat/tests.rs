use crate::tui::views::fed::Fed;
use std::time::Instant;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use serde_json::{Value, json};

use super::*;
use crate::conversation::Usage;
use crate::event::{Decision, DeltaKind, EventData, FrameState, LlmCall, Scope, StackFrame};

fn ev(timestamp: u64, data: EventData) -> Event {
    Event {
        timestamp,
        request_id: "r".into(),
        data,
    }
}

fn text(ts: u64, text: &str) -> Event {
    ev(
        ts,
        EventData::Delta {
            kind: DeltaKind::Text,
            text: text.into(),
        },
    )
}

fn reasoning(ts: u64, text: &str) -> Event {
    ev(
        ts,
        EventData::Delta {
            kind: DeltaKind::Reasoning,
            text: text.into(),
        },
    )
}

fn llm(ts: u64, content: &str, reasoning: Option<&str>) -> Event {
    ev(
        ts,
        EventData::LlmCall(Box::new(LlmCall {
            turn: 1,
            model: "m".into(),
            duration_ms: 10,
            ttft_ms: Some(1),
            finish_reason: Some("stop".into()),
            content: content.into(),
            reasoning_content: reasoning.map(str::to_string),
            tool_calls: Vec::new(),
            usage: Usage::default(),
            timings: None,
            message_count: 0,
            new_messages: Vec::new(),
            tools: Vec::new(),
            parent: None,
            omitted: 0,
            context_window: None,
            call: None,
            purpose: None,
        })),
    )
}

fn run_started(ts: u64) -> Event {
    ev(
        ts,
        EventData::RunStarted {
            prompt: "p".into(),
            provider: "demo".into(),
            model: "m".into(),
            max_turns: 10,
            trace_parent: None,
        },
    )
}

fn tool_call(ts: u64, id: &str, name: &str, arguments: Value) -> Event {
    ev(
        ts,
        EventData::ToolCall {
            turn: 1,
            id: id.into(),
            name: name.into(),
            arguments,
            parent: None,
            sandbox: None,
        },
    )
}

fn tool_result(ts: u64, id: &str, result: Result<Value, &str>, duration_ms: u64) -> Event {
    let ok = result.is_ok();
    let (result, error) = match result {
        Ok(v) => (Some(v), None),
        Err(e) => (None, Some(e.to_string())),
    };
    ev(
        ts,
        EventData::ToolResult {
            id: id.into(),
            name: "t".into(),
            ok,
            status: Some(crate::event::ToolStatus::of(None, ok, None)),
            denied_by: None,
            result,
            error,
            duration_ms,
        },
    )
}

/// Renders into a fresh `w`×`h` buffer and returns the rows, trailing spaces trimmed.
fn screen_at(chat: &mut ChatState, w: u16, h: u16, now: Instant) -> String {
    let area = Rect::new(0, 0, w, h);
    let mut buf = Buffer::empty(area);
    chat.render(area, &mut buf, &Theme::default(), now);
    buffer_text(&buf)
}

/// `now` before every cell was seen: spinners show their first frame, deterministically.
fn screen(chat: &mut ChatState, w: u16, h: u16) -> String {
    screen_at(chat, w, h, *EPOCH)
}

static EPOCH: std::sync::LazyLock<Instant> = std::sync::LazyLock::new(Instant::now);

fn buffer_text(buf: &Buffer) -> String {
    let width = usize::from(buf.area.width);
    let mut out = String::new();
    for row in buf.content().chunks(width.max(1)) {
        let mut line = String::new();
        let mut skip = 0;
        for cell in row {
            if skip == 0 {
                line.push_str(cell.symbol());
            }
            skip = std::cmp::max(
                skip,
                cell.symbol()
                    .chars()
                    .map(|c| unicode_width::UnicodeWidthChar::width(c).unwrap_or(0))
                    .sum::<usize>(),
            )
            .saturating_sub(1);
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

fn snapshot(name: &str, value: &str) {
    insta::with_settings!({snapshot_path => "../snapshots"}, {
        insta::assert_snapshot!(name, value);
    });
}

fn new_chat() -> Fed<ChatState> {
    LazyLock::force(&EPOCH);
    Fed::new(ChatState::new())
}

use std::sync::LazyLock;

#[test]
fn deltas_merge_into_one_assistant_cell() {
    let mut chat = new_chat();
    chat.on_event(&run_started(0));
    chat.push_user("hi");
    for (i, part) in ["Hel", "lo, ", "world"].iter().enumerate() {
        chat.on_event(&text(i as u64, part));
    }
    assert_eq!(chat.len(), 2);
    assert_eq!(chat.last_assistant_text(), Some("Hello, world"));
    chat.on_event(&llm(5, "Hello, world", None));
    assert_eq!(chat.len(), 2, "llm_call must not duplicate streamed text");
    assert_eq!(chat.last_assistant_text(), Some("Hello, world"));
    let s = screen(&mut chat, 30, 4);
    assert_eq!(s, "› hi\n\nHello, world\n\n");
}

#[test]
fn llm_call_without_deltas_shows_its_content() {
    let mut chat = new_chat();
    chat.on_event(&run_started(0));
    chat.on_event(&llm(5, "Only **here**", None));
    assert_eq!(chat.len(), 1);
    assert_eq!(chat.last_assistant_text(), Some("Only **here**"));
    assert!(screen(&mut chat, 20, 2).starts_with("Only here\n"));
}

#[test]
fn llm_call_content_is_authoritative() {
    let mut chat = new_chat();
    chat.on_event(&text(1, "partial"));
    chat.on_event(&llm(2, "the whole answer", None));
    assert_eq!(chat.len(), 1);
    assert_eq!(chat.last_assistant_text(), Some("the whole answer"));
    chat.on_event(&text(3, "streamed, then retracted"));
    chat.on_event(&llm(4, "", None));
    assert_eq!(screen(&mut chat, 30, 3), "the whole answer\n\n\n");
    // An empty answer (only tool calls) leaves nothing to show for that call.
    chat.on_event(&run_started(5));
    chat.on_event(&llm(6, "", None));
    assert_eq!(chat.len(), 2, "no new cell");
    assert_eq!(chat.last_assistant_text(), None);
}

#[test]
fn reasoning_collapses_when_text_starts_and_expands_with_details() {
    let mut chat = new_chat();
    chat.on_event(&reasoning(1_000, "Let me think "));
    chat.on_event(&reasoning(2_000, "about this."));
    let s = screen(&mut chat, 40, 4);
    assert!(
        s.starts_with("⠋ thinking…\n  Let me think about this.\n"),
        "{s}"
    );
    chat.on_event(&text(4_200, "Answer."));
    let s = screen(&mut chat, 40, 4);
    assert_eq!(s, "▸ thought for 3.2 s · 5 words\n\nAnswer.\n\n");
    chat.toggle_details();
    let s = screen(&mut chat, 40, 5);
    assert_eq!(
        s,
        "▾ thought for 3.2 s · 5 words\n  Let me think about this.\n\nAnswer.\n\n"
    );
    // The call's reasoning_content replaces nothing when it matches.
    chat.on_event(&llm(4_300, "Answer.", Some("Let me think about this.")));
    assert_eq!(chat.len(), 2);
}

#[test]
fn reasoning_only_in_llm_call_is_inserted_before_the_answer() {
    let mut chat = new_chat();
    chat.push_user("q");
    chat.on_event(&text(1, "Yes."));
    chat.on_event(&llm(2, "Yes.", Some("one two three")));
    assert_eq!(chat.len(), 3);
    assert_eq!(
        screen(&mut chat, 30, 6),
        "› q\n\n▸ thought · 3 words\n\nYes.\n\n"
    );
    assert_eq!(chat.last_assistant_text(), Some("Yes."));
}

#[test]
fn reasoning_ends_with_the_call_when_no_text_follows() {
    let mut chat = new_chat();
    chat.on_event(&reasoning(1_000, "hmm"));
    chat.on_event(&llm(1_500, "", Some("hmm")));
    assert_eq!(screen(&mut chat, 30, 1), "▸ thought for 500 ms · 1 word\n");
}

#[test]
fn tool_cell_goes_through_call_approval_and_result() {
    let mut chat = new_chat();
    chat.on_event(&run_started(0));
    let args = json!({"path": "notes.md", "content": "# Title\nbody"});
    chat.on_event(&tool_call(1, "c1", "write_file", args.clone()));
    let line = |chat: &mut ChatState| screen(chat, 70, 2).lines().next().unwrap_or("").to_string();
    assert_eq!(
        line(&mut chat),
        "⠋ write_file path=notes.md content=# Title body"
    );
    chat.on_event(&ev(
        2,
        EventData::ApprovalRequested {
            id: "c1".into(),
            name: "write_file".into(),
            arguments: args,
            position: 1,
            of: 1,
            note: None,
            diff: None,
            sandbox: None,
        },
    ));
    assert_eq!(
        line(&mut chat),
        "? write_file path=notes.md content=# Title body · awaiting approval"
    );
    chat.on_event(&ev(
        3,
        EventData::ApprovalDecided {
            id: "c1".into(),
            name: "write_file".into(),
            decision: Decision::Approved,
            scope: Scope::Once,
            reason: None,
            prefix: None,
        },
    ));
    assert!(line(&mut chat).starts_with("⠋ write_file"));
    chat.on_event(&tool_result(15, "c1", Ok(json!({"bytes": 12})), 12));
    assert_eq!(
        line(&mut chat),
        "✓ write_file path=notes.md content=# Title body · 12 ms"
    );
}

#[test]
fn denied_failed_and_cancelled_tools() {
    let mut chat = new_chat();
    chat.on_event(&run_started(0));
    chat.on_event(&tool_call(1, "a", "shell", json!({"command": "rm -rf /"})));
    chat.on_event(&ev(
        2,
        EventData::ApprovalDecided {
            id: "a".into(),
            name: "shell".into(),
            decision: Decision::Denied,
            scope: Scope::Once,
            reason: Some("too risky".into()),
            prefix: None,
        },
    ));
    chat.on_event(&tool_result(
        2,
        "a",
        Err("the call was denied: too risky"),
        0,
    ));
    chat.on_event(&tool_call(
        3,
        "b",
        "shell",
        json!({"command": "cargo test"}),
    ));
    chat.on_event(&tool_result(
        1_237,
        "b",
        Err("exit status 101\nmore detail"),
        1_234,
    ));
    chat.on_event(&tool_call(1_240, "c", "read_file", json!({"path": "x"})));
    chat.on_event(&ev(
        1_241,
        EventData::Cancelled {
            running: "tool calls".into(),
        },
    ));
    let s = screen(&mut chat, 50, 8);
    assert_eq!(
        s,
        "⊘ shell command=rm -rf / · denied\n  └ too risky\n\
         ✗ shell command=cargo test · 1.2 s\n  └ exit status 101\n\
         ■ read_file path=x · cancelled\n\n■ cancelled\n\n"
    );
}

#[test]
fn error_cells_say_what_to_do() {
    let mut chat = new_chat();
    chat.on_event(&ev(
        1,
        EventData::Error {
            kind: "connect".into(),
            message: "openai (gpt): cannot reach http://x/v1: refused".into(),
        },
    ));
    let s = screen(&mut chat, 80, 3);
    assert!(
        s.starts_with("✗ error: openai (gpt): cannot reach http://x/v1: refused\n"),
        "{s}"
    );
    assert!(s.contains("Check that the server is running"), "{s}");

    let mut chat = new_chat();
    chat.on_event(&ev(
        1,
        EventData::Error {
            kind: "http".into(),
            message: "openai (gpt): HTTP 401: needs an API key. Set OPENAI_API_KEY.".into(),
        },
    ));
    assert!(screen(&mut chat, 90, 3).contains("Set the API key environment variable"));

    let mut chat = new_chat();
    chat.on_event(&ev(
        1,
        EventData::Error {
            kind: "timeout".into(),
            message: "timed out".into(),
        },
    ));
    assert!(screen(&mut chat, 90, 3).contains("You can send the request again."));
}

#[test]
fn notices_for_retry_limits_and_push_notice() {
    let mut chat = new_chat();
    chat.on_event(&ev(
        1,
        EventData::Retry {
            attempt: 2,
            max: 3,
            reason: "HTTP 503".into(),
            delay_ms: 1_500,
        },
    ));
    chat.on_event(&ev(2, EventData::MaxTurnsReached { turns: 10 }));
    chat.push_notice(NoticeKind::Info, "**/help** lists `keys`");
    chat.push_notice(NoticeKind::Warn, "careful");
    chat.push_notice(NoticeKind::Error, "broken");
    let s = screen(&mut chat, 70, 9);
    assert_eq!(
        s,
        "! retrying 2/3 in 1.5 s: HTTP 503\n\n\
         ! turn limit (10) reached: asking the model for a final answer\n\n\
         /help lists keys\n\n! careful\n\n✗ broken\n"
    );
}

/// 30 user messages of one line each (plus gaps): 59 lines.
fn long_chat() -> Fed<ChatState> {
    let mut chat = new_chat();
    for i in 0..30 {
        chat.push_user(&format!("message {i}"));
    }
    chat
}

#[test]
fn scrolling_up_stops_following_and_new_content_does_not_move_the_view() {
    let mut chat = long_chat();
    let bottom = screen(&mut chat, 40, 6);
    assert!(bottom.ends_with("› message 29\n"), "{bottom}");
    assert!(chat.is_following());
    chat.scroll_up(4);
    assert!(!chat.is_following());
    let up = screen(&mut chat, 40, 6);
    assert!(up.ends_with("↓ more below · End to follow\n"), "{up}");
    chat.push_user("new one");
    chat.on_event(&text(1, "streaming"));
    let after = screen(&mut chat, 40, 6);
    let rows = |s: &str| s.lines().take(5).map(str::to_string).collect::<Vec<_>>();
    assert_eq!(rows(&up), rows(&after), "the view must not move");
    assert!(
        after.ends_with("↓ new messages below · End to follow\n"),
        "{after}"
    );
    chat.scroll_to_bottom();
    assert!(chat.is_following());
    assert!(screen(&mut chat, 40, 6).ends_with("streaming\n"));
}

#[test]
fn scrolling_down_to_the_bottom_follows_again() {
    let mut chat = long_chat();
    screen(&mut chat, 30, 6);
    chat.scroll_up(10);
    chat.scroll_down(3);
    assert!(!chat.is_following());
    chat.scroll_down(100);
    assert!(chat.is_following());
    assert!(screen(&mut chat, 30, 6).ends_with("› message 29\n"));
    // Paging: up then down by the same amount returns to following.
    chat.page_up();
    chat.page_up();
    assert!(!chat.is_following());
    let s = screen(&mut chat, 30, 6);
    assert!(s.starts_with("\n› message 22\n"), "{s}");
    chat.page_down();
    chat.page_down();
    chat.page_down();
    assert!(chat.is_following());
}

#[test]
fn scrolling_up_stops_at_the_top() {
    let mut chat = long_chat();
    screen(&mut chat, 30, 6);
    chat.scroll_up(10_000);
    assert!(screen(&mut chat, 30, 6).starts_with("› message 0\n\n› message 1\n"));
    // Content that fits cannot be scrolled.
    let mut short = new_chat();
    short.push_user("hi");
    screen(&mut short, 30, 6);
    short.scroll_up(3);
    assert!(short.is_following());
}

#[test]
fn cached_lines_are_reused_when_nothing_changed() {
    let mut chat = long_chat();
    screen(&mut chat, 30, 6);
    let first = chat.layouts;
    assert!(first <= 4, "only visible cells are laid out, got {first}");
    screen(&mut chat, 30, 6);
    assert_eq!(chat.layouts, first, "a second frame lays out nothing");
    chat.on_event(&text(1, "a"));
    screen(&mut chat, 30, 6);
    assert_eq!(chat.layouts, first + 1, "only the new cell");
    chat.on_event(&text(2, "b"));
    screen(&mut chat, 30, 6);
    assert_eq!(chat.layouts, first + 2, "only the changed cell");
    screen(&mut chat, 31, 6);
    assert!(
        chat.layouts <= first + 2 + 4,
        "a width change re-lays out only what shows"
    );
}

#[test]
fn a_huge_history_lays_out_only_what_shows() {
    let mut chat = new_chat();
    for i in 0..10_000 {
        chat.push_user(&format!("m{i}"));
    }
    screen(&mut chat, 40, 10);
    assert!(chat.layouts < 10, "{}", chat.layouts);
    chat.scroll_up(100);
    let s = screen(&mut chat, 40, 10);
    assert!(s.contains("› m9947"), "{s}");
    assert!(chat.layouts < 70, "{}", chat.layouts);
}

#[test]
fn streaming_a_long_answer_reuses_finished_blocks() {
    let mut chat = new_chat();
    let mut expected = String::new();
    for i in 0..50 {
        let para = format!("Paragraph {i} with some words.\n\n");
        expected.push_str(&para);
        chat.on_event(&text(i, &para));
        screen(&mut chat, 40, 5);
    }
    chat.on_event(&llm(100, &expected, None));
    let streamed = screen(&mut chat, 40, 5);
    // The incrementally built layout equals a fresh one.
    let mut fresh = new_chat();
    fresh.on_event(&llm(100, &expected, None));
    assert_eq!(streamed, screen(&mut fresh, 40, 5));
    assert!(streamed.contains("Paragraph 49"));
}

#[test]
fn toggle_details_expands_tool_cells() {
    let mut chat = new_chat();
    chat.on_event(&tool_call(
        1,
        "a",
        "read_file",
        json!({"path": "src/main.rs"}),
    ));
    let long: String = (1..=30).map(|i| format!("line {i}\n")).collect();
    chat.on_event(&tool_result(4, "a", Ok(Value::String(long)), 3));
    assert_eq!(
        screen(&mut chat, 40, 3),
        "✓ read_file path=src/main.rs · 3 ms\n\n\n"
    );
    chat.toggle_details();
    let s = screen(&mut chat, 40, 30);
    assert!(
        s.contains("  arguments\n    path: src/main.rs\n  result\n    line 1\n"),
        "{s}"
    );
    assert!(s.contains("    line 20\n    … 10 more lines\n"), "{s}");
}

#[test]
fn a_file_change_shows_its_summary_and_expands_to_its_diff() {
    let mut chat = new_chat();
    let args = json!({"path": "a.rs", "edits": [{"old_string": "1", "new_string": "2"}]});
    chat.on_event(&tool_call(1, "e", "edit_file", args.clone()));
    chat.on_event(&ev(
        2,
        EventData::ApprovalRequested {
            id: "e".into(),
            name: "edit_file".into(),
            arguments: args,
            position: 1,
            of: 1,
            note: None,
            diff: Some(crate::tools::diff::render(
                "a.rs",
                Some("x = 1\n"),
                "x = 2\n",
            )),
            sandbox: None,
        },
    ));
    let s = screen(&mut chat, 60, 3);
    assert!(s.contains("  └ +1 −1 in a.rs"), "{s}");
    chat.toggle_details();
    let s = screen(&mut chat, 60, 12);
    assert!(s.contains("  change\n    +1 −1 in a.rs\n"), "{s}");
    assert!(s.contains("    -x = 1\n    +x = 2\n"), "{s}");
}

#[test]
fn a_running_command_shows_its_last_lines_until_it_ends() {
    let mut chat = new_chat();
    chat.on_event(&tool_call(1, "s", "shell", json!({"command": "make"})));
    chat.on_event(&ev(
        2,
        EventData::ToolOutput {
            id: "s".into(),
            tail: "cc a.c\ncc b.c\ncc c.c\ncc d.c".into(),
        },
    ));
    let s = screen(&mut chat, 40, 5);
    assert!(s.contains("  │ cc b.c\n  │ cc c.c\n  │ cc d.c"), "{s}");
    assert!(!s.contains("cc a.c"), "the last three lines: {s}");
    chat.on_event(&tool_result(3, "s", Ok(json!({"exit_code": 0})), 9));
    let s = screen(&mut chat, 40, 5);
    assert!(!s.contains("cc d.c"), "gone once it ended: {s}");
}

#[test]
fn calls_waiting_for_their_batchs_approvals_show_as_queued() {
    let mut chat = new_chat();
    chat.on_event(&tool_call(1, "r", "read_file", json!({"path": "a"})));
    chat.on_event(&tool_call(1, "w", "write_file", json!({"path": "b"})));
    chat.on_event(&ev(
        2,
        EventData::StackPush(StackFrame {
            id: "w".into(),
            parent: None,
            name: "write_file".into(),
            summary: String::new(),
            state: FrameState::AwaitingApproval,
        }),
    ));
    chat.on_event(&ev(
        2,
        EventData::ApprovalRequested {
            id: "w".into(),
            name: "write_file".into(),
            arguments: json!({"path": "b"}),
            position: 1,
            of: 1,
            note: None,
            diff: None,
            sandbox: None,
        },
    ));
    let s = screen(&mut chat, 60, 3);
    assert!(s.contains("◌ read_file path=a · queued"), "{s}");
    assert!(s.contains("write_file path=b · awaiting approval"), "{s}");
    chat.on_event(&ev(
        3,
        EventData::StackPush(StackFrame {
            id: "r".into(),
            parent: None,
            name: "read_file".into(),
            summary: String::new(),
            state: FrameState::Running,
        }),
    ));
    let s = screen(&mut chat, 60, 3);
    assert!(
        !s.contains("queued"),
        "running once its frame is pushed: {s}"
    );
}

#[test]
fn clear_forgets_everything() {
    let mut chat = long_chat();
    screen(&mut chat, 30, 6);
    chat.scroll_up(5);
    chat.clear();
    assert!(chat.is_empty());
    assert!(chat.is_following());
    assert_eq!(screen(&mut chat, 10, 2), "\n\n");
    // Deltas of a run that was streaming start a new cell.
    chat.on_event(&text(1, "x"));
    assert_eq!(chat.len(), 1);
}

#[test]
fn never_panics_on_any_area() {
    let mut chat = new_chat();
    chat.push_user("hello 世界 with wide chars and a_very_long_word_without_spaces");
    chat.on_event(&reasoning(1, "thinking"));
    chat.on_event(&text(2, "# H\n\n```\nunclosed fence\tTAB"));
    chat.on_event(&tool_call(3, "a", "shell", json!({"command": "ls"})));
    chat.on_event(&ev(
        4,
        EventData::Error {
            kind: "x".into(),
            message: "m".into(),
        },
    ));
    chat.push_notice(NoticeKind::Info, "- a\n  - b\n> q");
    for details in [false, true] {
        if details {
            chat.toggle_details();
        }
        for (w, h) in [(0, 0), (1, 1), (2, 1), (1, 5), (3, 3), (7, 2), (200, 60)] {
            screen(&mut chat, w, h);
            chat.scroll_up(2);
            screen(&mut chat, w, h);
            chat.page_down();
            chat.scroll_down(1);
        }
    }
    // An area outside the buffer is clipped, not indexed.
    let mut buf = Buffer::empty(Rect::new(0, 0, 5, 5));
    chat.render(
        Rect::new(3, 3, 10, 10),
        &mut buf,
        &Theme::default(),
        Instant::now(),
    );
    chat.render(
        Rect::new(50, 50, 10, 10),
        &mut buf,
        &Theme::default(),
        Instant::now(),
    );
}

#[test]
fn spinner_frame_follows_the_clock() {
    let mut chat = new_chat();
    chat.on_event(&tool_call(1, "a", "shell", json!({"command": "sleep 1"})));
    let seen = chat.cells[0].seen;
    let at = |ms| seen + std::time::Duration::from_millis(ms);
    assert!(screen_at(&mut chat, 30, 1, at(0)).starts_with("⠋ shell"));
    assert!(screen_at(&mut chat, 30, 1, at(150)).starts_with("⠙ shell"));
}

#[test]
fn snapshot_streamed_markdown_answer() {
    let mut chat = new_chat();
    chat.on_event(&run_started(0));
    chat.push_user("How do I start?");
    let answer = "## Plan\n\nThis is **important**: run `cargo build` first.\n\n\
                  1. Install Rust\n2. Clone the repo\n   - with `git`\n\n\
                  ```rust\nfn main() {\n    println!(\"hi\");\n}\n```\n\nThat's all.";
    let chars: Vec<char> = answer.chars().collect();
    for (n, chunk) in chars.chunks(9).enumerate() {
        chat.on_event(&text(n as u64, &chunk.iter().collect::<String>()));
        // Frames between deltas exercise the incremental layout.
        screen(&mut chat, 48, 22);
    }
    let streamed = screen(&mut chat, 48, 22);
    chat.on_event(&llm(99, answer, None));
    assert_eq!(streamed, screen(&mut chat, 48, 22));
    snapshot("chat_streamed_markdown", &streamed);
}

#[test]
fn snapshot_tool_running_and_failed() {
    let mut chat = new_chat();
    chat.on_event(&run_started(0));
    chat.push_user("run the tests");
    chat.on_event(&text(1, "Running them now."));
    chat.on_event(&llm(2, "Running them now.", None));
    chat.on_event(&tool_call(
        3,
        "a",
        "shell",
        json!({"command": "cargo test --workspace", "timeout": 600}),
    ));
    chat.on_event(&tool_result(
        4_324,
        "a",
        Err("exit status 101: 3 tests failed\nthread 'x' panicked"),
        4_321,
    ));
    chat.on_event(&tool_call(
        4_325,
        "b",
        "read_file",
        json!({"path": "src/lib.rs"}),
    ));
    snapshot("chat_tools_running_and_failed", &screen(&mut chat, 60, 10));
}

#[test]
fn snapshot_expanded_tool() {
    let mut chat = new_chat();
    chat.on_event(&tool_call(
        1,
        "a",
        "write_file",
        json!({"path": "notes.md", "content": "# Notes\n\nfirst line\nsecond line"}),
    ));
    chat.on_event(&tool_result(
        8,
        "a",
        Ok(json!({"bytes_written": 36, "path": "notes.md"})),
        7,
    ));
    chat.on_event(&tool_call(9, "b", "shell", json!({"command": "false"})));
    chat.on_event(&tool_result(29, "b", Err("exit status 1"), 20));
    chat.toggle_details();
    snapshot("chat_expanded_tool", &screen(&mut chat, 50, 18));
}

#[test]
fn snapshot_scrolled_up_with_hint() {
    let mut chat = long_chat();
    screen(&mut chat, 40, 8);
    chat.scroll_up(9);
    chat.on_event(&text(1, "a new answer arrives"));
    snapshot("chat_scrolled_up", &screen(&mut chat, 40, 8));
}

#[test]
fn the_approval_dialog_sees_the_text_before_the_call() {
    let mut chat = new_chat();
    chat.on_event(&run_started(0));
    chat.on_event(&text(1, "Now I'll write "));
    chat.on_event(&text(2, "a note."));
    chat.on_event(&llm(3, "Now I'll write a note.", None));
    chat.on_event(&tool_call(4, "w", "write_file", json!({"path": "n.md"})));
    assert_eq!(chat.last_assistant_text(), Some("Now I'll write a note."));
    chat.on_event(&run_started(5));
    assert_eq!(chat.last_assistant_text(), None);
}

#[test]
fn a_narrower_pane_after_scrolling_keeps_the_anchor_valid() {
    let mut chat = new_chat();
    chat.push_user(&"word ".repeat(200));
    chat.push_user("tail");
    screen(&mut chat, 20, 5);
    chat.scroll_up(30);
    let s = screen(&mut chat, 200, 5);
    assert!(!s.trim().is_empty(), "{s}");
}

#[test]
fn whitespace_before_tool_calls_adds_no_empty_cell() {
    let mut chat = new_chat();
    chat.push_user("q");
    chat.on_event(&text(1, "\n\n"));
    chat.on_event(&llm(2, "\n\n", None));
    chat.on_event(&tool_call(3, "a", "list_dir", json!({"path": "."})));
    assert_eq!(chat.len(), 2);
    chat.on_event(&text(4, "\n"));
    chat.on_event(&text(5, "Done."));
    assert_eq!(chat.last_assistant_text(), Some("\nDone."));
    assert_eq!(
        screen(&mut chat, 30, 5),
        "› q\n\n⠋ list_dir path=.\n\nDone.\n"
    );
}

const STREAMED: &str = "# Title\n\nIntro with **bold** and `code`.\n\n- a\n- b\n\n  continued b\n\n\
    1. one\n\n2. two\n\n> quote\n\n> more\n\n```sh\necho 1\n\necho 2\n```\n\n    indented\n\n\
    | a | b |\n|---|---|\n| 1 | 2 |\n\nEnd *here*.\n";

proptest::proptest! {
    #[test]
    fn streaming_in_any_pieces_renders_like_the_whole(cuts in proptest::collection::vec(0usize..STREAMED.len(), 0..12), width in 8u16..60) {
        let mut cuts = cuts;
        cuts.push(STREAMED.len());
        cuts.sort_unstable();
        let mut chat = new_chat();
        let mut at = 0;
        for cut in cuts {
            if cut > at && STREAMED.is_char_boundary(cut) {
                chat.on_event(&text(1, &STREAMED[at..cut]));
                screen(&mut chat, width, 8);
                at = cut;
            }
        }
        let streamed = screen(&mut chat, width, 80);
        let mut fresh = new_chat();
        fresh.on_event(&llm(1, STREAMED, None));
        proptest::prop_assert_eq!(streamed, screen(&mut fresh, width, 80));
    }
}

#[test]
fn a_retry_drops_what_the_failed_attempt_streamed() {
    let mut chat = new_chat();
    chat.push_user("go");
    chat.on_event(&run_started(1));
    chat.on_event(&reasoning(2, "thinking once"));
    chat.on_event(&text(3, "Hello, wor"));
    chat.on_event(&ev(
        4,
        EventData::Retry {
            attempt: 2,
            max: 4,
            reason: "the stream ended before it was complete".into(),
            delay_ms: 1_000,
        },
    ));
    chat.on_event(&text(5, "Hello, world!"));
    chat.on_event(&llm(6, "Hello, world!", None));
    let s = screen(&mut chat, 60, 12);
    assert_eq!(s.matches("Hello").count(), 1, "{s}");
    assert!(!s.contains("thinking once"), "{s}");
    assert!(s.contains("retrying 2/4 in 1.0 s"), "{s}");
    assert_eq!(chat.last_assistant_text(), Some("Hello, world!"));
}

/// Frames of `chat` until no colours are on the way (or 10 s pass); the last one.
fn frames_until_coloured(chat: &mut ChatState, area: Rect) -> Buffer {
    let start = std::time::Instant::now();
    loop {
        let mut buf = Buffer::empty(area);
        chat.render(area, &mut buf, &Theme::default(), *EPOCH);
        if !chat.highlight_pending() {
            return buf;
        }
        assert!(
            start.elapsed() < std::time::Duration::from_secs(10),
            "colours must arrive"
        );
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}

#[test]
fn code_coloured_in_the_background_ends_as_a_frame_coloured_at_once() {
    // Code no other test highlights (the cache is shared), 30 lines of ~40 bytes.
    let code: String = (0..30)
        .map(|i| format!("    let frame_background_{i} = compute({i}, \"x\");\n"))
        .collect();
    let answer = format!("Here:\n\n```rust\nfn background() {{\n{code}}}\n```\n\nDone.");
    let area = Rect::new(0, 0, 70, 40);
    let theme = Theme::default();
    let mut chat = new_chat();
    chat.set_highlight_in_background(true);
    chat.on_event(&run_started(0));
    chat.push_user("show me");
    chat.on_event(&llm(1, &answer, None));
    let mut first = Buffer::empty(area);
    chat.render(area, &mut first, &theme, *EPOCH);
    assert!(
        chat.highlight_pending(),
        "the first frame draws the code plain"
    );
    let coloured = frames_until_coloured(&mut chat, area);
    assert_ne!(first, coloured);
    let mut whole = new_chat();
    whole.on_event(&run_started(0));
    whole.push_user("show me");
    whole.on_event(&llm(1, &answer, None));
    let mut buf = Buffer::empty(area);
    whole.render(area, &mut buf, &theme, *EPOCH);
    assert!(!whole.highlight_pending());
    assert_eq!(
        coloured, buf,
        "the last frame is the one coloured at once, styles included"
    );
}

#[test]
fn a_streamed_answer_coloured_in_the_background_ends_as_a_frame_coloured_at_once() {
    let code: String = (0..20)
        .map(|i| format!("    let streamed_background_{i} = step({i});\n"))
        .collect();
    let answer = format!("Intro.\n\n```rust\nfn streamed() {{\n{code}}}\n```\n\nAfter the code.\n");
    let area = Rect::new(0, 0, 70, 40);
    let theme = Theme::default();
    let mut chat = new_chat();
    chat.set_highlight_in_background(true);
    chat.on_event(&run_started(0));
    chat.push_user("stream it");
    let bytes = answer.as_bytes();
    for (i, piece) in bytes.chunks(150).enumerate() {
        chat.on_event(&text(i as u64, std::str::from_utf8(piece).unwrap()));
        let mut buf = Buffer::empty(area);
        chat.render(area, &mut buf, &theme, *EPOCH);
    }
    let buf = frames_until_coloured(&mut chat, area);
    let mut whole = new_chat();
    whole.on_event(&run_started(0));
    whole.push_user("stream it");
    whole.on_event(&text(0, &answer));
    let mut want = Buffer::empty(area);
    whole.render(area, &mut want, &theme, *EPOCH);
    assert_eq!(
        buf, want,
        "the last frame is the one coloured at once, styles included"
    );
}
