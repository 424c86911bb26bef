//! taco's events folded into OpenTelemetry spans (issue 31): the one event schema in, spans
//! out as each ends. Live export and `taco trace --otlp-json` both run this fold, so they
//! make the same spans, with the events' timestamps as their start and end.
//!
//! A run is `invoke_agent taco`; under it each model call is `chat {model}`, each tool call
//! `execute_tool {name}` (a `delegate` call holds an `invoke_agent delegate` span, under
//! which its sub-agent's calls nest; an MCP tool's call holds a `tools/call {tool}` span),
//! each wait for the user (`approval`, `question`, `form`) and each hook its own span, and a
//! compaction a `compaction` span around its summary call. Retries, loop warnings, the turn
//! limit and checkpoints are span events.

use std::collections::HashMap;

use opentelemetry::KeyValue;
use opentelemetry::trace::{SpanKind, Status, TraceState};
use opentelemetry_sdk::trace::SpanData;

use super::attrs::{self, Content, int, text};
use super::ids::{self, TraceParent};
use super::open::{Open, TraceContext};
use crate::event::{Event, EventData, LlmEnd};

/// The fold of one stream of events (a live session, or a file read back).
#[derive(Debug, Default)]
pub struct SpanFold {
    /// What spans may say of content.
    content: Content,
    /// The session, for `gen_ai.conversation.id`.
    conversation: Option<String>,
    /// The run in progress.
    run: Option<Run>,
}

/// The spans of the run in progress.
#[derive(Debug)]
pub(super) struct Run {
    pub(super) request_id: String,
    pub(super) trace: TraceContext,
    provider: String,
    pub(super) root: Open,
    /// Model calls by their number in the run.
    pub(super) llm: HashMap<u32, Open>,
    /// Tool calls by frame, with the spans they hold.
    pub(super) tools: HashMap<String, Tool>,
    /// Approvals by call frame (`approval:` prefix), questions by id (`question:`).
    pub(super) waits: HashMap<String, Open>,
}

/// A tool call's span and the one it holds: a sub-agent's `invoke_agent`, an MCP server's
/// `tools/call`.
#[derive(Debug)]
pub(super) struct Tool {
    pub(super) span: Open,
    pub(super) inner: Option<Open>,
}

impl SpanFold {
    /// A fold whose spans carry `content` (or none), in session `conversation`.
    pub fn new(content: Content, conversation: Option<String>) -> Self {
        Self {
            content,
            conversation,
            run: None,
        }
    }

    /// Names the session the next spans belong to (`/clear` starts another).
    pub fn set_conversation(&mut self, conversation: Option<String>) {
        self.conversation = conversation;
    }

