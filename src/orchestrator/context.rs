//! The token-aware context (DESIGN §8): how big a request is, when to compact, where to cut,
//! and what is sent once a conversation has been compacted. Pure functions; the model call
//! that writes the summary is in `compact.rs`.

use std::borrow::Cow;

use super::recap::{self, Requests};
use crate::conversation::{Message, Role, ToolSpec};

/// The summary prompt (an asset, so it reads as prose and is reviewed as such).
pub const COMPACT_PROMPT: &str = include_str!("../../assets/compact_prompt.md");

/// How the context is managed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ContextSettings {
    /// The model's context window in tokens, when the config or the presets know it (an
    /// Ollama model's is asked of the server when this is `None`).
    pub window: Option<u64>,
    /// Compact when a request would fill more than this share of the window (0.1 – 0.99).
    pub compact_at: f64,
}

impl Default for ContextSettings {
    fn default() -> Self {
        Self {
            window: None,
            compact_at: DEFAULT_COMPACT_AT,
        }
    }
}

/// The default threshold: 85 % of the window.
pub const DEFAULT_COMPACT_AT: f64 = 0.85;

/// After compacting, the verbatim tail is kept under this share of the window, so the next
/// calls have room before the threshold comes round again.
const KEEP_SHARE: f64 = 0.35;
/// With no known window (`/compact` on an unknown model), the tail kept verbatim.
const KEEP_UNKNOWN: u64 = 8_000;
/// The transcript given to the summary call stays under this share of the window.
const TRANSCRIPT_SHARE: f64 = 0.5;
/// With no known window, the transcript's budget.
const TRANSCRIPT_UNKNOWN: u64 = 32_000;
/// One message's part of the transcript is cut to this many characters (head and tail).
const PIECE_CHARS: usize = 6_000;
/// A summary longer than this is cut: it must stay a small part of every request.
pub const MAX_SUMMARY_CHARS: usize = 24_000;
/// The most tokens the summary call may answer with, asked of the provider where its wire
/// has a field for it. Room for a reasoning model's thinking as well as the summary, which
/// is cut to [`MAX_SUMMARY_CHARS`] afterwards.
pub const SUMMARY_MAX_TOKENS: u64 = 16_384;
/// The most bytes of text and reasoning taco reads of the summary call's answer, whatever
/// the provider does with the token bound: past it the stream is stopped.
pub const SUMMARY_MAX_BYTES: usize = 256 << 10;
/// The user's earlier requests sent after a compaction stay under this share of the window.
const REQUESTS_SHARE: f64 = 0.1;
/// With no known window, their budget in tokens.
const REQUESTS_UNKNOWN: u64 = 2_000;

/// The compacted part of a conversation: `messages[1..kept_from]` are replaced by one
/// user-role block holding the user's requests among them and the summary (`recap.rs`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Compaction {
    /// The first message sent verbatim (never a tool result: its call is kept with it).
    pub kept_from: usize,
    /// The summary of everything before it (earlier summaries included).
    pub summary: String,
    /// The user's requests before `kept_from`, verbatim, as many as fit.
    pub requests: Requests,
}

/// How many bytes of the user's earlier requests a compaction keeps.
pub fn requests_budget(window: Option<u64>) -> usize {
    let tokens = window.map_or(REQUESTS_UNKNOWN, |w| (w as f64 * REQUESTS_SHARE) as u64);
    usize::try_from(tokens.saturating_mul(4)).unwrap_or(usize::MAX)
}

/// What was measured: the provider counted `tokens` input tokens for the request that sent
/// `messages[..at]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Measured {
    /// Input tokens the provider reported.
    pub tokens: u64,
    /// Messages in the conversation when that request was made.
    pub at: usize,
}

/// A rough token count of a text: about four bytes a token for English and code. Providers
/// correct it with what they report; it only has to be close enough to decide when to compact.
pub fn text_tokens(text: &str) -> u64 {
    (text.len() as u64).div_ceil(4)
}

/// The estimated tokens of one message (with the few tokens of framing each message costs).
pub fn message_tokens(message: &Message) -> u64 {
    let mut tokens = 4;
    for text in [&message.content, &message.reasoning_content]
        .into_iter()
        .flatten()
    {
        tokens += text_tokens(text);
    }
    for call in &message.tool_calls {
        tokens += 8 + text_tokens(&call.name) + text_tokens(&call.arguments_text());
    }
    tokens
}

/// The estimated tokens of a run of messages.
pub fn messages_tokens(messages: &[Message]) -> u64 {
    messages.iter().map(message_tokens).sum()
}

/// The estimated tokens the tool definitions add to every request.
pub fn specs_tokens(specs: &[ToolSpec]) -> u64 {
    specs
        .iter()
        .map(|s| {
            16 + text_tokens(&s.name)
                + text_tokens(&s.description)
                + text_tokens(&s.parameters.to_string())
        })
        .sum()
}

