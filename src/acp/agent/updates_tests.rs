use std::path::Path;
use std::sync::Arc;

use serde_json::json;

use super::*;
use crate::conversation::Usage;
use crate::event::LlmCall;

fn event(data: EventData) -> Event {
    Event::now(&Arc::from("r1"), data)
}

fn llm_call(parent: Option<&str>, window: Option<u64>) -> EventData {
    EventData::LlmCall(Box::new(LlmCall {
        turn: 1,
        model: "m1".into(),
        duration_ms: 10,
        ttft_ms: Some(4),
        finish_reason: Some("stop".into()),
        content: "the answer".into(),
        reasoning_content: Some("first, think".into()),
        tool_calls: Vec::new(),
        usage: Usage {
            input_tokens: 300,
            output_tokens: 20,
            cached_tokens: 0,
        },
        timings: None,
        message_count: 2,
        new_messages: Vec::new(),
        tools: Vec::new(),
        parent: parent.map(Into::into),
        omitted: 0,
        context_window: window,
        call: Some(1),
        purpose: None,
    }))
}

fn started() -> EventData {
    EventData::RunStarted {
        prompt: "do it".into(),
        provider: "openai".into(),
        model: "m1".into(),
        max_turns: 5,
        trace_parent: None,
    }
}

/// The updates of each event in turn, folded as the pump folds them.
fn mapped(source: Source, events: Vec<EventData>) -> Vec<SessionUpdate> {
    let pricing = Pricing::default();
    let mut model = RunModel::new();
    let mut out = Vec::new();
    for data in events {
        let event = event(data);
        model.apply(&event);
        out.extend(updates(&event, &model, source, Path::new("/w"), &pricing));
    }
    out
}

fn text_of(update: &SessionUpdate) -> Option<(&'static str, String)> {
    let (kind, chunk) = match update {
        SessionUpdate::AgentMessageChunk(c) => ("message", c),
        SessionUpdate::AgentThoughtChunk(c) => ("thought", c),
        _ => return None,
    };
    match &chunk.content {
        ContentBlock::Text(t) => Some((kind, t.text.clone())),
        _ => None,
    }
}

#[test]
fn live_answers_come_from_deltas_and_a_replay_from_the_model_calls() {
    let delta = |kind, text: &str| EventData::Delta {
        kind,
        text: text.into(),
    };
    let events = || {
        vec![
            started(),
            delta(DeltaKind::Reasoning, "first, think"),
            delta(DeltaKind::Text, "the answer"),
            llm_call(None, None),
            // A sub-agent's answer is its own, not the conversation's.
            llm_call(Some("d1"), None),
        ]
    };
    let live: Vec<_> = mapped(Source::Live, events())
        .iter()
        .filter_map(text_of)
        .collect();
    let replay: Vec<_> = mapped(Source::Replay, events())
        .iter()
        .filter_map(text_of)
        .collect();
    let expected = [
        ("thought", "first, think".to_string()),
        ("message", "the answer".to_string()),
    ];
    assert_eq!(live, expected);
    assert_eq!(replay, expected);
}

#[test]
fn usage_follows_each_top_level_model_call_when_the_window_is_known() {
    let none = mapped(Source::Live, vec![started(), llm_call(None, None)]);
    assert!(
        !none
            .iter()
            .any(|u| matches!(u, SessionUpdate::UsageUpdate(_)))
    );
    let known = mapped(Source::Live, vec![started(), llm_call(None, Some(8000))]);
    let usage = known
        .iter()
        .find_map(|u| match u {
            SessionUpdate::UsageUpdate(usage) => Some(usage),
            _ => None,
        })
        .expect("a usage update");
    assert_eq!(usage.size, 8000);
    assert_eq!(usage.used, 320);
}

#[test]
fn an_edit_is_a_diff_per_replacement_at_its_absolute_path() {
    let arguments = json!({"path": "./src/../src/lib.rs", "edits": [
        {"old_string": "a", "new_string": "b"},
        {"old_string": "c", "new_string": "d", "replace_all": true}
    ]});
    let edits = diffs("edit_file", &arguments, Path::new("/w"));
    let pairs: Vec<_> = edits
        .iter()
        .map(|d| match d {
            ToolCallContent::Diff(d) => (
                d.path.display().to_string(),
                d.old_text.clone(),
                d.new_text.clone(),
            ),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        pairs,
        [
            (
                "/w/src/../src/lib.rs".to_string(),
                Some("a".into()),
                "b".into()
            ),
            (
                "/w/src/../src/lib.rs".to_string(),
                Some("c".into()),
                "d".into()
            ),
        ]
    );
    let write = diffs_of_write();
    assert_eq!(write, ("/w/new.md".to_string(), None, "hi\n".to_string()));
    assert!(diffs("shell", &json!({"command": "ls"}), Path::new("/w")).is_empty());
}

fn diffs_of_write() -> (String, Option<String>, String) {
    let arguments = json!({"path": "new.md", "content": "hi\n"});
    match diffs("write_file", &arguments, Path::new("/w")).as_slice() {
        [ToolCallContent::Diff(d)] => (
            d.path.display().to_string(),
            d.old_text.clone(),
            d.new_text.clone(),
        ),
        other => panic!("{other:?}"),
    }
}

#[test]
fn titles_kinds_and_locations_read_as_a_person_would_say_them() {
    assert_eq!(
        title("shell", &json!({"command": "cargo test"})),
        "`cargo test`"
    );
    assert_eq!(title("read_file", &json!({"path": "a.rs"})), "Read a.rs");
    assert_eq!(title("list_dir", &json!({})), "List .");
    assert_eq!(
        title("mcp__gh__issue", &json!({"number": 3})),
        "mcp__gh__issue number=3"
    );
    assert_eq!(kind("shell"), ToolKind::Execute);
    assert_eq!(kind("edit_file"), ToolKind::Edit);
    assert_eq!(kind("mcp__gh__issue"), ToolKind::Other);
    let at = locations(
        "read_file",
        &json!({"path": "./a.rs", "offset": 40}),
        Path::new("/w"),
    );
    assert_eq!(at.len(), 1);
    assert_eq!(at[0].path, Path::new("/w/a.rs"));
    assert_eq!(at[0].line, Some(40));
}

#[test]
fn a_nested_call_names_its_parent_and_a_long_result_is_cut() {
    let nested = EventData::ToolCall {
        turn: 1,
        id: "c2".into(),
        name: "read_file".into(),
        arguments: json!({"path": "a"}),
        parent: Some("d1".into()),
        sandbox: None,
    };
    let long = "x".repeat(MAX_RESULT_TEXT + 10);
    let result = EventData::ToolResult {
        id: "c2".into(),
        name: "read_file".into(),
        ok: true,
        status: Some(ToolStatus::Ok),
        denied_by: None,
        result: Some(json!(long)),
        error: None,
        duration_ms: 3,
    };
    let out = mapped(Source::Live, vec![started(), nested, result]);
    let SessionUpdate::ToolCall(call) = &out[0] else {
        panic!("{out:?}")
    };
    let meta = call.meta.as_ref().expect("meta");
    assert_eq!(meta["taco"]["parent"], "d1");
    let SessionUpdate::ToolCallUpdate(update) = &out[1] else {
        panic!("{out:?}")
    };
    let content = format!("{:?}", update.fields.content);
    assert!(
        content.contains("… 10 more bytes"),
        "{}",
        &content[content.len() - 80..]
    );
}
