//! Every overlay at 80×24 and 60×20 (issue 14.2): each shows all of its keys (wrapped or
//! shortened, never cut mid-word) and says how much is out of sight when its content is
//! cut; the timeline's detail view also full screen, unwrapped and panned (issue 14.3).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed unwrap is a failed test

use ratatui::crossterm::event::KeyCode;
use serde_json::json;
use taco::conversation::Usage;
use taco::event::{DeltaKind, EventData, FrameState, InputKind, InputRequest, LlmCall, StackFrame};
use taco::tui::layout::Focus;

use crate::support;
use support::app::{Harness, screen_text};

/// The two narrow sizes every overlay is drawn at.
const SIZES: [(u16, u16); 2] = [(80, 24), (60, 20)];

/// The steps of this file's stories, on the shared harness.
trait TuiNarrowSteps {
    fn start(&mut self, prompt: &str, lead: &str);
    fn ask(
        &mut self,
        name: &str,
        arguments: serde_json::Value,
        note: Option<&str>,
        diff: Option<String>,
    );
    fn text(&mut self, width: u16, height: u16) -> String;
}

impl TuiNarrowSteps for Harness {
    /// A request sent and its run started, the model having said `lead`.
    fn start(&mut self, prompt: &str, lead: &str) {
        self.type_text(prompt);
        self.key(KeyCode::Enter);
        self.event(EventData::RunStarted {
            prompt: prompt.into(),
            provider: "demo".into(),
            model: "demo".into(),
            max_turns: 10,
            trace_parent: None,
        });
        self.event(EventData::Delta {
            kind: DeltaKind::Text,
            text: lead.into(),
        });
    }

    /// A call to `name` that waits for approval.
    fn ask(
        &mut self,
        name: &str,
        arguments: serde_json::Value,
        note: Option<&str>,
        diff: Option<String>,
    ) {
        self.event(EventData::ToolCall {
            turn: 1,
            id: "c1".into(),
            name: name.into(),
            arguments: arguments.clone(),
            parent: None,
            sandbox: None,
        });
        self.event(EventData::StackPush(StackFrame {
            id: "c1".into(),
            parent: None,
            name: name.into(),
            summary: "x".into(),
            state: FrameState::AwaitingApproval,
        }));
        self.event(EventData::ApprovalRequested {
            id: "c1".into(),
            name: name.into(),
            arguments,
            position: 1,
            of: 1,
            note: note.map(Into::into),
            diff,
            sandbox: None,
        });
    }

    fn text(&mut self, width: u16, height: u16) -> String {
        screen_text(&self.screen(width, height))
    }
}

/// The screen's rows, as the snapshots show them.
/// Snapshots the screen at both sizes and checks each shows every one of `needles`.
fn each_size(name: &str, h: &mut Harness, needles: &[&str]) {
    for (width, height) in SIZES {
        let terminal = h.screen(width, height);
        let text = screen_text(&terminal);
        for needle in needles {
            assert!(
                text.contains(needle),
                "{name} at {width}×{height}: {needle:?} missing from\n{text}"
            );
        }
        insta::assert_snapshot!(format!("{name}_{width}x{height}"), terminal.backend());
    }
}

const APPROVAL_KEYS: [&str; 5] = [
    "y once",
    "t this turn",
    "a this session",
    "n deny",
    "↑↓ scroll",
];

#[test]
fn a_shell_approval_shows_every_key_at_80_and_60_columns() {
    let mut h = Harness::new();
    h.start("run the tests", "I'll run the test suite.");
    h.ask(
        "shell",
        json!({"command": "cargo test --test mcp -- --nocapture"}),
        None,
        None,
    );
    let mut needles = APPROVAL_KEYS.to_vec();
    needles.push("p allows `cargo test …`");
    each_size("approval_shell", &mut h, &needles);
}