/// The messages one request sends: the system prompt, then either (compacted) the block that
/// stands for the compacted messages, the current run's requests from before the cut (each
/// verbatim, as the user message it was), and the messages kept after the cut, or (no
/// compaction) everything from `from` on. `run_start` is where the current run's request
/// is. Borrowed when nothing is left out.
pub fn sent<'a>(
    messages: &'a [Message],
    compaction: Option<&Compaction>,
    from: usize,
    run_start: usize,
) -> Cow<'a, [Message]> {
    let Some(system) = messages.first() else {
        return Cow::Borrowed(messages);
    };
    match compaction {
        Some(c) => {
            let kept_from = c.kept_from.min(messages.len());
            let current = current_requests(messages, run_start, kept_from);
            let kept = &messages[kept_from..];
            let mut out = Vec::with_capacity(kept.len() + 3);
            out.push(system.clone());
            out.push(recap_message(messages, c, run_start));
            out.extend(current.cloned());
            out.extend(kept.iter().cloned());
            Cow::Owned(out)
        }
        None if from <= 1 => Cow::Borrowed(messages),
        None => {
            let tail = &messages[from.min(messages.len())..];
            let mut out = Vec::with_capacity(tail.len() + 1);
            out.push(system.clone());
            out.extend(tail.iter().cloned());
            Cow::Owned(out)
        }
    }
}

/// The current run's requests that fell before the cut (`run_start..kept_from`): sent
/// verbatim, whatever the summary says.
fn current_requests(
    messages: &[Message],
    run_start: usize,
    kept_from: usize,
) -> impl Iterator<Item = &Message> {
    let from = run_start.clamp(1, kept_from.max(1));
    messages[from..kept_from]
        .iter()
        .filter(|m| m.role == Role::User)
}

/// The user-role message that stands for the compacted messages.
fn recap_message(messages: &[Message], c: &Compaction, run_start: usize) -> Message {
    let kept_from = c.kept_from.min(messages.len());
    let apart = |at: usize| at >= run_start.max(1) && at < kept_from;
    Message::user(recap::block(&c.summary, &c.requests, apart))
}

/// The estimated tokens of the next request: the larger of what the provider last measured
/// plus the estimate of what was added since, and the estimate of the whole request. The
/// larger, so a count that leaves something out (cached tokens, a proxy's own figure) never
/// delays a compaction; a tokenizer denser than the estimate raises the measured figure.
pub fn request_tokens(
    messages: &[Message],
    compaction: Option<&Compaction>,
    run_start: usize,
    measured: Option<Measured>,
    specs: &[ToolSpec],
) -> u64 {
    let estimate = sent_tokens(messages, compaction, run_start) + specs_tokens(specs);
    match measured.filter(|m| m.tokens > 0 && m.at <= messages.len()) {
        Some(m) => estimate.max(m.tokens + messages_tokens(&messages[m.at..])),
        None => estimate,
    }
}

/// The estimate of what [`sent`] would send, without copying the conversation (this runs
/// before every model call).
fn sent_tokens(messages: &[Message], compaction: Option<&Compaction>, run_start: usize) -> u64 {
    let Some(c) = compaction else {
        return messages_tokens(messages);
    };
    let Some(system) = messages.first() else {
        return 0;
    };
    let kept_from = c.kept_from.min(messages.len());
    let current: u64 = current_requests(messages, run_start, kept_from)
        .map(message_tokens)
        .sum();
    message_tokens(system)
        + message_tokens(&recap_message(messages, c, run_start))
        + current
        + messages_tokens(&messages[kept_from..])
}

/// How many tokens of the newest messages a resumed session must hold for its next requests
/// to be what they would have been: the window (a request, and a compaction's transcript,
/// fit in it), or with none known what a compaction's transcript may take.
pub fn resume_tokens(window: Option<u64>) -> u64 {
    window.unwrap_or(TRANSCRIPT_UNKNOWN)
}

/// Whether a request of `tokens` is over the threshold of `window`.
pub fn over(tokens: u64, window: u64, compact_at: f64) -> bool {
    tokens as f64 > window as f64 * compact_at
}

/// How many tokens of the latest messages a compaction keeps verbatim: a share of the
/// window; with no known window, a fixed amount. When the provider said the request was too
/// long, at most a third of what was sent, whatever the window (it was wrong, or unknown).
pub fn keep_budget(window: Option<u64>, overflowed_at: Option<u64>) -> u64 {
    let budget = window.map_or(KEEP_UNKNOWN, |w| (w as f64 * KEEP_SHARE) as u64);
    match overflowed_at {
        Some(sent) => budget.min(sent / 3),
        None => budget,
    }
}

