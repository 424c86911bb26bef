//! The Messages request body, serialized straight from the conversation (borrowing, no
//! intermediate `Value` tree).
//!
//! The API wants alternating user/assistant turns and has no system or tool role inside
//! `messages`, so the conversation is regrouped: leading system messages become `system`; tool
//! results become `tool_result` blocks of a user turn; later system messages (the max-turns
//! notice) become `[system] …` user text; consecutive messages of the same wire role merge into
//! one turn; a message with nothing to send (an empty assistant reply) is left out.

use std::fmt;

use serde::de::IgnoredAny;
use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::AnthropicConfig;
use crate::conversation::{Message, Role, ToolCall};
use crate::provider::ChatRequest;
use crate::provider::wire::{AsStr, extra_fields};

/// The whole request body.
pub(super) struct WireRequest<'a> {
    pub config: &'a AnthropicConfig,
    pub request: ChatRequest<'a>,
}

impl Serialize for WireRequest<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let (config, extra) = (self.config, &self.config.extra_body);
        let messages = self.request.messages;
        let lead = messages
            .iter()
            .take_while(|m| m.role == Role::System)
            .count();
        let system = Joined(&messages[..lead]);
        // Without tools, the API refuses `tool_use`/`tool_result` blocks ("Requests which
        // include tool_use or tool_result blocks must define tools"), and the max-turns answer
        // is asked for without tools: earlier calls and results are then sent as text.
        let tools_as_text = self.request.tools.is_empty();
        let turns = turns(&messages[lead..], tools_as_text);
        let ours = |key: &str| !extra.contains_key(key);
        let mut map = serializer.serialize_map(None)?;
        if ours("model") {
            map.serialize_entry("model", &config.model)?;
        }
        if ours("max_tokens") {
            // A call's own bound (the summary's) lowers the configured one; thinking tokens
            // count against `max_tokens`, so its budget is added back.
            let max_tokens = match self.request.max_tokens {
                Some(n) => {
                    let thinking = config.thinking_budget.filter(|_| ours("thinking"));
                    config
                        .max_tokens
                        .min(n.saturating_add(thinking.unwrap_or(0)))
                }
                None => config.max_tokens,
            };
            map.serialize_entry("max_tokens", &max_tokens)?;
        }
        map.serialize_entry("stream", &true)?;
        if !system.is_empty() && ours("system") {
            map.serialize_entry("system", &system)?;
        }
        map.serialize_entry("messages", &turns)?;
        if !self.request.tools.is_empty() && ours("tools") {
            let tools: Vec<Tool<'_>> = self
                .request
                .tools
                .iter()
                .map(|t| Tool {
                    name: &t.name,
                    description: &t.description,
                    input_schema: &t.parameters,
                })
                .collect();
            map.serialize_entry("tools", &tools)?;
        }
        if let Some(budget_tokens) = config.thinking_budget.filter(|_| ours("thinking")) {
            let thinking = Thinking {
                kind: "enabled",
                budget_tokens,
            };
            map.serialize_entry("thinking", &thinking)?;
        }
        extra_fields(&mut map, extra)?;
        map.end()
    }
}

#[derive(Serialize)]
struct Tool<'a> {
    name: &'a str,
    description: &'a str,
    input_schema: &'a Value,
}

#[derive(Serialize)]
struct Thinking {
    #[serde(rename = "type")]
    kind: &'static str,
    budget_tokens: u64,
}

/// The text of system messages joined with blank lines (empty ones skipped).
struct Joined<'a>(&'a [Message]);

impl Joined<'_> {
    fn parts(&self) -> impl Iterator<Item = &str> {
        self.0
            .iter()
            .filter_map(|m| m.content.as_deref())
            .filter(|text| has_text(text))
    }

    fn is_empty(&self) -> bool {
        self.parts().next().is_none()
    }
}

impl fmt::Display for Joined<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, part) in self.parts().enumerate() {
            if i > 0 {
                f.write_str("\n\n")?;
            }
            f.write_str(part)?;
        }
        Ok(())
    }
}

impl Serialize for Joined<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// One message of the wire: a role and its content blocks.
struct Turn<'a> {
    role: &'static str,
    blocks: Vec<Block<'a>>,
}

impl Serialize for Turn<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(2))?;
        map.serialize_entry("role", self.role)?;
        map.serialize_entry("content", &self.blocks)?;
        map.end()
    }
}