    /// Folds one event in; the spans it ended.
    pub fn apply(&mut self, event: &Event) -> Vec<SpanData> {
        let at = event.timestamp;
        let mut ended = Vec::new();
        if let EventData::RunStarted {
            prompt,
            provider,
            model,
            trace_parent,
            ..
        } = &event.data
        {
            ended.extend(self.finish(at));
            let parent = trace_parent
                .as_deref()
                .and_then(|h| TraceParent::parse(h, None));
            self.run = Some(self.start(event, prompt, provider, model, parent.as_ref()));
            return ended;
        }
        // Borrowed apart: the run is changed while the content rule is read.
        let content = &self.content;
        let Some(run) = self
            .run
            .as_mut()
            .filter(|r| *r.request_id == *event.request_id)
        else {
            return ended;
        };
        match &event.data {
            EventData::LlmStarted(started) => {
                let id = ids::span_id(&run.request_id, "llm", &[&started.call.to_string()]);
                let parent = run.parent_of(started.parent.as_deref());
                let span = Open::new(
                    id,
                    parent,
                    format!("chat {}", started.model),
                    SpanKind::Client,
                    at,
                )
                .with([
                    text(attrs::OPERATION, "chat"),
                    text(attrs::PROVIDER, run.provider.clone()),
                    text(attrs::REQUEST_MODEL, started.model.clone()),
                    text("taco.purpose", attrs::schema_name(&started.purpose)),
                    int("taco.turn", u64::from(started.turn)),
                ]);
                run.llm.insert(started.call, span);
            }
            EventData::LlmCall(call) => {
                let span = match call.call.and_then(|n| run.llm.remove(&n)) {
                    Some(span) => span,
                    // Files from before `llm_started`: the call's own duration says when.
                    None => {
                        let key = format!("t{}", event.timestamp);
                        let id = ids::span_id(&run.request_id, "llm", &[&key]);
                        let parent = run.parent_of(call.parent.as_deref());
                        Open::new(
                            id,
                            parent,
                            format!("chat {}", call.model),
                            SpanKind::Client,
                            at.saturating_sub(call.duration_ms),
                        )
                        .with([
                            text(attrs::OPERATION, "chat"),
                            text(attrs::PROVIDER, run.provider.clone()),
                            text(attrs::REQUEST_MODEL, call.model.clone()),
                        ])
                    }
                };
                let mut span = span.with([
                    text(attrs::RESPONSE_MODEL, call.model.clone()),
                    int(attrs::INPUT_TOKENS, call.usage.input_tokens),
                    int(attrs::OUTPUT_TOKENS, call.usage.output_tokens),
                    int("taco.tool_calls", call.tool_calls.len() as u64),
                ]);
                if call.usage.cached_tokens > 0 {
                    span.attributes
                        .push(int(attrs::CACHED_TOKENS, call.usage.cached_tokens));
                }
                if let Some(reason) = &call.finish_reason {
                    span.attributes.push(KeyValue::new(
                        attrs::FINISH_REASONS,
                        opentelemetry::Value::Array(opentelemetry::Array::String(vec![
                            reason.clone().into(),
                        ])),
                    ));
                }
                if let Some(ttft) = call.ttft_ms {
                    span.attributes
                        .push(int("taco.time_to_first_chunk_ms", ttft));
                }
                span.attributes.extend(content.messages(
                    attrs::OUTPUT_MESSAGES,
                    "assistant",
                    &call.content,
                ));
                ended.push(span.end(at, Status::Unset, &run.trace));
            }
            EventData::LlmFailed(failed) => {
                if let Some(span) = run.llm.remove(&failed.call) {
                    let (kind, why) = match failed.end {
                        LlmEnd::Cancelled => ("cancelled", "cancelled".to_string()),
                        LlmEnd::Failed => (
                            "provider_error",
                            failed.error.clone().unwrap_or_else(|| "failed".into()),
                        ),
                    };
                    let span = span.with([text(attrs::ERROR_TYPE, kind)]);
                    ended.push(span.end(at, attrs::failed(&why), &run.trace));
                }
            }
            EventData::Retry {
                attempt,
                max,
                reason,
                delay_ms,
            } => {
                let attributes = vec![
                    int("taco.retry.attempt", u64::from(*attempt)),
                    int("taco.retry.max", u64::from(*max)),
                    text("taco.retry.reason", crate::text::summarize(reason, 500)),
                    int("taco.retry.delay_ms", *delay_ms),
                ];
                // The newest model call in flight is the one retried.
                match run.llm.iter_mut().max_by_key(|(n, _)| **n) {
                    Some((_, span)) => span.event("retry", at, attributes),
                    None => run.root.event("retry", at, attributes),
                }
            }
            _ => super::fold_calls::apply(run, event, content, &mut ended),
        }
        if matches!(
            event.data,
            EventData::Final { .. } | EventData::Cancelled { .. } | EventData::Error { .. }
        ) {
            ended.extend(self.end_run(event));
        }
        ended
    }

    /// Ends whatever is still open (the stream ended mid-run: taco quit, the file ends);
    /// their end is `at`, their status says they did not finish.
    pub fn finish(&mut self, at: u64) -> Vec<SpanData> {
        let Some(mut run) = self.run.take() else {
            return Vec::new();
        };
        let mut ended = run.close_inner(at, || Status::error("did not finish"));
        ended.push(
            run.root
                .end(at, Status::error("did not finish"), &run.trace),
        );
        ended
    }

