//! One call as the run model knows it (issue 27): where it stands, when it began to run and
//! ended by the events' own clock, how it ended (with a command's exit code), what let it
//! through, its live output and, for a sub-agent's frame, the last thing its model said. The
//! chat, the stack pane, the timeline, the status line and the audit log read these; none of
//! them derives a call's state or elapsed time on its own.

use serde_json::Value;

use crate::event::{Confinement, Grant, Scope, ShellGrant, ToolStatus};
use crate::tools::outcome;

/// Where a call stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallState {
    /// Made by the model (or a tool), not decided yet (a batch's other calls wait here while
    /// one of them is asked about).
    Proposed,
    /// Waiting for the user's approval.
    AwaitingApproval,
    /// Waiting for the user to supply parameters.
    AwaitingInput,
    /// Running.
    Running,
    /// Approved, waiting for a process slot (`[tools] max_parallel`).
    Queued,
    /// Finished, with how.
    Ended(ToolStatus),
}

impl CallState {
    /// Whether it has not ended yet.
    pub fn is_open(self) -> bool {
        !matches!(self, Self::Ended(_))
    }

    /// How it ended, once it has.
    pub fn status(self) -> Option<ToolStatus> {
        match self {
            Self::Ended(status) => Some(status),
            _ => None,
        }
    }

    /// Whether it ended with a problem to show: failed, refused, cancelled, exited non-zero.
    pub fn is_problem(self) -> bool {
        self.status().is_some_and(|s| !s.is_ok())
    }
}

/// What let a call run without asking, or how the user allowed it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Via {
    /// The user approved it in the dialog, this far (`p` also gave `prefix`).
    Approved {
        /// How far the approval reaches.
        scope: Scope,
        /// The shell grant `p` gave with it.
        prefix: Option<ShellGrant>,
    },
    /// An earlier grant let it through.
    Granted(Grant),
}

impl Via {
    /// A few words for a row: `session`, `prefix 'cargo test …'`, `grant`.
    pub fn label(&self) -> String {
        match self {
            Self::Approved {
                prefix: Some(prefix),
                ..
            } => format!("prefix '{prefix}'"),
            Self::Approved { scope, .. } => scope.word().to_string(),
            Self::Granted(_) => "grant".to_string(),
        }
    }
}

/// One node of the call tree: a tool call, or a frame a call pushed (parameter collection).
#[derive(Debug, Clone, PartialEq)]
pub struct CallNode {
    /// Tool (or frame) name.
    pub name: String,
    /// The frame it runs under.
    pub parent: Option<String>,
    /// 0 at the top level, one more than its parent below it.
    pub depth: usize,
    /// Where it stands.
    pub state: CallState,
    /// When it was made (event time, Unix ms).
    pub started_ms: u64,
    /// When it began to run: after its approval and its process slot (event time).
    pub running_ms: Option<u64>,
    /// When it ended (event time).
    pub ended_ms: Option<u64>,
    /// How long it ran, once it ended: from `running_ms` (or `started_ms`) to `ended_ms`.
    pub duration_ms: Option<u64>,
    /// How it runs, for tools the sandbox covers (`unsandboxed`: an escalation).
    pub sandbox: Option<Confinement>,
    /// A command's exit code, once it ended with one.
    pub exit_code: Option<i64>,
    /// The signal that killed a command.
    pub signal: Option<i64>,
    /// Why the user denied it, when a reason was given.
    pub reason: Option<String>,
    /// What let it through.
    pub via: Option<Via>,
    /// The last lines a running command printed (`tool_output`); kept after it ends.
    pub tail: Option<String>,
    /// For a sub-agent's frame: the latest text its model said.
    pub said: Option<String>,
    /// Its arguments in one short line (`path=src/main.rs`).
    pub summary: String,
    /// Its arguments as given (from its `tool_call`; a frame without a call has none).
    pub arguments: Option<Value>,
    /// Its latest progress report (an MCP server's `notifications/progress`).
    pub progress: Option<Progress>,
    /// When its output last grew (event time): a quiet command is flagged.
    pub output_ms: Option<u64>,
}

/// How far a running call says it got.
#[derive(Debug, Clone, PartialEq)]
pub struct Progress {
    /// Progress so far.
    pub progress: f64,
    /// The total, when known.
    pub total: Option<f64>,
    /// What it is doing.
    pub message: Option<String>,
}

impl CallNode {
    /// A call made at `at` (event time).
    pub fn new(name: &str, parent: Option<&str>, depth: usize, at: u64) -> Self {
        Self {
            name: name.to_string(),
            parent: parent.map(String::from),
            depth,
            state: CallState::Proposed,
            started_ms: at,
            running_ms: None,
            ended_ms: None,
            duration_ms: None,
            sandbox: None,
            exit_code: None,
            signal: None,
            reason: None,
            via: None,
            tail: None,
            said: None,
            summary: String::new(),
            arguments: None,
            progress: None,
            output_ms: None,
        }
    }

    /// Its clock at `now_ms` (event clock): how long it ran once ended; while it runs, how
    /// long it has run; before that, how long it has waited (for consent, input or a slot).
    pub fn elapsed_ms(&self, now_ms: u64) -> u64 {
        match (self.duration_ms, self.running_ms) {
            (Some(took), _) => took,
            (None, Some(from)) => now_ms.saturating_sub(from),
            (None, None) => now_ms.saturating_sub(self.started_ms),
        }
    }

    /// How it ended in a few words (`exit 3`, `denied`), once it has.
    pub fn end_label(&self) -> Option<String> {
        let status = self.state.status()?;
        Some(outcome::end_label(status, self.exit_code, self.signal))
    }

    /// Moves it to `state` at `at` unless it has ended; the first move to running starts
    /// its clock.
    pub(super) fn move_to(&mut self, state: CallState, at: u64) {
        if !self.state.is_open() {
            return;
        }
        if state == CallState::Running && self.running_ms.is_none() {
            self.running_ms = Some(at);
        }
        if let CallState::Ended(_) = state {
            self.end(state, at);
        } else {
            self.state = state;
        }
    }

    /// Ends it at `at` as `state` (a result, a pop, the run's end).
    pub(super) fn end(&mut self, state: CallState, at: u64) {
        self.state = state;
        self.ended_ms = Some(at);
        let from = self.running_ms.unwrap_or(at);
        self.duration_ms = Some(at.saturating_sub(from));
    }

    /// Takes a `tool_result`: how it ended and its exit code.
    pub(super) fn result(&mut self, status: ToolStatus, result: Option<&Value>, at: u64) {
        // A call that ran without a frame saying so ran from when it was made; one refused
        // or cancelled before it ran ran for no time.
        let ran = matches!(
            status,
            ToolStatus::Ok
                | ToolStatus::Failed
                | ToolStatus::ExitNonzero
                | ToolStatus::TimedOut
                | ToolStatus::SandboxDenied
        );
        if self.running_ms.is_none() && ran {
            self.running_ms = Some(self.started_ms);
        }
        self.exit_code = result.and_then(outcome::exit_code);
        self.signal = result.and_then(|r| r.get("signal")).and_then(Value::as_i64);
        self.end(CallState::Ended(status), at);
    }
}