/// One content block, borrowing from the conversation.
enum Block<'a> {
    Text(&'a str),
    /// Text written here rather than by the author (system notices, calls sent as text).
    Note(String),
    Thinking {
        thinking: &'a str,
        signature: &'a str,
    },
    ToolUse(&'a ToolCall),
    ToolResult {
        id: &'a str,
        content: &'a str,
    },
    /// An image of a user message, its bytes as a base64 source.
    Image(crate::images::MediaType, &'a [u8]),
}

impl Serialize for Block<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        match self {
            Block::Text(text) => {
                map.serialize_entry("type", "text")?;
                map.serialize_entry("text", text)?;
            }
            Block::Note(text) => {
                map.serialize_entry("type", "text")?;
                map.serialize_entry("text", text)?;
            }
            Block::Thinking {
                thinking,
                signature,
            } => {
                map.serialize_entry("type", "thinking")?;
                map.serialize_entry("thinking", thinking)?;
                map.serialize_entry("signature", signature)?;
            }
            Block::ToolUse(call) => {
                map.serialize_entry("type", "tool_use")?;
                map.serialize_entry("id", &call.id)?;
                map.serialize_entry("name", &call.name)?;
                // `input` must be an object; unparsable arguments were already reported to
                // the model as an error result, so the call is replayed without them.
                match &call.arguments {
                    input @ Value::Object(_) => map.serialize_entry("input", input)?,
                    _ => map.serialize_entry("input", &EmptyObject {})?,
                }
            }
            Block::Image(media_type, data) => {
                map.serialize_entry("type", "image")?;
                map.serialize_entry("source", &ImageSource(*media_type, data))?;
            }
            Block::ToolResult { id, content } => {
                map.serialize_entry("type", "tool_result")?;
                map.serialize_entry("tool_use_id", id)?;
                map.serialize_entry("content", content)?;
                if is_error_result(content) {
                    map.serialize_entry("is_error", &true)?;
                }
            }
        }
        map.end()
    }
}

#[derive(Serialize)]
struct EmptyObject {}

/// `{"type": "base64", "media_type", "data"}`, the base64 written straight into the body.
struct ImageSource<'a>(crate::images::MediaType, &'a [u8]);

impl Serialize for ImageSource<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(3))?;
        map.serialize_entry("type", "base64")?;
        map.serialize_entry("media_type", self.0.mime())?;
        map.serialize_entry("data", &AsStr(crate::images::Base64(self.1)))?;
        map.end()
    }
}

/// Whether a tool result is the orchestrator's `{"error": …}` form. The probe skips every other
/// field without building a tree, so large results cost one scan.
fn is_error_result(content: &str) -> bool {
    #[derive(Deserialize)]
    struct Probe {
        error: Option<IgnoredAny>,
    }
    content.trim_start().starts_with('{')
        && serde_json::from_str::<Probe>(content).is_ok_and(|p| p.error.is_some())
}

/// The API rejects text blocks that are empty or only whitespace.
fn has_text(text: &str) -> bool {
    !text.trim().is_empty()
}

/// Regroups the conversation (after its leading system messages) into alternating turns.
fn turns(messages: &[Message], tools_as_text: bool) -> Vec<Turn<'_>> {
    let mut turns: Vec<Turn<'_>> = Vec::with_capacity(messages.len());
    for message in messages {
        let role = if message.role == Role::Assistant {
            "assistant"
        } else {
            "user"
        };
        let blocks = blocks(message, tools_as_text);
        if blocks.is_empty() {
            continue;
        }
        match turns.last_mut() {
            Some(turn) if turn.role == role => turn.blocks.extend(blocks),
            _ => turns.push(Turn { role, blocks }),
        }
    }
    turns
}

/// The content blocks of one message, in the order the API requires.
fn blocks(message: &Message, tools_as_text: bool) -> Vec<Block<'_>> {
    let text = message.content.as_deref().filter(|t| has_text(t));
    let mut blocks = Vec::new();
    match message.role {
        Role::User => {
            // Images first: Anthropic's vision guide says Claude works best with the
            // images before the text about them.
            for image in &message.images {
                match &image.data {
                    Some(data) => blocks.push(Block::Image(image.media_type, &data[..])),
                    None => blocks.push(Block::Note(image.missing_note())),
                }
            }
            blocks.extend(text.map(Block::Text));
        }
        Role::System => blocks.extend(text.map(|t| Block::Note(format!("[system] {t}")))),
        Role::Tool => {
            let id = message.tool_call_id.as_deref().unwrap_or("");
            let content = message.content.as_deref().unwrap_or("");
            if tools_as_text {
                let name = message.name.as_deref().unwrap_or(id);
                blocks.push(Block::Note(format!("[tool `{name}` returned: {content}]")));
            } else {
                blocks.push(Block::ToolResult { id, content });
            }
        }
        Role::Assistant => {
            // Unsigned thinking is rejected, and a signed one must come first.
            let thinking = message
                .reasoning_content
                .as_deref()
                .filter(|t| !t.is_empty());
            let signature = message
                .reasoning_signature
                .as_deref()
                .filter(|s| !s.is_empty());
            if let (Some(thinking), Some(signature)) = (thinking, signature) {
                blocks.push(Block::Thinking {
                    thinking,
                    signature,
                });
            }
            blocks.extend(text.map(Block::Text));
            for call in &message.tool_calls {
                if tools_as_text {
                    let (name, args) = (&call.name, call.arguments_text());
                    blocks.push(Block::Note(format!("[called tool `{name}` with {args}]")));
                } else {
                    blocks.push(Block::ToolUse(call));
                }
            }
        }
    }
    blocks
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_results_are_recognised_without_false_positives() {
        assert!(is_error_result(r#"{"error":"boom"}"#));
        assert!(is_error_result(r#" {"ok":false,"error":{"kind":"x"}}"#));
        assert!(!is_error_result(r#"{"error":null}"#));
        assert!(!is_error_result(r#"{"result":"the error was fixed"}"#));
        assert!(!is_error_result(r#"["error"]"#));
        assert!(!is_error_result("error: plain text"));
        assert!(!is_error_result(r#"{"error": "#));
    }
}
