//! The one event schema (DESIGN §3): it feeds the UI, trace files, `exec --json` and the audit log.

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::conversation::Usage;
pub use crate::sandbox::{Confinement, SandboxMode};
pub use crate::tools::builtin::{ArgShape, ShellGrant};
pub use crate::tools::outcome::{DeniedBy, ToolStatus};
pub use abandon::{SwitchedBy, WorkflowAbandoned};
pub use approval::{Decision, Grant, Scope};
pub use budget::BudgetReached;
pub use compact::{CompactTrigger, Compacted};
pub use hook::{HookDecision, HookEvent, HookRan, HookSource};
pub use llm::{LlmEnd, LlmFailed, LlmProgress, LlmStarted, Purpose};
pub use mode::Mode;
pub use parts::{FrameState, InputKind, InputRequest, LlmCall, StackFrame};
pub use reported::UsageReported;
pub use rewind::{
    Change, ChangedFile, ChangesView, CheckpointTaken, ConversationPreview, FileDiffView,
    FilesChanged, FilesPreview, Fork, MAX_FILES, MAX_NAMED, RewindPoint, RewindPreview,
    RewindScope, Rewound,
};
pub use switch::{Listed, ModelChoice};
pub use user_shell::{UserShell, UserShellState};

mod abandon;
mod approval;
mod budget;
mod compact;
mod hook;
mod llm;
mod mode;
mod parts;
mod reported;
mod rewind;
mod switch;
mod user_shell;

/// One event: `{"type", "timestamp", "request_id", "data"}` on one JSON line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Event {
    /// Unix time in milliseconds.
    pub timestamp: u64,
    /// The run (user request) this event belongs to.
    pub request_id: Arc<str>,
    /// The kind and its data.
    #[serde(flatten)]
    pub data: EventData,
}

impl Event {
    /// An event stamped now.
    pub fn now(request_id: &Arc<str>, data: EventData) -> Self {
        Self {
            timestamp: unix_ms(),
            request_id: Arc::clone(request_id),
            data,
        }
    }

    /// The `type` string of this event.
    pub fn kind(&self) -> &'static str {
        self.data.kind()
    }

    /// Whether the event belongs in a trace file (everything but streaming deltas).
    pub fn is_trace(&self) -> bool {
        !matches!(
            self.data,
            EventData::Delta { .. }
                | EventData::LlmProgress(_)
                | EventData::ToolOutput { .. }
                | EventData::Listed(_)
        )
    }
}

/// Milliseconds since the Unix epoch.
pub fn unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// Which stream a delta belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DeltaKind {
    /// Answer text.
    Text,
    /// Reasoning text.
    Reasoning,
}

