use super::*;
use crate::conversation::ToolCall;
use crate::event::{InputKind, LlmCall, Scope, StackFrame};
use serde_json::json;

fn ev(request: &str, data: EventData) -> Event {
    Event {
        timestamp: 7,
        request_id: Arc::from(request),
        data,
    }
}

fn started(max_turns: u32) -> EventData {
    EventData::RunStarted {
        prompt: "p".into(),
        provider: "p".into(),
        model: "m".into(),
        max_turns,
        trace_parent: None,
    }
}

fn llm(turn: u32, parent: Option<&str>, calls: &[&str], input: u64) -> EventData {
    EventData::LlmCall(Box::new(LlmCall {
        turn,
        parent: parent.map(Into::into),
        tool_calls: calls
            .iter()
            .map(|id| ToolCall {
                id: (*id).into(),
                name: "t".into(),
                arguments: json!({}),
            })
            .collect(),
        usage: Usage {
            input_tokens: input,
            output_tokens: 1,
            cached_tokens: 0,
        },
        model: "m".into(),
        duration_ms: 1,
        ttft_ms: None,
        finish_reason: None,
        content: String::new(),
        reasoning_content: None,
        timings: None,
        message_count: 1,
        new_messages: Vec::new(),
        tools: Vec::new(),
        omitted: 0,
        context_window: None,
        call: None,
        purpose: None,
    }))
}

fn call(id: &str, parent: Option<&str>) -> EventData {
    EventData::ToolCall {
        turn: 1,
        id: id.into(),
        name: "t".into(),
        arguments: json!({}),
        parent: parent.map(Into::into),
        sandbox: None,
    }
}

fn result(id: &str, status: ToolStatus) -> EventData {
    EventData::ToolResult {
        id: id.into(),
        name: "t".into(),
        ok: status == ToolStatus::Ok,
        status: Some(status),
        denied_by: None,
        result: None,
        error: None,
        duration_ms: 3,
    }
}

/// The shell call `a` asks for approval.
fn asked_shell() -> EventData {
    EventData::ApprovalRequested {
        id: "a".into(),
        name: "shell".into(),
        arguments: json!({}),
        position: 1,
        of: 1,
        note: None,
        diff: None,
        sandbox: None,
    }
}

/// The user approved the shell call `a` with `scope` (and a command prefix).
fn approved_shell(scope: Scope, prefix: Option<&str>) -> EventData {
    EventData::ApprovalDecided {
        id: "a".into(),
        name: "shell".into(),
        decision: Decision::Approved,
        scope,
        reason: None,
        prefix: prefix.and_then(crate::tools::builtin::suggested_grant),
    }
}

#[test]
fn nesting_turns_and_usage_follow_the_events() {
    let mut m = RunModel::new();
    for data in [
        started(3),
        llm(1, None, &["a", "b"], 10),
        call("a", None),
        call("b", None),
        call("b/x", Some("b")),
        llm(1, Some("b"), &["b/x"], 5),
        result("b/x", ToolStatus::Failed),
        result("a", ToolStatus::Ok),
    ] {
        m.apply(&ev("r", data));
    }
    assert_eq!((m.depth("a"), m.depth("b/x")), (0, 1));
    assert_eq!(m.parent("b/x"), Some("b"));
    assert_eq!(m.turn(), 1, "one top-level result is still due");
    m.apply(&ev("r", result("b", ToolStatus::Denied)));
    assert_eq!(
        m.turn(),
        2,
        "the batch is complete: the model is called again"
    );
    assert_eq!(
        m.call("b").map(|c| c.state),
        Some(CallState::Ended(ToolStatus::Denied))
    );
    assert_eq!(
        m.run_usage().input_tokens,
        15,
        "the sub-agent's tokens count"
    );
    m.apply(&ev("r", llm(3, None, &["c"], 1)));
    m.apply(&ev("r", call("c", None)));
    m.apply(&ev("r", result("c", ToolStatus::Ok)));
    assert_eq!(m.turn(), 3, "never past the limit");
}

