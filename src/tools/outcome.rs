//! How a tool call ends, as a type: every consumer (the model's tool message, the stack, the
//! `tool_result` event, the chat, the audit log, `exec`) decides by the variant, never by
//! the wording of an error.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::NeededCall;

/// What the model is told when a call is cancelled.
const CANCELLED: &str = "cancelled by the user";
/// The error of a sandbox denial (its result says the rest).
const SANDBOX_DENIED: &str = "the sandbox refused what the command tried";

/// Who refused a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DeniedBy {
    /// The user, in the approval dialog (or the depth-limit question).
    User,
    /// The configured policy for the tool is `deny`.
    Policy,
    /// `taco exec --approve none`: nobody could be asked.
    Headless,
    /// The tool stack's depth limit (the user declined to go deeper, or nobody could be asked).
    Limit,
    /// A `pre_tool_use` hook of the user's (issue 30.1).
    Hook,
    /// Plan mode: only read-only tools run (issue 30.2).
    Mode,
}

/// The `status` of a `tool_result` event: how the call ended, in one word.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolStatus {
    /// It ran and returned a result.
    Ok,
    /// It ran (or began to) and failed.
    Failed,
    /// Its arguments did not match the tool's schema.
    Invalid,
    /// No such tool is offered.
    Unknown,
    /// It was refused before it ran.
    Denied,
    /// The user cancelled the run while it was pending or running.
    Cancelled,
    /// The user walked away from the workflow it belonged to.
    Abandoned,
    /// It ran past its time limit and was stopped.
    TimedOut,
    /// It ran in the sandbox and failed the way the sandbox makes commands fail (a write
    /// outside the allowed paths, a refused connection); its result says how to escalate.
    SandboxDenied,
    /// It ran to the end and said it failed: a command that exited non-zero (or was killed
    /// by a signal). The model gets its whole result, as for `ok`.
    ExitNonzero,
}

impl ToolStatus {
    /// The status of a `tool_result` event; events written before the field existed have
    /// only `ok`, and read as `ok` or `failed`. `result` is the event's result: a call
    /// recorded as `ok` before `exit_nonzero` existed whose result has a non-zero
    /// `exit_code` (or a `signal`) reads as `exit_nonzero`, so old sessions show it too.
    pub fn of(status: Option<ToolStatus>, ok: bool, result: Option<&Value>) -> Self {
        match status.unwrap_or(if ok { Self::Ok } else { Self::Failed }) {
            Self::Ok if result.is_some_and(exited_nonzero) => Self::ExitNonzero,
            status => status,
        }
    }

    /// Whether the call did what it was asked without a problem to show.
    pub fn is_ok(self) -> bool {
        self == Self::Ok
    }

    /// The word a person reads for it (`exit 3` needs the result: see [`end_label`]).
    pub fn word(self) -> &'static str {
        match self {
            Self::Ok => "ok",
            Self::Failed => "failed",
            Self::Invalid => "invalid",
            Self::Unknown => "unknown tool",
            Self::Denied => "denied",
            Self::Cancelled => "cancelled",
            Self::Abandoned => "abandoned",
            Self::TimedOut => "timed out",
            Self::SandboxDenied => "sandbox refused",
            Self::ExitNonzero => "exit non-zero",
        }
    }
}

/// The exit code in a command's result (`exit_code`), when it has one.
pub fn exit_code(result: &Value) -> Option<i64> {
    result.get("exit_code").and_then(Value::as_i64)
}

/// Whether a command's result says it exited non-zero or was killed by a signal.
pub fn exited_nonzero(result: &Value) -> bool {
    exit_code(result).is_some_and(|c| c != 0) || result.get("signal").is_some_and(Value::is_i64)
}

