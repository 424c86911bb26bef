//! `workflow_abandoned`: the user's reply to a parameter question was a new request, so the
//! workflow that asked was abandoned, the stack cleared, and the reply handled as the user's
//! next message (spec/004 "Context switch").

use serde::{Deserialize, Serialize};

/// What decided that a reply was a new request, not an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SwitchedBy {
    /// It was a slash command.
    SlashCommand,
    /// It was a question sharing nothing with what was asked.
    UnrelatedQuestion,
    /// It was several words, far longer than the value could be.
    MuchLonger,
    /// The rules could not tell; a small model call said it was no answer.
    Classifier,
}

/// Data of a `workflow_abandoned` event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkflowAbandoned {
    /// The call whose workflow was abandoned (its frame id); its result is `abandoned`.
    pub id: String,
    /// Its tool.
    pub tool: String,
    /// The parameter that was asked for.
    pub parameter: String,
    /// What decided it.
    pub by: SwitchedBy,
    /// The reply, now the user's next message.
    pub request: String,
}