/// The kinds of event and their data (DESIGN §3).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", content = "data", rename_all = "snake_case")]
pub enum EventData {
    /// A user request starts a run.
    RunStarted {
        /// The prompt, shortened.
        prompt: String,
        /// Provider name.
        provider: String,
        /// Model id.
        model: String,
        /// Turn limit.
        max_turns: u32,
        /// The W3C `traceparent` of the trace taco was started in (`TRACEPARENT`): the
        /// run's span is a child of it, live and when the file is exported later.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        trace_parent: Option<String>,
    },
    /// Streamed text (not written to trace files).
    Delta {
        /// Answer or reasoning.
        kind: DeltaKind,
        /// The new text.
        text: String,
    },
    /// A provider call began (its end: `llm_call`, `compacted` or `llm_failed`).
    LlmStarted(LlmStarted),
    /// How far a provider call in flight has streamed; live only, never in files.
    LlmProgress(LlmProgress),
    /// One provider call finished.
    LlmCall(Box<LlmCall>),
    /// A provider call ended without an answer: it failed or was cancelled.
    LlmFailed(LlmFailed),
    /// The model asked for a tool call.
    ToolCall {
        /// Turn number.
        turn: u32,
        /// Call id.
        id: String,
        /// Tool name.
        name: String,
        /// Parsed arguments.
        arguments: Value,
        /// Stack frame this call runs under, if nested.
        parent: Option<String>,
        /// How it runs in the sandbox (`shell`, a sandboxed MCP server's tools).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        sandbox: Option<Confinement>,
    },
    /// A call waits for the user's consent.
    ApprovalRequested {
        /// Call id.
        id: String,
        /// Tool name.
        name: String,
        /// Parsed arguments.
        arguments: Value,
        /// Position of this call in its batch (1-based).
        position: usize,
        /// Number of calls in the batch that need approval.
        of: usize,
        /// What the user should know besides the arguments (an MCP tool's server and the
        /// hints it gives about the tool, which are not checked).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        note: Option<String>,
        /// What the call would change: a summary line, then a unified diff (`edit_file`,
        /// `write_file`), computed before the user is asked.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        diff: Option<String>,
        /// How it would run; `unsandboxed`: leaving the sandbox, asked every time.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        sandbox: Option<Confinement>,
    },
    /// The orchestrator waits for the user to answer a question.
    InputRequested(InputRequest),
    /// The user answered (`value` is `None` when they declined or abandoned).
    InputAnswered {
        /// Question id.
        id: String,
        /// The answer.
        value: Option<String>,
        /// A form's answer: the content sent, or declined, or cancelled (`value` is then
        /// `None`); absent for other questions and in older files.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        form: Option<crate::tools::AskReply>,
    },
    /// A reply to a parameter question was a new request: the workflow was abandoned.
    WorkflowAbandoned(Box<WorkflowAbandoned>),
    /// The user (or `--approve`) decided.
    ApprovalDecided {
        /// Call id.
        id: String,
        /// Tool name.
        name: String,
        /// Approved or denied.
        decision: Decision,
        /// How far the decision reaches.
        scope: Scope,
        /// Why it was denied, when a reason was given.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
        /// A shell grant the approval also gives for the session (`p`); older files hold a
        /// string of words here, read as a grant that covers nothing.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        prefix: Option<ShellGrant>,
    },
    /// A tool call finished.
    ToolResult {
        /// Call id.
        id: String,
        /// Tool name.
        name: String,
        /// Whether it succeeded (`status` is `ok`; kept for readers of the first schema).
        ok: bool,
        /// How it ended; absent only in files written before the field existed (read it
        /// with [`ToolStatus::of`]).
        #[serde(default)]
        status: Option<ToolStatus>,
        /// Who refused it, when `status` is `denied`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        denied_by: Option<DeniedBy>,
        /// The result, when it succeeded.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        result: Option<Value>,
        /// The error, when it failed.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
        /// How long it ran.
        duration_ms: u64,
    },
    /// A running call reported how far it got (an MCP server's `notifications/progress`).
    ToolProgress {
        /// Call id.
        id: String,
        /// Progress so far.
        progress: f64,
        /// The total, when known.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        total: Option<f64>,
        /// What it is doing.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message: Option<String>,
    },
    /// The last lines a running call printed (a shell command); live only, like deltas:
    /// never in session or trace files.
    ToolOutput {
        /// Call id.
        id: String,
        /// Its last few lines.
        tail: String,
    },
    /// A frame was pushed onto the tool stack (or changed state).
    StackPush(StackFrame),
    /// A frame left the tool stack, with its final state.
    StackPop(StackFrame),
    /// A provider call is retried.
    Retry {
        /// This attempt's number.
        attempt: u32,
        /// Attempts allowed.
        max: u32,
        /// Why.
        reason: String,
        /// Wait before the attempt.
        delay_ms: u64,
    },
    /// The model made the same call with the same arguments for the third time in a request:
    /// it is probably stuck (the model is told in that call's result).
    LoopWarning {
        /// The call (frame) id of the repeat.
        id: String,
        /// Tool name.
        name: String,
        /// How many times it was made.
        times: u32,
        /// The frame of the conversation, if a sub-agent's.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        parent: Option<String>,
    },
    /// The user took a grant back (`/revoke`, `r` in `/tools`): calls it allowed are asked
    /// about again. Files written before the rename call it `grant_revoked`.
    #[serde(alias = "grant_revoked")]
    ApprovalRevoked {
        /// The grant.
        grant: Grant,
    },
    /// A call that would have been asked about ran because of a grant the user gave.
    GrantUsed {
        /// Call id.
        id: String,
        /// Tool name.
        name: String,
        /// The grant that allowed it.
        grant: Grant,
    },
    /// Older messages were summarised to keep the conversation in the context window.
    Compacted(Box<Compacted>),
    /// The turn limit was reached while tool calls were still coming.
    MaxTurnsReached {
        /// Turns taken.
        turns: u32,
    },
    /// The next model call would take the session's cost past its budget (`--max-cost`):
    /// it was not sent, and the run ends.
    BudgetReached(Box<BudgetReached>),
    /// The "give your answer now" message was added.
    MaxTurnsPromptInjected {
        /// Turns taken.
        turns: u32,
    },
    /// The run's answer.
    Final {
        /// The answer text.
        content: String,
        /// Turns taken.
        turns: u32,
        /// Tokens of the whole run.
        usage: Usage,
    },
    /// Something went wrong.
    Error {
        /// Short machine-readable kind.
        kind: String,
        /// What happened and what to do (never a secret).
        message: String,
    },
    /// The user cancelled the run.
    Cancelled {
        /// What was running.
        running: String,
    },
    /// The provider or model changed (`/model`, `/provider`): the next request uses them.
    ModelSwitched(ModelChoice),
    /// What `/model` or `/resume` asked to have listed; live only, never in files.
    Listed(Box<Listed>),
    /// The workspace's files were recorded before calls that may change them.
    Checkpoint(CheckpointTaken),
    /// What a run changed in the workspace (at its end, when it ran calls that could).
    FilesChanged(Box<FilesChanged>),
    /// Files and/or the conversation went back to an earlier point.
    Rewound(Box<Rewound>),
    /// The images the run's prompt named, as sent (references: name, size, hash; never
    /// their bytes).
    ImagesAttached {
        /// The images, in the order the prompt named them.
        images: Vec<crate::images::Image>,
    },
    /// A hook ran (its span: `duration_ms` before the event).
    Hook(Box<HookRan>),
    /// The permission mode changed (Shift-Tab, a plan approved, `exec --mode`).
    ModeChanged {
        /// The mode from now on.
        mode: Mode,
    },
    /// A command the user ran with `!` started or ended.
    UserShell(Box<UserShell>),
    /// An external agent (ACP) said how full its context is and what the session cost.
    UsageReported(UsageReported),
}

