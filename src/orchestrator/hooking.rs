//! Running the session's hooks in a run (issue 30.1): each matching hook in turn, each a
//! span — a frame on the stack while it runs (under the call it guards), a `hook` event when
//! it ends — and their verdicts combined: the first deny wins, an ask escalates, an allow
//! counts only when nobody denied or asked, every context is kept for the model.

use serde_json::{Value, json};

use super::scope::{Pending, Run};
use crate::event::{EventData, FrameState, HookDecision, HookEvent, HookRan, StackFrame};
use crate::hooks::{self, Verdict};
use crate::tools::Policy;
use crate::tools::outcome::{DeniedBy, Ended};
use crate::tools::runner::CallOutcome;

/// Whether a call ran (its end is a result or a failure of its own, not a refusal).
fn ran(ended: &Ended) -> bool {
    !matches!(
        ended,
        Ended::Denied { .. }
            | Ended::Invalid(_)
            | Ended::Unknown(_)
            | Ended::Cancelled
            | Ended::Abandoned(_)
            | Ended::NeedsFirst(..)
    )
}

/// What the hooks of one point said, together.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Said {
    /// The strongest decision: deny over ask over allow.
    pub(super) decision: Option<HookDecision>,
    /// The reason of that decision.
    pub(super) reason: Option<String>,
    /// Context for the model, from every hook that gave some.
    pub(super) context: Vec<String>,
}

/// A call the hooks guard: its frame id, tool name and arguments (and result, after).
pub(super) struct Guarded<'a> {
    pub(super) frame: &'a str,
    pub(super) name: &'a str,
    pub(super) arguments: &'a Value,
}

/// Longest command line shown for a hook.
const SHOWN: usize = 80;
/// Times a stop hook may send the model back to work in one run.
const MAX_STOPS_REFUSED: u32 = 3;

impl Run<'_> {
    /// Runs the hooks of `event` (for `call`, when it is about one) with `fields` added to
    /// the input; their verdicts combined.
    pub(super) async fn hooks(
        &mut self,
        event: HookEvent,
        call: Option<Guarded<'_>>,
        fields: Value,
    ) -> Said {
        let hooks: Vec<hooks::Hook> = self
            .orch
            .settings
            .hooks
            .matching(event, call.as_ref().map(|c| c.name))
            .into_iter()
            .cloned()
            .collect();
        let mut said = Said::default();
        if hooks.is_empty() {
            return said;
        }
        let mut input = json!({
            "hook_event_name": event.name(),
            "cwd": self.orch.settings.workdir,
            "request_id": &*self.request_id,
        });
        if let Some(call) = &call {
            input["tool_name"] = json!(call.name);
            input["tool_call_id"] = json!(call.frame);
            input["tool_input"] = call.arguments.clone();
        }
        if let (Value::Object(into), Value::Object(from)) = (&mut input, fields) {
            into.extend(from);
        }
        let parent = call.as_ref().map(|c| c.frame.to_string());
        for hook in hooks {
            let id = match &parent {
                Some(frame) => format!("{frame}/hook-{}", self.next_number()),
                None => format!("hook-{}", self.next_number()),
            };
            let command = crate::text::summarize(&hook.command, SHOWN);
            let frame = |state| StackFrame {
                id: id.clone(),
                parent: parent.clone(),
                name: format!("hook {}", event.name()),
                summary: command.clone(),
                state,
            };
            self.emit(EventData::StackPush(frame(FrameState::Running)));
            let settings = std::sync::Arc::clone(&self.orch.settings.tools);
            let workdir = self.orch.settings.workdir.clone();
            let ran = hooks::run(&hook, &input, &settings, &workdir, &self.cancel).await;
            let verdict = match &ran.error {
                Some(error) => Err(error.clone()),
                None => hooks::parse_output(event, ran.exit, &ran.stdout, &ran.stderr),
            };
            let (verdict, error) = match verdict {
                Ok(verdict) => (verdict, None),
                Err(error) => (Verdict::default(), Some(error)),
            };
            let denied = verdict.decision == Some(HookDecision::Deny);
            self.emit(EventData::Hook(Box::new(HookRan {
                id: id.clone(),
                event,
                command: command.clone(),
                source: hook.source,
                call: parent.clone(),
                duration_ms: u64::try_from(ran.duration.as_millis()).unwrap_or(u64::MAX),
                decision: verdict.decision,
                reason: verdict.reason.clone(),
                context: verdict.context.is_some(),
                exit_code: ran.exit,
                error: error.clone(),
            })));
            let end = match (&error, denied) {
                (Some(_), _) => FrameState::Failed,
                (None, true) => FrameState::Denied,
                (None, false) => FrameState::Done,
            };
            self.emit(EventData::StackPop(frame(end)));
            said.take(verdict);
            if said.decision == Some(HookDecision::Deny) || self.cancel.is_cancelled() {
                break;
            }
        }
        said
    }

    /// `session_start` (with the session's first request) and `user_prompt_submit`: a
    /// blocking reason, or the context they gave for the request.
    pub(super) async fn prompt_hooks(&mut self, prompt: &str) -> (Option<String>, Vec<String>) {
        let mut context = Vec::new();
        if !self.orch.session_started {
            self.orch.session_started = true;
            let said = self.hooks(HookEvent::SessionStart, None, json!({})).await;
            context.extend(said.context);
        }
        let said = (self.hooks(HookEvent::UserPromptSubmit, None, json!({"prompt": prompt}))).await;
        if said.decision == Some(HookDecision::Deny) {
            let reason = said.reason.unwrap_or_else(|| "no reason given".to_string());
            return (Some(reason), Vec::new());
        }
        context.extend(said.context);
        (None, context)
    }

    /// `stop`: the reason to go on, when a hook will not let the run end yet.
    pub(super) async fn stop_hooks(&mut self, answer: &str) -> Option<String> {
        if self.stops_refused >= MAX_STOPS_REFUSED {
            return None;
        }
        let said = self
            .hooks(HookEvent::Stop, None, json!({"answer": answer}))
            .await;
        if said.decision != Some(HookDecision::Deny) {
            return None;
        }
        self.stops_refused += 1;
        Some(said.reason.unwrap_or_else(|| "keep going".to_string()))
    }

    /// `pre_tool_use`: the call's policy as the hooks leave it, or the end of a call they
    /// denied. An allow spares the question, except for a call that must be asked about
    /// every time (outside the sandbox); an ask asks about a call that would have run.
    pub(super) async fn pre_tool_hooks(
        &mut self,
        call: &Pending,
        arguments: &Value,
        policy: Policy,
    ) -> Result<Policy, Ended> {
        if policy == Policy::Deny {
            return Ok(policy);
        }
        let guarded = Guarded {
            frame: &call.frame,
            name: &call.name,
            arguments,
        };
        let said = self
            .hooks(HookEvent::PreToolUse, Some(guarded), json!({}))
            .await;
        self.keep_hook_context(HookEvent::PreToolUse, &call.frame, &said);
        let must_ask = self
            .confinement(&call.name, arguments)
            .is_some_and(super::approval::needs_each_approval);
        let policy = self.moded(call, arguments, policy, must_ask)?;
        Ok(match said.decision {
            Some(HookDecision::Deny) => {
                let reason = said.reason.unwrap_or_else(|| "no reason given".to_string());
                return Err(Ended::Denied {
                    by: DeniedBy::Hook,
                    message: format!(
                        "a pre_tool_use hook of the user's denied this call: {reason}"
                    ),
                });
            }
            Some(HookDecision::Ask) => Policy::Ask,
            Some(HookDecision::Allow) if !must_ask => Policy::Allow,
            _ => policy,
        })
    }

    /// `post_tool_use`, for each call of the batch that ran: what the hooks say goes to the
    /// model with the batch's results.
    pub(super) async fn post_tool_hooks(&mut self, calls: &[Pending], outcomes: &[CallOutcome]) {
        if self.orch.settings.hooks.is_empty() {
            return;
        }
        for (call, outcome) in calls.iter().zip(outcomes) {
            if !ran(&outcome.ended) || self.cancel.is_cancelled() {
                continue;
            }
            let response = match outcome.ended.to_result() {
                Ok(value) => value,
                Err(error) => json!({"error": error}),
            };
            let guarded = Guarded {
                frame: &call.frame,
                name: &call.name,
                arguments: &call.arguments,
            };
            let said = self
                .hooks(
                    HookEvent::PostToolUse,
                    Some(guarded),
                    json!({"tool_response": response}),
                )
                .await;
            if said.decision == Some(HookDecision::Deny) {
                let reason = said
                    .reason
                    .clone()
                    .unwrap_or_else(|| "no reason given".to_string());
                self.hook_context.push(format!(
                    "(post_tool_use hook, call {}) about this call's result: {reason}",
                    call.frame
                ));
            }
            self.keep_hook_context(HookEvent::PostToolUse, &call.frame, &said);
        }
    }

    /// `notification`: taco waits for the user (what the hooks say is not used).
    pub(super) async fn notify_hooks(&mut self, message: String) {
        self.hooks(HookEvent::Notification, None, json!({"message": message}))
            .await;
    }

    /// Context the hooks gave, for the model with the batch's results.
    pub(super) fn keep_hook_context(&mut self, event: HookEvent, call: &str, said: &Said) {
        for context in &said.context {
            self.hook_context
                .push(format!("({} hook, call {call}) {context}", event.name()));
        }
    }
}

