//! Assembles a streamed reply into one turn: text, reasoning, tool calls merged by index
//! (DESIGN §4.2), usage and finish reason. Arguments are parsed once, when the turn ends.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::conversation::{Timings, ToolCall, Usage};
use crate::provider::{Chunk, ToolCallDelta};

/// A complete assistant turn.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Turn {
    /// Answer text (empty when the model sent none).
    pub content: String,
    /// Reasoning text (empty when none).
    pub reasoning: String,
    /// Tool calls in index order.
    pub tool_calls: Vec<ToolCall>,
    /// Why the model stopped.
    pub finish_reason: Option<String>,
    /// Token usage.
    pub usage: Usage,
    /// The reasoning's signature, when the provider signs it.
    pub reasoning_signature: Option<String>,
    /// Server-side timings, when the provider reports them.
    pub timings: Option<Timings>,
}

#[derive(Debug, Default)]
struct PartialCall {
    id: String,
    name: String,
    arguments: String,
}

/// Merges chunks into a [`Turn`].
#[derive(Debug, Default)]
pub struct TurnAssembler {
    content: String,
    reasoning: String,
    calls: BTreeMap<usize, PartialCall>,
    finish_reason: Option<String>,
    usage: Usage,
    signature: Option<String>,
    timings: Option<Timings>,
}

impl TurnAssembler {
    /// An empty assembler.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds one chunk.
    pub fn push(&mut self, chunk: Chunk) {
        match chunk {
            Chunk::Text(text) => self.content.push_str(&text),
            Chunk::Reasoning(text) => self.reasoning.push_str(&text),
            Chunk::ToolCall(delta) => self.push_call(delta),
            Chunk::Usage(usage) => {
                // Providers report usage in pieces (Anthropic: input at start, output at end);
                // a later non-zero count replaces an earlier one.
                if usage.input_tokens > 0 {
                    self.usage.input_tokens = usage.input_tokens;
                }
                if usage.output_tokens > 0 {
                    self.usage.output_tokens = usage.output_tokens;
                }
                if usage.cached_tokens > 0 {
                    self.usage.cached_tokens = usage.cached_tokens;
                }
            }
            Chunk::Finish(reason) => self.finish_reason = Some(reason),
            Chunk::ReasoningSignature(signature) => self.signature = Some(signature),
            Chunk::Timings(timings) => self.timings = Some(timings),
        }
    }

    /// Appends answer text (lets callers forward the owned delta without cloning it).
    pub fn push_text(&mut self, text: &str) {
        self.content.push_str(text);
    }

    /// Appends reasoning text.
    pub fn push_reasoning(&mut self, text: &str) {
        self.reasoning.push_str(text);
    }

    fn push_call(&mut self, delta: ToolCallDelta) {
        let call = self.calls.entry(delta.index).or_default();
        if call.id.is_empty()
            && let Some(id) = delta.id
        {
            call.id = id;
        }
        // A repeated or empty name in a later delta never overwrites the first one.
        if call.name.is_empty()
            && let Some(name) = delta.name
        {
            call.name = name;
        }
        call.arguments.push_str(&delta.arguments);
    }

    /// Text received so far.
    pub fn content(&self) -> &str {
        &self.content
    }

    /// Whether any output (text, reasoning or a tool call) has arrived.
    pub fn has_output(&self) -> bool {
        !self.content.is_empty() || !self.reasoning.is_empty() || !self.calls.is_empty()
    }

    /// Ends the turn: parses every call's arguments once and returns the turn.
    pub fn finish(self) -> Turn {
        let tool_calls = self
            .calls
            .into_values()
            .map(|call| ToolCall {
                id: if call.id.is_empty() {
                    format!("call_{}", uuid::Uuid::new_v4().simple())
                } else {
                    call.id
                },
                name: call.name,
                arguments: parse_arguments(call.arguments),
            })
            .collect();
        Turn {
            content: self.content,
            reasoning: self.reasoning,
            tool_calls,
            finish_reason: self.finish_reason,
            usage: self.usage,
            reasoning_signature: self.signature,
            timings: self.timings,
        }
    }
}

/// Parses the arguments text of a call: empty means `{}`; invalid JSON is kept as a string so
/// validation can tell the model what it sent.
pub fn parse_arguments(raw: String) -> Value {
    if raw.trim().is_empty() {
        return Value::Object(Default::default());
    }
    serde_json::from_str(&raw).unwrap_or(Value::String(raw))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn call(index: usize, id: Option<&str>, name: Option<&str>, args: &str) -> Chunk {
        Chunk::ToolCall(ToolCallDelta {
            index,
            id: id.map(String::from),
            name: name.map(String::from),
            arguments: args.to_string(),
        })
    }

    #[test]
    fn merges_fragments_by_index_and_keeps_the_first_name() {
        let mut a = TurnAssembler::new();
        a.push(Chunk::Text("Hi".into()));
        a.push(call(1, Some("b"), Some("read_file"), ""));
        a.push(call(1, None, Some(""), "{\"path\":"));
        a.push(call(1, None, Some("read_file"), " \".\"}"));
        a.push(call(2, Some("c"), Some("list_dir"), "{}"));
        a.push(Chunk::Finish("tool_calls".into()));
        a.push(Chunk::Usage(Usage {
            input_tokens: 5,
            output_tokens: 0,
            cached_tokens: 0,
        }));
        a.push(Chunk::Usage(Usage {
            input_tokens: 0,
            output_tokens: 7,
            cached_tokens: 0,
        }));
        let turn = a.finish();
        assert_eq!(turn.content, "Hi");
        assert_eq!(turn.tool_calls.len(), 2);
        assert_eq!(turn.tool_calls[0].id, "b");
        assert_eq!(turn.tool_calls[0].name, "read_file");
        assert_eq!(turn.tool_calls[0].arguments, json!({"path": "."}));
        assert_eq!(turn.tool_calls[1].arguments, json!({}));
        assert_eq!(turn.finish_reason.as_deref(), Some("tool_calls"));
        assert_eq!(
            turn.usage,
            Usage {
                input_tokens: 5,
                output_tokens: 7,
                cached_tokens: 0,
            }
        );
    }

    #[test]
    fn invalid_arguments_stay_raw_and_missing_ids_are_generated() {
        let mut a = TurnAssembler::new();
        a.push(call(0, None, Some("x"), "{\"a\": "));
        let turn = a.finish();
        assert_eq!(
            turn.tool_calls[0].arguments,
            Value::String("{\"a\": ".into())
        );
        assert!(turn.tool_calls[0].id.starts_with("call_"));
    }
}
