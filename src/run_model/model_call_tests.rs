use serde_json::json;

use super::*;
use crate::conversation::{ToolCall, Usage};
use crate::event::{CompactTrigger, Compacted, LlmCall, LlmFailed, LlmStarted};
use crate::run_model::RunModel;

fn at(ms: u64, request: &str, data: EventData) -> Event {
    Event {
        timestamp: ms,
        request_id: Arc::from(request),
        data,
    }
}

fn run_started() -> EventData {
    EventData::RunStarted {
        prompt: "p".into(),
        provider: "p".into(),
        model: "m".into(),
        max_turns: 5,
        trace_parent: None,
    }
}

fn start(call: u32, purpose: Purpose, parent: Option<&str>) -> EventData {
    EventData::LlmStarted(LlmStarted {
        call,
        purpose,
        parent: parent.map(Into::into),
        model: "m".into(),
        turn: 1,
    })
}

fn progress(call: u32, ttft_ms: u64, text: u64, reasoning: u64) -> EventData {
    EventData::LlmProgress(LlmProgress {
        call,
        ttft_ms,
        text_bytes: text,
        reasoning_bytes: reasoning,
        tool_bytes: 0,
    })
}

fn answered(call: u32, parent: Option<&str>, tool_calls: &[&str]) -> EventData {
    EventData::LlmCall(Box::new(LlmCall {
        turn: 1,
        model: "m".into(),
        duration_ms: 1,
        ttft_ms: Some(1),
        finish_reason: None,
        content: String::new(),
        reasoning_content: None,
        tool_calls: (tool_calls.iter())
            .map(|id| ToolCall {
                id: (*id).into(),
                name: "delegate".into(),
                arguments: json!({}),
            })
            .collect(),
        usage: Usage::default(),
        timings: None,
        message_count: 1,
        new_messages: Vec::new(),
        tools: Vec::new(),
        parent: parent.map(Into::into),
        omitted: 0,
        context_window: None,
        call: Some(call),
        purpose: None,
    }))
}

fn failed(call: u32, end: LlmEnd, error: Option<&str>) -> EventData {
    EventData::LlmFailed(LlmFailed {
        call,
        end,
        error: error.map(Into::into),
    })
}

fn retry() -> EventData {
    EventData::Retry {
        attempt: 2,
        max: 3,
        reason: "HTTP 503".into(),
        delay_ms: 100,
    }
}

fn fold(events: &[Event]) -> RunModel {
    RunModel::replay(events)
}

#[test]
fn a_call_is_in_flight_from_its_start_and_says_how_far_it_streamed() {
    let mut model = fold(&[
        at(1_000, "r", run_started()),
        at(1_000, "r", start(1, Purpose::Conversation, None)),
    ]);
    let node = model.llm().get("r", 1).unwrap();
    assert!(node.is_open());
    assert_eq!(node.streamed, None, "no byte yet");
    assert_eq!(node.elapsed_ms(3_500), 2_500, "on the events' clock");
    model.apply(&at(1_900, "r", progress(1, 800, 40, 400)));
    model.apply(&at(2_200, "r", progress(1, 800, 120, 400)));
    let node = model.llm().get("r", 1).unwrap();
    assert_eq!(node.streamed.map(|s| s.ttft_ms), Some(800));
    assert_eq!(node.tokens(), (30, 100), "a token is about four bytes");
    assert_eq!(model.llm().open().count(), 1);
    model.apply(&at(6_600, "r", answered(1, None, &[])));
    let node = model.llm().get("r", 1).unwrap();
    assert_eq!(node.end, Some(ModelCallEnd::Answered));
    assert_eq!(node.elapsed_ms(99_999), 5_600, "ended: its own span");
    assert_eq!(node.streamed, None, "what streamed was live only");
    assert_eq!(model.llm().open().count(), 0);
}

#[test]
fn retries_count_and_each_attempt_streams_afresh() {
    let mut model = fold(&[
        at(0, "r", run_started()),
        at(0, "r", start(1, Purpose::Conversation, None)),
        at(300, "r", progress(1, 300, 50, 0)),
    ]);
    model.apply(&at(400, "r", retry()));
    let node = model.llm().get("r", 1).unwrap();
    assert_eq!((node.retries, node.streamed), (1, None));
    model.apply(&at(900, "r", progress(1, 200, 8, 0)));
    model.apply(&at(1_000, "r", retry()));
    model.apply(&at(1_800, "r", progress(1, 150, 4, 0)));
    let node = model.llm().get("r", 1).unwrap();
    assert_eq!(node.retries, 2);
    assert_eq!(
        node.streamed.map(|s| s.ttft_ms),
        Some(150),
        "the last attempt's"
    );
    model.apply(&at(2_000, "r", answered(1, None, &[])));
    let node = model.llm().get("r", 1).unwrap();
    assert_eq!(
        (node.retries, node.elapsed_ms(0)),
        (2, 2_000),
        "retries included"
    );
    // A retry after the call ended belongs to no call of this run.
    model.apply(&at(2_100, "r", retry()));
    assert_eq!(model.llm().get("r", 1).unwrap().retries, 2);
}

