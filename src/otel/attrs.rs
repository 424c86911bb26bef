//! Attribute names (OpenTelemetry GenAI semantic conventions v1.41.0, development status;
//! `taco.*` for what they have no name for) and the content a span may carry.

use std::sync::Arc;

use opentelemetry::{KeyValue, StringValue, Value};

use crate::secrets::Secrets;

/// `gen_ai.operation.name`: `invoke_agent`, `chat`, `execute_tool`.
pub const OPERATION: &str = "gen_ai.operation.name";
/// `gen_ai.provider.name`.
pub const PROVIDER: &str = "gen_ai.provider.name";
/// `gen_ai.agent.name`.
pub const AGENT_NAME: &str = "gen_ai.agent.name";
/// `gen_ai.conversation.id`: the session.
pub const CONVERSATION: &str = "gen_ai.conversation.id";
/// `gen_ai.request.model`.
pub const REQUEST_MODEL: &str = "gen_ai.request.model";
/// `gen_ai.response.model`.
pub const RESPONSE_MODEL: &str = "gen_ai.response.model";
/// `gen_ai.response.finish_reasons`.
pub const FINISH_REASONS: &str = "gen_ai.response.finish_reasons";
/// `gen_ai.usage.input_tokens`.
pub const INPUT_TOKENS: &str = "gen_ai.usage.input_tokens";
/// `gen_ai.usage.output_tokens`.
pub const OUTPUT_TOKENS: &str = "gen_ai.usage.output_tokens";
/// `gen_ai.usage.cache_read.input_tokens`.
pub const CACHED_TOKENS: &str = "gen_ai.usage.cache_read.input_tokens";
/// `gen_ai.tool.name`.
pub const TOOL_NAME: &str = "gen_ai.tool.name";
/// `gen_ai.tool.call.id`.
pub const TOOL_CALL_ID: &str = "gen_ai.tool.call.id";
/// `gen_ai.tool.type`: `function` (taco's own), `extension` (an MCP server's).
pub const TOOL_TYPE: &str = "gen_ai.tool.type";
/// `error.type`.
pub const ERROR_TYPE: &str = "error.type";
/// `process.exit.code`: a shell command's.
pub const EXIT_CODE: &str = "process.exit.code";
/// `mcp.method.name`.
pub const MCP_METHOD: &str = "mcp.method.name";
/// `gen_ai.input.messages` (content: only when captured).
pub const INPUT_MESSAGES: &str = "gen_ai.input.messages";
/// `gen_ai.output.messages` (content: only when captured).
pub const OUTPUT_MESSAGES: &str = "gen_ai.output.messages";
/// `gen_ai.tool.call.arguments` (content: only when captured).
pub const TOOL_ARGUMENTS: &str = "gen_ai.tool.call.arguments";
/// `gen_ai.tool.call.result` (content: only when captured).
pub const TOOL_RESULT: &str = "gen_ai.tool.call.result";

/// Longest content attribute, in bytes (longer ones are cut in the middle of nothing:
/// at a char boundary, marked).
pub const MAX_CONTENT: usize = 32 * 1024;

/// Whether spans carry content (prompts, answers, arguments, results), and how it is
/// masked: `[otel] capture_content`.
#[derive(Clone, Default)]
pub struct Content {
    /// `None`: no content at all.
    masker: Option<Arc<Secrets>>,
}

impl std::fmt::Debug for Content {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Content")
            .field("captured", &self.masker.is_some())
            .finish()
    }
}

impl Content {
    /// No content in spans (the default).
    pub fn none() -> Self {
        Self::default()
    }

    /// Content in spans, with these key values masked.
    pub fn captured(secrets: Arc<Secrets>) -> Self {
        Self {
            masker: Some(secrets),
        }
    }

    /// Whether content is captured.
    pub fn is_captured(&self) -> bool {
        self.masker.is_some()
    }

    /// `key = text`, masked and bounded, when content is captured.
    pub fn attribute(&self, key: &'static str, text: &str) -> Option<KeyValue> {
        let masker = self.masker.as_ref()?;
        let masked = masker.redact(text);
        let cut = &masked[..masked.floor_char_boundary(MAX_CONTENT)];
        let value = if cut.len() < masked.len() {
            format!("{cut}…[cut at {MAX_CONTENT} bytes]")
        } else {
            cut.to_string()
        };
        Some(KeyValue::new(key, value))
    }

    /// A chat message list as the conventions write it (`[{"role", "parts": [{"type":
    /// "text", "content"}]}]`), when content is captured.
    pub fn messages(&self, key: &'static str, role: &str, text: &str) -> Option<KeyValue> {
        if !self.is_captured() {
            return None;
        }
        let json = serde_json::json!([{
            "role": role,
            "parts": [{"type": "text", "content": text}],
        }]);
        self.attribute(key, &json.to_string())
    }
}

/// An error status with what went wrong, bounded (a failed command's error can be long).
pub fn failed(why: &str) -> opentelemetry::trace::Status {
    opentelemetry::trace::Status::error(crate::text::summarize(why, 2000))
}

/// A string attribute.
pub fn text(key: &'static str, value: impl Into<StringValue>) -> KeyValue {
    KeyValue::new(key, Value::String(value.into()))
}

/// An integer attribute (saturated into `i64`).
pub fn int(key: &'static str, value: u64) -> KeyValue {
    KeyValue::new(key, i64::try_from(value).unwrap_or(i64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_only_when_captured_masked_and_bounded() {
        assert!(Content::none().attribute(TOOL_RESULT, "x").is_none());
        let secrets = Arc::new(Secrets::new(["sk-live-SECRET-1234".to_string()]));
        let content = Content::captured(secrets);
        let kv = content
            .attribute(TOOL_RESULT, "key sk-live-SECRET-1234 here")
            .unwrap();
        assert!(!kv.value.as_str().contains("SECRET"), "{kv:?}");
        let long = "é".repeat(MAX_CONTENT);
        let kv = content.attribute(TOOL_RESULT, &long).unwrap();
        assert!(kv.value.as_str().len() < MAX_CONTENT + 64);
        assert!(kv.value.as_str().ends_with("bytes]"));
        let kv = content.messages(INPUT_MESSAGES, "user", "hi").unwrap();
        let written: serde_json::Value = serde_json::from_str(&kv.value.as_str()).unwrap();
        assert_eq!(
            written,
            serde_json::json!([{"role": "user", "parts": [{"type": "text", "content": "hi"}]}])
        );
    }
}
