use std::sync::Arc;

use opentelemetry::trace::{SpanId, Status};
use opentelemetry_sdk::trace::SpanData;
use serde_json::json;

use super::*;
use crate::conversation::Usage;
use crate::event::{
    CompactTrigger, Compacted, HookDecision, HookRan, HookSource, LlmCall, LlmFailed, LlmStarted,
    Purpose, ToolStatus,
};

/// Events of run `r1`, 10 ms apart, folded; every span that ended.
struct Feed {
    fold: SpanFold,
    at: u64,
    spans: Vec<SpanData>,
}

impl Feed {
    fn new() -> Self {
        Self {
            fold: SpanFold::new(Content::none(), Some("session-1".into())),
            at: 1_000,
            spans: Vec::new(),
        }
    }

    fn on(&mut self, data: EventData) -> &mut Self {
        self.at += 10;
        let event = Event {
            timestamp: self.at,
            request_id: Arc::from("r1"),
            data,
        };
        let ended = self.fold.apply(&event);
        self.spans.extend(ended);
        self
    }

    fn span(&self, name: &str) -> &SpanData {
        let found: Vec<&SpanData> = self.spans.iter().filter(|s| s.name == name).collect();
        assert_eq!(found.len(), 1, "{name} in {:?}", self.names());
        found[0]
    }

    fn names(&self) -> Vec<String> {
        self.spans.iter().map(|s| s.name.to_string()).collect()
    }
}

fn attr(span: &SpanData, key: &str) -> Option<String> {
    (span.attributes.iter())
        .find(|kv| kv.key.as_str() == key)
        .map(|kv| kv.value.to_string())
}

