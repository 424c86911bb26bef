//! Orchestrator scenarios against a scripted provider and real tools (DESIGN §4).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed unwrap is a failed test

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use serde_json::json;
use taco::clock::ManualClock;
use taco::conversation::{Message, Role};
use taco::event::{Decision, DeniedBy, EventData, FrameState, Scope, ToolStatus};
use taco::orchestrator::approval::{ApprovalAnswer, ApprovalRequest, Approver, FixedApprover};
use taco::orchestrator::retry::RetryPolicy;
use taco::orchestrator::task::{self, Op};
use taco::orchestrator::{MAX_TURNS_PROMPT, Orchestrator, Outcome, Settings};
use taco::provider::{Chunk, ProviderError, ToolCallDelta};
use taco::tools::{Policy, ToolContext, ToolError, ToolRegistry, ToolSettings, TypedTool};
use tokio_util::sync::CancellationToken;

use crate::support;
use support::scripted::*;

#[tokio::test]
async fn no_tools_answers_directly() {
    let (r, _) = registry();
    let (outcome, events, sent, orch) =
        run_with(vec![Ok(text("hello"))], r, 10, &mut FixedApprover::none()).await;
    assert_eq!(
        outcome,
        Outcome::Final {
            content: "hello".into(),
            error: None
        }
    );
    assert_eq!(
        kinds(&events),
        ["run_started", "llm_started", "llm_call", "final"]
    );
    assert_eq!(sent.len(), 1);
    assert_eq!(
        sent[0].messages,
        vec![Message::system("SYSTEM"), Message::user("do it")]
    );
    assert_eq!(sent[0].tools.len(), 4);
    let EventData::LlmCall(call) = &events[events.len() - 2].data else {
        panic!()
    };
    assert_eq!(
        (call.turn, call.usage.input_tokens, call.content.as_str()),
        (1, 10, "hello")
    );
    assert!(call.ttft_ms.is_some());
    assert!(events.iter().all(|e| e.request_id == events[0].request_id));
    assert_eq!(
        orch.messages().last().unwrap().content.as_deref(),
        Some("hello")
    );
}

#[tokio::test]
async fn one_tool_call_then_answer_sends_exact_messages() {
    let (r, _) = registry();
    let replies = vec![
        Ok(calls(&[("c1", "echo", json!({"text": "hi"}))])),
        Ok(text("done")),
    ];
    let (outcome, events, sent, _) = run_with(replies, r, 10, &mut FixedApprover::none()).await;
    assert_eq!(
        outcome,
        Outcome::Final {
            content: "done".into(),
            error: None
        }
    );
    assert_eq!(
        kinds(&events),
        [
            "run_started",
            "llm_started",
            "llm_call",
            "tool_call",
            "stack_push",
            "tool_result",
            "stack_pop",
            "llm_started",
            "llm_call",
            "final"
        ]
    );
    let second = &sent[1].messages;
    assert_eq!(second.len(), 4);
    assert_eq!(second[2].role, Role::Assistant);
    assert_eq!(second[2].content, None);
    assert_eq!(second[2].tool_calls[0].id, "c1");
    assert_eq!(second[2].tool_calls[0].arguments, json!({"text": "hi"}));
    assert_eq!(
        second[3],
        Message::tool("c1", "echo", json!({"echo": "hi"}).to_string())
    );
    let EventData::Final { turns, usage, .. } = &events.last().unwrap().data else {
        panic!()
    };
    assert_eq!((*turns, usage.input_tokens), (2, 10));
}

