//! A model stuck in a loop (issue 14.8): the third identical call is flagged and the model is
//! told once, in that call's result.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed unwrap is a failed test

use serde_json::{Value, json};
use taco::conversation::Role;
use taco::event::EventData;
use taco::orchestrator::approval::FixedApprover;

use crate::support;
use support::scripted::*;

#[tokio::test]
async fn the_third_identical_call_warns_once_and_tells_the_model() {
    let (r, _) = registry();
    let same = json!({"text": "again"});
    let mut replies: Vec<Reply> = (0..4)
        .map(|i| Ok(calls(&[(&*format!("c{i}"), "echo", same.clone())])))
        .collect();
    replies.push(Ok(calls(&[("d", "echo", json!({"text": "other"}))])));
    replies.push(Ok(text("stuck no more")));
    let (_, events, _, orch) = run_with(replies, r, 10, &mut FixedApprover::none()).await;
    let warnings: Vec<(String, u32)> = events
        .iter()
        .filter_map(|e| match &e.data {
            EventData::LoopWarning { id, times, .. } => Some((id.clone(), *times)),
            _ => None,
        })
        .collect();
    assert_eq!(warnings, [("c2".to_string(), 3)], "once, at the third");
    // After the third call's result, not before its call.
    let at = |kind: &str, id: &str| {
        events.iter().position(|e| {
            e.kind() == kind && serde_json::to_value(&e.data).unwrap()["data"]["id"] == id
        })
    };
    assert!(at("tool_result", "c2").unwrap() < at("loop_warning", "c2").unwrap());
    let results: Vec<Value> = orch
        .messages()
        .iter()
        .filter(|m| m.role == Role::Tool)
        .map(|m| serde_json::from_str(m.content.as_deref().unwrap()).unwrap())
        .collect();
    assert!(results[1].get("repeated_call").is_none());
    let note = results[2]["repeated_call"].as_str().unwrap();
    assert!(note.contains("echo 3 times"), "{note}");
    assert_eq!(results[2]["echo"], "again", "the result itself is kept");
    assert!(results[3].get("repeated_call").is_none(), "told once");
}