#[test]
fn approvals_questions_and_grants_open_and_close() {
    let mut m = RunModel::new();
    m.apply(&ev("r", started(5)));
    m.apply(&ev("r", call("a", None)));
    m.apply(&ev("r", asked_shell()));
    assert_eq!(m.open_approvals().len(), 1);
    assert_eq!(
        m.call("a").map(|c| c.state),
        Some(CallState::AwaitingApproval)
    );
    m.apply(&ev("r", approved_shell(Scope::Turn, None)));
    assert!(m.open_approvals().is_empty());
    assert_eq!(m.grants().get("shell"), Some(&Scope::Turn));
    m.apply(&ev(
        "r",
        EventData::StackPush(StackFrame {
            id: "a/collect".into(),
            parent: Some("a".into()),
            name: "collect_tool_parameters".into(),
            summary: String::new(),
            state: FrameState::AwaitingInput,
        }),
    ));
    let question = InputRequest {
        id: "q1".into(),
        kind: InputKind::Parameter,
        frame: "a/collect".into(),
        tool: "shell".into(),
        prompt: "?".into(),
        parameter: Some("command".into()),
        description: None,
        value_type: None,
        depth: None,
        form: None,
    };
    m.apply(&ev("r", EventData::InputRequested(question)));
    assert_eq!(m.open_questions().len(), 1);
    assert_eq!(m.question_depth("q1"), 1);
    // Another run's end (or a session problem) does not end this one.
    m.apply(&ev(
        "",
        EventData::Error {
            kind: "session".into(),
            message: "m".into(),
        },
    ));
    assert!(m.is_running());
    m.apply(&ev(
        "r",
        EventData::Final {
            content: String::new(),
            turns: 1,
            usage: Usage::default(),
        },
    ));
    assert!(!m.is_running() && m.open_questions().is_empty());
    assert!(m.grants().is_empty(), "a turn grant ends with its run");
}

#[test]
fn session_grants_outlive_runs_but_not_the_process() {
    let mut m = RunModel::new();
    m.apply(&ev("r", started(5)));
    m.apply(&ev("r", approved_shell(Scope::Session, None)));
    m.apply(&ev(
        "r",
        EventData::Cancelled {
            running: "x".into(),
        },
    ));
    assert_eq!(m.grants().get("shell"), Some(&Scope::Session));
    m.resumed();
    assert!(m.grants().is_empty());
}

#[test]
fn shell_prefixes_allowed_from_the_dialog_are_kept_for_the_session() {
    let mut m = RunModel::new();
    m.apply(&ev("r", started(5)));
    m.apply(&ev("r", approved_shell(Scope::Once, Some("cargo test"))));
    m.apply(&ev(
        "r",
        EventData::Cancelled {
            running: "x".into(),
        },
    ));
    let names: Vec<String> = m.shell_prefixes().iter().map(|g| g.name()).collect();
    assert_eq!(names, ["cargo test"]);
    m.resumed();
    assert!(
        m.shell_prefixes().is_empty(),
        "they belonged to the old process"
    );
}

#[test]
fn the_context_gauge_follows_the_user_conversation_only() {
    use crate::event::{CompactTrigger, Compacted};
    let windowed = |parent: Option<&str>, input: u64| {
        let mut data = llm(1, parent, &[], input);
        if let EventData::LlmCall(call) = &mut data {
            call.context_window = Some(10_000);
        }
        data
    };
    let mut model = RunModel::new();
    model.apply(&ev("r", started(5)));
    model.apply(&ev("r", windowed(None, 4_999)));
    assert_eq!(model.context().and_then(|g| g.percent()), Some(50));
    // A sub-agent's call is its own conversation.
    model.apply(&ev("r", windowed(Some("d1"), 9_000)));
    assert_eq!(model.context().and_then(|g| g.percent()), Some(50));
    let compacted = |error: Option<&str>| Compacted {
        trigger: CompactTrigger::Auto,
        before_tokens: 5_000,
        after_tokens: 1_200,
        window: Some(10_000),
        summarized: 8,
        kept_from: 9,
        summary: "s".into(),
        requests: Vec::new(),
        requests_left_out: 0,
        usage: Usage::default(),
        duration_ms: 1,
        parent: None,
        error: error.map(Into::into),
        call: None,
    };
    // A compaction that failed changes nothing.
    model.apply(&ev(
        "r",
        EventData::Compacted(Box::new(compacted(Some("down")))),
    ));
    assert_eq!(model.context().and_then(|g| g.percent()), Some(50));
    model.apply(&ev("r", EventData::Compacted(Box::new(compacted(None)))));
    assert_eq!(model.context().and_then(|g| g.percent()), Some(12));
    model.cleared();
    assert_eq!(model.context(), None);
}