#[tokio::test]
async fn parallel_calls_run_together_and_results_keep_call_order() {
    let (r, fixture) = registry();
    let replies = vec![
        Ok(calls(&[
            ("a", "echo", json!({"text": "slow", "sleep_ms": 300})),
            ("b", "echo", json!({"text": "fast", "sleep_ms": 10})),
        ])),
        Ok(text("ok")),
    ];
    let (_, events, sent, _) = run_with(replies, r, 10, &mut FixedApprover::none()).await;
    assert_eq!(
        fixture.peak.load(Ordering::SeqCst),
        2,
        "both calls ran at the same time"
    );
    let results = tool_messages(&sent[1].messages);
    assert_eq!(
        results,
        vec![
            ("a".into(), json!({"echo": "slow"})),
            ("b".into(), json!({"echo": "fast"}))
        ]
    );
    // Live events report the fast call first.
    let finished: Vec<&str> = events
        .iter()
        .filter_map(|e| match &e.data {
            EventData::ToolResult { id, .. } => Some(id.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(finished, ["b", "a"]);
}

#[tokio::test]
async fn unknown_failing_and_crashing_tools_become_error_results() {
    let (r, _) = registry();
    let replies = vec![
        Ok(calls(&[
            ("u", "nope", json!({})),
            ("f", "fail", json!({})),
            ("p", "crash", json!({})),
        ])),
        Ok(text("recovered")),
    ];
    let (outcome, events, sent, _) = run_with(replies, r, 10, &mut FixedApprover::none()).await;
    assert_eq!(
        outcome,
        Outcome::Final {
            content: "recovered".into(),
            error: None
        }
    );
    assert_eq!(
        statuses(&events),
        [
            ("u".into(), ToolStatus::Unknown, None),
            ("f".into(), ToolStatus::Failed, None),
            ("p".into(), ToolStatus::Failed, None),
        ]
    );
    let results = tool_messages(&sent[1].messages);
    let errors: Vec<&str> = results
        .iter()
        .map(|(_, v)| v["error"].as_str().unwrap())
        .collect();
    assert!(
        errors[0].contains("unknown tool 'nope'") && errors[0].contains("echo"),
        "{}",
        errors[0]
    );
    assert_eq!(errors[1], "disk on fire");
    assert!(
        errors[2].contains("crashed") && errors[2].contains("boom"),
        "{}",
        errors[2]
    );
}

#[tokio::test]
async fn invalid_arguments_get_guidance_once_then_fail() {
    let (r, _) = registry();
    let replies = vec![
        Ok(calls(&[("1", "echo", json!({"txt": "x"}))])),
        Ok(calls(&[("2", "echo", json!({"text": "x"}))])),
        Ok(calls(&[("3", "echo", json!({"text": 5}))])),
        Ok(calls(&[("4", "echo", json!("{not json"))])),
        Ok(text("end")),
    ];
    let (_, events, sent, _) = run_with(replies, r, 10, &mut FixedApprover::none()).await;
    let status: Vec<ToolStatus> = statuses(&events).into_iter().map(|s| s.1).collect();
    assert_eq!(
        status,
        [
            ToolStatus::Invalid,
            ToolStatus::Ok,
            ToolStatus::Invalid,
            ToolStatus::Invalid
        ]
    );
    let results = tool_messages(&sent[4].messages);
    let first = results[0].1["error"].as_str().unwrap();
    assert!(
        first.contains("missing field `text`")
            && first.contains("JSON Schema")
            && first.contains("\"properties\""),
        "{first}"
    );
    assert_eq!(results[1].1, json!({"echo": "x"}));
    let second = results[2].1["error"].as_str().unwrap();
    assert!(
        second.contains("again") && !second.contains("JSON Schema"),
        "{second}"
    );
    let third = results[3].1["error"].as_str().unwrap();
    assert!(third.contains("again"), "{third}");
}

#[tokio::test]
async fn unparseable_arguments_are_reported_with_what_was_sent() {
    let (r, _) = registry();
    let broken = vec![
        Chunk::ToolCall(ToolCallDelta {
            index: 0,
            id: Some("x".into()),
            name: Some("echo".into()),
            arguments: "{\"text\": ".into(),
        }),
        Chunk::Finish("tool_calls".into()),
    ];
    let (_, _, sent, _) = run_with(
        vec![Ok(broken), Ok(text("ok"))],
        r,
        10,
        &mut FixedApprover::none(),
    )
    .await;
    let results = tool_messages(&sent[1].messages);
    let error = results[0].1["error"].as_str().unwrap();
    assert!(
        error.contains("not valid JSON") && error.contains("{\\\"text\\\": "),
        "{error}"
    );
}

#[tokio::test]
async fn max_turns_injects_the_prompt_and_makes_one_call_without_tools() {
    let (r, _) = registry();
    let replies = vec![
        Ok(calls(&[("1", "echo", json!({"text": "a"}))])),
        Ok(calls(&[("2", "echo", json!({"text": "b"}))])),
        Ok(text("summary")),
    ];
    let (outcome, events, sent, _) = run_with(replies, r, 2, &mut FixedApprover::none()).await;
    assert_eq!(
        outcome,
        Outcome::Final {
            content: "summary".into(),
            error: None
        }
    );
    let k = kinds(&events);
    let reached = k.iter().position(|k| *k == "max_turns_reached").unwrap();
    assert_eq!(
        &k[reached..],
        [
            "max_turns_reached",
            "max_turns_prompt_injected",
            "llm_started",
            "llm_call",
            "final"
        ]
    );
    assert_eq!(sent.len(), 3);
    assert!(sent[2].tools.is_empty(), "the final call offers no tools");
    assert_eq!(
        sent[2].messages.last().unwrap(),
        &Message::system(MAX_TURNS_PROMPT)
    );
    assert_eq!(
        MAX_TURNS_PROMPT,
        "You have reached the maximum number of turns. Please provide an answer based on the information you have gathered so far."
    );
    let EventData::Final { turns, .. } = &events.last().unwrap().data else {
        panic!()
    };
    assert_eq!(*turns, 2);
    let EventData::MaxTurnsReached { turns } = &events
        .iter()
        .find(|e| e.kind() == "max_turns_reached")
        .unwrap()
        .data
    else {
        panic!()
    };
    assert_eq!(*turns, 2);
}

#[tokio::test]
async fn max_turns_final_call_failing_still_gives_final_with_what_was_gathered() {
    let (r, _) = registry();
    let mut first = vec![Chunk::Text("I found a clue.".into())];
    first.extend(calls(&[("1", "echo", json!({"text": "a"}))]));
    let replies = vec![
        Ok(first),
        Err(ProviderError::Http {
            status: 500,
            message: "upstream broke".into(),
            retryable: true,
            retry_after: None,
        }),
    ];
    let (outcome, events, _, _) = run_with(replies, r, 1, &mut FixedApprover::none()).await;
    let Outcome::Final { content, error } = outcome else {
        panic!("{outcome:?}")
    };
    assert_eq!(content, "I found a clue.");
    assert!(error.unwrap().contains("upstream broke"));
    let k = kinds(&events);
    assert_eq!(
        &k[k.len() - 4..],
        ["llm_started", "llm_failed", "error", "final"]
    );
}

#[tokio::test]
async fn null_content_is_an_empty_answer_and_empty_registry_offers_no_tools() {
    let (outcome, events, sent, _) = run_with(
        vec![Ok(vec![Chunk::Finish("stop".into())])],
        ToolRegistry::new(),
        10,
        &mut FixedApprover::none(),
    )
    .await;
    assert_eq!(
        outcome,
        Outcome::Final {
            content: String::new(),
            error: None
        }
    );
    assert!(sent[0].tools.is_empty());
    assert_eq!(
        kinds(&events),
        ["run_started", "llm_started", "llm_call", "final"]
    );
}

#[tokio::test]
async fn provider_error_is_an_error_event_and_a_failed_run() {
    let (r, _) = registry();
    let replies = vec![Err(ProviderError::Connect {
        url: "http://127.0.0.1:9/v1/chat/completions".into(),
        reason: "connection refused".into(),
    })];
    let (outcome, events, _, _) = run_with(replies, r, 10, &mut FixedApprover::none()).await;
    let Outcome::Failed(message) = outcome else {
        panic!()
    };
    assert!(
        message.contains("http://127.0.0.1:9/v1/chat/completions"),
        "{message}"
    );
    let EventData::Error { kind, .. } = &events.last().unwrap().data else {
        panic!()
    };
    assert_eq!(kind, "connect");
}

#[tokio::test]
async fn ask_policy_denied_in_exec_tells_the_model_why() {
    let (r, _) = registry();
    let replies = vec![Ok(calls(&[("g", "guarded", json!({}))])), Ok(text("fine"))];
    let (_, events, sent, _) = run_with(replies, r, 10, &mut FixedApprover::none()).await;
    let error = tool_messages(&sent[1].messages)[0].1["error"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        error.contains("denied") && error.contains("--approve all"),
        "{error}"
    );
    assert!(events.iter().any(|e| matches!(
        &e.data,
        EventData::ApprovalDecided {
            decision: Decision::Denied,
            ..
        }
    )));
    assert!(
        events
            .iter()
            .any(|e| matches!(&e.data, EventData::StackPop(f) if f.state == FrameState::Denied))
    );
    assert_eq!(
        statuses(&events),
        [("g".into(), ToolStatus::Denied, Some(DeniedBy::Headless))]
    );

    let (r, _) = registry();
    let replies = vec![Ok(calls(&[("g", "guarded", json!({}))])), Ok(text("fine"))];
    let (_, _, sent, _) = run_with(replies, r, 10, &mut FixedApprover::all()).await;
    assert_eq!(tool_messages(&sent[1].messages)[0].1, json!({"ran": true}));
}

/// Answers from a list and records every batch it was shown.
struct Recording {
    answers: VecDeque<ApprovalAnswer>,
    batches: Vec<Vec<ApprovalRequest>>,
}

impl Approver for Recording {
    fn decide<'a>(
        &'a mut self,
        batch: &'a [ApprovalRequest],
    ) -> BoxFuture<'a, Vec<ApprovalAnswer>> {
        self.batches.push(batch.to_vec());
        let answers = batch
            .iter()
            .map(|_| self.answers.pop_front().unwrap())
            .collect();
        async move { answers }.boxed()
    }
}

#[tokio::test]
async fn a_batch_is_decided_together_and_session_grants_stop_asking() {
    let (r, _) = registry();
    let replies = vec![
        Ok(calls(&[
            ("g1", "guarded", json!({})),
            ("e", "echo", json!({"text": "x"})),
            ("g2", "guarded", json!({})),
        ])),
        Ok(calls(&[("g3", "guarded", json!({}))])),
        Ok(text("ok")),
    ];
    let mut approver = Recording {
        answers: [
            ApprovalAnswer::approve(Scope::Session),
            ApprovalAnswer::deny(Some("not now".into())),
        ]
        .into(),
        batches: Vec::new(),
    };
    let (_, events, sent, orch) = run_with(replies, r, 10, &mut approver).await;
    assert_eq!(
        approver.batches.len(),
        1,
        "the granted tool is not asked about again"
    );
    assert_eq!(
        approver.batches[0]
            .iter()
            .map(|r| r.id.as_str())
            .collect::<Vec<_>>(),
        ["g1", "g2"]
    );
    let positions: Vec<(usize, usize)> = events
        .iter()
        .filter_map(|e| match &e.data {
            EventData::ApprovalRequested { position, of, .. } => Some((*position, *of)),
            _ => None,
        })
        .collect();
    assert_eq!(positions, [(1, 2), (2, 2)]);
    let results = tool_messages(&sent[1].messages);
    assert_eq!(results[0].1, json!({"ran": true}));
    assert_eq!(results[1].1, json!({"echo": "x"}));
    assert_eq!(
        results[2].1,
        json!({"error": "the call was denied: not now"})
    );
    assert_eq!(tool_messages(&sent[2].messages)[3].1, json!({"ran": true}));
    assert_eq!(
        orch.policies().session_grants().collect::<Vec<_>>(),
        ["guarded"]
    );
    let g2 = statuses(&events).into_iter().find(|s| s.0 == "g2").unwrap();
    assert_eq!((g2.1, g2.2), (ToolStatus::Denied, Some(DeniedBy::User)));
}

#[tokio::test]
async fn config_policy_overrides_the_tool_default() {
    let (r, _) = registry();
    let provider = Scripted::new(vec![
        Ok(calls(&[("e", "echo", json!({"text": "x"}))])),
        Ok(text("ok")),
    ]);
    let mut s = settings(10);
    s.policies.insert("echo".into(), Policy::Deny);
    let mut orch = Orchestrator::new(provider.clone(), Arc::new(r), s);
    let mut events = Vec::new();
    orch.run(
        "go",
        &mut events,
        &mut FixedApprover::all(),
        &CancellationToken::new(),
    )
    .await;
    assert_eq!(
        statuses(&events),
        [("e".into(), ToolStatus::Denied, Some(DeniedBy::Policy))]
    );
    let error = tool_messages(&provider.sent()[1].messages)[0].1["error"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        error.contains("policy") && error.contains("deny"),
        "{error}"
    );
}

#[tokio::test]
async fn cancel_during_a_tool_gives_every_call_a_result() {
    let (r, _) = registry();
    let provider = Scripted::new(vec![Ok(calls(&[
        ("slow", "echo", json!({"text": "x", "sleep_ms": 10_000})),
        ("quick", "echo", json!({"text": "y"})),
    ]))]);
    let mut orch = Orchestrator::new(provider, Arc::new(r), settings(10));
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        trigger.cancel();
    });
    let mut events = Vec::new();
    let outcome = orch
        .run("go", &mut events, &mut FixedApprover::none(), &cancel)
        .await;
    assert_eq!(outcome, Outcome::Cancelled);
    assert_eq!(events.last().unwrap().kind(), "cancelled");
    let results = tool_messages(orch.messages());
    assert_eq!(results.len(), 2);
    assert_eq!(results[0].1, json!({"error": "cancelled by the user"}));
    assert_eq!(results[1].1, json!({"echo": "y"}));
    let mut status = statuses(&events);
    status.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        status,
        [
            ("quick".into(), ToolStatus::Ok, None),
            ("slow".into(), ToolStatus::Cancelled, None)
        ]
    );
    assert!(events.iter().any(|e| matches!(&e.data, EventData::StackPop(f) if f.id == "slow" && f.state == FrameState::Cancelled)));
}

