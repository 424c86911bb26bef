//! The run scope: one value that carries everything a run's loop, batches, questions and
//! sub-agents share (the orchestrator, the sink, the approver, the cancel token, the clock and
//! the run's own counters), so they are methods on it instead of functions with eight
//! arguments. The call types the batch code shares live here too.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::approval::Approver;
use super::log::log;
use super::stack::argument_summary;
use super::{EventSink, Orchestrator};
use crate::clock::Clock;
use crate::conversation::Usage;
use crate::event::{Confinement, Event, EventData, FrameState, StackFrame};
use crate::tools::ToolContext;

/// One run (one user request) in progress.
pub(super) struct Run<'s> {
    /// The agent: provider, tools, settings, policies, stack.
    pub(super) orch: &'s mut Orchestrator,
    /// Where events go.
    pub(super) sink: &'s mut dyn EventSink,
    /// Who answers approvals and questions.
    pub(super) approver: &'s mut dyn Approver,
    /// The user's cancel.
    pub(super) cancel: CancellationToken,
    /// Where time comes from.
    pub(super) clock: Arc<dyn Clock>,
    pub(super) request_id: Arc<str>,
    pub(super) usage: Usage,
    /// Text the model said alongside tool calls, for an answer gathered at the turn limit.
    pub(super) gathered: Vec<String>,
    /// Invalid-argument failures per tool: the first gets guidance, the next do not.
    pub(super) invalid_args: HashMap<String, u32>,
    /// The user's request, for the tool context of nested conversations.
    pub(super) original: String,
    /// Numbers ids the run makes up (needed calls, questions).
    pub(super) next_id: u32,
    /// Model calls made so far, sub-agents included.
    pub(super) model_calls: u32,
    /// Provider calls begun so far (summaries and refused requests too): each one's number.
    pub(super) llm_calls: u32,
    /// Turn limits of the conversations running now: the user's first, then each nested
    /// sub-agent's (its length is the sub-agent depth + 1).
    pub(super) agents: Vec<u32>,
    /// The model's calls so far, to flag one repeated with the same arguments.
    pub(super) repeats: super::repeats::Repeats,
    /// A reply to a parameter question that was a new request: the user's next message,
    /// once the batch that asked has ended.
    pub(super) switched: Option<String>,
    /// The most the call in progress may answer: a tool's nested call, or the summary.
    pub(super) answer_cap: Option<AnswerCap>,
    /// The checkpoint before the run's first call that could change the workspace: its
    /// `files_changed` is counted from there.
    pub(super) first_checkpoint: Option<crate::checkpoint::CheckpointId>,
    /// Context hooks gave during a batch, for the model with its results.
    pub(super) hook_context: Vec<String>,
    /// Times a stop hook sent the model back to work in this run.
    pub(super) stops_refused: u32,
    /// Why the cost budget stopped a model call of this run: every later one stops too.
    pub(super) over_budget: Option<super::budget::Stop>,
    /// The turn each call (by frame) was made in: with the request id it names the call's
    /// span, which its processes are told (`TRACEPARENT`).
    pub(super) call_turns: HashMap<String, u32>,
}

/// A bound on one call's answer, tighter than `max_reply_bytes`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum AnswerCap {
    /// A tool's nested call (`create_code`): at most this many bytes.
    Tool(usize),
    /// The summary call: at most `bytes` read, and `tokens` asked of the provider (`None`
    /// once the provider refused the field).
    Summary { bytes: usize, tokens: Option<u64> },
}

impl AnswerCap {
    /// The most bytes read.
    pub(super) fn bytes(self) -> usize {
        match self {
            Self::Tool(bytes) | Self::Summary { bytes, .. } => bytes,
        }
    }

    /// The output tokens asked of the provider.
    pub(super) fn tokens(self) -> Option<u64> {
        match self {
            Self::Tool(_) => None,
            Self::Summary { tokens, .. } => tokens,
        }
    }

    /// The error for an answer that passed the bound.
    pub(super) fn passed(self) -> crate::provider::ProviderError {
        match self {
            Self::Tool(bytes) => super::limits::answer_too_large(bytes),
            Self::Summary { bytes, .. } => super::limits::summary_too_large(bytes),
        }
    }
}