/// How a call ended, in a few words for a row or a cell: `exit 3`, `signal 9`, or the
/// status's word.
pub fn end_label(status: ToolStatus, exit: Option<i64>, signal: Option<i64>) -> String {
    match (status, exit, signal) {
        (ToolStatus::ExitNonzero | ToolStatus::SandboxDenied, Some(code), _) => {
            format!("exit {code}")
        }
        (ToolStatus::ExitNonzero, None, Some(signal)) => format!("signal {signal}"),
        (status, _, _) => status.word().to_string(),
    }
}

/// How one call ended. The strings are what the model is told.
#[derive(Debug, Clone, PartialEq)]
pub enum Ended {
    /// It returned this result.
    Done(Value),
    /// It failed (a tool error, a crash, a needed call that failed).
    Failed(String),
    /// Its arguments were invalid.
    Invalid(String),
    /// The model named a tool that is not offered.
    Unknown(String),
    /// It was refused before it ran.
    Denied {
        /// Who refused it.
        by: DeniedBy,
        /// What the model is told.
        message: String,
    },
    /// The user cancelled.
    Cancelled,
    /// The user abandoned the workflow.
    Abandoned(String),
    /// It ran out of time.
    TimedOut(String),
    /// It ran in the sandbox, which refused what it tried: the result (exit code, output,
    /// a note on how to ask for the call outside the sandbox).
    SandboxDenied(Value),
    /// It ran and exited non-zero: its whole result (exit code, output).
    ExitNonzero(Value),
    /// The tool needs these calls made first, then resumes with `then` (never an end a
    /// consumer sees: the orchestrator runs them and resumes the tool).
    NeedsFirst(Vec<NeededCall>, Value),
}

impl Ended {
    /// The one-word status for events.
    pub fn status(&self) -> ToolStatus {
        match self {
            Self::Done(_) => ToolStatus::Ok,
            Self::Failed(_) | Self::NeedsFirst(..) => ToolStatus::Failed,
            Self::Invalid(_) => ToolStatus::Invalid,
            Self::Unknown(_) => ToolStatus::Unknown,
            Self::Denied { .. } => ToolStatus::Denied,
            Self::Cancelled => ToolStatus::Cancelled,
            Self::Abandoned(_) => ToolStatus::Abandoned,
            Self::TimedOut(_) => ToolStatus::TimedOut,
            Self::SandboxDenied(_) => ToolStatus::SandboxDenied,
            Self::ExitNonzero(_) => ToolStatus::ExitNonzero,
        }
    }

    /// Who refused the call, when it was refused.
    pub fn denied_by(&self) -> Option<DeniedBy> {
        match self {
            Self::Denied { by, .. } => Some(*by),
            _ => None,
        }
    }

    /// The error the model is told, or `None` for a result.
    pub fn error(&self) -> Option<&str> {
        match self {
            Self::Done(_) | Self::ExitNonzero(_) => None,
            Self::Failed(m)
            | Self::Invalid(m)
            | Self::Unknown(m)
            | Self::Abandoned(m)
            | Self::TimedOut(m)
            | Self::Denied { message: m, .. } => Some(m),
            Self::Cancelled => Some(CANCELLED),
            Self::SandboxDenied(_) => Some(SANDBOX_DENIED),
            Self::NeedsFirst(..) => Some("the tool did not resume"),
        }
    }

    /// The result or the error, as a resumed tool sees its needed calls' ends.
    pub fn to_result(&self) -> Result<Value, String> {
        match self {
            // A command that exited non-zero still ran: its caller reads the exit code.
            Self::Done(value) | Self::ExitNonzero(value) => Ok(value.clone()),
            other => Err(other.error().unwrap_or_default().to_string()),
        }
    }

    /// The result the call produced, also when it failed (a sandbox denial keeps its output).
    pub fn result(&self) -> Option<&Value> {
        match self {
            Self::Done(value) | Self::SandboxDenied(value) | Self::ExitNonzero(value) => {
                Some(value)
            }
            _ => None,
        }
    }