#[test]
fn a_sub_agent_subtree_sums_every_nested_model_call_and_costs_by_model() {
    use crate::config::pricing::Pricing;
    let mut model = RunModel::new();
    model.apply(&ev("r", started(5)));
    model.apply(&ev("r", llm(1, None, &["d1"], 100)));
    model.apply(&ev("r", call("d1", None)));
    // The sub-agent, and a sub-sub-agent under it.
    model.apply(&ev("r", llm(1, Some("d1"), &["d2"], 1000)));
    model.apply(&ev("r", call("d2", Some("d1"))));
    model.apply(&ev("r", llm(1, Some("d2"), &[], 10_000)));
    assert_eq!(model.subtree_usage("d1").unwrap().input_tokens, 11_000);
    assert_eq!(model.subtree_usage("d2").unwrap().input_tokens, 10_000);
    assert_eq!(model.subtree_usage("none"), None);
    // Model "m" has no known price; a configured one prices it.
    assert_eq!(model.subtree_cost("d1", &Pricing::default()), None);
    let mut prices = std::collections::BTreeMap::new();
    prices.insert(
        "m".to_string(),
        crate::config::pricing::Price {
            input: 1.0,
            output: 0.0,
            cached: None,
        },
    );
    let pricing = Pricing::new(prices);
    let cost = model.subtree_cost("d1", &pricing).unwrap();
    assert!((cost - 0.011).abs() < 1e-9, "{cost}");
    let session = model.session_cost(&pricing).unwrap();
    assert!((session - 0.0111).abs() < 1e-9, "{session}");
}

fn at(ts: u64, data: EventData) -> Event {
    Event {
        timestamp: ts,
        request_id: Arc::from("r"),
        data,
    }
}

fn frame(id: &str, state: FrameState) -> StackFrame {
    StackFrame {
        id: id.into(),
        parent: None,
        name: "shell".into(),
        summary: String::new(),
        state,
    }
}

#[test]
fn a_call_runs_on_the_event_clock_from_its_approval_to_its_result() {
    let mut m = RunModel::new();
    m.apply(&at(0, started(5)));
    m.apply(&at(100, call("a", None)));
    m.apply(&at(110, asked_shell()));
    // Waiting counts as waiting: the clock shows it until the call runs.
    assert_eq!(m.call("a").unwrap().elapsed_ms(2_100), 2_000);
    m.apply(&at(
        2_100,
        approved_shell(Scope::Session, Some("cargo test")),
    ));
    m.apply(&at(
        2_150,
        EventData::StackPush(frame("a", FrameState::Running)),
    ));
    let a = m.call("a").unwrap();
    assert_eq!(
        a.running_ms,
        Some(2_100),
        "approved is when it began to run"
    );
    assert_eq!(a.elapsed_ms(2_600), 500);
    assert!(matches!(
        &a.via,
        Some(Via::Approved {
            scope: Scope::Session,
            prefix: Some(_)
        })
    ));
    assert_eq!(a.via.as_ref().unwrap().label(), "prefix 'cargo test …'");
    m.apply(&at(
        2_140,
        EventData::ToolOutput {
            id: "a".into(),
            tail: "error: boom".into(),
        },
    ));
    m.apply(&at(
        3_100,
        EventData::ToolResult {
            id: "a".into(),
            name: "shell".into(),
            ok: false,
            status: Some(ToolStatus::ExitNonzero),
            denied_by: None,
            result: Some(json!({"exit_code": 3, "stdout": "", "stderr": "error: boom"})),
            error: None,
            duration_ms: 990,
        },
    ));
    let a = m.call("a").unwrap();
    assert_eq!(a.state, CallState::Ended(ToolStatus::ExitNonzero));
    assert_eq!((a.duration_ms, a.ended_ms), (Some(1_000), Some(3_100)));
    assert_eq!(a.elapsed_ms(9_999), 1_000, "ended: its duration for good");
    assert_eq!(a.end_label().as_deref(), Some("exit 3"));
    assert_eq!(a.tail.as_deref(), Some("error: boom"));
    assert!(a.state.is_problem());
}

