//! `delegate`: hands a task to a sub-agent with its own conversation. The orchestrator runs it
//! (it needs the model and the stack); this type gives the tool its name, schema and policy.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use crate::tools::{ToolContext, ToolError, TypedTool};

/// The sub-agent tool's name: the one place it is spelled. Everything that treats a call as a
/// sub-agent's (the orchestrator, the stack, the chat) asks [`is_delegate`].
pub const NAME: &str = "delegate";

/// Whether a call of the tool `name` runs a sub-agent.
pub fn is_delegate(name: &str) -> bool {
    name == NAME
}

/// Parameters of `delegate`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct DelegateParams {
    /// The task for the sub-agent, complete and self-contained: it sees nothing of this
    /// conversation but what you write here.
    pub task: String,
    /// Names of the tools the sub-agent may use (default: the same tools you have).
    #[serde(default)]
    pub tools: Option<Vec<String>>,
    /// Most model turns the sub-agent may take (default: the same limit as yours).
    #[serde(default)]
    pub max_turns: Option<u32>,
}

/// The `delegate` tool.
#[derive(Debug, Default, Clone, Copy)]
pub struct Delegate;

impl TypedTool for Delegate {
    type Params = DelegateParams;
    const NAME: &'static str = NAME;
    const DESCRIPTION: &'static str = "Hand a self-contained task to a sub-agent that works with its own conversation and tools, and get its final answer back. Use it for side investigations whose details you do not need to keep in this conversation.";
    const USAGE: Option<&'static str> = Some(
        "Write the task so it stands alone: the sub-agent cannot see this conversation. Say what answer you need back (facts, file paths, a summary). Its tool calls still need the user's approval where their policy asks.",
    );

    async fn run(&self, _params: DelegateParams, _ctx: &ToolContext) -> Result<Value, ToolError> {
        // Reached only if a registry is used without an orchestrator.
        Err(ToolError::failed(
            "delegate runs inside the orchestrator and cannot be called directly",
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::builtin::all;

    #[test]
    fn exactly_the_delegate_tool_runs_a_sub_agent() {
        let agents: Vec<String> = (all().iter())
            .map(|t| t.name().to_string())
            .filter(|name| is_delegate(name))
            .collect();
        assert_eq!(agents, [NAME]);
        assert!(!is_delegate("delegate_x") && !is_delegate("Delegate") && !is_delegate(""));
    }
}
