//! The tool stack (DESIGN §5, spec/004): sub-agents, tools that need other tools, parameter
//! collection, the depth limit, cancellation in nested work and usage instructions.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use taco::conversation::{Message, Role};
use taco::event::{
    DeniedBy, Event, EventData, FrameState, InputKind, InputRequest, Purpose, Scope, ToolStatus,
};
use taco::orchestrator::approval::{ApprovalAnswer, ApprovalRequest, Approver, FixedApprover};
use taco::orchestrator::{Orchestrator, Outcome, Settings};
use taco::tools::{NeededCall, Tool, ToolContext, ToolError, ToolRegistry, ToolReply};
use tokio_util::sync::CancellationToken;

use crate::support;
use support::scripted::*;

/// Answers questions from a list, approves or denies everything, and records what it saw.
struct User {
    answers: VecDeque<Option<String>>,
    approve: bool,
    asked: Vec<InputRequest>,
}

impl User {
    fn new(approve: bool, answers: &[Option<&str>]) -> Self {
        Self {
            answers: answers.iter().map(|a| a.map(String::from)).collect(),
            approve,
            asked: Vec::new(),
        }
    }
}

impl Approver for User {
    fn decide<'a>(
        &'a mut self,
        batch: &'a [ApprovalRequest],
    ) -> BoxFuture<'a, Vec<ApprovalAnswer>> {
        let answer = if self.approve {
            ApprovalAnswer::approve(Scope::Once)
        } else {
            ApprovalAnswer::deny(None)
        };
        let answers = vec![answer; batch.len()];
        async move { answers }.boxed()
    }

    fn can_ask(&self) -> bool {
        true
    }

    fn ask<'a>(&'a mut self, request: &'a InputRequest) -> BoxFuture<'a, Option<String>> {
        self.asked.push(request.clone());
        let answer = self.answers.pop_front().flatten();
        async move { answer }.boxed()
    }
}

/// A spec/004 `create_code`: asks for `save` to run first, then reports what was saved.
struct CreateCode;

impl Tool for CreateCode {
    fn name(&self) -> &str {
        "create_code"
    }
    fn description(&self) -> &str {
        "Writes code, then saves it."
    }
    fn parameters(&self) -> Value {
        json!({"type": "object", "properties": {"file": {"type": "string"}}, "required": ["file"]})
    }
    fn validate(&self, arguments: &Value) -> Result<(), String> {
        arguments
            .get("file")
            .and_then(Value::as_str)
            .map(drop)
            .ok_or_else(|| "missing field `file`".to_string())
    }
    fn call<'a>(
        &'a self,
        arguments: Value,
        _ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<ToolReply, ToolError>> {
        let file = arguments["file"].as_str().unwrap_or_default().to_string();
        async move {
            Ok(ToolReply::NeedsFirst {
                calls: vec![NeededCall {
                    name: "save".into(),
                    arguments: json!({"path": file, "text": "print('hi')"}),
                }],
                then: json!({"file": file}),
            })
        }
        .boxed()
    }
    fn resume<'a>(
        &'a self,
        then: Value,
        results: Vec<Result<Value, String>>,
        _ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<ToolReply, ToolError>> {
        async move {
            Ok(ToolReply::Done(
                json!({"created": then["file"], "saved": results[0].clone().ok()}),
            ))
        }
        .boxed()
    }
}

/// Needs itself once per level until `n` is 0: a nested chain `n` deep.
struct Deep;

impl Tool for Deep {
    fn name(&self) -> &str {
        "deep"
    }
    fn description(&self) -> &str {
        "Recurses."
    }
    fn parameters(&self) -> Value {
        json!({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]})
    }
    fn validate(&self, arguments: &Value) -> Result<(), String> {
        arguments
            .get("n")
            .and_then(Value::as_u64)
            .map(drop)
            .ok_or_else(|| "missing field `n`".to_string())
    }
    fn call<'a>(
        &'a self,
        arguments: Value,
        _ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<ToolReply, ToolError>> {
        let n = arguments["n"].as_u64().unwrap_or(0);
        async move {
            Ok(if n == 0 {
                ToolReply::Done(json!({"bottom": true}))
            } else {
                ToolReply::NeedsFirst {
                    calls: vec![NeededCall {
                        name: "deep".into(),
                        arguments: json!({"n": n - 1}),
                    }],
                    then: json!(n),
                }
            })
        }
        .boxed()
    }
    fn resume<'a>(
        &'a self,
        then: Value,
        _results: Vec<Result<Value, String>>,
        _ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<ToolReply, ToolError>> {
        async move { Ok(ToolReply::Done(json!({"level": then}))) }.boxed()
    }
}