impl super::Orchestrator {
    /// Reads the project's hooks again (trusted since), keeping the user's.
    pub fn reload_hooks(&mut self) {
        let user: Vec<hooks::Hook> = (self.settings.hooks.all())
            .iter()
            .filter(|h| h.source == hooks::Source::User)
            .cloned()
            .collect();
        let state = crate::audit::state_dir();
        let loaded = hooks::load(user, &self.settings.workdir, state.as_deref());
        self.settings.hooks = loaded.hooks;
    }
}

impl Said {
    /// Adds one hook's verdict.
    fn take(&mut self, verdict: Verdict) {
        let rank = |d: Option<HookDecision>| match d {
            None => 0,
            Some(HookDecision::Allow) => 1,
            Some(HookDecision::Ask) => 2,
            Some(HookDecision::Deny) => 3,
        };
        if rank(verdict.decision) > rank(self.decision) {
            self.decision = verdict.decision;
            self.reason = verdict.reason;
        }
        self.context.extend(verdict.context);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deny_outranks_ask_outranks_allow_and_contexts_add_up() {
        let v = |decision, reason: &str, context: Option<&str>| Verdict {
            decision,
            reason: Some(reason.into()),
            context: context.map(String::from),
        };
        let mut said = Said::default();
        said.take(v(Some(HookDecision::Allow), "a", Some("one")));
        said.take(v(Some(HookDecision::Ask), "b", None));
        assert_eq!(said.decision, Some(HookDecision::Ask));
        said.take(v(Some(HookDecision::Allow), "c", Some("two")));
        assert_eq!(said.reason.as_deref(), Some("b"));
        said.take(v(Some(HookDecision::Deny), "d", None));
        assert_eq!(
            (said.decision, said.reason.as_deref()),
            (Some(HookDecision::Deny), Some("d"))
        );
        assert_eq!(said.context, ["one", "two"]);
    }
}
