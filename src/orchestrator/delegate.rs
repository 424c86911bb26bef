//! Sub-agents (DESIGN §5): a `delegate` call runs a nested loop with its own conversation.
//! Its model calls and tool calls carry the delegate frame as their parent, go through the
//! same approvals and stack, and its final answer is the tool's result. A nested turn
//! without tools is the same machinery cut to one call: the code a tool asks for
//! (`create_code`), and whether a reply answers a question (`reply.rs`).

use serde_json::{Value, json};

use super::LoopEnd;
use super::call::CallError;
use super::conversation::Conversation;
use super::scope::{Pending, Run};
use crate::conversation::Message;
use crate::event::Purpose;
use crate::tools::Generate;
use crate::tools::builtin::delegate::DelegateParams;
use crate::tools::outcome::Ended;
use crate::tools::runner::CallOutcome;

/// The sub-agent's system prompt; `{workdir}` is filled in.
const PROMPT: &str = include_str!("../../assets/subagent_prompt.md");

impl Run<'_> {
    /// Runs the sub-agent of one `delegate` call to its answer.
    pub(super) async fn delegate(&mut self, call: &Pending, arguments: &Value) -> CallOutcome {
        let started = self.clock.now();
        let ended = match serde_json::from_value::<DelegateParams>(arguments.clone()) {
            Err(e) => Ended::Invalid(format!("invalid arguments for delegate: {e}")),
            Ok(params) => self.sub_agent(call, params).await,
        };
        CallOutcome {
            id: call.frame.clone(),
            name: call.name.clone(),
            ended,
            duration: self.clock.now() - started,
        }
    }

    async fn sub_agent(&mut self, call: &Pending, params: DelegateParams) -> Ended {
        let registry = &self.orch.registry;
        let specs = match &params.tools {
            None => registry.specs(),
            Some(names) => {
                let unknown: Vec<&str> = names
                    .iter()
                    .filter(|n| registry.get(n).is_none())
                    .map(String::as_str)
                    .collect();
                if !unknown.is_empty() {
                    return Ended::Invalid(format!(
                        "unknown tools for the sub-agent: {}",
                        unknown.join(", ")
                    ));
                }
                registry
                    .specs()
                    .into_iter()
                    .filter(|s| names.contains(&s.name))
                    .collect()
            }
        };
        // Sub-agents of sub-agents are bounded in depth, and none may take more turns than
        // the conversation that started it: a model that always delegates cannot multiply
        // its turns.
        let settings = &self.orch.settings;
        let depth = self.agents.len();
        let max_depth = settings.limits.max_subagent_depth as usize;
        if depth > max_depth {
            return Ended::Failed(format!(
                "sub-agents may nest at most {max_depth} deep (max_subagent_depth); do this task yourself"
            ));
        }
        let parent_turns = self.agents.last().copied().unwrap_or(settings.max_turns);
        let max_turns = params
            .max_turns
            .unwrap_or(parent_turns)
            .clamp(1, parent_turns.max(1));
        let mut prompt = PROMPT.replace("{workdir}", &settings.workdir.display().to_string());
        if !settings.instructions.is_empty() {
            prompt = format!("{}\n\n{}", prompt.trim_end(), settings.instructions);
        }
        let mut conv = Conversation::new(prompt, specs, Some(call.frame.clone()), max_turns);
        conv.messages.push(Message::user(params.task));
        self.agents.push(max_turns);
        let end = self.run_loop(&mut conv).await;
        self.agents.pop();
        if self.switched.is_some() {
            // A reply to one of its questions was a new request: the user moved on.
            return Ended::Abandoned(
                "the user made a new request instead of answering; this sub-agent was stopped"
                    .to_string(),
            );
        }
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
            // Only the user's conversation ends so; a sub-agent's fails.
            LoopEnd::OverBudget { message, .. } => {
                Ended::Failed(format!("the sub-agent failed: {message}"))
            }
        }
    }
}

impl Run<'_> {
    /// One model call without tools in a conversation of its own under frame `parent`
    /// (`system`, then `user`), for `purpose`: shown under that frame in the stack, the chat
    /// and the timeline. `Err` says why there is no answer.
    pub(super) async fn nested_answer(
        &mut self,
        parent: &str,
        purpose: Purpose,
        system: &str,
        user: String,
    ) -> Result<String, String> {
        let mut conv = Conversation::new(system.to_string(), Vec::new(), Some(parent.into()), 1);
        conv.purpose = purpose;
        conv.messages.push(Message::user(user));
        match self.call_model(&mut conv, 1, false).await {
            Ok(turn) => Ok(turn.content),
            Err(CallError::Provider(error, _)) => Err(self.describe(&error)),
            Err(CallError::Cancelled(_)) => Err("cancelled".to_string()),
            Err(CallError::Budget(stop)) => Err(stop.message()),
        }
    }

    /// A running tool's request for text from the model: made under its frame and its own
    /// cancel token, the answer bounded as it streams.
    pub(super) async fn generate(&mut self, generate: Generate) {
        self.answer_cap = Some(super::scope::AnswerCap::Tool(generate.max_bytes));
        let outer = std::mem::replace(&mut self.cancel, generate.cancel);
        let answer = self
            .nested_answer(
                &generate.call,
                Purpose::ForTool,
                &generate.system,
                generate.prompt,
            )
            .await;
        self.cancel = outer;
        self.answer_cap = None;
        // The call may have ended meanwhile (a timeout): then nobody waits.
        let _ = generate.reply.send(answer);
    }
}
