//! Sub-agents (DESIGN §5): a `delegate` call runs a nested loop with its own conversation.
//! Its model calls and tool calls carry the delegate frame as their parent, go through the
//! same approvals and stack, and its final answer is the tool's result.

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::approval::Approver;
use super::batch::Pending;
use super::{Conversation, LoopEnd, Orchestrator, Run};
use crate::conversation::Message;
use crate::tools::builtin::delegate::DelegateParams;
use crate::tools::outcome::Ended;
use crate::tools::runner::CallOutcome;

/// The tool's name.
pub(super) const NAME: &str = "delegate";

/// The sub-agent's system prompt; `{workdir}` is filled in.
const PROMPT: &str = include_str!("../../assets/subagent_prompt.md");

/// Runs the sub-agent of one `delegate` call to its answer.
pub(super) async fn run(
    orch: &mut Orchestrator,
    run: &mut Run<'_>,
    approver: &mut dyn Approver,
    cancel: &CancellationToken,
    call: &Pending,
    arguments: &Value,
) -> CallOutcome {
    let started = std::time::Instant::now();
    let ended = match serde_json::from_value::<DelegateParams>(arguments.clone()) {
        Err(e) => Ended::Invalid(format!("invalid arguments for delegate: {e}")),
        Ok(params) => sub_agent(orch, run, approver, cancel, call, params).await,
    };
    CallOutcome {
        id: call.frame.clone(),
        name: call.name.clone(),
        ended,
        duration: started.elapsed(),
    }
}

async fn sub_agent(
    orch: &mut Orchestrator,
    run: &mut Run<'_>,
    approver: &mut dyn Approver,
    cancel: &CancellationToken,
    call: &Pending,
    params: DelegateParams,
) -> Ended {
    let specs = match &params.tools {
        None => orch.registry.specs(),
        Some(names) => {
            let unknown: Vec<&str> = names
                .iter()
                .filter(|n| orch.registry.get(n).is_none())
                .map(String::as_str)
                .collect();
            if !unknown.is_empty() {
                return Ended::Invalid(format!(
                    "unknown tools for the sub-agent: {}",
                    unknown.join(", ")
                ));
            }
            orch.registry
                .specs()
                .into_iter()
                .filter(|s| names.contains(&s.name))
                .collect()
        }
    };
    // Sub-agents of sub-agents are bounded in depth, and none may take more turns than the
    // conversation that started it: a model that always delegates cannot multiply its turns.
    let depth = run.agents.len();
    let max_depth = orch.settings.limits.max_subagent_depth as usize;
    if depth > max_depth {
        return Ended::Failed(format!(
            "sub-agents may nest at most {max_depth} deep (max_subagent_depth); do this task yourself"
        ));
    }
    let parent_turns = run
        .agents
        .last()
        .copied()
        .unwrap_or(orch.settings.max_turns);
    let max_turns = params
        .max_turns
        .unwrap_or(parent_turns)
        .clamp(1, parent_turns.max(1));
    let prompt = PROMPT.replace("{workdir}", &orch.settings.workdir.display().to_string());
    let mut conv = Conversation::new(prompt, specs, Some(call.frame.clone()), max_turns);
    conv.messages.push(Message::user(params.task));
    run.agents.push(max_turns);
    let end = orch.run_loop(&mut conv, run, approver, cancel).await;
    run.agents.pop();
    match end {
        LoopEnd::Answer {
            content,
            turns,
            error: None,
        } => Ended::Done(json!({ "answer": content, "turns": turns })),
        LoopEnd::Answer {
            content,
            error: Some((_, message)),
            ..
        } if content.is_empty() => {
            Ended::Failed(format!("the sub-agent could not finish: {message}"))
        }
        LoopEnd::Answer {
            content,
            turns,
            error: Some((_, message)),
        } => Ended::Done(json!({ "answer": content, "turns": turns, "note": message })),
        LoopEnd::Failed { message, .. } => {
            Ended::Failed(format!("the sub-agent failed: {message}"))
        }
        LoopEnd::Cancelled { .. } => Ended::Cancelled,
    }
}