    /// The content of the `tool` message: JSON of the result, or `{"error": …}`.
    pub fn message_content(&self) -> String {
        match self {
            Self::Done(value) | Self::SandboxDenied(value) | Self::ExitNonzero(value) => {
                value.to_string()
            }
            other => json!({ "error": other.error() }).to_string(),
        }
    }

    /// The same end with its texts passed through `f` (redaction).
    pub fn map_text(self, f: impl Fn(&str) -> String) -> Self {
        match self {
            Self::Failed(m) => Self::Failed(f(&m)),
            Self::Invalid(m) => Self::Invalid(f(&m)),
            Self::Unknown(m) => Self::Unknown(f(&m)),
            Self::Abandoned(m) => Self::Abandoned(f(&m)),
            Self::TimedOut(m) => Self::TimedOut(f(&m)),
            Self::Denied { by, message } => Self::Denied {
                by,
                message: f(&message),
            },
            other => other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_end_has_its_status_and_message() {
        let cases = [
            (Ended::Done(json!({"a": 1})), ToolStatus::Ok, r#"{"a":1}"#),
            (
                Ended::Failed("boom".into()),
                ToolStatus::Failed,
                r#"{"error":"boom"}"#,
            ),
            (
                Ended::Invalid("bad".into()),
                ToolStatus::Invalid,
                r#"{"error":"bad"}"#,
            ),
            (
                Ended::Unknown("who".into()),
                ToolStatus::Unknown,
                r#"{"error":"who"}"#,
            ),
            (
                Ended::Denied {
                    by: DeniedBy::Policy,
                    message: "no".into(),
                },
                ToolStatus::Denied,
                r#"{"error":"no"}"#,
            ),
            (
                Ended::Cancelled,
                ToolStatus::Cancelled,
                r#"{"error":"cancelled by the user"}"#,
            ),
            (
                Ended::Abandoned("left".into()),
                ToolStatus::Abandoned,
                r#"{"error":"left"}"#,
            ),
            (
                Ended::TimedOut("slow".into()),
                ToolStatus::TimedOut,
                r#"{"error":"slow"}"#,
            ),
            (
                Ended::SandboxDenied(json!({"exit_code": 1})),
                ToolStatus::SandboxDenied,
                r#"{"exit_code":1}"#,
            ),
        ];
        for (ended, status, content) in cases {
            assert_eq!(ended.status(), status, "{ended:?}");
            assert_eq!(ended.message_content(), content, "{ended:?}");
            assert_eq!(ended.to_result().is_ok(), status == ToolStatus::Ok);
        }
    }

    #[test]
    fn statuses_serialize_as_the_documented_words() {
        let words: Vec<String> = [
            ToolStatus::Ok,
            ToolStatus::Failed,
            ToolStatus::Invalid,
            ToolStatus::Unknown,
            ToolStatus::Denied,
            ToolStatus::Cancelled,
            ToolStatus::Abandoned,
            ToolStatus::TimedOut,
            ToolStatus::SandboxDenied,
        ]
        .iter()
        .map(|s| {
            serde_json::to_value(s)
                .unwrap()
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
        assert_eq!(
            words,
            [
                "ok",
                "failed",
                "invalid",
                "unknown",
                "denied",
                "cancelled",
                "abandoned",
                "timed_out",
                "sandbox_denied"
            ]
        );
        assert_eq!(ToolStatus::of(None, true, None), ToolStatus::Ok);
        assert_eq!(ToolStatus::Failed, ToolStatus::Failed);
        assert_eq!(
            ToolStatus::of(Some(ToolStatus::Denied), false, None),
            ToolStatus::Denied
        );
    }

    #[test]
    fn redaction_reaches_every_text_but_keeps_the_kind() {
        let ended = Ended::Denied {
            by: DeniedBy::User,
            message: "key sk-1".into(),
        };
        let redacted = ended.map_text(|t| t.replace("sk-1", "[redacted]"));
        assert_eq!(redacted.denied_by(), Some(DeniedBy::User));
        assert_eq!(redacted.error(), Some("key [redacted]"));
    }
}