#[test]
fn a_long_diff_is_cut_with_a_marker_and_keeps_its_keys() {
    let old: String = (1..=30).map(|i| format!("line {i}\n")).collect();
    let new: String = (1..=30).map(|i| format!("line {i} changed\n")).collect();
    let mut h = Harness::new();
    h.start("edit it", "I'll change every line.");
    let diff = taco::tools::diff::render("notes.md", Some(&old), &new);
    h.ask(
        "write_file",
        json!({"path": "notes.md", "content": new}),
        None,
        Some(diff),
    );
    let mut needles = APPROVAL_KEYS.to_vec();
    needles.push("more ┘");
    each_size("approval_write_file_diff", &mut h, &needles);
    // Scrolled into the middle: what is above is counted too.
    for _ in 0..5 {
        h.key(KeyCode::Down);
    }
    let text = h.text(80, 24);
    assert!(text.contains(" ↑ 5 ↓ "), "{text}");
}

#[test]
fn an_mcp_tools_approval_shows_its_note_and_every_key() {
    let mut h = Harness::new();
    h.start("what changed?", "Let me read the notes.");
    h.ask(
        "mcp__fs__read_text_file",
        json!({"path": "notes.txt"}),
        Some("MCP server fs · its tool read_text_file · the server says: read-only (a hint, not checked)"),
        None,
    );
    each_size("approval_mcp", &mut h, &APPROVAL_KEYS);
}

#[test]
fn a_reason_being_typed_shows_its_keys_and_its_end() {
    let mut h = Harness::new();
    h.start("tidy up", "I'll remove the build directory.");
    h.ask("shell", json!({"command": "rm -rf target"}), None, None);
    h.key(KeyCode::Char('n'));
    h.key(KeyCode::Enter);
    h.type_text("the build cache is shared with another checkout, keep it");
    each_size(
        "approval_reason",
        &mut h,
        &[
            "Reason for the model:",
            "Enter sends",
            "Esc skips",
            "keep it▏",
        ],
    );
}

fn question(kind: InputKind) -> InputRequest {
    let parameter = kind == InputKind::Parameter;
    InputRequest {
        id: "q1".into(),
        kind,
        frame: "c1/collect".into(),
        tool: if parameter { "write_file" } else { "delegate" }.into(),
        prompt: if parameter {
            "write_file needs a value for path to go on.".into()
        } else {
            "The tool stack reached its depth limit (20). Continue for another 20 levels?".into()
        },
        parameter: parameter.then(|| "path".into()),
        description: parameter.then(|| "Where to write, relative to the workspace.".into()),
        value_type: parameter.then(|| "string".into()),
        depth: (!parameter).then_some(20),
        form: None,
    }
}

#[test]
fn a_parameter_question_and_its_confirmation_show_every_key() {
    let mut h = Harness::new();
    h.start("write notes", "I'll write the notes.");
    h.event(EventData::InputRequested(question(InputKind::Parameter)));
    // A question that takes text waits for Tab.
    h.key(KeyCode::Tab);
    h.type_text("docs/notes.md");
    each_size(
        "question_parameter",
        &mut h,
        &["Enter send", "Esc abandon the task"],
    );
    for _ in 0..13 {
        h.key(KeyCode::Backspace);
    }
    h.key(KeyCode::Enter);
    each_size(
        "question_continue",
        &mut h,
        &["y back to the question", "n abandon the task"],
    );
}

#[test]
fn a_depth_limit_with_a_deep_stack_is_cut_with_a_marker() {
    let mut h = Harness::new();
    h.start("survey", "I'll delegate.");
    let mut parent: Option<String> = None;
    for depth in 0..14 {
        let id = match &parent {
            Some(p) => format!("{p}/d{depth}"),
            None => format!("d{depth}"),
        };
        h.event(EventData::StackPush(StackFrame {
            id: id.clone(),
            parent: parent.clone(),
            name: "delegate".into(),
            summary: format!("task=level {depth}"),
            state: FrameState::Running,
        }));
        parent = Some(id);
    }
    h.event(EventData::InputRequested(question(InputKind::DepthLimit)));
    each_size(
        "question_depth_limit",
        &mut h,
        &[
            "y continue for another 20 levels",
            "n stop",
            "↑↓ scroll",
            "more ┘",
        ],
    );
}

