//! A scripted provider, small test tools and helpers for orchestrator scenarios.
#![allow(dead_code)]

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use futures_util::stream;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use taco::conversation::{Message, Role, ToolSpec, Usage};
use taco::event::{DeniedBy, Event, EventData, Purpose, ToolStatus};
use taco::orchestrator::approval::Approver;
use taco::orchestrator::retry::RetryPolicy;
use taco::orchestrator::{Limits, Orchestrator, Outcome, Settings};
use taco::provider::{ChatRequest, Chunk, ChunkStream, Provider, ProviderError, ToolCallDelta};
use taco::tools::{Policy, ToolContext, ToolError, ToolRegistry, ToolSettings, TypedTool};
use tokio_util::sync::CancellationToken;

/// One scripted reply: chunks, or an error when the call is made.
pub type Reply = Result<Vec<Chunk>, ProviderError>;

/// What the provider was sent.
#[derive(Debug, Clone)]
pub struct Sent {
    pub messages: Vec<Message>,
    pub tools: Vec<ToolSpec>,
    pub max_tokens: Option<u64>,
}

#[derive(Default)]
pub struct Scripted {
    /// Each reply, and an error that cuts its stream after the chunks.
    replies: Mutex<VecDeque<(Reply, Option<ProviderError>)>>,
    sent: Mutex<Vec<Sent>>,
}

impl Scripted {
    pub fn new(replies: Vec<Reply>) -> Arc<Self> {
        Self::with_cuts(replies.into_iter().map(|r| (r, None)).collect())
    }

    pub fn with_cuts(replies: Vec<(Reply, Option<ProviderError>)>) -> Arc<Self> {
        Arc::new(Self {
            replies: Mutex::new(replies.into()),
            sent: Mutex::default(),
        })
    }

    pub fn sent(&self) -> Vec<Sent> {
        self.sent.lock().unwrap().clone()
    }
}

impl Provider for Scripted {
    fn name(&self) -> &str {
        "scripted"
    }

    fn model(&self) -> &str {
        "m1"
    }

    fn stream<'a>(
        &'a self,
        request: ChatRequest<'a>,
    ) -> BoxFuture<'a, Result<ChunkStream, ProviderError>> {
        self.sent.lock().unwrap().push(Sent {
            messages: request.messages.to_vec(),
            tools: request.tools.to_vec(),
            max_tokens: request.max_tokens,
        });
        let reply = self
            .replies
            .lock()
            .unwrap()
            .pop_front()
            .unwrap_or_else(|| (Ok(text("(script ended)")), None));
        async move {
            let (reply, cut) = reply;
            let items = reply?.into_iter().map(Ok).chain(cut.map(Err));
            Ok(Box::pin(stream::iter(items)) as ChunkStream)
        }
        .boxed()
    }
}

/// A finished stream of these chunks.
pub fn stream_of(chunks: Vec<Chunk>) -> ChunkStream {
    Box::pin(stream::iter(chunks.into_iter().map(Ok)))
}

pub fn text(t: &str) -> Vec<Chunk> {
    vec![
        Chunk::Text(t.to_string()),
        Chunk::Finish("stop".into()),
        Chunk::Usage(Usage {
            input_tokens: 10,
            output_tokens: 2,
            cached_tokens: 0,
        }),
    ]
}

pub fn calls(list: &[(&str, &str, Value)]) -> Vec<Chunk> {
    let mut out: Vec<Chunk> = list
        .iter()
        .enumerate()
        .map(|(i, (id, name, args))| {
            Chunk::ToolCall(ToolCallDelta {
                index: i,
                id: Some(id.to_string()),
                name: Some(name.to_string()),
                arguments: args.to_string(),
            })
        })
        .collect();
    out.push(Chunk::Finish("tool_calls".into()));
    out
}

#[derive(Deserialize, JsonSchema)]
pub struct EchoParams {
    /// Text to echo.
    pub text: String,
    /// Milliseconds to sleep first.
    #[serde(default)]
    pub sleep_ms: u64,
}

/// Echoes its text after an optional sleep; tracks how many run at once.
pub struct Echo {
    pub running: Arc<AtomicUsize>,
    pub peak: Arc<AtomicUsize>,
}

impl TypedTool for Echo {
    type Params = EchoParams;
    const NAME: &'static str = "echo";
    const DESCRIPTION: &'static str = "Echo text back.";

    async fn run(&self, p: EchoParams, _ctx: &ToolContext) -> Result<Value, ToolError> {
        let now = self.running.fetch_add(1, Ordering::SeqCst) + 1;
        self.peak.fetch_max(now, Ordering::SeqCst);
        tokio::time::sleep(Duration::from_millis(p.sleep_ms)).await;
        self.running.fetch_sub(1, Ordering::SeqCst);
        Ok(json!({ "echo": p.text }))
    }
}

#[derive(Deserialize, JsonSchema)]
pub struct NoParams {}

pub struct Fail;
impl TypedTool for Fail {
    type Params = NoParams;
    const NAME: &'static str = "fail";
    const DESCRIPTION: &'static str = "Always fails.";
    async fn run(&self, _p: NoParams, _ctx: &ToolContext) -> Result<Value, ToolError> {
        Err(ToolError::failed("disk on fire"))
    }
}

pub struct Crash;
impl TypedTool for Crash {
    type Params = NoParams;
    const NAME: &'static str = "crash";
    const DESCRIPTION: &'static str = "Panics.";
    async fn run(&self, _p: NoParams, _ctx: &ToolContext) -> Result<Value, ToolError> {
        panic!("boom")
    }
}