/// `save`: a write that asks for approval.
struct Save;

impl Tool for Save {
    fn name(&self) -> &str {
        "save"
    }
    fn description(&self) -> &str {
        "Saves text to a path."
    }
    fn parameters(&self) -> Value {
        json!({"type": "object", "properties": {"path": {"type": "string"}, "text": {"type": "string"}}, "required": ["path", "text"]})
    }
    fn validate(&self, arguments: &Value) -> Result<(), String> {
        arguments
            .get("path")
            .and_then(Value::as_str)
            .map(drop)
            .ok_or_else(|| "missing field `path`".to_string())
    }
    fn default_policy(
        &self,
        _arguments: &Value,
        _settings: &taco::tools::ToolSettings,
    ) -> taco::tools::Policy {
        taco::tools::Policy::Ask
    }
    fn call<'a>(
        &'a self,
        arguments: Value,
        _ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<ToolReply, ToolError>> {
        async move { Ok(ToolReply::Done(json!({"saved": arguments["path"]}))) }.boxed()
    }
}

fn stack_registry() -> ToolRegistry {
    let (mut r, _) = registry();
    r.register(Arc::new(CreateCode));
    r.register(Arc::new(Deep));
    r.register(Arc::new(Save));
    r.register(Arc::new(taco::tools::builtin::Delegate));
    r
}

async fn run(
    replies: Vec<Reply>,
    settings: Settings,
    user: &mut dyn Approver,
) -> (Outcome, Vec<Event>, Vec<Sent>, Orchestrator) {
    let provider = Scripted::new(replies);
    let mut orch = Orchestrator::new(provider.clone(), Arc::new(stack_registry()), settings);
    let mut events = Vec::new();
    let outcome = orch
        .run("build it", &mut events, user, &CancellationToken::new())
        .await;
    (outcome, events, provider.sent(), orch)
}

/// `(kind, id, parent, state)` of every stack event, in order.
fn stack_events(events: &[Event]) -> Vec<(&'static str, String, Option<String>, FrameState)> {
    events
        .iter()
        .filter_map(|e| match &e.data {
            EventData::StackPush(f) => Some(("push", f.id.clone(), f.parent.clone(), f.state)),
            EventData::StackPop(f) => Some(("pop", f.id.clone(), f.parent.clone(), f.state)),
            _ => None,
        })
        .collect()
}

fn pushed_and_popped_in_balance(events: &[Event]) {
    let mut live: Vec<String> = Vec::new();
    for (kind, id, _, _) in stack_events(events) {
        match kind {
            "push" if !live.contains(&id) => live.push(id),
            "push" => {}
            _ => {
                assert!(live.contains(&id), "{id} popped without a push");
                live.retain(|l| *l != id);
            }
        }
    }
    assert!(live.is_empty(), "left on the stack: {live:?}");
}

