//! The event of a command the user ran with `!` in the composer (`user_shell`): not a tool
//! call of the model, never approved (the user typed it), recorded in the session file and
//! the audit log as the user's own.

use serde::{Deserialize, Serialize};

use crate::sandbox::Confinement;

/// How a user's command stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UserShellState {
    /// It runs.
    Running,
    /// It ran to its end (any exit code).
    Exited,
    /// It ran too long and was killed.
    TimedOut,
    /// The user cancelled it.
    Cancelled,
    /// It could not be run.
    Failed,
}

/// A `!command`, as it started (`running`) or ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UserShell {
    /// Its id (a started and an ended event share it).
    pub id: String,
    /// The command line, secrets masked.
    pub command: String,
    /// How it stands.
    pub state: UserShellState,
    /// Its exit code, when it exited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// What it printed (stdout, then stderr), bounded and secrets masked.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub output: String,
    /// Why it failed or timed out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// How long it ran (0 while it runs).
    #[serde(default)]
    pub duration_ms: u64,
    /// How it ran in the sandbox.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<Confinement>,
}

impl UserShell {
    /// Whether it still runs.
    pub fn is_running(&self) -> bool {
        self.state == UserShellState::Running
    }
}