#[tokio::test]
async fn a_tool_that_outlives_its_timeout_is_stopped() {
    let (r, _) = registry();
    let provider = Scripted::new(vec![
        Ok(calls(&[(
            "s",
            "echo",
            json!({"text": "x", "sleep_ms": 10_000}),
        )])),
        Ok(text("ok")),
    ]);
    let mut s = settings(10);
    s.tools = Arc::new(ToolSettings {
        timeout: Duration::from_millis(100),
        ..ToolSettings::default()
    });
    let mut orch = Orchestrator::new(provider.clone(), Arc::new(r), s);
    let mut events = Vec::new();
    headless(&mut orch, "go", &mut events).await;
    let error = tool_messages(&provider.sent()[1].messages)[0].1["error"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(error.contains("timed out"), "{error}");
    assert_eq!(
        statuses(&events),
        [("s".into(), ToolStatus::TimedOut, None)]
    );
}

#[tokio::test]
async fn the_task_takes_ops_and_sends_events() {
    let (r, _) = registry();
    let provider = Scripted::new(vec![
        Ok(calls(&[("g", "guarded", json!({}))])),
        Ok(text("first")),
        Ok(text("second")),
    ]);
    let orch = Orchestrator::new(provider.clone(), Arc::new(r), settings(10));
    let mut t = task::spawn(orch);
    t.ops.send(Op::Submit("one".into())).unwrap();
    // Queued while the first request runs.
    t.ops.send(Op::Submit("two".into())).unwrap();
    let mut finals = Vec::new();
    while finals.len() < 2 {
        let event = tokio::time::timeout(Duration::from_secs(10), t.events.recv())
            .await
            .unwrap()
            .unwrap();
        match event.data {
            EventData::ApprovalRequested { id, .. } => {
                t.ops
                    .send(Op::Approve {
                        id,
                        answer: ApprovalAnswer::approve(Scope::Turn),
                    })
                    .unwrap();
            }
            EventData::Final { content, .. } => finals.push(content),
            _ => {}
        }
    }
    assert_eq!(finals, ["first", "second"]);
    t.ops.send(Op::Shutdown).unwrap();
    let orch = t.handle.unwrap().await.unwrap();
    let users: Vec<_> = orch
        .messages()
        .iter()
        .filter(|m| m.role == Role::User)
        .map(|m| m.content.clone().unwrap())
        .collect();
    assert_eq!(users, ["one", "two"]);
    assert_eq!(tool_messages(orch.messages())[0].1, json!({"ran": true}));
}

#[tokio::test]
async fn cancel_op_stops_a_run_waiting_for_approval() {
    let (r, _) = registry();
    let provider = Scripted::new(vec![Ok(calls(&[("g", "guarded", json!({}))]))]);
    let mut t = task::spawn(Orchestrator::new(provider, Arc::new(r), settings(10)));
    t.ops.send(Op::Submit("one".into())).unwrap();
    loop {
        let event = tokio::time::timeout(Duration::from_secs(10), t.events.recv())
            .await
            .unwrap()
            .unwrap();
        match event.data {
            EventData::ApprovalRequested { .. } => t.ops.send(Op::Cancel).unwrap(),
            EventData::Cancelled { .. } => break,
            _ => {}
        }
    }
    t.ops.send(Op::Shutdown).unwrap();
    let orch = t.handle.unwrap().await.unwrap();
    assert_eq!(
        tool_messages(orch.messages())[0].1,
        json!({"error": "cancelled by the user"})
    );
}

#[tokio::test]
async fn llm_call_events_carry_only_the_messages_added_since_the_last_one() {
    let (r, _) = registry();
    let replies = vec![
        Ok(calls(&[("c1", "echo", json!({"text": "hi"}))])),
        Ok(text("done")),
        Ok(text("again")),
    ];
    let provider = Scripted::new(replies);
    let mut orch = Orchestrator::new(provider.clone(), Arc::new(r), settings(10));
    let mut events = Vec::new();
    headless(&mut orch, "one", &mut events).await;
    headless(&mut orch, "two", &mut events).await;
    let calls: Vec<(usize, Vec<Role>)> = events
        .iter()
        .filter_map(|e| match &e.data {
            EventData::LlmCall(c) => Some((
                c.message_count,
                c.new_messages.iter().map(|m| m.role).collect(),
            )),
            _ => None,
        })
        .collect();
    assert_eq!(
        calls,
        vec![
            (2, vec![Role::System, Role::User]),
            (4, vec![Role::Assistant, Role::Tool]),
            (6, vec![Role::Assistant, Role::User]),
        ]
    );
    // Rebuilding from the events gives exactly what was sent.
    let mut rebuilt: Vec<Message> = Vec::new();
    for (event, sent) in events
        .iter()
        .filter_map(|e| match &e.data {
            EventData::LlmCall(c) => Some(c),
            _ => None,
        })
        .zip(provider.sent())
    {
        rebuilt.truncate(event.message_count - event.new_messages.len());
        rebuilt.extend(event.new_messages.iter().cloned());
        assert_eq!(rebuilt, sent.messages);
    }
    orch.clear();
    let provider_sent_before = provider.sent().len();
    headless(&mut orch, "three", &mut events).await;
    let EventData::LlmCall(last) = &events
        .iter()
        .rev()
        .find(|e| e.kind() == "llm_call")
        .unwrap()
        .data
    else {
        panic!()
    };
    assert_eq!(
        (last.message_count, last.new_messages.len()),
        (2, 2),
        "after /clear the conversation starts again"
    );
    assert_eq!(provider.sent().len(), provider_sent_before + 1);
}

fn retrying(max_attempts: u32, base: Duration) -> Settings {
    Settings {
        retry: RetryPolicy {
            max_attempts,
            base_delay: base,
            max_delay: base,
        },
        ..settings(10)
    }
}

fn server_error() -> ProviderError {
    ProviderError::Http {
        status: 503,
        message: "overloaded".into(),
        retryable: true,
        retry_after: None,
    }
}

#[tokio::test]
async fn retryable_failures_are_retried_and_partial_text_is_not_kept_twice() {
    let cut = ProviderError::Truncated {
        terminator: "[DONE]",
    };
    let provider = Scripted::with_cuts(vec![
        (Err(server_error()), None),
        (Ok(vec![Chunk::Text("Hello, wor".into())]), Some(cut)),
        (Ok(text("Hello, world!")), None),
    ]);
    let mut orch = Orchestrator::new(
        provider.clone(),
        Arc::new(ToolRegistry::new()),
        retrying(4, Duration::from_millis(5)),
    );
    let mut events = Vec::new();
    let outcome = headless(&mut orch, "hi", &mut events).await;
    assert_eq!(
        outcome,
        Outcome::Final {
            content: "Hello, world!".into(),
            error: None
        }
    );
    assert_eq!(provider.sent().len(), 3);
    let retries: Vec<(u32, u32)> = events
        .iter()
        .filter_map(|e| match &e.data {
            EventData::Retry {
                attempt,
                max,
                reason,
                ..
            } => {
                assert!(!reason.is_empty());
                Some((*attempt, *max))
            }
            _ => None,
        })
        .collect();
    assert_eq!(retries, [(2, 4), (3, 4)]);
    assert_eq!(
        kinds(&events),
        [
            "run_started",
            "llm_started",
            "retry",
            "retry",
            "llm_call",
            "final"
        ]
    );
    let answers: Vec<&str> = orch
        .messages()
        .iter()
        .filter(|m| m.role == Role::Assistant)
        .filter_map(|m| m.content.as_deref())
        .collect();
    assert_eq!(
        answers,
        ["Hello, world!"],
        "the cut attempt's text is not in the conversation"
    );
    // Every attempt sent the same conversation.
    assert!(provider.sent().iter().all(|s| s.messages.len() == 2));
}

#[tokio::test]
async fn final_errors_are_not_retried_and_attempts_run_out() {
    let bad_request = ProviderError::Http {
        status: 400,
        message: "bad".into(),
        retryable: false,
        retry_after: None,
    };
    let provider = Scripted::new(vec![Err(bad_request)]);
    let mut orch = Orchestrator::new(
        provider.clone(),
        Arc::new(ToolRegistry::new()),
        retrying(4, Duration::from_millis(1)),
    );
    let mut events = Vec::new();
    let outcome = headless(&mut orch, "hi", &mut events).await;
    assert!(matches!(outcome, Outcome::Failed(_)));
    assert_eq!(provider.sent().len(), 1);
    assert!(!events.iter().any(|e| e.kind() == "retry"));

    let provider = Scripted::new(vec![
        Err(server_error()),
        Err(server_error()),
        Err(server_error()),
    ]);
    let mut orch = Orchestrator::new(
        provider.clone(),
        Arc::new(ToolRegistry::new()),
        retrying(3, Duration::from_millis(1)),
    );
    let mut events = Vec::new();
    let outcome = headless(&mut orch, "hi", &mut events).await;
    let Outcome::Failed(message) = outcome else {
        panic!("{outcome:?}")
    };
    assert!(message.contains("overloaded"), "{message}");
    assert_eq!(provider.sent().len(), 3);
    assert_eq!(events.iter().filter(|e| e.kind() == "retry").count(), 2);
}

#[tokio::test]
async fn cancel_during_a_backoff_wait_stops_at_once() {
    let provider = Scripted::new(vec![Err(server_error())]);
    let mut orch = Orchestrator::new(
        provider.clone(),
        Arc::new(ToolRegistry::new()),
        retrying(4, Duration::from_secs(600)),
    );
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        trigger.cancel();
    });
    let mut events = Vec::new();
    let outcome = tokio::time::timeout(
        Duration::from_secs(20),
        orch.run("hi", &mut events, &mut FixedApprover::none(), &cancel),
    )
    .await
    .expect("the backoff wait was not cut short");
    assert_eq!(outcome, Outcome::Cancelled);
    assert_eq!(
        kinds(&events),
        [
            "run_started",
            "llm_started",
            "retry",
            "llm_failed",
            "cancelled"
        ]
    );
    assert_eq!(provider.sent().len(), 1);
}

