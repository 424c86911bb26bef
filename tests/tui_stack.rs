//! The stack pane through the whole app (issue 14.4): keys reach it when it has the focus,
//! `c` sends `Op::CancelCall` for the selected call, and a sub-agent's approval dialog says
//! where it comes from and quotes the sub-agent.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed unwrap is a failed test

use ratatui::crossterm::event::KeyCode;
use serde_json::json;
use taco::conversation::Usage;
use taco::event::{DeltaKind, EventData, FrameState, LlmCall, StackFrame};
use taco::orchestrator::task::Op;
use taco::tui::app::Command;
use taco::tui::layout::Focus;

use crate::support;
use support::app::Harness;

/// The steps of this file's stories, on the shared harness.
trait TuiStackSteps {
    fn call(&mut self, id: &str, parent: Option<&str>, name: &str, args: serde_json::Value);
    fn push(
        &mut self,
        id: &str,
        parent: Option<&str>,
        name: &str,
        summary: &str,
        state: FrameState,
    );
    fn start(&mut self);
}

impl TuiStackSteps for Harness {
    fn call(&mut self, id: &str, parent: Option<&str>, name: &str, args: serde_json::Value) {
        self.event(EventData::ToolCall {
            turn: 1,
            id: id.into(),
            name: name.into(),
            arguments: args,
            parent: parent.map(Into::into),
            sandbox: None,
        });
    }

    fn push(
        &mut self,
        id: &str,
        parent: Option<&str>,
        name: &str,
        summary: &str,
        state: FrameState,
    ) {
        self.event(EventData::StackPush(StackFrame {
            id: id.into(),
            parent: parent.map(Into::into),
            name: name.into(),
            summary: summary.into(),
            state,
        }));
    }

    fn start(&mut self) {
        self.key(KeyCode::Char('g'));
        self.key(KeyCode::Char('o'));
        self.key(KeyCode::Enter);
        self.event(EventData::RunStarted {
            prompt: "go".into(),
            provider: "demo".into(),
            model: "demo".into(),
            max_turns: 10,
            trace_parent: None,
        });
    }
}

fn llm_call(parent: Option<&str>, content: &str) -> EventData {
    EventData::LlmCall(Box::new(LlmCall {
        turn: 1,
        model: "demo".into(),
        duration_ms: 40,
        ttft_ms: Some(10),
        finish_reason: Some("tool_calls".into()),
        content: content.into(),
        reasoning_content: None,
        tool_calls: Vec::new(),
        usage: Usage::default(),
        timings: None,
        message_count: 2,
        new_messages: vec![],
        tools: vec![],
        parent: parent.map(Into::into),
        omitted: 0,
        context_window: None,
        call: None,
        purpose: None,
    }))
}

#[test]
fn c_on_the_selected_frame_cancels_that_call_alone() {
    let mut h = Harness::new();
    h.start();
    h.call("a", None, "shell", json!({"command": "sleep 100"}));
    h.push("a", None, "shell", "command=sleep 100", FrameState::Running);
    h.call("b", None, "read_file", json!({"path": "x"}));
    h.push("b", None, "read_file", "path=x", FrameState::Running);
    h.screen(160, 30);
    h.key(KeyCode::Tab);
    assert_eq!(h.app.focus(), Focus::Stack);
    assert_eq!(h.key(KeyCode::Up), vec![], "selects the newest");
    h.key(KeyCode::Up);
    assert_eq!(h.app.stack.selected(), Some("a"));
    assert_eq!(
        h.key(KeyCode::Char('c')),
        vec![Command::Op(Op::CancelCall("a".into()))]
    );
    assert_eq!(h.key(KeyCode::Char('c')), vec![], "once is enough");
    // Enter shows the detail; the screen names the call's arguments.
    h.key(KeyCode::Enter);
    let screen = h.screen(160, 30).backend().to_string();
    assert!(screen.contains("\"command\": \"sleep 100\""), "{screen}");
    // Esc closes the detail, then the selection, and only then cancels the run.
    assert_eq!(h.key(KeyCode::Esc), vec![]);
    assert_eq!(h.key(KeyCode::Esc), vec![]);
    assert_eq!(h.key(KeyCode::Esc), vec![Command::Op(Op::Cancel)]);
}

#[test]
fn typing_from_the_stack_pane_without_a_selection_goes_to_the_composer() {
    let mut h = Harness::new();
    h.start();
    h.push("a", None, "shell", "command=sleep 100", FrameState::Running);
    h.key(KeyCode::Tab);
    assert_eq!(h.key(KeyCode::Char('c')), vec![]);
    assert_eq!(h.app.focus(), Focus::Chat);
    assert_eq!(h.app.composer_text(), "c");
}