#[test]
fn a_sub_agents_call_nests_under_its_frame() {
    let model = fold(&[
        at(0, "r", run_started()),
        at(0, "r", start(1, Purpose::Conversation, None)),
        at(10, "r", answered(1, None, &["d1"])),
        at(
            11,
            "r",
            EventData::ToolCall {
                turn: 1,
                id: "d1".into(),
                name: "delegate".into(),
                arguments: json!({}),
                parent: None,
                sandbox: None,
            },
        ),
        at(12, "r", start(2, Purpose::SubAgent, Some("d1"))),
        at(40, "r", progress(2, 20, 12, 0)),
    ]);
    let open: Vec<&ModelCallNode> = model.llm().open().collect();
    assert_eq!(
        open.len(),
        1,
        "the top-level call ended before its tool ran"
    );
    let sub = open[0];
    assert_eq!((sub.call, sub.purpose), (2, Purpose::SubAgent));
    assert_eq!(sub.parent.as_deref(), Some("d1"));
    assert_eq!(model.depth_under(sub.parent.as_deref()), 1);
    assert_eq!(sub.tokens(), (3, 0));
}

#[test]
fn a_failure_or_a_cancel_closes_the_span_and_so_does_the_end_of_its_run() {
    let mut model = fold(&[
        at(0, "r", run_started()),
        at(0, "r", start(1, Purpose::AnswerCheck, Some("q1"))),
        at(500, "r", failed(1, LlmEnd::Failed, Some("HTTP 500"))),
        at(600, "r", start(2, Purpose::ForTool, Some("c1"))),
        at(700, "r", failed(2, LlmEnd::Cancelled, None)),
        at(800, "r", start(3, Purpose::Conversation, None)),
    ]);
    let check = model.llm().get("r", 1).unwrap();
    assert_eq!(check.end, Some(ModelCallEnd::Failed));
    assert_eq!(check.error.as_deref(), Some("HTTP 500"));
    assert_eq!(check.elapsed_ms(9_999), 500);
    assert_eq!(
        model.llm().get("r", 2).unwrap().end,
        Some(ModelCallEnd::Cancelled)
    );
    // The run is cancelled while call 3 streams, and nothing said the call ended.
    model.apply(&at(
        900,
        "r",
        EventData::Cancelled {
            running: "llm".into(),
        },
    ));
    let third = model.llm().get("r", 3).unwrap();
    assert_eq!(
        (third.end, third.ended_ms),
        (Some(ModelCallEnd::Cancelled), Some(900))
    );
    // An error ends a run's calls as failed.
    model.apply(&at(1_000, "s", run_started()));
    model.apply(&at(1_000, "s", start(1, Purpose::Conversation, None)));
    model.apply(&at(
        1_200,
        "s",
        EventData::Error {
            kind: "provider".into(),
            message: "down".into(),
        },
    ));
    assert_eq!(
        model.llm().get("s", 1).unwrap().end,
        Some(ModelCallEnd::Failed)
    );
    assert!(
        model.llm().get("r", 1).is_none(),
        "a new run forgets the last run's calls"
    );
}

#[test]
fn a_summary_ends_with_its_compaction_and_runs_do_not_share_numbers() {
    let compacted = |call| Compacted {
        trigger: CompactTrigger::Manual,
        before_tokens: 10,
        after_tokens: 5,
        window: None,
        summarized: 3,
        kept_from: 4,
        summary: "s".into(),
        requests: Vec::new(),
        requests_left_out: 0,
        usage: Usage::default(),
        duration_ms: 1,
        parent: None,
        error: None,
        call,
    };
    let mut model = fold(&[
        at(0, "r", run_started()),
        at(0, "r", start(1, Purpose::Conversation, None)),
        // `/compact` between runs is a run of its own, numbering its calls from 1.
        at(5, "c", start(1, Purpose::Compaction, None)),
    ]);
    model.apply(&at(
        9,
        "c",
        EventData::Compacted(Box::new(compacted(Some(1)))),
    ));
    assert_eq!(
        model.llm().get("c", 1).unwrap().end,
        Some(ModelCallEnd::Answered)
    );
    assert!(
        model.llm().get("r", 1).unwrap().is_open(),
        "another run's call 1"
    );
    // A compaction without a summary call (nothing to compact) ends nothing.
    model.apply(&at(
        10,
        "r",
        EventData::Compacted(Box::new(compacted(None))),
    ));
    assert!(model.llm().get("r", 1).unwrap().is_open());
}

#[test]
fn a_resumed_session_has_nothing_in_flight() {
    let mut model = fold(&[
        at(0, "r", run_started()),
        at(50, "r", start(1, Purpose::Conversation, None)),
        at(60, "r", progress(1, 10, 4, 0)),
    ]);
    model.resumed();
    let node = model.llm().get("r", 1).unwrap();
    assert_eq!(node.end, Some(ModelCallEnd::Cancelled));
    assert_eq!(node.elapsed_ms(10_000), 0, "its end is unknown");
    assert_eq!(model.llm().open().count(), 0);
}

#[test]
fn calls_of_files_without_spans_are_read_by_their_parent() {
    let EventData::LlmCall(mut call) = answered(1, Some("d1"), &[]) else {
        unreachable!()
    };
    call.call = None;
    let json = serde_json::to_value(&*call).unwrap();
    assert!(json.get("call").is_none() && json.get("purpose").is_none());
    let old: LlmCall = serde_json::from_value(json).unwrap();
    assert_eq!(old.purpose(), Purpose::SubAgent, "labelled as before");
    call.parent = None;
    assert_eq!(call.purpose(), Purpose::Conversation);
    call.purpose = Some(Purpose::AnswerCheck);
    call.parent = Some("q1".into());
    let json = serde_json::to_value(&*call).unwrap();
    assert_eq!(json["purpose"], "answer_check");
    // An llm_call without a number ends no span.
    let mut model = fold(&[
        at(0, "r", run_started()),
        at(0, "r", start(1, Purpose::Conversation, None)),
    ]);
    model.apply(&at(5, "r", EventData::LlmCall(call)));
    assert!(model.llm().get("r", 1).unwrap().is_open());
}
