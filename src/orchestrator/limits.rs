//! Bounds on one request and on each model call (issue 9.6): a hostile or broken provider,
//! or a model that never stops delegating, cannot exhaust memory, time or money.

use std::time::Duration;

use crate::provider::{Chunk, ProviderError};

/// What one request and each of its model calls may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Model calls one request may make, sub-agents included.
    pub max_model_calls: u32,
    /// How deeply sub-agents may nest (a sub-agent's own sub-agent is depth 2).
    pub max_subagent_depth: u32,
    /// Longest a model call may go without progress: keep-alives and empty deltas do not
    /// count, so a stream that only pings ends like a silent one.
    pub idle: Duration,
    /// Longest one model call may take in all, from sending the request to the last chunk.
    pub call_deadline: Duration,
    /// Most bytes of text, reasoning and tool arguments one reply may carry.
    pub max_reply_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_model_calls: 200,
            max_subagent_depth: 3,
            idle: Duration::from_secs(120),
            call_deadline: Duration::from_secs(900),
            // Far beyond any model's output limit (≈ 4M tokens), far below the machine's memory.
            max_reply_bytes: 16 << 20,
        }
    }
}

/// How much a chunk adds to the reply, and whether it is progress (a keep-alive is not).
pub(super) fn weigh(chunk: &Chunk) -> (usize, bool) {
    match chunk {
        Chunk::Text(text) | Chunk::Reasoning(text) => (text.len(), !text.is_empty()),
        Chunk::ReasoningSignature(sig) => (sig.len(), !sig.is_empty()),
        Chunk::ToolCall(delta) => {
            let size = delta.arguments.len()
                + delta.id.as_ref().map_or(0, String::len)
                + delta.name.as_ref().map_or(0, String::len);
            (size, size > 0)
        }
        Chunk::Usage(_) | Chunk::Finish(_) | Chunk::Timings(_) => (0, true),
    }
}

/// The error for a reply that grew past `max` bytes (`max_reply_bytes`).
pub(super) fn too_large(max: usize) -> ProviderError {
    ProviderError::Limit(format!(
        "the reply passed {} (max_reply_bytes); stopped reading it",
        bytes(max)
    ))
}

/// The error for a nested call's answer that grew past the `max` bytes its tool takes.
pub(super) fn answer_too_large(max: usize) -> ProviderError {
    ProviderError::Limit(format!(
        "the answer passed {}, the most this tool takes; stopped reading it",
        bytes(max)
    ))
}

/// The error for a summary call whose answer grew past the `max` bytes taco reads of one.
pub(super) fn summary_too_large(max: usize) -> ProviderError {
    ProviderError::Limit(format!(
        "the summary passed {}, the most taco reads of one; stopped reading it",
        bytes(max)
    ))
}

/// The error for a call that ran past its deadline.
pub(super) fn past_deadline(deadline: Duration) -> ProviderError {
    ProviderError::Limit(format!(
        "the model call took longer than {} s (call_timeout_secs); stopped it",
        deadline.as_secs()
    ))
}

/// The error for a stream that only sent keep-alives or empty deltas.
pub(super) fn no_progress(idle: Duration) -> ProviderError {
    ProviderError::Timeout(format!(
        "nothing but keep-alives or empty deltas from the model for {} s",
        idle.as_secs()
    ))
}

/// The error for a request that used up its model calls.
pub(super) fn out_of_calls(max: u32) -> ProviderError {
    ProviderError::Limit(format!(
        "this request has made {max} model calls (max_model_calls), sub-agents included; \
         stopped. Ask for something smaller, or raise max_model_calls in the config"
    ))
}

/// The error for a request the provider still found too long after a compaction (or one
/// that could not be compacted): what the provider said, and what the user can do.
pub(super) fn does_not_fit(said: &str, window: Option<u64>) -> ProviderError {
    let setting = match window {
        Some(w) => format!("taco plans for a window of {w} tokens; if the model's is smaller, set context_window in its [providers.NAME.options]"),
        None => "taco does not know this model's window: set context_window in its [providers.NAME.options] so it compacts in time".to_string(),
    };
    ProviderError::ContextExceeded(format!(
        "{said}. The conversation does not fit the model's context even after compacting: \
         start afresh with /clear, or use a model with a larger window ({setting})"
    ))
}

fn bytes(n: usize) -> String {
    if n >= 1 << 20 && n.is_multiple_of(1 << 20) {
        format!("{} MiB", n >> 20)
    } else if n >= 1 << 10 && n.is_multiple_of(1 << 10) {
        format!("{} KiB", n >> 10)
    } else {
        format!("{n} bytes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::ToolCallDelta;

    #[test]
    fn keep_alives_are_not_progress() {
        assert_eq!(weigh(&Chunk::Text(String::new())), (0, false));
        assert_eq!(weigh(&Chunk::Reasoning(String::new())), (0, false));
        assert_eq!(
            weigh(&Chunk::ToolCall(ToolCallDelta::default())),
            (0, false)
        );
        assert_eq!(weigh(&Chunk::Text("héllo".into())), (6, true));
        let delta = ToolCallDelta {
            index: 0,
            id: Some("c1".into()),
            name: Some("shell".into()),
            arguments: "{}".into(),
        };
        assert_eq!(weigh(&Chunk::ToolCall(delta)), (9, true));
        assert_eq!(weigh(&Chunk::Finish("stop".into())), (0, true));
    }

    #[test]
    fn messages_name_the_setting() {
        assert!(
            too_large(16 << 20)
                .to_string()
                .contains("16 MiB (max_reply_bytes)")
        );
        assert!(out_of_calls(200).to_string().contains("200 model calls"));
        assert!(!out_of_calls(1).is_retryable());
        assert!(no_progress(Duration::from_secs(3)).is_retryable());
    }
}