impl EventData {
    /// The `type` string.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::RunStarted { .. } => "run_started",
            Self::Delta { .. } => "delta",
            Self::LlmStarted(_) => "llm_started",
            Self::LlmProgress(_) => "llm_progress",
            Self::LlmCall(_) => "llm_call",
            Self::LlmFailed(_) => "llm_failed",
            Self::ToolCall { .. } => "tool_call",
            Self::ApprovalRequested { .. } => "approval_requested",
            Self::ApprovalDecided { .. } => "approval_decided",
            Self::InputRequested(_) => "input_requested",
            Self::InputAnswered { .. } => "input_answered",
            Self::WorkflowAbandoned(_) => "workflow_abandoned",
            Self::ToolResult { .. } => "tool_result",
            Self::ToolProgress { .. } => "tool_progress",
            Self::ToolOutput { .. } => "tool_output",
            Self::StackPush(_) => "stack_push",
            Self::StackPop(_) => "stack_pop",
            Self::Retry { .. } => "retry",
            Self::Compacted(_) => "compacted",
            Self::ApprovalRevoked { .. } => "approval_revoked",
            Self::GrantUsed { .. } => "grant_used",
            Self::LoopWarning { .. } => "loop_warning",
            Self::MaxTurnsReached { .. } => "max_turns_reached",
            Self::BudgetReached(_) => "budget_reached",
            Self::MaxTurnsPromptInjected { .. } => "max_turns_prompt_injected",
            Self::Final { .. } => "final",
            Self::Error { .. } => "error",
            Self::Cancelled { .. } => "cancelled",
            Self::ModelSwitched(_) => "model_switched",
            Self::Listed(_) => "listed",
            Self::Checkpoint(_) => "checkpoint",
            Self::FilesChanged(_) => "files_changed",
            Self::Rewound(_) => "rewound",
            Self::ImagesAttached { .. } => "images_attached",
            Self::Hook(_) => "hook",
            Self::ModeChanged { .. } => "mode_changed",
            Self::UserShell(_) => "user_shell",
            Self::UsageReported(_) => "usage_reported",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serializes_to_the_documented_shape_and_back() {
        let event = Event {
            timestamp: 42,
            request_id: "r".into(),
            data: EventData::MaxTurnsReached { turns: 3 },
        };
        let json: Value = serde_json::to_value(&event).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"type": "max_turns_reached", "timestamp": 42, "request_id": "r", "data": {"turns": 3}})
        );
        let back: Event = serde_json::from_value(json).unwrap();
        assert_eq!(back, event);
        assert_eq!(back.kind(), "max_turns_reached");
    }

    #[test]
    fn questions_and_answers_of_older_files_load_and_a_forms_answer_is_mcps_shape() {
        // Written before forms were one question: field-by-field answers and a submit.
        let old = [
            r#"{"type":"input_requested","timestamp":1,"request_id":"r","data":{"id":"a/e1/q2","kind":"parameter","frame":"a/e1","tool":"MCP server s","prompt":"p","parameter":"name"}}"#,
            r#"{"type":"input_requested","timestamp":2,"request_id":"r","data":{"id":"a/e1/send3","kind":"submit","frame":"a/e1","tool":"MCP server s","prompt":"Send?","description":"name: Ann"}}"#,
            r#"{"type":"input_answered","timestamp":3,"request_id":"r","data":{"id":"a/e1/send3","value":"y"}}"#,
        ];
        for line in old {
            let event: Event = serde_json::from_str(line).unwrap();
            if let EventData::InputAnswered { form, .. } = &event.data {
                assert!(form.is_none());
            }
        }
        let answered = EventData::InputAnswered {
            id: "q".into(),
            value: None,
            form: Some(crate::tools::AskReply::Accept(
                serde_json::json!({"n": 1}).as_object().unwrap().clone(),
            )),
        };
        let json = serde_json::to_value(&answered).unwrap();
        assert_eq!(
            json["data"]["form"],
            serde_json::json!({"action": "accept", "content": {"n": 1}})
        );
        let declined = EventData::InputAnswered {
            id: "q".into(),
            value: None,
            form: Some(crate::tools::AskReply::Decline),
        };
        let json = serde_json::to_value(&declined).unwrap();
        assert_eq!(
            json["data"]["form"],
            serde_json::json!({"action": "decline"})
        );
        assert_eq!(serde_json::from_value::<EventData>(json).unwrap(), declined);
    }

    #[test]
    fn deltas_are_not_trace_events() {
        let r: Arc<str> = Arc::from("r");
        let delta = Event::now(
            &r,
            EventData::Delta {
                kind: DeltaKind::Text,
                text: "x".into(),
            },
        );
        assert!(!delta.is_trace());
        let done = Event::now(
            &r,
            EventData::Cancelled {
                running: "shell".into(),
            },
        );
        assert!(done.is_trace());
    }
}
