//! A model call's span (issue 27): `llm_started` when a provider call begins, `llm_progress`
//! while it streams (live only), and its end: `llm_call` when it answered, `compacted` for a
//! summary call, `llm_failed` when it failed or was cancelled. Each names the call by its
//! number in the run, so the timeline shows a call in flight as one row from its start.

use serde::{Deserialize, Serialize};

/// What a model call was for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Purpose {
    /// A turn of the user's conversation (the answer-now call after the turn limit too).
    #[default]
    Conversation,
    /// A turn of a sub-agent's conversation (`delegate`).
    SubAgent,
    /// The summary of a compaction.
    Compaction,
    /// Whether a reply to a parameter question answers it (one call, no tools).
    AnswerCheck,
    /// Text a running tool asked the model for (`create_code`'s code).
    ForTool,
}

impl Purpose {
    /// What a call under `parent` is for when nothing says more: a nested one is a
    /// sub-agent's (files written before `purpose` existed are read so).
    pub fn by_parent(parent: Option<&str>) -> Self {
        match parent {
            Some(_) => Self::SubAgent,
            None => Self::Conversation,
        }
    }

    /// What a call was for, in a few words (the timeline's rows, the chat's nested lines):
    /// `llm turn 3`, `sub-agent turn 1`, `compaction summary`, `answer check`, `llm for
    /// create_code` (`tool`: the tool that asked, when known).
    pub fn label(self, turn: u32, tool: Option<&str>) -> String {
        match self {
            Self::Conversation => format!("llm turn {turn}"),
            Self::SubAgent => format!("sub-agent turn {turn}"),
            Self::Compaction => "compaction summary".to_string(),
            Self::AnswerCheck => "answer check".to_string(),
            Self::ForTool => match tool {
                Some(tool) => format!("llm for {tool}"),
                None => "llm for a tool".to_string(),
            },
        }
    }
}

/// Data of an `llm_started` event: a provider call begins (once per call; its retries are
/// `retry` events).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LlmStarted {
    /// The call's number in its run (1-based); its progress and its end name it.
    pub call: u32,
    /// What it is for.
    pub purpose: Purpose,
    /// The frame it runs under (a sub-agent's `delegate`, the tool or question that asked).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
    /// Model id.
    pub model: String,
    /// Its conversation's turn (1 for calls outside a conversation's turns).
    pub turn: u32,
}

/// Data of an `llm_progress` event: how much a call in flight has streamed (totals of the
/// attempt in progress, sent on its first byte and then at most every 250 ms); live only,
/// never in files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct LlmProgress {
    /// The call (`llm_started.call`).
    pub call: u32,
    /// Time from the attempt's request to its first byte.
    pub ttft_ms: u64,
    /// Bytes of answer text so far.
    pub text_bytes: u64,
    /// Bytes of reasoning so far.
    pub reasoning_bytes: u64,
    /// Bytes of tool calls (names and arguments) so far.
    pub tool_bytes: u64,
}

impl LlmProgress {
    /// Output tokens so far, estimated at four bytes a token (providers count tokens only
    /// when the call ends; a byte length costs nothing per chunk, and for text outside ASCII
    /// it is nearer the count than characters are): answer and tool calls, then reasoning.
    pub fn tokens(&self) -> (u64, u64) {
        (
            self.text_bytes.saturating_add(self.tool_bytes).div_ceil(4),
            self.reasoning_bytes.div_ceil(4),
        )
    }
}

/// How a model call ended without an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LlmEnd {
    /// The provider failed, past its retries (or in a way no retry helps).
    Failed,
    /// The user (or the tool that asked) cancelled it.
    Cancelled,
}

/// Data of an `llm_failed` event: a model call ended without an answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LlmFailed {
    /// The call (`llm_started.call`).
    pub call: u32,
    /// Failed or cancelled.
    pub end: LlmEnd,
    /// What went wrong (redacted), when it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}