/// Keeps the events and, separately, the conversation messages handed to the sink.
#[derive(Default)]
struct MessageLog {
    events: Vec<taco::event::Event>,
    messages: Vec<Message>,
}

impl taco::orchestrator::EventSink for MessageLog {
    fn emit(&mut self, event: taco::event::Event) {
        self.events.push(event);
    }

    fn message(&mut self, message: &Message) {
        self.messages.push(message.clone());
    }
}

#[tokio::test]
async fn the_sink_gets_every_message_of_the_conversation_in_order() {
    let (r, _) = registry();
    let provider = Scripted::new(vec![
        Ok(calls(&[("c1", "echo", json!({"text": "hi"}))])),
        Ok(text("first")),
        Ok(text("second")),
    ]);
    let mut orch = Orchestrator::new(provider, Arc::new(r), settings(10));
    let mut sink = MessageLog::default();
    headless(&mut orch, "one", &mut sink).await;
    headless(&mut orch, "two", &mut sink).await;
    assert_eq!(sink.messages, orch.messages());
    assert_eq!(sink.messages.len(), 7);
}

#[tokio::test]
async fn a_restored_conversation_goes_on_and_is_not_recorded_twice() {
    let (r, _) = registry();
    let provider = Scripted::new(vec![Ok(text("again"))]);
    let mut orch = Orchestrator::new(provider.clone(), Arc::new(r), settings(10));
    let saved = vec![
        Message::system("an old system prompt"),
        Message::user("earlier"),
        Message::assistant(Some("earlier answer".into()), None, Vec::new()),
    ];
    orch.restore(saved);
    let mut sink = MessageLog::default();
    headless(&mut orch, "now", &mut sink).await;
    let sent = &provider.sent()[0].messages;
    assert_eq!(
        sent[0],
        Message::system("SYSTEM"),
        "the current system prompt replaces the saved one"
    );
    assert_eq!(sent[1], Message::user("earlier"));
    assert_eq!(sent[3], Message::user("now"));
    assert_eq!(
        sink.messages,
        [
            Message::user("now"),
            Message::assistant(Some("again".into()), None, Vec::new())
        ]
    );
    let EventData::LlmCall(call) = &sink
        .events
        .iter()
        .find(|e| e.kind() == "llm_call")
        .unwrap()
        .data
    else {
        panic!()
    };
    // The restored history is in the session file already: the call carries only what is
    // new (the request), and says how long the conversation sent was.
    assert_eq!(
        (call.message_count, call.new_messages.len()),
        (4, 1),
        "only what is new after a resume"
    );
    assert_eq!(call.new_messages[0], Message::user("now"));
}