fn ms(time: std::time::SystemTime) -> u64 {
    time.duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
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

fn llm_started(call: u32, parent: Option<&str>, purpose: Purpose) -> EventData {
    EventData::LlmStarted(LlmStarted {
        call,
        purpose,
        parent: parent.map(Into::into),
        model: "m1".into(),
        turn: 1,
    })
}

fn llm_call(call: u32, parent: Option<&str>) -> EventData {
    EventData::LlmCall(Box::new(LlmCall {
        turn: 1,
        model: "m1".into(),
        duration_ms: 10,
        ttft_ms: Some(4),
        finish_reason: Some("tool_calls".into()),
        content: "the answer".into(),
        reasoning_content: None,
        tool_calls: Vec::new(),
        usage: Usage {
            input_tokens: 100,
            output_tokens: 20,
            cached_tokens: 60,
        },
        timings: None,
        message_count: 2,
        new_messages: Vec::new(),
        tools: Vec::new(),
        parent: parent.map(Into::into),
        omitted: 0,
        context_window: None,
        call: Some(call),
        purpose: None,
    }))
}

fn tool_call(id: &str, name: &str, parent: Option<&str>) -> EventData {
    EventData::ToolCall {
        turn: 1,
        id: id.into(),
        name: name.into(),
        arguments: json!({"command": "ls"}),
        parent: parent.map(Into::into),
        sandbox: None,
    }
}

fn tool_result(id: &str, name: &str, status: ToolStatus) -> EventData {
    EventData::ToolResult {
        id: id.into(),
        name: name.into(),
        ok: status == ToolStatus::Ok,
        status: Some(status),
        denied_by: None,
        result: Some(json!({"exit_code": 0})),
        error: (status != ToolStatus::Ok).then(|| "it failed".into()),
        duration_ms: 5,
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
fn a_run_its_model_calls_tools_and_waits_nest_with_the_events_times() {
    let mut feed = Feed::new();
    feed.on(started())
        .on(llm_started(1, None, Purpose::Conversation))
        .on(EventData::Retry {
            attempt: 2,
            max: 3,
            reason: "HTTP 503".into(),
            delay_ms: 100,
        })
        .on(llm_call(1, None))
        .on(tool_call("c1", "shell", None))
        .on(EventData::ApprovalRequested {
            id: "c1".into(),
            name: "shell".into(),
            arguments: json!({}),
            position: 1,
            of: 1,
            note: None,
            diff: None,
            sandbox: None,
        })
        .on(EventData::ApprovalDecided {
            id: "c1".into(),
            name: "shell".into(),
            decision: crate::event::Decision::Approved,
            scope: crate::event::Scope::Once,
            reason: None,
            prefix: None,
        })
        .on(EventData::Hook(Box::new(HookRan {
            id: "c1/hook-1".into(),
            event: crate::hooks::HookEvent::PostToolUse,
            command: "./check.sh".into(),
            source: HookSource::User,
            call: Some("c1".into()),
            duration_ms: 5,
            decision: Some(HookDecision::Allow),
            reason: None,
            context: false,
            exit_code: Some(0),
            error: None,
        })))
        .on(tool_result("c1", "shell", ToolStatus::Failed))
        .on(final_answer());
    let root = feed.span("invoke_agent taco");
    assert_eq!(root.parent_span_id, SpanId::INVALID);
    assert_eq!((ms(root.start_time), ms(root.end_time)), (1_010, 1_100));
    assert_eq!(root.status, Status::Ok);
    assert_eq!(attr(root, "gen_ai.conversation.id").unwrap(), "session-1");
    let chat = feed.span("chat m1");
    assert_eq!(chat.parent_span_id, root.span_context.span_id());
    assert_eq!((ms(chat.start_time), ms(chat.end_time)), (1_020, 1_040));
    assert_eq!(
        attr(chat, "gen_ai.usage.cache_read.input_tokens").unwrap(),
        "60"
    );
    assert_eq!(chat.events.len(), 1, "the retry is an event of its call");
    let tool = feed.span("execute_tool shell");
    assert_eq!(tool.parent_span_id, root.span_context.span_id());
    assert!(matches!(tool.status, Status::Error { .. }));
    assert_eq!(attr(tool, "error.type").unwrap(), "failed");
    let approval = feed.span("approval shell");
    assert_eq!(approval.parent_span_id, tool.span_context.span_id());
    assert_eq!(
        (ms(approval.start_time), ms(approval.end_time)),
        (1_060, 1_070)
    );
    let hook = feed.span("hook post_tool_use");
    assert_eq!(hook.parent_span_id, tool.span_context.span_id());
    assert_eq!((ms(hook.start_time), ms(hook.end_time)), (1_075, 1_080));
    assert_eq!(
        attr(hook, "taco.hook.command"),
        None,
        "content only when captured"
    );
    // Every span of the run is in its trace.
    let trace = root.span_context.trace_id();
    assert!(
        feed.spans
            .iter()
            .all(|s| s.span_context.trace_id() == trace)
    );
}

#[test]
fn a_sub_agent_nests_under_its_delegate_call_and_an_mcp_call_holds_its_rpc() {
    let mut feed = Feed::new();
    feed.on(started())
        .on(tool_call("d1", "delegate", None))
        .on(llm_started(2, Some("d1"), Purpose::SubAgent))
        .on(llm_call(2, Some("d1")))
        .on(tool_call("d1/c2", "mcp__fs__read_text_file", Some("d1")))
        .on(tool_result(
            "d1/c2",
            "mcp__fs__read_text_file",
            ToolStatus::Ok,
        ))
        .on(tool_result("d1", "delegate", ToolStatus::Ok))
        .on(final_answer());
    let delegate = feed.span("execute_tool delegate");
    let agent = feed.span("invoke_agent delegate");
    assert_eq!(agent.parent_span_id, delegate.span_context.span_id());
    let chat = feed.span("chat m1");
    assert_eq!(chat.parent_span_id, agent.span_context.span_id());
    let mcp = feed.span("execute_tool mcp__fs__read_text_file");
    assert_eq!(mcp.parent_span_id, agent.span_context.span_id());
    assert_eq!(attr(mcp, "gen_ai.tool.type").unwrap(), "extension");
    assert_eq!(attr(mcp, "gen_ai.tool.call.id").unwrap(), "c2");
    let rpc = feed.span("tools/call read_text_file");
    assert_eq!(rpc.parent_span_id, mcp.span_context.span_id());
    assert_eq!(attr(rpc, "mcp.method.name").unwrap(), "tools/call");
}

#[test]
fn a_compaction_holds_its_summary_call_and_a_failed_call_is_an_error() {
    let mut feed = Feed::new();
    feed.on(started())
        .on(llm_started(1, None, Purpose::Conversation))
        .on(EventData::LlmFailed(LlmFailed {
            call: 1,
            end: crate::event::LlmEnd::Failed,
            error: Some("HTTP 500".into()),
        }))
        .on(llm_started(2, None, Purpose::Compaction))
        .on(EventData::Compacted(Box::new(Compacted {
            trigger: CompactTrigger::Auto,
            before_tokens: 9_000,
            after_tokens: 2_000,
            window: Some(10_000),
            summarized: 4,
            kept_from: 5,
            summary: "s".into(),
            requests: Vec::new(),
            requests_left_out: 0,
            usage: Usage::default(),
            duration_ms: 10,
            parent: None,
            error: None,
            call: Some(2),
        })))
        .on(final_answer());
    let chats: Vec<&SpanData> = feed.spans.iter().filter(|s| s.name == "chat m1").collect();
    assert_eq!(chats.len(), 2);
    assert!(matches!(chats[0].status, Status::Error { .. }));
    let compaction = feed.span("compaction");
    assert_eq!(chats[1].parent_span_id, compaction.span_context.span_id());
    assert_eq!(ms(compaction.start_time), ms(chats[1].start_time));
    assert_eq!(
        attr(compaction, "taco.compaction.after_tokens").unwrap(),
        "2000"
    );
}

#[test]
fn what_is_open_when_the_run_is_cancelled_or_the_stream_ends_ends_with_it() {
    let mut feed = Feed::new();
    feed.on(started())
        .on(tool_call("c1", "shell", None))
        .on(EventData::Cancelled {
            running: "shell".into(),
        });
    assert_eq!(feed.spans.len(), 2);
    assert!(
        feed.spans
            .iter()
            .all(|s| matches!(s.status, Status::Error { .. }))
    );
    assert_eq!(
        attr(feed.span("invoke_agent taco"), "error.type").unwrap(),
        "cancelled"
    );
    // Events of no run, or of another run, make nothing.
    feed.on(tool_call("c9", "shell", None));
    assert_eq!(feed.spans.len(), 2);
    // A file that ends mid-run: its spans end at its last event.
    let mut feed = Feed::new();
    feed.on(started())
        .on(llm_started(1, None, Purpose::Conversation));
    let at = feed.at;
    let open = feed.fold.finish(at);
    assert_eq!(open.len(), 2);
    assert!(open.iter().all(|s| ms(s.end_time) == at));
    // A new run ends the one a file left open.
    let mut feed = Feed::new();
    feed.on(started()).on(started());
    assert_eq!(feed.names(), ["invoke_agent taco"]);
}

#[test]
fn a_run_started_in_someone_elses_trace_is_its_remote_child() {
    let parent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    let mut feed = Feed::new();
    feed.on(EventData::RunStarted {
        prompt: "p".into(),
        provider: "p".into(),
        model: "m".into(),
        max_turns: 1,
        trace_parent: Some(parent.into()),
    })
    .on(tool_call("c1", "shell", None))
    .on(tool_result("c1", "shell", ToolStatus::Ok))
    .on(final_answer());
    let root = feed.span("invoke_agent taco");
    assert_eq!(
        root.span_context.trace_id().to_string(),
        "0af7651916cd43dd8448eb211c80319c"
    );
    assert_eq!(root.parent_span_id.to_string(), "b7ad6b7169203331");
    assert!(root.parent_span_is_remote);
    // The tool's span is the one its process was told of.
    let tool = feed.span("execute_tool shell");
    let told = super::ids::TraceSetup {
        parent: TraceParent::parse(parent, None),
        propagate: true,
    }
    .for_call("r1", "c1", 1)
    .unwrap();
    assert_eq!(tool.span_context.span_id().to_bytes(), told.span_id);
}

#[test]
fn a_question_is_a_span_under_the_call_that_asked_for_as_long_as_the_user_took() {
    let request = crate::event::InputRequest {
        id: "q1".into(),
        kind: crate::event::InputKind::Parameter,
        frame: "c1".into(),
        tool: "write_file".into(),
        prompt: "write_file needs `path`.".into(),
        parameter: Some("path".into()),
        description: None,
        value_type: None,
        depth: None,
        form: None,
    };
    let mut feed = Feed::new();
    feed.on(started())
        .on(tool_call("c1", "write_file", None))
        .on(EventData::InputRequested(request))
        .on(EventData::InputAnswered {
            id: "q1".into(),
            value: None,
            form: None,
        })
        .on(final_answer());
    let question = feed.span("question write_file");
    let tool = feed.span("execute_tool write_file");
    assert_eq!(question.parent_span_id, tool.span_context.span_id());
    assert_eq!(
        (ms(question.start_time), ms(question.end_time)),
        (1_030, 1_040)
    );
    assert_eq!(attr(question, "taco.question.answer").unwrap(), "declined");
    assert_eq!(attr(question, "taco.question.kind").unwrap(), "parameter");
}