/// Where to cut: the first message kept verbatim, so that the tail after it stays under
/// `budget` tokens, the cut never falls on a tool result (a result stays with its call), and
/// at least one message is summarised (the cut is after `start`, where the last summary
/// ended). Prefers to start the tail at a user message when one fits. `None`: nothing can
/// be cut.
pub fn cut(messages: &[Message], start: usize, budget: u64) -> Option<usize> {
    let start = start.max(1);
    let len = messages.len();
    // Candidates from the end backwards; the tail always keeps the last message.
    let mut tail = 0u64;
    let mut best = None;
    let mut best_user = None;
    for i in (start + 1..len).rev() {
        tail += message_tokens(&messages[i]);
        if messages[i].role == Role::Tool {
            continue;
        }
        if tail > budget && best.is_some() {
            break;
        }
        best = Some(i);
        if messages[i].role == Role::User {
            best_user = Some(i);
        }
        if tail > budget {
            break;
        }
    }
    best_user.or(best)
}

/// The tags of the transcript's blocks; text inside a block cannot open or close one, so a
/// tool result cannot pass itself off as the user's words.
const TRANSCRIPT_TAGS: [&str; 5] = [
    "user",
    "assistant",
    "tool_result",
    "system_note",
    "earlier_summary",
];

/// The transcript handed to the summary call: the previous summary, then each message as a
/// tagged block, long ones cut in the middle; kept under the budget by leaving out the
/// oldest blocks, the user's own words and the previous summary last (what was asked
/// matters most, and they are short).
pub fn transcript(previous: Option<&str>, messages: &[Message], window: Option<u64>) -> String {
    let budget = window.map_or(TRANSCRIPT_UNKNOWN, |w| (w as f64 * TRANSCRIPT_SHARE) as u64);
    let budget_chars = usize::try_from(budget.saturating_mul(4)).unwrap_or(usize::MAX);
    // (text, protected): protected blocks go only when nothing else is left to drop.
    let mut blocks: Vec<(String, bool)> = messages
        .iter()
        .map(|m| (block(m), m.role == Role::User))
        .collect();
    if let Some(summary) = previous {
        let summary = recap::defuse_tags(summary, &TRANSCRIPT_TAGS);
        blocks.insert(
            0,
            (
                format!("<earlier_summary>\n{summary}\n</earlier_summary>"),
                true,
            ),
        );
    }
    let mut total: usize = blocks.iter().map(|(b, _)| b.len() + 2).sum();
    let mut dropped = 0;
    for protected in [false, true] {
        while total > budget_chars && blocks.len() > 1 {
            let Some(i) = blocks.iter().position(|(_, p)| *p == protected) else {
                break;
            };
            total -= blocks[i].0.len() + 2;
            blocks.remove(i);
            dropped += 1;
        }
    }
    let mut out = String::new();
    if dropped > 0 {
        out.push_str(&format!(
            "[{dropped} older parts left out: they did not fit]\n\n"
        ));
    }
    let texts: Vec<&str> = blocks.iter().map(|(b, _)| b.as_str()).collect();
    out.push_str(&texts.join("\n\n"));
    out
}

/// One message as a transcript block.
fn block(message: &Message) -> String {
    let (open, close) = match message.role {
        Role::System => ("<system_note>".to_string(), "</system_note>"),
        Role::User => ("<user>".to_string(), "</user>"),
        Role::Assistant => ("<assistant>".to_string(), "</assistant>"),
        Role::Tool => {
            // A name the model made up is shown only as far as it is a plain name.
            let name: String = message
                .name
                .as_deref()
                .unwrap_or("?")
                .chars()
                .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
                .take(64)
                .collect();
            (format!("<tool_result tool=\"{name}\">"), "</tool_result>")
        }
    };
    let mut out = open;
    if let Some(content) = message.content.as_deref().filter(|c| !c.is_empty()) {
        out.push('\n');
        out.push_str(&recap::defuse_tags(
            &middle_cut(content, PIECE_CHARS),
            &TRANSCRIPT_TAGS,
        ));
    }
    for call in &message.tool_calls {
        let arguments = middle_cut(&call.arguments_text(), PIECE_CHARS / 4).into_owned();
        out.push_str(&recap::defuse_tags(
            &format!("\n[calls {} with {arguments}]", call.name),
            &TRANSCRIPT_TAGS,
        ));
    }
    out.push('\n');
    out.push_str(close);
    out
}

/// `text` cut to about `max` bytes, keeping its head and tail.
pub fn middle_cut(text: &str, max: usize) -> Cow<'_, str> {
    if text.len() <= max {
        return Cow::Borrowed(text);
    }
    let half = max / 2;
    let head = floor(text, half);
    let tail = ceil(text, text.len() - half);
    Cow::Owned(format!(
        "{} […{} bytes cut…] {}",
        &text[..head],
        tail - head,
        &text[tail..]
    ))
}

fn floor(text: &str, mut i: usize) -> usize {
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn ceil(text: &str, mut i: usize) -> usize {
    while !text.is_char_boundary(i) {
        i += 1;
    }
    i
}

#[cfg(test)]
mod tests;
