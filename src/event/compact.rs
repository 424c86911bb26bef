//! `compacted`: older messages were summarised by one model call to keep the conversation in
//! the context window (DESIGN §8).

use serde::{Deserialize, Serialize};

use crate::conversation::Usage;

/// Why a conversation was compacted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CompactTrigger {
    /// The next request would have passed the threshold (`compact_at_percent`).
    Auto,
    /// The provider answered that the request was too long.
    Overflow,
    /// The user asked (`/compact`).
    Manual,
}

/// Data of a `compacted` event: older messages were summarised by one model call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Compacted {
    /// What asked for it.
    pub trigger: CompactTrigger,
    /// Estimated tokens of the request before.
    pub before_tokens: u64,
    /// Estimated tokens of the request after.
    pub after_tokens: u64,
    /// The window it was measured against, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<u64>,
    /// Messages the summary now stands for (earlier compactions included).
    pub summarized: usize,
    /// The first message still sent verbatim (its index in the conversation, the system
    /// prompt being 0); a resumed session starts compacted from here.
    pub kept_from: usize,
    /// The summary.
    pub summary: String,
    /// The user's requests before `kept_from`, oldest first, verbatim: as many of the newest
    /// as fit their budget. Sent with the summary after the compaction (so a resumed session
    /// sends them too); absent in files written before issue 26.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub requests: Vec<String>,
    /// How many older requests were left out for the budget.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub requests_left_out: usize,
    /// Tokens of the summary call.
    pub usage: Usage,
    /// Wall time of the summary call.
    pub duration_ms: u64,
    /// The stack frame of the conversation, if a sub-agent's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
    /// Why nothing was compacted (the history is sent as before); `None` when it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The summary call it ended (`llm_started.call`), when one answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call: Option<u32>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}