impl<'s> Run<'s> {
    /// A new run scope with a fresh request id; `original` is the user's request.
    pub(super) fn new(
        orch: &'s mut Orchestrator,
        sink: &'s mut dyn EventSink,
        approver: &'s mut dyn Approver,
        cancel: CancellationToken,
        clock: Arc<dyn Clock>,
        original: String,
    ) -> Self {
        let max_turns = orch.settings.max_turns.max(1);
        Self {
            orch,
            sink,
            approver,
            cancel,
            clock,
            request_id: Arc::from(uuid::Uuid::new_v4().to_string()),
            usage: Usage::default(),
            gathered: Vec::new(),
            invalid_args: HashMap::new(),
            original,
            next_id: 0,
            model_calls: 0,
            llm_calls: 0,
            agents: vec![max_turns],
            repeats: Default::default(),
            switched: None,
            answer_cap: None,
            first_checkpoint: None,
            hook_context: Vec::new(),
            stops_refused: 0,
            over_budget: None,
            call_turns: HashMap::new(),
        }
    }
}

impl Run<'_> {
    /// Applies the grants the user took back since the last batch, each reported.
    pub(super) fn take_revocations(&mut self) {
        for grant in self.approver.revocations() {
            if self.orch.policies.revoke(&grant) {
                self.emit(EventData::ApprovalRevoked { grant });
            }
        }
    }

    /// Sends one event, stamped by the run's clock.
    pub(super) fn emit(&mut self, data: EventData) {
        log(&self.request_id, &data);
        if let EventData::ToolCall { id, turn, .. } = &data {
            self.call_turns.insert(id.clone(), *turn);
        }
        self.sink.emit(Event {
            timestamp: self.clock.unix_ms(),
            request_id: Arc::clone(&self.request_id),
            data,
        });
    }

    /// The trace context of call `frame`'s processes, when they are told one.
    pub(super) fn trace_for(&self, frame: &str) -> Option<crate::otel::TraceParent> {
        let turn = *self.call_turns.get(frame)?;
        (self.orch.settings.tools.trace).for_call(&self.request_id, frame, turn)
    }

    /// Sends an `error` event.
    pub(super) fn error(&mut self, kind: &str, message: String) {
        self.emit(EventData::Error {
            kind: kind.to_string(),
            message,
        });
    }

    /// Sends the `stack_pop` events of frames that left the stack.
    pub(super) fn popped(&mut self, frames: Vec<StackFrame>) {
        for frame in frames {
            self.emit(EventData::StackPop(frame));
        }
    }

    /// Pushes a frame (or changes its state) and sends its `stack_push`.
    pub(super) fn push_frame(&mut self, frame: StackFrame) {
        let now = self.clock.now();
        let pushed = self.orch.stack.push(frame, now);
        self.emit(EventData::StackPush(pushed));
    }

    /// A call queued for a process slot starts: its frame runs from now.
    pub(super) fn started(&mut self, id: &str) {
        let now = self.clock.now();
        if let Some(frame) = self.orch.stack.start(id, now) {
            self.emit(EventData::StackPush(frame));
        }
    }

    /// A fresh number for an id the run makes up.
    pub(super) fn next_number(&mut self) -> u32 {
        self.next_id += 1;
        self.next_id
    }

    /// How a call would run in the sandbox (`None`: the tool starts nothing it covers).
    pub(super) fn confinement(&self, name: &str, arguments: &Value) -> Option<Confinement> {
        let tool = self.orch.registry.get(name)?;
        tool.confinement(arguments, &self.orch.settings.tools)
    }

    /// What a running tool sees.
    pub(super) fn tool_context(&self) -> ToolContext {
        ToolContext {
            workdir: self.orch.settings.workdir.clone(),
            settings: self.orch.settings.tools.clone(),
            cancel: self.cancel.clone(),
            call: String::new(),
            progress: None,
            seen: None,
            trace: None,
        }
    }
}

/// A call to process.
#[derive(Debug, Clone)]
pub(super) struct Pending {
    /// Unique id for events and the stack (scoped under the parent frame when nested).
    pub frame: String,
    /// The id the model gave it (its tool message answers this id).
    pub call_id: String,
    /// Tool name.
    pub name: String,
    /// Arguments as given.
    pub arguments: Value,
    /// The frame it runs under.
    pub parent: Option<String>,
    /// Whether the model made it (invalid arguments then get guidance and one retry).
    pub from_model: bool,
}

impl Pending {
    /// Its stack frame, in `state`, summarising `arguments`.
    pub(super) fn frame(&self, arguments: &Value, state: FrameState) -> StackFrame {
        StackFrame {
            id: self.frame.clone(),
            parent: self.parent.clone(),
            name: self.name.clone(),
            summary: crate::todo::call_summary(&self.name, arguments)
                .unwrap_or_else(|| argument_summary(arguments)),
            state,
        }
    }
}
