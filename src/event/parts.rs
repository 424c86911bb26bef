//! The parts of events: a stack frame and its state, a provider call's record (`llm_call`),
//! and a question to the user (`input_requested`).

use serde::{Deserialize, Serialize};

use super::Purpose;
use crate::conversation::{Message, Timings, ToolCall, Usage};

/// State of a tool-stack frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FrameState {
    /// Waiting for the user to approve.
    AwaitingApproval,
    /// Approved, waiting for a free slot to run in (`[tools] max_parallel`).
    Queued,
    /// Running.
    Running,
    /// Waiting for the user to supply input.
    AwaitingInput,
    /// Finished with a result.
    Done,
    /// Finished with an error.
    Failed,
    /// Not run: the user or the policy denied it.
    Denied,
    /// Stopped by a cancel.
    Cancelled,
}

/// One frame of the tool stack.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StackFrame {
    /// Frame id (the tool call id).
    pub id: String,
    /// The frame this one runs under, if nested.
    pub parent: Option<String>,
    /// Tool name.
    pub name: String,
    /// Short one-line summary of the arguments.
    pub summary: String,
    /// Current state.
    pub state: FrameState,
}

/// Data of an `llm_call` event: one provider call and what came back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LlmCall {
    /// Turn number (1-based); the final call after max turns carries `max_turns + 1`.
    pub turn: u32,
    /// Model id.
    pub model: String,
    /// Wall time of the whole call.
    pub duration_ms: u64,
    /// Time to the first streamed chunk.
    pub ttft_ms: Option<u64>,
    /// Why the model stopped.
    pub finish_reason: Option<String>,
    /// Answer text (may be empty).
    pub content: String,
    /// Reasoning text, when the model produced some.
    pub reasoning_content: Option<String>,
    /// Tool calls of this turn.
    pub tool_calls: Vec<ToolCall>,
    /// Tokens of this call.
    pub usage: Usage,
    /// Server-side timings, when the provider reports them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timings: Option<Timings>,
    /// How many messages were sent (the conversation up to this call).
    pub message_count: usize,
    /// The messages added since the previous `llm_call` of this conversation: the last
    /// `new_messages.len()` of the `message_count` sent. A reader rebuilds what was sent by
    /// truncating its copy to `message_count - new_messages.len()` and appending these, so
    /// traces stay linear in the conversation's size instead of repeating it every turn.
    pub new_messages: Vec<Message>,
    /// Names of the tools that were offered.
    pub tools: Vec<String>,
    /// The stack frame this call runs under (a sub-agent's `delegate` frame), if nested.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
    /// Messages of the conversation that were not sent: the history was trimmed to the
    /// latest ones, or compacted into a summary (the system prompt is always sent).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub omitted: usize,
    /// The model's context window in tokens, when known (the status line's gauge).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_window: Option<u64>,
    /// The call's number in its run (`llm_started.call`); absent in files written before
    /// issue 27.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call: Option<u32>,
    /// What the call was for; absent in older files (read with [`LlmCall::purpose`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub purpose: Option<Purpose>,
}

impl LlmCall {
    /// What the call was for; a call of an older file by its `parent`.
    pub fn purpose(&self) -> Purpose {
        self.purpose
            .unwrap_or_else(|| Purpose::by_parent(self.parent.as_deref()))
    }
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// What the orchestrator asks the user for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InputKind {
    /// A required parameter the model left out (one at a time).
    Parameter,
    /// The tool stack reached its depth limit: continue for another stretch, or stop?
    DepthLimit,
    /// A form was filled in (an MCP server's elicitation): send these answers? Its
    /// `description` lists them; a yes is the answer `y`. Files written before forms were
    /// asked whole hold these; new runs ask [`InputKind::Form`].
    Submit,
    /// An MCP server's form (`elicitation/create`), every field at once: `form` holds its
    /// fields; the answer (`input_answered.form`) is the whole content, a decline or a
    /// cancel.
    Form,
    /// The plan of a run in plan mode is ready: `a` approves it (and the mode becomes
    /// `ask`), `e` approves it in `auto-edit`, anything else is feedback to keep planning.
    Plan,
}

/// A question to the user (`input_requested`), answered with `Op::Answer`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InputRequest {
    /// Question id (answers name it).
    pub id: String,
    /// What kind of question.
    pub kind: InputKind,
    /// The stack frame that waits for the answer.
    pub frame: String,
    /// The tool the question is about.
    pub tool: String,
    /// The question, ready to show.
    pub prompt: String,
    /// For a parameter: its name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parameter: Option<String>,
    /// For a parameter: its description from the tool's schema.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// For a parameter: its JSON type (`string`, `integer`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value_type: Option<String>,
    /// For a depth limit: the depth reached and the current limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub depth: Option<usize>,
    /// For a form: its fields, in the server's order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub form: Option<crate::form::FormSpec>,
}