#[tokio::test]
async fn long_histories_are_trimmed_at_turn_boundaries() {
    let (r, _) = registry();
    let mut replies = Vec::new();
    for i in 0..4 {
        replies.push(Ok(calls(&[(
            &*format!("c{i}"),
            "echo",
            json!({"text": "x"}),
        )])));
        replies.push(Ok(text("done")));
    }
    let provider = Scripted::new(replies);
    let mut orch = Orchestrator::new(
        provider.clone(),
        Arc::new(r),
        Settings {
            history_limit: 6,
            ..settings(10)
        },
    );
    let mut sink = MessageLog::default();
    for i in 0..4 {
        headless(&mut orch, &format!("request {i}"), &mut sink).await;
    }
    for sent in provider.sent() {
        assert_eq!(sent.messages[0], Message::system("SYSTEM"));
        assert!(sent.messages.len() <= 7, "{}", sent.messages.len());
        assert_eq!(
            sent.messages[1].role,
            Role::User,
            "the window starts at a turn"
        );
        for (i, m) in sent.messages.iter().enumerate() {
            if m.role == Role::Tool {
                let id = m.tool_call_id.as_deref().unwrap();
                assert!(
                    sent.messages[..i]
                        .iter()
                        .any(|a| a.tool_calls.iter().any(|c| c.id == id))
                );
            }
        }
    }
    let last = provider.sent().last().unwrap().messages.clone();
    assert_eq!(last[1], Message::user("request 3"));
    let omitted: Vec<usize> = sink
        .events
        .iter()
        .filter_map(|e| match &e.data {
            EventData::LlmCall(c) => Some(c.omitted),
            _ => None,
        })
        .collect();
    assert_eq!(omitted.first(), Some(&0));
    assert!(*omitted.last().unwrap() > 0);
    assert_eq!(
        orch.messages().len(),
        17,
        "the conversation itself keeps everything"
    );
}

