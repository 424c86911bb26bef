//! What a running tool sees and can say while it runs: the workspace, its settings, the
//! cancel signal, and a channel back to the batch for progress, live output, questions and
//! nested model calls.

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::ToolSettings;

/// What a running tool can see: the workspace, its settings and the cancellation signal.
#[derive(Debug, Clone)]
pub struct ToolContext {
    /// The workspace root (canonical); file tools are confined to it.
    pub workdir: PathBuf,
    /// Limits and settings.
    pub settings: Arc<ToolSettings>,
    /// Cancelled when the user cancels the turn; long tools must stop promptly.
    pub cancel: CancellationToken,
    /// The id of the call running (the runner sets it per call).
    pub call: String,
    /// Where a tool reports how far it got (`tool_progress` events) and puts questions to
    /// the user (an MCP server's elicitation); `None`: nobody listens.
    pub progress: Option<tokio::sync::mpsc::UnboundedSender<Progress>>,
    /// The state of the file the call changes as its approved diff showed it (see
    /// `Tool::preview`): the change applies only to that state. `None`: no diff was shown.
    pub seen: Option<super::seen::Seen>,
    /// The trace context a process this call starts is given (`TRACEPARENT` naming the
    /// call's `execute_tool` span); `None`: its environment is left as it is.
    pub trace: Option<crate::otel::TraceParent>,
}

impl ToolContext {
    /// Reports progress of the call running: `progress` of `total` (when known), and what
    /// it is doing.
    pub fn report(&self, progress: f64, total: Option<f64>, message: Option<String>) {
        if let Some(sink) = &self.progress {
            // Nobody listening any more (the batch ended): nothing to tell.
            let _ = sink.send(Progress::Report {
                call: self.call.clone(),
                progress,
                total,
                message,
            });
        }
    }

    /// Says that the call, queued for a process slot, starts now.
    pub fn started(&self) {
        if let Some(sink) = &self.progress {
            let _ = sink.send(Progress::Started {
                call: self.call.clone(),
            });
        }
    }

    /// Shows the last lines a running call printed (`tool_output`).
    pub fn output(&self, tail: &str) {
        if let Some(sink) = &self.progress {
            let _ = sink.send(Progress::Output {
                call: self.call.clone(),
                tail: tail.to_string(),
            });
        }
    }

    /// Asks the user to fill in a form for the call running; `Cancel` when nobody listens.
    pub async fn ask(
        &self,
        from: &str,
        message: &str,
        schema: Value,
        order: Vec<String>,
    ) -> AskReply {
        let Some(sink) = &self.progress else {
            return AskReply::Cancel;
        };
        let (reply, answer) = tokio::sync::oneshot::channel();
        let ask = Ask {
            call: self.call.clone(),
            from: from.to_string(),
            message: message.to_string(),
            schema,
            order,
            reply,
        };
        if sink.send(Progress::Ask(ask)).is_err() {
            return AskReply::Cancel;
        }
        answer.await.unwrap_or(AskReply::Cancel)
    }

    /// Asks the model for a text answer in a nested call without tools, made by the
    /// orchestrator under this call's frame (it shows there like a sub-agent's turn). The
    /// answer is cut off at `max_bytes` as it streams (an error then); `Err` says why there
    /// is no answer.
    pub async fn generate(
        &self,
        system: &str,
        prompt: &str,
        max_bytes: usize,
    ) -> Result<String, String> {
        let Some(sink) = &self.progress else {
            return Err("no model to ask: this tool runs only inside a conversation".into());
        };
        let (reply, answer) = tokio::sync::oneshot::channel();
        let generate = Generate {
            call: self.call.clone(),
            system: system.to_string(),
            prompt: prompt.to_string(),
            max_bytes,
            cancel: self.cancel.clone(),
            reply,
        };
        if sink.send(Progress::Generate(generate)).is_err() {
            return Err("the conversation ended before the model was asked".into());
        }
        answer
            .await
            .unwrap_or_else(|_| Err("the conversation ended before the model answered".into()))
    }
}

/// What a running call tells the batch it runs in.
#[derive(Debug)]
pub enum Progress {
    /// It was queued for a process slot and starts now.
    Started {
        /// The call.
        call: String,
    },
    /// How far it got.
    Report {
        /// The call.
        call: String,
        /// Progress so far (grows).
        progress: f64,
        /// The total, when known.
        total: Option<f64>,
        /// What it is doing.
        message: Option<String>,
    },
    /// The last lines it printed (a running shell command).
    Output {
        /// The call.
        call: String,
        /// Its last lines.
        tail: String,
    },
    /// It needs the user to fill in a form (an MCP server's `elicitation/create`).
    Ask(Ask),
    /// It needs a text answer from the model (`create_code`'s code).
    Generate(Generate),
}

/// A nested model call a running tool asks for: one system prompt, one user message, no
/// tools.
#[derive(Debug)]
pub struct Generate {
    /// The call that asks (the nested call runs under its frame).
    pub call: String,
    /// The system prompt.
    pub system: String,
    /// The one user message.
    pub prompt: String,
    /// The most bytes of answer taken; a longer one is stopped as it streams.
    pub max_bytes: usize,
    /// The asking call's own token: cancelling the call stops the nested call too.
    pub cancel: CancellationToken,
    /// Where the answer goes (`Err`: why there is none).
    pub reply: tokio::sync::oneshot::Sender<Result<String, String>>,
}

/// A form a running call puts to the user.
#[derive(Debug)]
pub struct Ask {
    /// The call.
    pub call: String,
    /// Who asks (an MCP server's name).
    pub from: String,
    /// What it says.
    pub message: String,
    /// The JSON Schema of the answer: an object of plain fields.
    pub schema: Value,
    /// Its field names in the order the server sent them (`schema` is a map that sorts
    /// them).
    pub order: Vec<String>,
    /// Where the answer goes.
    pub reply: tokio::sync::oneshot::Sender<AskReply>,
}

/// The user's answer to an [`Ask`]: `{"action": "accept", "content": {…}}`, `{"action":
/// "decline"}` or `{"action": "cancel"}` in event files, as MCP says it.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "action", content = "content", rename_all = "snake_case")]
pub enum AskReply {
    /// Filled in.
    Accept(serde_json::Map<String, Value>),
    /// Said no.
    Decline,
    /// Walked away (or the run was cancelled).
    Cancel,
}