/// A delegate frame whose sub-agent said something, then asks to write a file.
fn sub_agent_asks(h: &mut Harness) {
    h.start();
    h.event(EventData::Delta {
        kind: DeltaKind::Text,
        text: "I'll hand the README to a sub-agent.".into(),
    });
    h.call("d", None, "delegate", json!({"task": "tidy the README"}));
    h.push(
        "d",
        None,
        "delegate",
        "task=tidy the README",
        FrameState::Running,
    );
    h.event(llm_call(
        Some("d"),
        "The README has two broken links; I'll fix them.",
    ));
    h.call(
        "d/w",
        Some("d"),
        "write_file",
        json!({"path": "README.md", "content": "# Hi\n"}),
    );
    h.push(
        "d/w",
        Some("d"),
        "write_file",
        "path=README.md",
        FrameState::AwaitingApproval,
    );
    h.event(EventData::ApprovalRequested {
        id: "d/w".into(),
        name: "write_file".into(),
        arguments: json!({"path": "README.md", "content": "# Hi\n"}),
        position: 1,
        of: 1,
        note: None,
        diff: None,
        sandbox: None,
    });
}

#[test]
fn a_sub_agents_approval_quotes_the_sub_agent_and_says_so() {
    let mut h = Harness::new();
    sub_agent_asks(&mut h);
    assert!(h.app.approval_open());
    let screen = h.screen(150, 30).backend().to_string();
    assert!(
        screen.contains("from delegate: tidy the README"),
        "{screen}"
    );
    assert!(screen.contains("two broken links"), "{screen}");
    insta::assert_snapshot!(h.screen(150, 30).backend());
}

#[test]
fn c_on_a_call_awaiting_approval_denies_it() {
    let mut h = Harness::new();
    sub_agent_asks(&mut h);
    h.key(KeyCode::Tab);
    h.key(KeyCode::End);
    assert_eq!(h.app.stack.selected(), Some("d/w"));
    match h.key(KeyCode::Char('c')).as_slice() {
        [Command::Op(Op::Approve { id, answer })] => {
            assert_eq!(id, "d/w");
            assert_eq!(answer.decision, taco::event::Decision::Denied);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_sub_agent_cancelled_while_it_asks_closes_its_question() {
    let mut h = Harness::new();
    sub_agent_asks(&mut h);
    assert!(h.app.approval_open());
    // Its delegate was cancelled alone: both frames leave without a decision.
    for (id, parent, name) in [("d/w", Some("d"), "write_file"), ("d", None, "delegate")] {
        h.event(EventData::StackPop(StackFrame {
            id: id.into(),
            parent: parent.map(Into::into),
            name: name.into(),
            summary: String::new(),
            state: FrameState::Cancelled,
        }));
    }
    assert!(!h.app.approval_open());
    assert!(h.app.is_busy(), "the run goes on");
}

/// An MCP call's progress shows everywhere the call is (issue 28.3): on its stack frame (a
/// bar, `n/total` and the server's message, room made by `server · tool` in place of the
/// model's `mcp__server__tool`), in the frame's detail, under its chat cell and in the
/// timeline.
#[test]
fn snapshot_mcp_progress_on_the_frame_its_detail_and_the_chat_cell() {
    let mut h = Harness::new();
    h.start();
    h.call("m1", None, "mcp__fixture__slow", json!({"steps": 10}));
    h.push(
        "m1",
        None,
        "mcp__fixture__slow",
        "steps=10",
        FrameState::Running,
    );
    h.event(EventData::ToolProgress {
        id: "m1".into(),
        progress: 4.0,
        total: Some(10.0),
        message: Some("copying".into()),
    });
    let screen = support::app::screen_text(&h.screen(100, 24));
    // A 40-column pane: the name, the bar and the count fit; the message is cut.
    assert!(
        screen.contains("⠋ fixture · slow ▰▰▰▱▱▱▱▱ 4/10 · …"),
        "{screen}"
    );
    assert!(
        screen.contains("⋯ progress 4/10 · copying"),
        "the timeline: {screen}"
    );
    assert!(
        screen.contains("⋯ ▰▰▰▱▱▱▱▱ 4/10 · copying"),
        "the chat cell: {screen}"
    );
    assert!(!screen.contains("mcp__"), "{screen}");
    // The frame's detail says it too.
    h.key(KeyCode::Tab);
    h.key(KeyCode::Up);
    h.key(KeyCode::Enter);
    let terminal = h.screen(100, 24);
    let screen = support::app::screen_text(&terminal);
    assert!(
        screen.contains("progress: ▰▰▰▱▱▱▱▱ 4/10 · copying"),
        "{screen}"
    );
    insta::assert_snapshot!(terminal.backend());
}
