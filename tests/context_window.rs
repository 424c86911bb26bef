//! The history sent to the model never drops the run's request (issue 10.1): however many
//! tool calls a run makes, each request has the system prompt, the user's request and
//! everything after it; older turns are cut at turn boundaries only.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed unwrap is a failed test

use crate::support;

use std::sync::Arc;

use serde_json::json;
use support::scripted::*;
use taco::conversation::{Message, Role};
use taco::orchestrator::Orchestrator;

fn assert_keeps_the_request(sent: &[Sent], request: &str) {
    for (n, s) in sent.iter().enumerate() {
        assert_eq!(s.messages[0], Message::system("SYSTEM"));
        assert_eq!(
            s.messages[1].role,
            Role::User,
            "request {n} starts with a user message"
        );
        assert!(
            s.messages
                .iter()
                .any(|m| m.role == Role::User && m.content.as_deref() == Some(request)),
            "request {n} lost the user's request"
        );
        for (i, m) in s.messages.iter().enumerate() {
            if m.role == Role::Tool {
                let id = m.tool_call_id.as_deref().unwrap();
                assert!(
                    s.messages[..i]
                        .iter()
                        .any(|a| a.tool_calls.iter().any(|c| c.id == id))
                );
            }
        }
    }
}

#[tokio::test]
async fn sixty_parallel_calls_keep_the_request() {
    let (r, _) = registry();
    let many: Vec<(String, &str, serde_json::Value)> = (0..60)
        .map(|i| (format!("c{i}"), "echo", json!({"text": format!("t{i}")})))
        .collect();
    let list: Vec<(&str, &str, serde_json::Value)> = many
        .iter()
        .map(|(id, n, a)| (id.as_str(), *n, a.clone()))
        .collect();
    let provider = Scripted::new(vec![Ok(text("hi")), Ok(calls(&list)), Ok(text("done"))]);
    let mut orch = Orchestrator::new(provider.clone(), Arc::new(r), settings(10));
    let mut sink: Vec<taco::event::Event> = Vec::new();
    // An earlier request, so there is an older turn that may be cut.
    headless(&mut orch, "earlier", &mut sink).await;
    headless(&mut orch, "look at all of these", &mut sink).await;
    let sent = provider.sent();
    let last = sent.last().unwrap();
    assert_eq!(
        tool_messages(&last.messages).len(),
        60,
        "every result is sent"
    );
    assert_keeps_the_request(&sent[1..], "look at all of these");
}

#[tokio::test]
async fn twelve_calls_a_turn_for_ten_turns_keep_the_request() {
    let (r, _) = registry();
    let mut replies = Vec::new();
    for t in 0..10 {
        let ids: Vec<String> = (0..12).map(|i| format!("t{t}c{i}")).collect();
        let list: Vec<(&str, &str, serde_json::Value)> = ids
            .iter()
            .map(|id| (id.as_str(), "echo", json!({"text": "x"})))
            .collect();
        replies.push(Ok(calls(&list)));
    }
    replies.push(Ok(text("done")));
    let provider = Scripted::new(replies);
    let mut orch = Orchestrator::new(provider.clone(), Arc::new(r), settings(12));
    let mut sink: Vec<taco::event::Event> = Vec::new();
    headless(&mut orch, "the real request", &mut sink).await;
    let sent = provider.sent();
    assert_eq!(sent.len(), 11);
    assert_keeps_the_request(&sent, "the real request");
    assert_eq!(tool_messages(&sent[10].messages).len(), 120);
}