#[test]
fn a_denied_call_keeps_its_reason_and_the_run_end_closes_every_open_call() {
    let mut m = RunModel::new();
    m.apply(&at(0, started(5)));
    m.apply(&at(10, call("d", None)));
    m.apply(&at(
        20,
        EventData::ApprovalDecided {
            id: "d".into(),
            name: "t".into(),
            decision: Decision::Denied,
            scope: Scope::Once,
            reason: Some("too risky".into()),
            prefix: None,
        },
    ));
    // A file of the first schema says only `ok: false` for it: still denied.
    m.apply(&at(
        21,
        EventData::ToolResult {
            id: "d".into(),
            name: "t".into(),
            ok: false,
            status: None,
            denied_by: None,
            result: None,
            error: Some("denied".into()),
            duration_ms: 0,
        },
    ));
    let d = m.call("d").unwrap();
    assert_eq!(d.state, CallState::Ended(ToolStatus::Denied));
    assert_eq!(
        (d.reason.as_deref(), d.duration_ms),
        (Some("too risky"), Some(0))
    );
    m.apply(&at(30, call("r", None)));
    m.apply(&at(
        40,
        EventData::StackPush(frame("r", FrameState::Running)),
    ));
    m.apply(&at(
        90,
        EventData::Cancelled {
            running: "tool calls".into(),
        },
    ));
    let r = m.call("r").unwrap();
    assert_eq!(r.state, CallState::Ended(ToolStatus::Cancelled));
    assert_eq!(r.duration_ms, Some(50));
}

#[test]
fn a_sub_agents_frame_keeps_what_its_model_last_said_and_a_grant_is_named() {
    let mut m = RunModel::new();
    m.apply(&at(0, started(5)));
    m.apply(&at(1, call("agent", None)));
    let mut said = llm(1, Some("agent"), &[], 1);
    if let EventData::LlmCall(call) = &mut said {
        call.content = "Reading the README first.".into();
    }
    m.apply(&at(2, said));
    assert_eq!(
        m.call("agent").unwrap().said.as_deref(),
        Some("Reading the README first.")
    );
    // A check of an answer, or code a tool asked for, under the same frame: not its words.
    for purpose in [Purpose::AnswerCheck, Purpose::ForTool] {
        let mut other = llm(1, Some("agent"), &[], 1);
        if let EventData::LlmCall(call) = &mut other {
            call.content = "no".into();
            call.purpose = Some(purpose);
        }
        m.apply(&at(2, other));
    }
    assert_eq!(
        m.call("agent").unwrap().said.as_deref(),
        Some("Reading the README first.")
    );
    m.apply(&at(3, call("g", None)));
    m.apply(&at(
        4,
        EventData::GrantUsed {
            id: "g".into(),
            name: "t".into(),
            grant: crate::event::Grant::Tool("t".into()),
        },
    ));
    assert_eq!(m.call("g").unwrap().via.as_ref().unwrap().label(), "grant");
}