    fn start(
        &self,
        event: &Event,
        prompt: &str,
        provider: &str,
        model: &str,
        parent: Option<&TraceParent>,
    ) -> Run {
        let request_id = event.request_id.to_string();
        let trace = TraceContext {
            trace_id: ids::trace_id(&request_id, parent),
            state: (parent.and_then(|p| p.state.as_deref()))
                .and_then(|s| s.parse::<TraceState>().ok())
                .unwrap_or_default(),
        };
        let id = ids::span_id(&request_id, "run", &[]);
        let mut root = Open::new(
            id,
            parent.map_or([0; 8], |p| p.span_id),
            "invoke_agent taco".into(),
            SpanKind::Internal,
            event.timestamp,
        )
        .with([
            text(attrs::OPERATION, "invoke_agent"),
            text(attrs::AGENT_NAME, "taco"),
            text(attrs::PROVIDER, provider.to_string()),
            text(attrs::REQUEST_MODEL, model.to_string()),
        ]);
        root.remote_parent = parent.is_some();
        if let Some(session) = &self.conversation {
            root.attributes
                .push(text(attrs::CONVERSATION, session.clone()));
        }
        root.attributes
            .extend(self.content.messages(attrs::INPUT_MESSAGES, "user", prompt));
        Run {
            request_id,
            trace,
            provider: provider.to_string(),
            root,
            llm: HashMap::new(),
            tools: HashMap::new(),
            waits: HashMap::new(),
        }
    }

    /// The run's end: what is still open ends with it, the run's span last.
    fn end_run(&mut self, event: &Event) -> Vec<SpanData> {
        let Some(mut run) = self.run.take() else {
            return Vec::new();
        };
        let at = event.timestamp;
        let status = match &event.data {
            EventData::Final { turns, usage, .. } => {
                run.root.attributes.extend([
                    int(attrs::INPUT_TOKENS, usage.input_tokens),
                    int(attrs::OUTPUT_TOKENS, usage.output_tokens),
                    int("taco.turns", u64::from(*turns)),
                ]);
                Status::Ok
            }
            EventData::Error { kind, message } => {
                run.root
                    .attributes
                    .push(text(attrs::ERROR_TYPE, kind.clone()));
                attrs::failed(message)
            }
            _ => {
                run.root
                    .attributes
                    .push(text(attrs::ERROR_TYPE, "cancelled"));
                Status::error("cancelled by the user")
            }
        };
        let mut ended = run.close_inner(at, || Status::error("ended with the run"));
        ended.push(run.root.end(at, status, &run.trace));
        ended
    }
}

impl Run {
    /// The span a call under frame `parent` nests in: a sub-agent's `invoke_agent`, else the
    /// frame's own span, else the run's.
    pub(super) fn parent_of(&self, parent: Option<&str>) -> [u8; 8] {
        match parent.and_then(|p| self.tools.get(p)) {
            Some(tool) => tool.inner.as_ref().unwrap_or(&tool.span).id,
            None => self.root.id,
        }
    }

    /// Ends every span of the run but its own at `at`.
    fn close_inner(&mut self, at: u64, status: impl Fn() -> Status) -> Vec<SpanData> {
        let mut ended = Vec::new();
        for (_, wait) in self.waits.drain() {
            ended.push(wait.end(at, status(), &self.trace));
        }
        for (_, span) in self.llm.drain() {
            ended.push(span.end(at, status(), &self.trace));
        }
        for (_, tool) in self.tools.drain() {
            if let Some(inner) = tool.inner {
                ended.push(inner.end(at, status(), &self.trace));
            }
            ended.push(tool.span.end(at, status(), &self.trace));
        }
        ended
    }
}

#[cfg(test)]
#[path = "fold_tests.rs"]
mod tests;