#[test]
fn help_wraps_its_descriptions_and_says_what_is_below() {
    let mut h = Harness::new();
    h.key(KeyCode::Char('?'));
    assert!(h.app.help_open());
    each_size(
        "help",
        &mut h,
        &["↑↓ PgUp PgDn scroll", "Esc closes", "more ┘"],
    );
    // Nothing is cut mid-word: the longest description wraps whole at 60 columns.
    let text = h.text(60, 20);
    assert!(
        !text.contains("optionally type a reason for the mode"),
        "{text}"
    );
}

/// A run whose model call answered with a long, hard-wrapped text, its detail open.
fn detail_of_a_long_answer(h: &mut Harness) {
    h.start("explain", "");
    let answer: String = (1..=30)
        .map(|i| format!("{i:>2}. a hard-wrapped line of the answer, exactly as the model sent it, longer than 80 columns\n"))
        .collect();
    let mut call = model_call(1, 5);
    if let EventData::LlmCall(call) = &mut call {
        call.content = answer;
        call.ttft_ms = Some(2);
        call.finish_reason = Some("stop".into());
    }
    h.event(call);
    // Shift-Tab in the chat cycles the mode: Tab twice reaches the timeline.
    h.key(KeyCode::Tab);
    h.key(KeyCode::Tab);
    assert_eq!(h.app.focus(), Focus::Timeline);
    h.key(KeyCode::Enter);
    assert!(h.app.detail_open());
}

#[test]
fn the_timeline_detail_shows_its_keys_and_what_is_below() {
    let mut h = Harness::new();
    detail_of_a_long_answer(&mut h);
    each_size("timeline_detail", &mut h, &["Esc close", "z", "more"]);
}

#[test]
fn the_detail_goes_full_screen_unwraps_and_pans() {
    let mut h = Harness::new();
    detail_of_a_long_answer(&mut h);
    h.key(KeyCode::Char('z'));
    assert!(!h.app.detail_open(), "it left the pane for the screen");
    each_size(
        "timeline_detail_zoomed",
        &mut h,
        &["Esc/z back", "w no wrap", "more"],
    );
    // Unwrapped: one row a line, cut at the edge; → shows what was cut.
    h.key(KeyCode::Char('w'));
    h.key(KeyCode::Right);
    h.key(KeyCode::Right);
    each_size(
        "timeline_detail_zoomed_unwrapped",
        &mut h,
        &["Esc/z back", "←→ pan", "w wrap", "more"],
    );
    // Keys under it do not reach the dialog or the list: it is modal.
    h.key(KeyCode::Tab);
    assert_eq!(h.app.focus(), Focus::Timeline);
    // Esc brings it back over the pane, as it was; Esc again closes it.
    h.key(KeyCode::Esc);
    assert!(h.app.detail_open());
    let text = h.text(60, 20);
    assert!(text.contains("←→ pan"), "still unwrapped:\n{text}");
    h.key(KeyCode::Esc);
    assert!(!h.app.detail_open());
    // Enter on an open detail zooms it too.
    h.key(KeyCode::Enter);
    h.key(KeyCode::Enter);
    assert!(!h.app.detail_open());
    assert!(h.text(80, 24).contains("Esc/z back"));
}

impl Harness {
    /// One event of `run` at `ms` milliseconds (the clock moves there).
    fn at(&mut self, run: &str, ms: u64, data: EventData) {
        self.ms = ms;
        let event = taco::event::Event {
            timestamp: 1_700_000_000_000 + ms,
            request_id: run.into(),
            data,
        };
        let now = self.now();
        self.app.on_event(&event, now);
    }
}