#[test]
fn the_activity_is_read_from_the_calls_and_dialogs_of_the_run() {
    let mut m = RunModel::new();
    assert_eq!(m.activity(), Activity::Idle);
    m.apply(&at(0, started(5)));
    assert_eq!(m.activity(), Activity::Streaming);
    m.apply(&at(1, call("a", None)));
    assert_eq!(
        m.activity(),
        Activity::RunningTool,
        "a call made is at work"
    );
    assert_eq!(m.live_depth(), 1);
    m.apply(&at(2, call("a/b", Some("a"))));
    assert_eq!(m.live_depth(), 2);
    // A question and an approval at once: the approval is what the user is shown first.
    m.apply(&at(
        3,
        EventData::InputRequested(InputRequest {
            id: "q".into(),
            kind: InputKind::Parameter,
            frame: "a".into(),
            tool: "t".into(),
            prompt: "path?".into(),
            parameter: None,
            description: None,
            value_type: None,
            depth: None,
            form: None,
        }),
    ));
    assert_eq!(m.activity(), Activity::AwaitingInput);
    m.apply(&at(4, asked_shell()));
    assert_eq!(m.activity(), Activity::AwaitingApproval);
    m.apply(&at(5, approved_shell(Scope::Once, None)));
    assert_eq!(m.activity(), Activity::AwaitingInput);
    m.apply(&at(
        6,
        EventData::InputAnswered {
            id: "q".into(),
            value: Some("x".into()),
            form: None,
        },
    ));
    assert_eq!(m.activity(), Activity::RunningTool);
    m.apply(&at(7, result("a/b", ToolStatus::Ok)));
    m.apply(&at(8, result("a", ToolStatus::Ok)));
    assert_eq!(m.live_depth(), 0);
    assert_eq!(m.activity(), Activity::Streaming, "back to the model");
    m.apply(&at(
        9,
        EventData::Final {
            content: String::new(),
            turns: 1,
            usage: Usage::default(),
        },
    ));
    assert_eq!(m.activity(), Activity::Idle);
}

#[test]
fn a_reused_id_is_a_new_call_and_a_frame_without_a_call_is_one() {
    let mut m = RunModel::new();
    m.apply(&at(0, started(5)));
    m.apply(&at(10, call("call_0", None)));
    m.apply(&at(20, result("call_0", ToolStatus::Failed)));
    // Some servers number calls afresh each turn: the same id, a new call.
    m.apply(&at(100, call("call_0", None)));
    let again = m.call("call_0").unwrap();
    assert!(again.state.is_open(), "{:?}", again.state);
    assert_eq!(again.started_ms, 100);
    assert_eq!(m.calls().count(), 1);
    // A pop of a frame nobody announced (refused before it ran) is still a call that ended.
    m.apply(&at(
        110,
        EventData::StackPop(frame("x", FrameState::Denied)),
    ));
    assert_eq!(
        m.call("x").map(|c| c.state),
        Some(CallState::Ended(ToolStatus::Denied))
    );
}

#[test]
fn progress_output_and_arguments_are_the_calls_and_deltas_change_no_call() {
    let mut m = RunModel::new();
    m.apply(&at(0, started(5)));
    m.apply(&at(
        1,
        EventData::ToolCall {
            turn: 1,
            id: "s".into(),
            name: "shell".into(),
            arguments: json!({"command": "cargo test", "timeout_secs": 60}),
            parent: None,
            sandbox: None,
        },
    ));
    let s = m.call("s").unwrap();
    assert_eq!(s.summary, "command=cargo test timeout_secs=60");
    assert_eq!(
        s.arguments,
        Some(json!({"command": "cargo test", "timeout_secs": 60}))
    );
    m.apply(&at(
        5,
        EventData::ToolProgress {
            id: "s".into(),
            progress: 2.0,
            total: Some(4.0),
            message: Some("step 2".into()),
        },
    ));
    m.apply(&at(
        9,
        EventData::ToolOutput {
            id: "s".into(),
            tail: "ok".into(),
        },
    ));
    let s = m.call("s").unwrap();
    assert_eq!(s.progress.as_ref().map(|p| p.progress), Some(2.0));
    assert_eq!(s.output_ms, Some(9));
    let before = m.revision();
    m.apply(&at(
        10,
        EventData::Delta {
            kind: crate::event::DeltaKind::Text,
            text: "x".into(),
        },
    ));
    assert_eq!(m.revision(), before, "streamed text moves no call");
    m.apply(&at(11, result("s", ToolStatus::Ok)));
    assert_ne!(m.revision(), before);
}