#[tokio::test]
async fn a_long_session_lets_go_of_messages_no_request_sends_and_sends_the_same() {
    let (r, _) = registry();
    let runs = 300;
    let replies = (0..runs)
        .map(|i| Ok(text(&format!("answer {i}"))))
        .collect();
    let provider = Scripted::new(replies);
    let limit = 6;
    let mut orch = Orchestrator::new(
        provider.clone(),
        Arc::new(r),
        Settings {
            history_limit: limit,
            ..settings(10)
        },
    );
    let mut sink = MessageLog::default();
    for i in 0..runs {
        headless(&mut orch, &format!("request {i}"), &mut sink).await;
    }
    // Each request sent what a conversation holding everything would send: the system
    // prompt, then the newest turns within the limit, ending with its own request.
    for (i, sent) in provider.sent().iter().enumerate() {
        let mut full = vec![Message::system("SYSTEM")];
        for k in 0..i {
            full.push(Message::user(format!("request {k}")));
            full.push(Message::assistant(
                Some(format!("answer {k}")),
                None,
                vec![],
            ));
        }
        full.push(Message::user(format!("request {i}")));
        // The history limit's window of the whole conversation, from a request.
        let earliest = if full.len() > limit + 1 {
            full.len() - limit
        } else {
            1
        };
        let start = (earliest..full.len())
            .find(|&k| full[k].role == Role::User)
            .unwrap();
        let mut expected = vec![full[0].clone()];
        expected.extend_from_slice(&full[start..]);
        assert_eq!(sent.messages, expected, "request {i}");
    }
    // The conversation no longer holds every message (the sink, the session file, does).
    let held = orch.messages().len();
    assert!(held < 1 + 2 * limit + 2 * 200, "{held} messages held");
    assert!(held < 2 * runs, "{held}");
    assert_eq!(
        sink.messages.len(),
        2 * runs + 1,
        "every message was recorded"
    );
}

