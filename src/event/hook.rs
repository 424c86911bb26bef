//! The event of a hook run (issue 30.1): `hook`, at its end, with its start (`duration_ms`
//! before), so the timeline draws it as a span nested under the call it guarded. While it
//! runs it is a frame on the stack (`stack_push`/`stack_pop` of its `id`).

use serde::{Deserialize, Serialize};

pub use crate::hooks::{HookEvent, Source as HookSource};

/// What a hook decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HookDecision {
    /// Go ahead (a tool call: without asking).
    Allow,
    /// Do not: the call is refused, the prompt blocked, the model told to go on (`stop`).
    Deny,
    /// Ask the user (a tool call that would have run without asking).
    Ask,
}

/// `hook`: one hook ran.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HookRan {
    /// Its frame id (under the call it guarded, when it guarded one).
    pub id: String,
    /// When it ran.
    pub event: HookEvent,
    /// Its command line (shortened).
    pub command: String,
    /// Where it was configured.
    pub source: HookSource,
    /// The call it guarded (`pre_tool_use`, `post_tool_use`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call: Option<String>,
    /// How long it ran.
    pub duration_ms: u64,
    /// What it decided, if anything.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<HookDecision>,
    /// Why (a deny's reason reaches the model).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Whether it added context for the model.
    #[serde(default, skip_serializing_if = "is_false")]
    pub context: bool,
    /// Its exit code (`None`: killed or not started).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// What went wrong (a timeout, bad output, a failed start): the hook is then ignored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

fn is_false(b: &bool) -> bool {
    !*b
}