#[test]
fn a_servers_form_is_an_open_question_until_its_whole_answer() {
    let mut m = RunModel::new();
    m.apply(&ev("r", started(10)));
    let schema = json!({"type": "object", "properties": {"name": {"type": "string"}}});
    let form = InputRequest {
        id: "a/form1".into(),
        kind: InputKind::Form,
        frame: "a/elicitation-1".into(),
        tool: "MCP server fixture".into(),
        prompt: "MCP server fixture asks: Who are you?".into(),
        parameter: None,
        description: None,
        value_type: None,
        depth: None,
        form: Some(crate::form::FormSpec::parse(&schema, &[]).unwrap()),
    };
    m.apply(&ev("r", EventData::InputRequested(form)));
    assert_eq!(m.open_questions().len(), 1);
    assert_eq!(m.activity(), Activity::AwaitingInput);
    m.apply(&ev(
        "r",
        EventData::InputAnswered {
            id: "a/form1".into(),
            value: None,
            form: Some(crate::tools::AskReply::Decline),
        },
    ));
    assert!(m.open_questions().is_empty());
    assert_eq!(m.question("a/form1").map(|q| q.kind), Some(InputKind::Form));
}

mod turns {
    use std::sync::Arc;

    use serde_json::json;

    use crate::event::{
        CheckpointTaken, Event, EventData, FilesChanged, Fork, RewindPoint, Rewound,
    };
    use crate::run_model::RunModel;

    fn event(run: &str, data: EventData) -> Event {
        Event {
            timestamp: 1,
            request_id: Arc::from(run),
            data,
        }
    }

    fn started(run: &str, prompt: &str) -> Event {
        event(
            run,
            EventData::RunStarted {
                prompt: prompt.into(),
                provider: "p".into(),
                model: "m".into(),
                max_turns: 5,
                trace_parent: None,
            },
        )
    }

    fn call(run: &str, id: &str) -> Event {
        event(
            run,
            EventData::ToolCall {
                turn: 1,
                id: id.into(),
                name: "write_file".into(),
                arguments: json!({"path": "a.txt"}),
                parent: None,
                sandbox: None,
            },
        )
    }

    #[test]
    fn runs_keep_their_calls_checkpoints_and_changes_across_runs() {
        let events = [
            started("r1", "first"),
            call("r1", "c1"),
            call("r1", "c2"),
            event(
                "r1",
                EventData::Checkpoint(CheckpointTaken {
                    id: Some("cp1".into()),
                    calls: vec!["c2".into()],
                    changed: true,
                    skipped: Vec::new(),
                    skipped_count: 0,
                    error: None,
                }),
            ),
            event(
                "r1",
                EventData::FilesChanged(Box::new(FilesChanged::new(
                    "cp1".into(),
                    "cp2".into(),
                    &[],
                ))),
            ),
            started("r2", "second"),
            call("r2", "c3"),
        ];
        let model = RunModel::replay(&events);
        let turns: Vec<_> = model.turns().iter().collect();
        assert_eq!(turns.len(), 2);
        assert_eq!(turns[0].prompt, "first");
        assert_eq!(turns[0].calls.len(), 2);
        assert!(!turns[0].calls[0].checkpoint && turns[0].calls[1].checkpoint);
        assert_eq!(turns[0].calls[0].summary, "path=a.txt");
        assert!(model.turns().has_checkpoint("r1", "c2"));
        let changes = turns[0].changes.as_ref().unwrap();
        assert_eq!((changes.from.as_str(), changes.to.as_str()), ("cp1", "cp2"));
        assert_eq!(turns[1].calls.len(), 1);
        assert!(turns[1].changes.is_none());
    }