/// Moves the injected clock on by `ms` while it "runs".
struct Ticking(ManualClock);

impl TypedTool for Ticking {
    type Params = EchoParams;
    const NAME: &'static str = "tick";
    const DESCRIPTION: &'static str = "Takes sleep_ms of injected time.";
    async fn run(&self, p: EchoParams, _ctx: &ToolContext) -> Result<serde_json::Value, ToolError> {
        self.0.advance(Duration::from_millis(p.sleep_ms));
        Ok(json!({"echo": p.text}))
    }
}

#[tokio::test]
async fn events_are_stamped_and_timed_by_the_injected_clock() {
    let clock = ManualClock::at(1_700_000_000_000);
    let mut r = ToolRegistry::new();
    r.register(Arc::new(Ticking(clock.clone())));
    let provider = Scripted::new(vec![
        Ok(calls(&[(
            "t",
            "tick",
            json!({"text": "x", "sleep_ms": 1500}),
        )])),
        Ok(text("done")),
    ]);
    let mut orch =
        Orchestrator::new(provider, Arc::new(r), settings(10)).with_clock(Arc::new(clock));
    let mut events = Vec::new();
    headless(&mut orch, "go", &mut events).await;
    let result = events
        .iter()
        .find(|e| e.kind() == "tool_result")
        .expect("a result");
    assert!(
        matches!(
            result.data,
            EventData::ToolResult {
                duration_ms: 1500,
                ..
            }
        ),
        "{result:?}"
    );
    assert_eq!(result.timestamp, 1_700_000_001_500);
    assert_eq!(events[0].timestamp, 1_700_000_000_000, "run_started");
    assert_eq!(events.last().unwrap().timestamp, 1_700_000_001_500, "final");
    let llm: Vec<u64> = events
        .iter()
        .filter_map(|e| match &e.data {
            EventData::LlmCall(call) => Some(call.duration_ms),
            _ => None,
        })
        .collect();
    assert_eq!(llm, [0, 0], "model calls took no injected time");
}