#[tokio::test]
async fn a_sub_agent_nests_under_its_delegate_frame_and_answers_the_parent() {
    let replies = vec![
        Ok(calls(&[(
            "d1",
            "delegate",
            json!({"task": "echo hi for me", "tools": ["echo"]}),
        )])),
        Ok(calls(&[("c1", "echo", json!({"text": "hi"}))])),
        Ok(text("the sub-agent says hi")),
        Ok(text("all done")),
    ];
    let (outcome, events, sent, orch) =
        run(replies, settings(10), &mut FixedApprover::none()).await;
    assert_eq!(
        outcome,
        Outcome::Final {
            content: "all done".into(),
            error: None
        }
    );

    // The sub-agent's requests: its own prompt with the tool context, the task, one tool.
    let sub = &sent[1];
    let system = sub.messages[0].content.as_deref().unwrap();
    assert!(system.contains("sub-agent"), "{system}");
    assert!(
        system.contains("Active tool: delegate")
            && system.contains("Original request: \"build it\""),
        "{system}"
    );
    assert_eq!(sub.messages[1], Message::user("echo hi for me"));
    assert_eq!(
        sub.tools
            .iter()
            .map(|t| t.name.as_str())
            .collect::<Vec<_>>(),
        ["echo"]
    );
    assert_eq!(
        sent[2].messages[3],
        Message::tool("c1", "echo", json!({"echo": "hi"}).to_string())
    );

    // Its events carry the delegate frame as parent.
    let parents: Vec<(String, Option<String>)> = events
        .iter()
        .filter_map(|e| match &e.data {
            EventData::ToolCall { id, parent, .. } => Some((id.clone(), parent.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(
        parents,
        [
            ("d1".to_string(), None),
            ("d1/c1".to_string(), Some("d1".to_string()))
        ]
    );
    let llm_parents: Vec<Option<String>> = events
        .iter()
        .filter_map(|e| match &e.data {
            EventData::LlmCall(c) => Some(c.parent.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(
        llm_parents,
        [None, Some("d1".into()), Some("d1".into()), None]
    );
    // Every model call has its span, the sub-agent's nested under its frame.
    let d1 = || Some("d1".to_string());
    assert_eq!(
        spans(&events),
        [
            (1, Purpose::Conversation, None, "llm_call"),
            (2, Purpose::SubAgent, d1(), "llm_call"),
            (3, Purpose::SubAgent, d1(), "llm_call"),
            (4, Purpose::Conversation, None, "llm_call"),
        ]
    );
    assert!(
        !events.iter().any(
            |e| matches!(&e.data, EventData::Delta { text, .. } if text.contains("sub-agent"))
        ),
        "sub-agents do not stream into the chat"
    );
    // Only the top level ends the run.
    assert_eq!(events.iter().filter(|e| e.kind() == "final").count(), 1);

    // The stack nests and unwinds: the echo frame under the delegate frame, popped first.
    let stack = stack_events(&events);
    assert_eq!(
        stack,
        [
            ("push", "d1".into(), None, FrameState::Running),
            (
                "push",
                "d1/c1".into(),
                Some("d1".into()),
                FrameState::Running
            ),
            ("pop", "d1/c1".into(), Some("d1".into()), FrameState::Done),
            ("pop", "d1".into(), None, FrameState::Done),
        ]
    );
    // The parent's conversation gets the sub-agent's answer.
    let result = tool_messages(orch.messages());
    assert_eq!(result[0].0, "d1");
    assert_eq!(result[0].1["answer"], "the sub-agent says hi");
}

#[tokio::test]
async fn a_tool_that_needs_another_runs_it_above_itself_then_finishes() {
    let replies = vec![
        Ok(calls(&[("x", "create_code", json!({"file": "hello.py"}))])),
        Ok(text("created")),
    ];
    let mut user = User::new(true, &[]);
    let (_, events, _, orch) = run(replies, settings(10), &mut user).await;
    let result = &tool_messages(orch.messages())[0].1;
    assert_eq!(result["created"], "hello.py");
    assert_eq!(result["saved"], json!({"saved": "hello.py"}));
    let needed = events
        .iter()
        .find_map(|e| match &e.data {
            EventData::ToolCall {
                name, id, parent, ..
            } if name == "save" => Some((id.clone(), parent.clone())),
            _ => None,
        })
        .unwrap();
    assert!(needed.0.starts_with("x/"), "{needed:?}");
    assert_eq!(needed.1.as_deref(), Some("x"));
    assert!(
        events.iter().any(
            |e| matches!(&e.data, EventData::ApprovalRequested { name, .. } if name == "save")
        ),
        "needed calls are approved too"
    );
    let stack = stack_events(&events);
    let order: Vec<(&str, &str)> = stack
        .iter()
        .map(|(k, id, _, _)| (*k, if id == "x" { "x" } else { "save" }))
        .collect();
    assert_eq!(
        order,
        [
            ("push", "x"),
            ("push", "save"),
            ("push", "save"),
            ("pop", "save"),
            ("pop", "x")
        ]
    );
    pushed_and_popped_in_balance(&events);
}

#[tokio::test]
async fn a_failing_needed_call_fails_the_workflow_and_the_conversation_goes_on() {
    let replies = vec![
        Ok(calls(&[("x", "create_code", json!({"file": "a.py"}))])),
        Ok(text("it did not work")),
    ];
    let mut user = User::new(false, &[]);
    let (outcome, events, sent, _) = run(replies, settings(10), &mut user).await;
    assert_eq!(
        outcome,
        Outcome::Final {
            content: "it did not work".into(),
            error: None
        }
    );
    let error = tool_messages(&sent[1].messages)[0].1["error"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        error.contains("needed call 'save' failed") && error.contains("denied"),
        "{error}"
    );
    assert!(events.iter().any(|e| matches!(&e.data, EventData::StackPop(f) if f.id == "x" && f.state == FrameState::Failed)));
    pushed_and_popped_in_balance(&events);
}

#[tokio::test]
async fn missing_parameters_are_collected_one_at_a_time() {
    let replies = vec![Ok(calls(&[("e", "echo", json!({}))])), Ok(text("echoed"))];
    let mut user = User::new(true, &[Some("collected text")]);
    let (_, events, sent, _) = run(replies, settings(10), &mut user).await;
    assert_eq!(
        tool_messages(&sent[1].messages)[0].1,
        json!({"echo": "collected text"})
    );
    assert_eq!(user.asked.len(), 1);
    let asked = &user.asked[0];
    assert_eq!(
        (
            asked.kind,
            asked.parameter.as_deref(),
            asked.value_type.as_deref()
        ),
        (InputKind::Parameter, Some("text"), Some("string"))
    );
    assert_eq!(asked.description.as_deref(), Some("Text to echo."));
    assert_eq!(asked.frame, "e/collect_tool_parameters");
    let stack = stack_events(&events);
    assert_eq!(
        stack[0],
        ("push", "e".into(), None, FrameState::AwaitingInput)
    );
    assert_eq!(
        stack[1],
        (
            "push",
            "e/collect_tool_parameters".into(),
            Some("e".into()),
            FrameState::AwaitingInput
        )
    );
    assert_eq!(
        stack[2],
        (
            "pop",
            "e/collect_tool_parameters".into(),
            Some("e".into()),
            FrameState::Done
        )
    );
    assert!(events.iter().any(|e| matches!(&e.data, EventData::InputAnswered { value: Some(v), .. } if v == "collected text")));
    pushed_and_popped_in_balance(&events);
}

#[tokio::test]
async fn abandoning_parameter_collection_clears_the_stack_and_tells_the_model() {
    let replies = vec![
        Ok(calls(&[
            ("e", "echo", json!({})),
            ("g", "guarded", json!({})),
        ])),
        Ok(text("ok, stopped")),
    ];
    let mut user = User::new(true, &[None]);
    let (outcome, events, sent, _) = run(replies, settings(10), &mut user).await;
    assert_eq!(
        outcome,
        Outcome::Final {
            content: "ok, stopped".into(),
            error: None
        }
    );
    let results = tool_messages(&sent[1].messages);
    let first = results[0].1["error"].as_str().unwrap();
    assert!(
        first.contains("abandoned") && first.contains("'text'"),
        "{first}"
    );
    assert!(
        results[1].1["error"]
            .as_str()
            .unwrap()
            .contains("abandoned"),
        "the rest of the workflow is abandoned too"
    );
    assert!(
        !events.iter().any(|e| e.kind() == "approval_requested"),
        "nothing else ran or asked"
    );
    let status: Vec<ToolStatus> = statuses(&events).into_iter().map(|s| s.1).collect();
    assert_eq!(status, [ToolStatus::Abandoned, ToolStatus::Abandoned]);
    pushed_and_popped_in_balance(&events);
}

#[tokio::test]
async fn headless_a_missing_parameter_is_an_error_naming_it() {
    let replies = vec![Ok(calls(&[("e", "echo", json!({}))])), Ok(text("ok"))];
    let (_, events, sent, _) = run(replies, settings(10), &mut FixedApprover::all()).await;
    let error = tool_messages(&sent[1].messages)[0].1["error"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(error.contains("missing field `text`"), "{error}");
    assert!(!events.iter().any(|e| e.kind() == "input_requested"));
}

#[tokio::test]
async fn the_depth_limit_asks_and_continues() {
    let limited = Settings {
        depth_limit: 2,
        ..settings(10)
    };
    let replies = vec![
        Ok(calls(&[("top", "deep", json!({"n": 4}))])),
        Ok(text("deep enough")),
    ];
    let mut user = User::new(true, &[Some("y")]);
    let (_, events, sent, _) = run(replies, limited, &mut user).await;
    assert_eq!(tool_messages(&sent[1].messages)[0].1, json!({"level": 4}));
    assert_eq!(user.asked.len(), 1, "asked once, then 20 more levels");
    assert_eq!(
        (user.asked[0].kind, user.asked[0].depth),
        (InputKind::DepthLimit, Some(3))
    );
    let depth_max = events
        .iter()
        .filter_map(|e| match &e.data {
            EventData::ToolCall { id, .. } => Some(id.matches('/').count() + 1),
            _ => None,
        })
        .max();
    assert_eq!(depth_max, Some(5));
    pushed_and_popped_in_balance(&events);
}

#[tokio::test]
async fn the_depth_limit_stops_nested_work_when_declined_or_headless() {
    for user in [
        &mut User::new(true, &[None]) as &mut dyn Approver,
        &mut FixedApprover::all(),
    ] {
        let limited = Settings {
            depth_limit: 2,
            ..settings(10)
        };
        let replies = vec![
            Ok(calls(&[("top", "deep", json!({"n": 4}))])),
            Ok(text("stopped")),
        ];
        let (outcome, events, sent, _) = run(replies, limited, user).await;
        assert_eq!(
            outcome,
            Outcome::Final {
                content: "stopped".into(),
                error: None
            }
        );
        let error = tool_messages(&sent[1].messages)[0].1["error"]
            .as_str()
            .unwrap()
            .to_string();
        assert!(error.contains("depth limit (2)"), "{error}");
        let status = statuses(&events);
        assert_eq!(
            (status[0].1, status[0].2),
            (ToolStatus::Denied, Some(DeniedBy::Limit)),
            "the innermost call is refused by the limit: {status:?}"
        );
        assert_eq!(
            status.last().map(|s| (s.0.as_str(), s.1)),
            Some(("top", ToolStatus::Failed)),
            "the calls that needed it fail"
        );
        pushed_and_popped_in_balance(&events);
    }
}

#[tokio::test]
async fn cancel_in_the_middle_of_a_nested_run_leaves_every_call_with_a_result() {
    let provider = Scripted::new(vec![
        Ok(calls(&[
            ("d1", "delegate", json!({"task": "wait"})),
            ("q", "echo", json!({"text": "quick"})),
        ])),
        Ok(calls(&[(
            "s1",
            "echo",
            json!({"text": "slow", "sleep_ms": 20_000}),
        )])),
    ]);
    let mut orch = Orchestrator::new(provider.clone(), Arc::new(stack_registry()), settings(10));
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        trigger.cancel();
    });
    let mut events = Vec::new();
    let outcome = tokio::time::timeout(
        Duration::from_secs(20),
        orch.run("go", &mut events, &mut FixedApprover::all(), &cancel),
    )
    .await
    .expect("cancel stops nested work promptly");
    assert_eq!(outcome, Outcome::Cancelled);
    let results = tool_messages(orch.messages());
    assert_eq!(
        results
            .iter()
            .map(|(id, _)| id.as_str())
            .collect::<Vec<_>>(),
        ["d1", "q"]
    );
    assert_eq!(results[0].1, json!({"error": "cancelled by the user"}));
    assert_eq!(results[1].1, json!({"echo": "quick"}));
    // Every call the sub-agent made got a result too, and nothing stays on the stack.
    let called: Vec<String> = events
        .iter()
        .filter_map(|e| match &e.data {
            EventData::ToolCall { id, .. } => Some(id.clone()),
            _ => None,
        })
        .collect();
    let answered: Vec<String> = events
        .iter()
        .filter_map(|e| match &e.data {
            EventData::ToolResult { id, .. } => Some(id.clone()),
            _ => None,
        })
        .collect();
    for id in &called {
        assert!(answered.contains(id), "{id} has no result");
    }
    assert!(called.contains(&"d1/s1".to_string()));
    pushed_and_popped_in_balance(&events);
    assert_eq!(events.last().unwrap().kind(), "cancelled");
}

#[tokio::test]
async fn usage_instructions_reach_the_model_the_first_time_a_tool_is_used() {
    let replies = vec![
        Ok(calls(&[(
            "d1",
            "delegate",
            json!({"task": "t", "tools": []}),
        )])),
        Ok(text("sub answer")),
        Ok(calls(&[(
            "d2",
            "delegate",
            json!({"task": "t2", "tools": []}),
        )])),
        Ok(text("sub answer 2")),
        Ok(text("done")),
    ];
    let (_, _, sent, orch) = run(replies, settings(10), &mut FixedApprover::none()).await;
    let instructions: Vec<&Message> = orch
        .messages()
        .iter()
        .filter(|m| {
            m.role == Role::System
                && m.content
                    .as_deref()
                    .is_some_and(|c| c.contains("How to use `delegate`"))
        })
        .collect();
    assert_eq!(instructions.len(), 1, "once per conversation");
    let third_top_request = &sent[2].messages;
    assert!(third_top_request.iter().any(|m| {
        m.content
            .as_deref()
            .is_some_and(|c| c.contains("How to use `delegate`"))
    }));
}
