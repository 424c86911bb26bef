//! Provider-neutral conversation model: messages, roles, tool calls and usage.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Who wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Instructions for the model.
    System,
    /// The person at the keyboard.
    User,
    /// The model.
    Assistant,
    /// A tool result answering one tool call.
    Tool,
}

/// One tool call requested by the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// Provider-issued id (generated when the provider sends none).
    pub id: String,
    /// Tool name as the model wrote it.
    pub name: String,
    /// Parsed arguments. When the model's text was not valid JSON this is
    /// `Value::String(raw)`, so the raw text survives and validation reports it.
    pub arguments: Value,
}

impl ToolCall {
    /// The arguments as JSON text, as OpenAI-style wires carry them.
    pub fn arguments_text(&self) -> String {
        match &self.arguments {
            Value::String(raw) => raw.clone(),
            other => other.to_string(),
        }
    }
}

/// A message of the conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// Author of the message.
    pub role: Role,
    /// Text content; `None` when an assistant message carries only tool calls.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    /// Reasoning text of reasoning models (kept so it can be sent back when required).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_content: Option<String>,
    /// The provider's proof that the reasoning is its own (Anthropic's thinking `signature`),
    /// sent back with the reasoning during a tool loop.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_signature: Option<String>,
    /// Tool calls of an assistant message, in the order the model made them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// For `Role::Tool`: the id of the call this message answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// For `Role::Tool`: the name of the tool that produced it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// For `Role::User`: the images the prompt named. Serialized as references (name, size,
    /// hash), never as bytes: `images::store` keeps the bytes once.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<crate::images::Image>,
}

impl Message {
    fn plain(role: Role, content: impl Into<String>) -> Self {
        Self {
            role,
            content: Some(content.into()),
            reasoning_content: None,
            reasoning_signature: None,
            tool_calls: Vec::new(),
            tool_call_id: None,
            name: None,
            images: Vec::new(),
        }
    }

    /// A system message.
    pub fn system(content: impl Into<String>) -> Self {
        Self::plain(Role::System, content)
    }

    /// A user message.
    pub fn user(content: impl Into<String>) -> Self {
        Self::plain(Role::User, content)
    }

    /// A user message with images.
    pub fn user_with_images(content: impl Into<String>, images: Vec<crate::images::Image>) -> Self {
        let mut message = Self::plain(Role::User, content);
        message.images = images;
        message
    }

    /// An assistant message, optionally with reasoning and tool calls.
    pub fn assistant(
        content: Option<String>,
        reasoning_content: Option<String>,
        tool_calls: Vec<ToolCall>,
    ) -> Self {
        Self {
            role: Role::Assistant,
            content,
            reasoning_content,
            reasoning_signature: None,
            tool_calls,
            tool_call_id: None,
            name: None,
            images: Vec::new(),
        }
    }

    /// A tool result message answering `call_id`.
    pub fn tool(call_id: impl Into<String>, name: impl Into<String>, content: String) -> Self {
        Self {
            role: Role::Tool,
            content: Some(content),
            reasoning_content: None,
            reasoning_signature: None,
            tool_calls: Vec::new(),
            tool_call_id: Some(call_id.into()),
            name: Some(name.into()),
            images: Vec::new(),
        }
    }
}

/// Token counts of one call or of a whole run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Prompt tokens.
    pub input_tokens: u64,
    /// Completion tokens (reasoning included where the provider counts it so).
    pub output_tokens: u64,
    /// Of the prompt tokens, those read from the provider's prompt cache (cheaper), when
    /// the provider says.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cached_tokens: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Usage {
    /// Adds another usage to this one.
    pub fn add(&mut self, other: Usage) {
        // Saturating: a provider or a doctored file may report absurd counts.
        self.input_tokens = self.input_tokens.saturating_add(other.input_tokens);
        self.output_tokens = self.output_tokens.saturating_add(other.output_tokens);
        self.cached_tokens = self.cached_tokens.saturating_add(other.cached_tokens);
    }
}

/// Where the time of one call went, when the provider says (Ollama's `done` line).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Timings {
    /// The whole call, as the server measured it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_ms: Option<u64>,
    /// Loading the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_ms: Option<u64>,
    /// Reading the prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_ms: Option<u64>,
    /// Generating the answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generation_ms: Option<u64>,
}

/// A tool as offered to the model: name, description and JSON Schema of its parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    /// Tool name.
    pub name: String,
    /// What the tool does, for the model.
    pub description: String,
    /// JSON Schema of the arguments object.
    pub parameters: Value,
}
