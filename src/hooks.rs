//! Hooks (issue 30.1): the user's commands run at points of a session — `session_start`,
//! `user_prompt_submit`, `pre_tool_use`, `post_tool_use`, `stop`, `notification` — from the
//! user's config and, once trusted, the project's `.taco/config.toml`. A hook gets the event
//! as JSON on stdin and may answer JSON on stdout (allow, deny with a reason, ask, add
//! context); exit 2 blocks with stderr as the reason (Claude Code's convention). Hooks run in
//! the sandbox like shell commands, with no secrets, bounded in time and output. The
//! orchestrator runs them (`orchestrator/hooking.rs`) and reports each run as a span.

mod config;
mod output;
mod project;
mod run;
pub mod trust;

use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};

pub use config::{HookSpec, HooksConfig};

pub use output::{Verdict, parse as parse_output};
pub use project::{Loaded, load, trust_project};
pub use run::{Ran, run};

/// Default time a hook may take.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);
/// The longest time a hook may be given.
pub const MAX_TIMEOUT: Duration = Duration::from_secs(600);
/// Most hooks of one kind (the rest are refused when the config is read).
pub const MAX_PER_EVENT: usize = 16;

/// When a hook runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HookEvent {
    /// Before a session's first request is worked on.
    SessionStart,
    /// When the user sends a request, before the model sees it.
    UserPromptSubmit,
    /// Before a tool call runs (after its arguments are known, before approval).
    PreToolUse,
    /// After a tool call ran.
    PostToolUse,
    /// When the model answered and the run would end.
    Stop,
    /// When taco waits for the user (an approval, a question).
    Notification,
}

impl HookEvent {
    /// Every kind, in the order a session meets them.
    pub const ALL: [Self; 6] = [
        Self::SessionStart,
        Self::UserPromptSubmit,
        Self::PreToolUse,
        Self::PostToolUse,
        Self::Stop,
        Self::Notification,
    ];

    /// Its name in the config and in events.
    pub fn name(self) -> &'static str {
        match self {
            Self::SessionStart => "session_start",
            Self::UserPromptSubmit => "user_prompt_submit",
            Self::PreToolUse => "pre_tool_use",
            Self::PostToolUse => "post_tool_use",
            Self::Stop => "stop",
            Self::Notification => "notification",
        }
    }

    /// Whether its hooks match a tool name.
    pub fn has_tool(self) -> bool {
        matches!(self, Self::PreToolUse | Self::PostToolUse)
    }
}

/// Where a hook was configured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// The user's config.
    User,
    /// The project's `.taco/config.toml` (trusted).
    Project,
}

/// One hook, ready to run.
#[derive(Debug, Clone)]
pub struct Hook {
    /// When it runs.
    pub event: HookEvent,
    /// The tools it applies to (`None`: all).
    pub matcher: Option<regex::Regex>,
    /// The command line, run with `sh -c` in the workspace.
    pub command: String,
    /// How long it may take.
    pub timeout: Duration,
    /// Where it was configured.
    pub source: Source,
}

impl Hook {
    /// Whether it applies to `tool` (hooks of events without a tool always apply).
    pub fn matches(&self, tool: Option<&str>) -> bool {
        match (&self.matcher, tool) {
            (Some(m), Some(tool)) => m.is_match(tool),
            _ => true,
        }
    }
}

/// The hooks of a session, in the order they run: the user's, then the project's.
#[derive(Debug, Clone, Default)]
pub struct Hooks {
    hooks: Vec<Hook>,
}

impl Hooks {
    /// No hooks.
    pub fn none() -> Arc<Self> {
        Arc::default()
    }

    /// The hooks of these configs (the user's first).
    pub fn new(hooks: Vec<Hook>) -> Self {
        Self { hooks }
    }

    /// The hooks for `event` that apply to `tool`.
    pub fn matching(&self, event: HookEvent, tool: Option<&str>) -> Vec<&Hook> {
        (self.hooks.iter())
            .filter(|h| h.event == event && h.matches(tool))
            .collect()
    }

    /// Every hook, in order.
    pub fn all(&self) -> &[Hook] {
        &self.hooks
    }

    /// Whether there are none at all.
    pub fn is_empty(&self) -> bool {
        self.hooks.is_empty()
    }

    /// How many there are.
    pub fn len(&self) -> usize {
        self.hooks.len()
    }
}