fn model_call(turn: u32, duration_ms: u64) -> EventData {
    EventData::LlmCall(Box::new(LlmCall {
        turn,
        model: "demo".into(),
        duration_ms,
        ttft_ms: None,
        finish_reason: None,
        content: String::new(),
        reasoning_content: None,
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
    }))
}

fn shell_call(id: &str, command: &str) -> EventData {
    EventData::ToolCall {
        turn: 1,
        id: id.into(),
        name: "shell".into(),
        arguments: json!({ "command": command }),
        parent: None,
        sandbox: None,
    }
}

fn shell_result(id: &str, duration_ms: u64) -> EventData {
    EventData::ToolResult {
        id: id.into(),
        name: "shell".into(),
        ok: true,
        status: None,
        denied_by: None,
        result: Some(json!("ok")),
        error: None,
        duration_ms,
    }
}

fn run_started(prompt: &str) -> EventData {
    EventData::RunStarted {
        prompt: prompt.into(),
        provider: "demo".into(),
        model: "demo".into(),
        max_turns: 10,
        trace_parent: None,
    }
}

fn final_answer() -> EventData {
    EventData::Final {
        content: "done".into(),
        turns: 2,
        usage: Usage::default(),
    }
}

#[test]
fn the_timeline_gives_names_the_spare_columns_and_scales_each_run() {
    let mut h = Harness::new();
    // Run A: 1.5 s. Four minutes later run B: 3 s of work around a ten-minute approval.
    h.at("a", 0, run_started("list the files"));
    h.at("a", 800, model_call(1, 800));
    h.at("a", 800, shell_call("a1", "ls -la"));
    h.at("a", 900, shell_result("a1", 100));
    h.at("a", 1_500, model_call(2, 600));
    h.at("a", 1_500, final_answer());
    let b = 241_500;
    let wait = 600_000;
    h.at("b", b, run_started("run the tests"));
    h.at("b", b + 1_000, model_call(1, 1_000));
    h.at("b", b + 1_000, shell_call("b1", "cargo test --workspace"));
    h.at(
        "b",
        b + 1_000,
        EventData::ApprovalRequested {
            id: "b1".into(),
            name: "shell".into(),
            arguments: json!({"command": "cargo test --workspace"}),
            position: 1,
            of: 1,
            note: None,
            diff: None,
            sandbox: None,
        },
    );
    h.at(
        "b",
        b + 1_000 + wait,
        EventData::ApprovalDecided {
            id: "b1".into(),
            name: "shell".into(),
            decision: taco::event::Decision::Approved,
            scope: taco::event::Scope::Once,
            reason: None,
            prefix: None,
        },
    );
    h.at("b", b + 2_000 + wait, shell_result("b1", 1_000));
    h.at("b", b + 3_000 + wait, model_call(2, 1_000));
    h.at("b", b + 3_000 + wait, final_answer());
    // Shift-Tab in the chat cycles the mode: Tab twice reaches the timeline.
    h.key(KeyCode::Tab);
    h.key(KeyCode::Tab);
    assert_eq!(h.app.focus(), Focus::Timeline);
    // 80×24: the timeline pane is 32 cells inside; its names get 23 of them (12 before,
    // beside an offset and an eight-cell duration), the duration six.
    let text = h.text(80, 24);
    // The call's clock is how long it ran (as the stack says), not its ten-minute wait.
    assert!(text.contains("→ shell command=cargo te…  1.0 s"), "{text}");
    assert!(text.contains("▶ run · demo/demo · run …    ⋯4m"), "{text}");
    insta::assert_snapshot!("timeline_two_runs_80x24", h.screen(80, 24).backend());
    // 60×20: the timeline alone, 58 cells: the whole command shows, and run B's bars span
    // its own few seconds, its wait drawn apart (░) and squeezed (┊).
    let text = h.text(60, 20);
    assert!(
        text.contains("→ shell command=cargo test --workspace"),
        "{text}"
    );
    assert!(text.contains('░') && text.contains('┊'), "{text}");
    insta::assert_snapshot!("timeline_two_runs_60x20", h.screen(60, 20).backend());
}
