//! A span while it is open, and the exporter's `SpanData` it becomes when it ends.

use std::borrow::Cow;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use opentelemetry::trace::{
    Event as SpanEvent, SpanContext, SpanId, SpanKind, Status, TraceFlags, TraceId, TraceState,
};
use opentelemetry::{InstrumentationScope, KeyValue};
use opentelemetry_sdk::trace::{SpanData, SpanEvents, SpanLinks};

/// Most events one span keeps (retries, warnings); the rest are counted as dropped.
const MAX_EVENTS: usize = 128;

/// A span that has started and not ended.
#[derive(Debug, Clone)]
pub struct Open {
    /// Its id.
    pub id: [u8; 8],
    /// Its parent's id (all zero: none).
    pub parent: [u8; 8],
    /// Whether the parent lives in another process (`TRACEPARENT`).
    pub remote_parent: bool,
    /// Its name (`chat gpt-4.1`, `execute_tool shell`).
    pub name: String,
    /// Client for calls that leave the process (model calls, MCP), else internal.
    pub kind: SpanKind,
    /// When it started (Unix ms, the event's timestamp).
    pub start_ms: u64,
    /// What it says.
    pub attributes: Vec<KeyValue>,
    /// What happened during it.
    pub events: Vec<SpanEvent>,
    /// Events past [`MAX_EVENTS`].
    pub dropped_events: u32,
}

impl Open {
    /// A span `name` under `parent`, started at `start_ms`.
    pub fn new(id: [u8; 8], parent: [u8; 8], name: String, kind: SpanKind, start_ms: u64) -> Self {
        Self {
            id,
            parent,
            remote_parent: false,
            name,
            kind,
            start_ms,
            attributes: Vec::new(),
            events: Vec::new(),
            dropped_events: 0,
        }
    }

    /// Adds attributes.
    pub fn with(mut self, attributes: impl IntoIterator<Item = KeyValue>) -> Self {
        self.attributes.extend(attributes);
        self
    }

    /// Adds an event at `at_ms` (past [`MAX_EVENTS`] it is only counted).
    pub fn event(&mut self, name: &'static str, at_ms: u64, attributes: Vec<KeyValue>) {
        if self.events.len() >= MAX_EVENTS {
            self.dropped_events = self.dropped_events.saturating_add(1);
            return;
        }
        self.events
            .push(SpanEvent::new(name, time(at_ms), attributes, 0));
    }

    /// The span as exported, ended at `end_ms` with `status`.
    pub fn end(self, end_ms: u64, status: Status, trace: &TraceContext) -> SpanData {
        let mut events = SpanEvents::default();
        events.events = self.events;
        events.dropped_count = self.dropped_events;
        SpanData {
            span_context: SpanContext::new(
                TraceId::from_bytes(trace.trace_id),
                SpanId::from_bytes(self.id),
                TraceFlags::SAMPLED,
                false,
                trace.state.clone(),
            ),
            parent_span_id: SpanId::from_bytes(self.parent),
            parent_span_is_remote: self.remote_parent,
            span_kind: self.kind,
            name: Cow::Owned(self.name),
            start_time: time(self.start_ms),
            // A doctored file could end a span before it began.
            end_time: time(end_ms.max(self.start_ms)),
            attributes: self.attributes,
            dropped_attributes_count: 0,
            events,
            links: SpanLinks::default(),
            status,
            instrumentation_scope: scope(),
        }
    }
}

/// The trace a run's spans belong to.
#[derive(Debug, Clone)]
pub struct TraceContext {
    /// Its id.
    pub trace_id: [u8; 16],
    /// The vendors' state it came with.
    pub state: TraceState,
}

/// Unix ms as a time.
pub fn time(ms: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_millis(ms)
}

/// The instrumentation scope of every span taco makes.
pub fn scope() -> InstrumentationScope {
    InstrumentationScope::builder("taco")
        .with_version(env!("CARGO_PKG_VERSION"))
        .build()
}
