//! Asking about a batch's `ask` calls (DESIGN §4 rule 6): every request is announced (with
//! its diff) before anyone decides, the answers come back together, each is recorded as its
//! own `approval_decided`, and grants follow from them. A call a grant allows without asking
//! is reported as `grant_used`, so `/tools` can say what each grant let through.

use super::approval::{ApprovalAnswer, ApprovalRequest};
use super::batch::Decided;
use super::scope::{Pending, Run};
use crate::event::{Decision, EventData, FrameState};
use crate::tools::outcome::Ended;

impl Run<'_> {
    /// Reports the grant that lets `call` run without asking, if one does.
    pub(super) fn note_grant(&mut self, call: &Pending, arguments: &serde_json::Value) {
        let Some(tool) = self.orch.registry.get(&call.name) else {
            return;
        };
        let settings = &self.orch.settings.tools;
        if let Some(grant) = self
            .orch
            .policies
            .granting(tool.as_ref(), arguments, settings)
        {
            self.emit(EventData::GrantUsed {
                id: call.frame.clone(),
                name: call.name.clone(),
                grant,
            });
        }
    }

    /// Asks about the `ask` calls as one batch and records the answers; a cancel leaves
    /// their slots empty.
    pub(super) async fn approve(
        &mut self,
        calls: &[Pending],
        asks: &[usize],
        decided: &mut Decided,
    ) {
        for &i in asks {
            self.push_frame(calls[i].frame(&decided.arguments[i], FrameState::AwaitingApproval));
        }
        let requests: Vec<_> = asks
            .iter()
            .map(|&i| ApprovalRequest {
                id: calls[i].frame.clone(),
                name: calls[i].name.clone(),
                arguments: decided.arguments[i].clone(),
                sandbox: self.confinement(&calls[i].name, &decided.arguments[i]),
            })
            .collect();
        for (k, request) in requests.iter().enumerate() {
            let tool = self.orch.registry.get(&request.name);
            let note = tool.as_ref().and_then(|t| t.approval_note());
            // Read from disk now, before anyone decides: the dialog shows what would change.
            let diff =
                tool.and_then(|t| t.preview(&request.arguments, &self.orch.settings.workdir));
            self.emit(EventData::ApprovalRequested {
                id: request.id.clone(),
                name: request.name.clone(),
                arguments: request.arguments.clone(),
                position: k + 1,
                of: requests.len(),
                note,
                diff,
                sandbox: request.sandbox,
            });
        }
        let cancel = self.cancel.clone();
        let answers = tokio::select! {
            biased;
            _ = cancel.cancelled() => return,
            answers = self.approver.decide(&requests) => answers,
        };
        for (k, &i) in asks.iter().enumerate() {
            let mut answer = answers
                .get(k)
                .cloned()
                .unwrap_or_else(|| ApprovalAnswer::deny(None));
            requests[k].limit(&mut answer);
            let call = &calls[i];
            self.emit(EventData::ApprovalDecided {
                id: call.frame.clone(),
                name: call.name.clone(),
                decision: answer.decision,
                scope: answer.scope,
                reason: answer.reason.clone(),
                prefix: answer
                    .prefix
                    .clone()
                    .filter(|_| answer.decision == Decision::Approved),
            });
            if answer.decision == Decision::Approved {
                self.orch.policies.grant(&call.name, answer.scope);
                if let Some(prefix) = &answer.prefix {
                    self.orch.policies.allow_shell_prefix(prefix);
                }
                decided.ready.push(i);
                continue;
            }
            let message = match &answer.reason {
                Some(reason) => format!("the call was denied: {reason}"),
                None => "the call was denied by the user".to_string(),
            };
            let ended = Ended::Denied {
                by: answer.by,
                message,
            };
            let denied = self.not_run(call, ended);
            let frames = self.orch.stack.pop(&call.frame, FrameState::Denied);
            self.popped(frames);
            decided.outcomes[i] = Some(denied);
        }
    }
}