pub struct Guarded;
impl TypedTool for Guarded {
    type Params = NoParams;
    const NAME: &'static str = "guarded";
    const DESCRIPTION: &'static str = "Needs approval.";
    fn default_policy(&self, _p: &NoParams, _s: &ToolSettings) -> Policy {
        Policy::Ask
    }
    async fn run(&self, _p: NoParams, _ctx: &ToolContext) -> Result<Value, ToolError> {
        Ok(json!({"ran": true}))
    }
}

pub struct Fixture {
    pub peak: Arc<AtomicUsize>,
}

pub fn registry() -> (ToolRegistry, Fixture) {
    let peak = Arc::new(AtomicUsize::new(0));
    let mut r = ToolRegistry::new();
    r.register(Arc::new(Echo {
        running: Arc::default(),
        peak: peak.clone(),
    }));
    r.register(Arc::new(Fail));
    r.register(Arc::new(Crash));
    r.register(Arc::new(Guarded));
    (r, Fixture { peak })
}

pub fn settings(max_turns: u32) -> Settings {
    Settings {
        max_turns,
        system_prompt: "SYSTEM".into(),
        instructions: String::new(),
        workdir: std::env::temp_dir(),
        tools: Arc::new(ToolSettings {
            timeout: Duration::from_secs(5),
            ..ToolSettings::default()
        }),
        policies: HashMap::new(),
        depth_limit: 20,
        history_limit: 50,
        context: Default::default(),
        limits: Limits::default(),
        hooks: taco::hooks::Hooks::none(),
        budget: None,
        // Scenarios that want retries say so; elsewhere a provider error is final at once.
        retry: RetryPolicy {
            max_attempts: 1,
            ..RetryPolicy::default()
        },
    }
}

pub async fn run_with(
    replies: Vec<Reply>,
    registry: ToolRegistry,
    max_turns: u32,
    approver: &mut dyn Approver,
) -> (Outcome, Vec<Event>, Vec<Sent>, Orchestrator) {
    let provider = Scripted::new(replies);
    let mut orch = Orchestrator::new(provider.clone(), Arc::new(registry), settings(max_turns));
    let mut events = Vec::new();
    let outcome = orch
        .run("do it", &mut events, approver, &CancellationToken::new())
        .await;
    (outcome, events, provider.sent(), orch)
}

/// The kinds of the events a trace file keeps, in order (no deltas, no live progress).
pub fn kinds(events: &[Event]) -> Vec<&'static str> {
    events
        .iter()
        .filter(|e| e.is_trace())
        .map(|e| e.kind())
        .collect()
}

/// Every model call's span in the order they began: (its number, what it was for, its
/// parent, the kind of the event that ended it). Panics when calls overlap, a call has no
/// end (or two), an end or a progress names no call in flight, or a number repeats.
pub fn spans(events: &[Event]) -> Vec<(u32, Purpose, Option<String>, &'static str)> {
    let mut spans: Vec<(u32, Purpose, Option<String>, &'static str)> = Vec::new();
    let mut open: Option<u32> = None;
    for event in events {
        let ends = match &event.data {
            EventData::LlmStarted(started) => {
                assert_eq!(open, None, "call {} began inside another", started.call);
                assert!(
                    spans.iter().all(|s| s.0 != started.call),
                    "call {} began twice",
                    started.call
                );
                open = Some(started.call);
                spans.push((started.call, started.purpose, started.parent.clone(), ""));
                None
            }
            EventData::LlmProgress(progress) => {
                assert_eq!(
                    open,
                    Some(progress.call),
                    "progress of a call not in flight"
                );
                None
            }
            EventData::LlmCall(call) => Some(call.call.expect("an llm_call names its call")),
            EventData::Compacted(c) => c.call,
            EventData::LlmFailed(failed) => Some(failed.call),
            _ => None,
        };
        if let Some(call) = ends {
            assert_eq!(
                open,
                Some(call),
                "{} ends a call not in flight",
                event.kind()
            );
            open = None;
            if let Some(span) = spans.last_mut() {
                span.3 = event.kind();
            }
        }
    }
    assert_eq!(open, None, "a call never ended");
    spans
}

/// Each `tool_result` as (call id, status, who denied it), in event order.
pub fn statuses(events: &[Event]) -> Vec<(String, ToolStatus, Option<DeniedBy>)> {
    events
        .iter()
        .filter_map(|e| match &e.data {
            EventData::ToolResult {
                id,
                status,
                denied_by,
                ..
            } => Some((
                id.clone(),
                (*status).expect("every result has a status"),
                *denied_by,
            )),
            _ => None,
        })
        .collect()
}

pub fn tool_messages(messages: &[Message]) -> Vec<(String, Value)> {
    messages
        .iter()
        .filter(|m| m.role == Role::Tool)
        .map(|m| {
            (
                m.tool_call_id.clone().unwrap(),
                serde_json::from_str(m.content.as_deref().unwrap()).unwrap(),
            )
        })
        .collect()
}

/// One request with no one to ask (`--approve none`) and no cancel.
pub async fn headless(
    orch: &mut Orchestrator,
    prompt: &str,
    sink: &mut dyn taco::orchestrator::EventSink,
) -> Outcome {
    let mut approver = taco::orchestrator::approval::FixedApprover::none();
    orch.run(prompt, sink, &mut approver, &CancellationToken::new())
        .await
}
