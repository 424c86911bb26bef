//! Text from outside never reaches the terminal raw, and renderers never panic (issue 9,
//! item 8). A hostile string goes through every view that shows outside text; property
//! tests feed arbitrary text and bytes to the Markdown renderer, the approval-argument
//! renderer and the whole app at several sizes (0 and 1 wide included). Each checks that no
//! drawn cell holds a control character or a bidi override, and that output stays bounded.

use std::sync::Arc;
use std::time::{Duration, Instant};

use proptest::prelude::*;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::Widget;
use serde_json::{Value, json};
use taco::conversation::Usage;
use taco::event::{Decision, DeltaKind, Event, EventData, FrameState, Scope, StackFrame};
use taco::orchestrator::approval::ApprovalRequest;
use taco::tui::app::{App, AppInfo};
use taco::tui::markdown;
use taco::tui::theme::Theme;
use taco::tui::views::approval::{self, ApprovalState, Pending};
use taco::tui::views::gate::Gate;

/// An OSC 52 clipboard write, a screen clear, a C1 CSI, a CR, a backspace and bidi
/// overrides: each would act on a terminal if written raw.
const HOSTILE: &str = "ok \x1b]52;c;aGVsbG8=\x07 then \x1b[2J\u{9b}31m red\rover\x08\x08 \u{202E}desrever\u{202C} \u{2067}iso\u{2069} end";

/// What must never be in a cell: any control character (C0, DEL, C1) and the bidi
/// embeddings, overrides and isolates. Written out here rather than taken from the crate,
/// so a mistake there cannot hide.
fn acts_on_terminal(c: char) -> bool {
    c.is_control()
        || ('\u{202A}'..='\u{202E}').contains(&c)
        || ('\u{2066}'..='\u{2069}').contains(&c)
}

/// The first cell whose symbol holds such a character.
fn raw_cell(buf: &Buffer) -> Option<(u16, u16, String)> {
    let area = buf.area;
    (area.top()..area.bottom())
        .flat_map(|y| (area.left()..area.right()).map(move |x| (x, y)))
        .find(|&(x, y)| buf[(x, y)].symbol().chars().any(acts_on_terminal))
        .map(|(x, y)| (x, y, buf[(x, y)].symbol().escape_unicode().to_string()))
}

fn info() -> AppInfo {
    AppInfo {
        provider: "demo".into(),
        model: "demo".into(),
        auto_reason: None,
        max_turns: 10,
        workdir: "/work/project".into(),
        tools: Vec::new(),
        dialog_guard: Duration::ZERO,
        ..Default::default()
    }
}

struct Screen {
    app: App,
    now: Instant,
    ms: u64,
}

impl Screen {
    fn new() -> Self {
        Self::with_info(info())
    }

    fn with_info(info: AppInfo) -> Self {
        let now = Instant::now();
        Self {
            app: App::new(info, now),
            now,
            ms: 0,
        }
    }

    fn event(&mut self, data: EventData) {
        self.ms += 10;
        let event = Event {
            timestamp: 1_700_000_000_000 + self.ms,
            request_id: Arc::from("run-1"),
            data,
        };
        self.app
            .on_event(&event, self.now + Duration::from_millis(self.ms));
    }

    fn key(&mut self, code: KeyCode) {
        let now = self.now + Duration::from_millis(self.ms);
        self.app
            .on_key(KeyEvent::new(code, KeyModifiers::NONE), now);
    }

    fn draw(&mut self, width: u16, height: u16) -> Buffer {
        let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
        let now = self.now + Duration::from_millis(self.ms);
        terminal
            .draw(|f| self.app.render(f.area(), f.buffer_mut(), now))
            .unwrap();
        terminal.backend().buffer().clone()
    }
}