#[tokio::test]
async fn a_shell_grant_runs_later_commands_it_covers_without_asking() {
    let mut r = ToolRegistry::new();
    r.register(Arc::new(taco::tools::builtin::Shell));
    let replies = vec![
        Ok(calls(&[("s1", "shell", json!({"command": "echo one"}))])),
        Ok(calls(&[("s2", "shell", json!({"command": "echo two"}))])),
        Ok(calls(&[(
            "s3",
            "shell",
            json!({"command": "echo x; touch y"}),
        )])),
        Ok(text("done")),
    ];
    let mut answer = ApprovalAnswer::approve(Scope::Once);
    answer.prefix = taco::tools::builtin::suggested_grant("echo one");
    let mut approver = Recording {
        answers: [answer, ApprovalAnswer::deny(None)].into(),
        batches: Vec::new(),
    };
    let (_, events, sent, orch) = run_with(replies, r, 10, &mut approver).await;
    let asked: Vec<&str> = approver
        .batches
        .iter()
        .flat_map(|b| b.iter().map(|r| r.id.as_str()))
        .collect();
    assert_eq!(
        asked,
        ["s1", "s3"],
        "echo two ran without asking; the chain was asked"
    );
    assert_eq!(
        orch.policies().shell_prefixes(),
        [taco::tools::builtin::suggested_grant("echo").unwrap()]
    );
    assert_eq!(tool_messages(&sent[2].messages)[1].1["stdout"], "two\n");
    let s3 = statuses(&events).into_iter().find(|s| s.0 == "s3").unwrap();
    assert_eq!(s3.1, ToolStatus::Denied);
}
