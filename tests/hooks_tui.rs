//! Hooks in the cockpit (issue 30.1): a running hook is a frame on the stack under the call it
//! guards; when it ends it is a span in the timeline, nested under that call, with what it
//! decided.

use crate::support;

use serde_json::json;
use support::app::{Harness, screen_text};
use taco::event::{
    EventData, FrameState, HookDecision, HookEvent, HookRan, HookSource, StackFrame, ToolStatus,
};

fn hook_frame(state: FrameState) -> StackFrame {
    StackFrame {
        id: "s1/hook-1".into(),
        parent: Some("s1".into()),
        name: "hook pre_tool_use".into(),
        summary: "./check-shell.sh".into(),
        state,
    }
}

fn guarded_call(h: &mut Harness) {
    h.event(EventData::RunStarted {
        prompt: "clean up".into(),
        provider: "demo".into(),
        model: "demo".into(),
        max_turns: 10,
        trace_parent: None,
    });
    h.event(EventData::ToolCall {
        turn: 1,
        id: "s1".into(),
        name: "shell".into(),
        arguments: json!({"command": "rm -rf build"}),
        parent: None,
        sandbox: None,
    });
}

#[test]
fn a_running_hook_is_a_frame_and_its_span_a_nested_row_with_its_decision() {
    let mut h = Harness::new();
    guarded_call(&mut h);
    h.event(EventData::StackPush(hook_frame(FrameState::Running)));
    let running = screen_text(&h.screen(160, 24));
    assert!(running.contains("hook pre_tool_use"), "{running}");
    h.ms += 1200;
    h.event(EventData::Hook(Box::new(HookRan {
        id: "s1/hook-1".into(),
        event: HookEvent::PreToolUse,
        command: "./check-shell.sh".into(),
        source: HookSource::Project,
        call: Some("s1".into()),
        duration_ms: 1200,
        decision: Some(HookDecision::Deny),
        reason: Some("no rm -rf".into()),
        context: false,
        exit_code: Some(2),
        error: None,
    })));
    h.event(EventData::StackPop(hook_frame(FrameState::Denied)));
    h.event(EventData::ToolResult {
        id: "s1".into(),
        name: "shell".into(),
        ok: false,
        status: Some(ToolStatus::Denied),
        denied_by: Some(taco::event::DeniedBy::Hook),
        result: None,
        error: Some("a pre_tool_use hook of the user's denied this call: no rm -rf".into()),
        duration_ms: 0,
    });
    let done = screen_text(&h.screen(240, 16));
    let row = done
        .lines()
        .find(|l| l.contains("hook pre_tool_use · ./check-shell.sh · denied: no"))
        .unwrap_or_else(|| panic!("{done}"));
    let call_row = done
        .lines()
        .find(|l| l.contains("→ shell command=rm -rf build"))
        .unwrap_or_else(|| panic!("{done}"));
    // Nested: the hook's row is indented past the call's, with its span (1.2 s).
    let at = |l: &str, what: &str| l.chars().count() - l[l.find(what).unwrap()..].chars().count();
    assert!(at(row, "↪") > at(call_row, "→ shell"), "{done}");
    assert!(row.contains("1.2 s"), "{row}");
    insta::assert_snapshot!(done);
}