fn text_of(buf: &Buffer) -> String {
    let area = buf.area;
    (area.top()..area.bottom())
        .map(|y| {
            (area.left()..area.right())
                .map(|x| buf[(x, y)].symbol())
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn a_hostile_string_is_neutralised_in_every_view() {
    // A trace file names its own model, and a paste is whatever was copied.
    let mut s = Screen::with_info(AppInfo {
        model: format!("gpt{HOSTILE}"),
        ..info()
    });
    s.app.on_paste(HOSTILE, s.now);
    s.event(EventData::RunStarted {
        prompt: HOSTILE.into(),
        provider: "demo".into(),
        model: "demo".into(),
        max_turns: 10,
        trace_parent: None,
    });
    s.event(EventData::Delta {
        kind: DeltaKind::Text,
        text: format!("# {HOSTILE}\n\n- {HOSTILE}\n\n```\n{HOSTILE}\n```\n\n| a | {HOSTILE} |\n|---|---|\n| 1 | 2 |\n"),
    });
    let arguments =
        json!({"command": HOSTILE, "content": format!("{HOSTILE}\n{HOSTILE}"), HOSTILE: [HOSTILE]});
    s.event(EventData::ToolCall {
        turn: 1,
        id: "c1".into(),
        name: "shell".into(),
        arguments: arguments.clone(),
        parent: None,
        sandbox: None,
    });
    s.event(EventData::StackPush(StackFrame {
        id: "c1".into(),
        parent: None,
        name: format!("shell{HOSTILE}"),
        summary: HOSTILE.into(),
        state: FrameState::AwaitingApproval,
    }));
    s.event(EventData::ApprovalRequested {
        id: "c1".into(),
        name: "shell".into(),
        arguments,
        position: 1,
        of: 1,
        note: None,
        diff: None,
        sandbox: None,
    });
    // The chat answer, the approval arguments, the stack summary and the timeline rows.
    let buf = s.draw(220, 60);
    assert_eq!(raw_cell(&buf), None, "\n{}", text_of(&buf));
    let screen = text_of(&buf);
    assert!(
        screen.contains("ok ^[]52;c;aGVsbG8=^G then ^[[2J"),
        "{screen}"
    );
    assert!(
        screen.contains("command: ok ^[]52"),
        "approval args show it:\n{screen}"
    );

    s.event(EventData::ApprovalDecided {
        id: "c1".into(),
        name: "shell".into(),
        decision: Decision::Approved,
        scope: Scope::Once,
        reason: None,
        prefix: None,
    });
    s.event(EventData::ToolResult {
        id: "c1".into(),
        name: "shell".into(),
        ok: false,
        status: Some(taco::event::ToolStatus::Failed),
        denied_by: None,
        result: Some(json!({"stdout": HOSTILE, "stderr": format!("{HOSTILE}\r\n{HOSTILE}")})),
        error: Some(HOSTILE.into()),
        duration_ms: 5,
    });
    s.app.chat.toggle_details();
    // The chat's tool cell with its result and error.
    let buf = s.draw(220, 60);
    assert_eq!(raw_cell(&buf), None, "\n{}", text_of(&buf));

    // The timeline detail of the failed result: its payload, as the tool sent it.
    s.key(KeyCode::Tab);
    s.key(KeyCode::Tab);
    s.key(KeyCode::End);
    s.key(KeyCode::Up);
    s.key(KeyCode::Enter);
    let buf = s.draw(220, 60);
    let screen = text_of(&buf);
    assert_eq!(raw_cell(&buf), None, "\n{screen}");
    assert!(
        screen.contains("stdout: ok ^[]52"),
        "the detail shows it:\n{screen}"
    );

    s.event(EventData::Final {
        content: HOSTILE.into(),
        turns: 1,
        usage: Usage::default(),
    });
    for (w, h) in [(0, 0), (1, 1), (2, 3), (20, 8), (80, 24)] {
        let buf = s.draw(w, h);
        assert_eq!(raw_cell(&buf), None, "{w}x{h}");
    }
}

/// Arbitrary text leaning on what breaks renderers and terminals: controls, Markdown syntax,
/// wide and combining characters, bidi overrides, plus anything at all.
fn nasty_text() -> impl Strategy<Value = String> {
    let pick = prop::sample::select(vec![
        '\x1b', '\x07', '\x08', '\r', '\n', '\t', '\0', '\u{7f}', '\u{85}', '\u{9b}', '\u{202E}',
        '\u{2066}', '\u{2028}', '\u{200D}', '\u{0301}', '界', '🐻', '[', ']', '(', ')', '`', '*',
        '_', '|', '#', '-', '>', '~', '!', '<', ' ', ' ', 'a', '1', '.', ':',
    ]);
    prop_oneof![
        3 => prop::collection::vec(prop_oneof![3 => pick, 1 => any::<char>()], 0..300)
            .prop_map(|chars| chars.into_iter().collect::<String>()),
        1 => prop::collection::vec(any::<u8>(), 0..300)
            .prop_map(|bytes| String::from_utf8_lossy(&bytes).into_owned()),
        1 => any::<String>(),
    ]
}

/// Draws lines the way the chat does (one row each) into a buffer `width` wide.
fn draw_lines(lines: &[Line<'static>], width: u16) -> Buffer {
    let height = u16::try_from(lines.len()).unwrap_or(u16::MAX).min(400);
    let mut buf = Buffer::empty(Rect::new(0, 0, width, height));
    for (y, line) in lines.iter().take(usize::from(height)).enumerate() {
        line.render(Rect::new(0, y as u16, width, 1), &mut buf);
    }
    buf
}

const WIDTHS: [u16; 6] = [0, 1, 2, 7, 40, 120];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn markdown_renders_any_text_without_raw_controls(text in nasty_text()) {
        let theme = Theme::default();
        let chars = text.chars().count();
        for width in WIDTHS {
            let lines = markdown::render(&text, width, &theme);
            // Each input char shows as at most four cells (a tab), so even one column wide
            // the rows stay within a small multiple of the input.
            prop_assert!(lines.len() <= 8 * chars + 8, "{} lines for {chars} chars at {width}", lines.len());
            for line in &lines {
                for span in &line.spans {
                    prop_assert!(!span.content.chars().any(acts_on_terminal), "{:?}", span.content);
                }
            }
            prop_assert_eq!(raw_cell(&draw_lines(&lines, width)), None);
            let plain = markdown::wrap_plain(&text, theme.text, width, &[], &[]);
            prop_assert!(plain.len() <= 8 * chars + 8);
            prop_assert_eq!(raw_cell(&draw_lines(&plain, width)), None);
        }
    }

    #[test]
    fn approval_arguments_render_without_raw_controls(
        key in nasty_text(),
        value in nasty_text(),
        body in nasty_text(),
        number in any::<f64>(),
    ) {
        let arguments = json!({
            key.clone(): value.clone(),
            "content": format!("{body}\n{value}"),
            "list": [value.clone(), number, null, {key.clone(): body.clone()}],
        });
        let shown = approval::pretty(&arguments);
        prop_assert!(!shown.chars().any(|c| c != '\n' && acts_on_terminal(c)), "{shown:?}");
        let input = key.len() + 2 * value.len() + 2 * body.len() + 64;
        prop_assert!(shown.len() <= 8 * input, "{} bytes shown for {input}", shown.len());
        prop_assert!(!approval::pretty(&Value::String(value.clone())).chars().any(|c| c != '\n' && acts_on_terminal(c)));

        let mut state = ApprovalState::new();
        state.push(Pending {
            call: ApprovalRequest {
                id: "c1".into(),
                name: key.clone(),
                arguments,
                sandbox: None,
            },
            position: 1,
            of: 1,
            lead: Some(body.clone()),
            from: Some(key.clone()),
            note: None,
            diff: None,
        });
        let theme = Theme::default();
        for width in WIDTHS {
            let rows = state.wanted_rows(width);
            prop_assert!(usize::from(rows) <= shown.len() + 8);
            for height in [0u16, 1, 3, 12] {
                let mut buf = Buffer::empty(Rect::new(0, 0, width, height));
                state.render(buf.area, &mut buf, &theme, Gate::Open);
                prop_assert_eq!(raw_cell(&buf), None);
                state.render(buf.area, &mut buf, &theme, Gate::Quiet(Duration::from_millis(250)));
                state.render(buf.area, &mut buf, &theme, Gate::Draft);
            }
        }
    }
}

proptest! {
    // The whole app is slower per case: fewer cases, the same kinds of text.
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn the_app_draws_any_model_and_tool_text_without_raw_controls(
        answer in nasty_text(),
        output in nasty_text(),
    ) {
        let mut s = Screen::new();
        s.event(EventData::RunStarted {
            prompt: output.clone(),
            provider: "demo".into(),
            model: "demo".into(),
            max_turns: 10,
            trace_parent: None,
        });
        s.event(EventData::Delta { kind: DeltaKind::Text, text: answer.clone() });
        s.event(EventData::ToolCall {
            turn: 1,
            id: "c1".into(),
            name: output.clone(),
            arguments: json!({"command": output.clone()}),
            parent: None,
            sandbox: None,
        });
        s.event(EventData::StackPush(StackFrame {
            id: "c1".into(),
            parent: None,
            name: output.clone(),
            summary: answer.clone(),
            state: FrameState::Running,
        }));
        s.event(EventData::ToolResult {
            id: "c1".into(),
            name: output.clone(),
            ok: false,
            status: Some(taco::event::ToolStatus::Failed),
            denied_by: None,
            result: Some(json!(output.clone())),
            error: Some(answer.clone()),
            duration_ms: 1,
        });
        s.app.chat.toggle_details();
        for (w, h) in [(0, 0), (1, 1), (3, 2), (30, 10), (140, 30)] {
            let buf = s.draw(w, h);
            prop_assert_eq!(raw_cell(&buf), None, "{}x{}", w, h);
        }
    }
}