    #[test]
    fn a_conversation_fork_leaves_the_later_runs_behind() {
        let mut model = RunModel::replay(&[
            started("r1", "first"),
            started("r2", "second"),
            started("r3", "third"),
        ]);
        let rewound = |fork| Rewound {
            point: RewindPoint::Run {
                request_id: "r2".into(),
            },
            checkpoint: None,
            restored: Vec::new(),
            kept: Vec::new(),
            failed: Vec::new(),
            undo: None,
            fork,
        };
        // Files alone leave the conversation as it is.
        model.apply(&event("x", EventData::Rewound(Box::new(rewound(None)))));
        assert!(model.turns().iter().all(|t| !t.left_behind));
        let fork = Fork {
            from_session: "old".into(),
            session: "new".into(),
            prompt: "second".into(),
        };
        model.apply(&event(
            "x",
            EventData::Rewound(Box::new(rewound(Some(fork)))),
        ));
        let behind: Vec<bool> = model.turns().iter().map(|t| t.left_behind).collect();
        assert_eq!(behind, [false, true, true]);
    }

    #[test]
    fn the_runs_kept_are_bounded() {
        let events: Vec<Event> = (0..crate::run_model::turns::MAX_TURNS + 3)
            .map(|i| started(&format!("r{i}"), "p"))
            .collect();
        let model = RunModel::replay(&events);
        assert_eq!(model.turns().len(), crate::run_model::turns::MAX_TURNS);
        assert_eq!(model.turns().iter().next().unwrap().request_id, "r3");
    }
}

fn todo_result(id: &str, status: ToolStatus, todos: serde_json::Value) -> EventData {
    EventData::ToolResult {
        id: id.into(),
        name: "todo_write".into(),
        ok: status == ToolStatus::Ok,
        status: Some(status),
        denied_by: None,
        result: Some(json!({ "todos": todos })),
        error: None,
        duration_ms: 1,
    }
}

#[test]
fn the_checklist_is_the_latest_top_level_todo_write_and_outlives_runs() {
    let mut model = RunModel::new();
    model.apply(&ev("r1", started(5)));
    model.apply(&ev("r1", call("a", None)));
    let list = json!([
        {"content": "Read", "status": "completed"},
        {"content": "Fix", "status": "in_progress", "activeForm": "Fixing"},
    ]);
    model.apply(&ev("r1", todo_result("a", ToolStatus::Ok, list)));
    assert_eq!(model.todos().headline(), "1/2 done · Fixing");
    // A sub-agent's list is its own; a failed write changes nothing.
    model.apply(&ev("r1", call("sub", None)));
    model.apply(&ev("r1", call("b", Some("sub"))));
    let other = json!([{"content": "Other", "status": "pending"}]);
    model.apply(&ev("r1", todo_result("b", ToolStatus::Ok, other.clone())));
    model.apply(&ev("r1", call("c", None)));
    model.apply(&ev("r1", todo_result("c", ToolStatus::Failed, other)));
    assert_eq!(model.todos().items.len(), 2);
    // The next run keeps it (and replaying the stream gives the same list).
    model.apply(&ev(
        "r1",
        EventData::Final {
            content: "ok".into(),
            turns: 1,
            usage: Usage::default(),
        },
    ));
    model.apply(&ev("r2", started(5)));
    assert_eq!(model.todos().headline(), "1/2 done · Fixing");
    model.cleared();
    assert!(model.todos().is_empty());
}

#[test]
fn of_two_writes_in_one_batch_the_one_made_last_wins_whichever_ends_last() {
    let mut model = RunModel::new();
    model.apply(&ev("r1", started(5)));
    let todo_call = |id: &str| EventData::ToolCall {
        turn: 1,
        id: id.into(),
        name: "todo_write".into(),
        arguments: json!({}),
        parent: None,
        sandbox: None,
    };
    model.apply(&ev("r1", todo_call("a")));
    model.apply(&ev("r1", todo_call("b")));
    let list = |text: &str| json!([{"content": text, "status": "pending"}]);
    model.apply(&ev("r1", todo_result("b", ToolStatus::Ok, list("second"))));
    model.apply(&ev("r1", todo_result("a", ToolStatus::Ok, list("first"))));
    assert_eq!(model.todos().items[0].content, "second");
    // The next run's write replaces it (its call ids may repeat the last run's).
    model.apply(&ev("r2", started(5)));
    model.apply(&ev("r2", todo_call("a")));
    model.apply(&ev("r2", todo_result("a", ToolStatus::Ok, list("third"))));
    assert_eq!(model.todos().items[0].content, "third");
}
