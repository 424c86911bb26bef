//! Asking about a batch's `ask` calls (DESIGN §4 rule 6): every request is announced (with
//! its diff) before anyone decides, the answers come back together, each is recorded as its
//! own `approval_decided`, and grants follow from them. An approval given over a diff whose
//! file changed meanwhile is not used: the call is asked about again with the fresh diff. A
//! call a grant allows without asking is reported as `grant_used`, so `/tools` can say what
//! each grant let through.

use super::approval::{ApprovalAnswer, ApprovalRequest};
use super::batch::Decided;
use super::scope::{Pending, Run};
use crate::event::{Decision, EventData, FrameState};
use crate::tools::diff::Preview;
use crate::tools::outcome::Ended;

/// How many times one call is asked about again because its file kept changing; after that
/// it runs with the last approved state, and the tool refuses a file that changed again.
const MAX_REASKS: usize = 3;
/// The note of a call asked about again.
const CHANGED_NOTE: &str =
    "the file changed while this dialog was open: the diff is what would change now";

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
    /// their slots empty. A call approved over a file that changed while the dialog was open
    /// is asked about again with the fresh diff (see [`Run::recheck`]); the state each diff
    /// was computed from goes to the call (`Decided::seen`).
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
        // Read from disk now, before anyone decides: the dialog shows what would change.
        let mut previews: Vec<Option<Preview>> = requests.iter().map(|r| self.preview(r)).collect();
        for (k, request) in requests.iter().enumerate() {
            let diff = previews[k].as_ref().map(|p| p.diff.clone());
            self.ask_about(request, (k + 1, requests.len()), diff, None);
        }
        let names: Vec<&str> = requests.iter().map(|r| r.name.as_str()).collect();
        let message = format!("taco needs your approval for {}", names.join(", "));
        self.notify_hooks(message).await;
        let mut answers: Vec<Option<ApprovalAnswer>> = vec![None; requests.len()];
        let mut open: Vec<usize> = (0..requests.len()).collect();
        for round in 0.. {
            let batch: Vec<ApprovalRequest> = open.iter().map(|&k| requests[k].clone()).collect();
            let cancel = self.cancel.clone();
            let got = tokio::select! {
                biased;
                _ = cancel.cancelled() => return,
                got = self.approver.decide(&batch) => got,
            };
            let mut again = Vec::new();
            for (j, &k) in open.iter().enumerate() {
                let answer = got
                    .get(j)
                    .cloned()
                    .unwrap_or_else(|| ApprovalAnswer::deny(None));
                if answer.decision == Decision::Approved
                    && round < MAX_REASKS
                    && let Some(fresh) = self.recheck(&requests[k], previews[k].as_ref())
                {
                    previews[k] = Some(fresh);
                    again.push(k);
                    continue;
                }
                answers[k] = Some(answer);
            }
            if again.is_empty() {
                break;
            }
            for &k in &again {
                let diff = previews[k].as_ref().map(|p| p.diff.clone());
                self.ask_about(
                    &requests[k],
                    (k + 1, requests.len()),
                    diff,
                    Some(CHANGED_NOTE),
                );
            }
            open = again;
        }
        for (k, &i) in asks.iter().enumerate() {
            let mut answer = answers[k]
                .take()
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
                decided.seen[i] = previews[k].take().map(|p| p.seen);
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

    /// The change a call would make, read from disk now.
    fn preview(&self, request: &ApprovalRequest) -> Option<Preview> {
        let tool = self.orch.registry.get(&request.name)?;
        tool.preview(&request.arguments, &self.orch.settings.workdir)
    }

    /// Announces a call to be decided (again, with `changed`: its file changed meanwhile).
    fn ask_about(
        &mut self,
        request: &ApprovalRequest,
        (position, of): (usize, usize),
        diff: Option<String>,
        changed: Option<&str>,
    ) {
        let tool = self.orch.registry.get(&request.name);
        let note = tool.as_ref().and_then(|t| t.approval_note());
        let note = match (changed, note) {
            (Some(changed), Some(note)) => Some(format!("{changed} · {note}")),
            (changed, note) => changed.map(String::from).or(note),
        };
        self.emit(EventData::ApprovalRequested {
            id: request.id.clone(),
            name: request.name.clone(),
            arguments: request.arguments.clone(),
            position,
            of,
            note,
            diff,
            sandbox: request.sandbox,
        });
    }

    /// For a call just approved with a diff: its preview now, when the file is no longer in
    /// the state the approved diff was computed from and someone can look at the fresh one.
    /// Otherwise (nobody to ask, or no fresh diff to show) the call runs with the state that
    /// was approved, and the tool refuses to write over anything else.
    fn recheck(&self, request: &ApprovalRequest, shown: Option<&Preview>) -> Option<Preview> {
        let shown = shown?;
        if !self.approver.can_ask() {
            return None;
        }
        let fresh = self.preview(request)?;
        shown.seen.compare(&fresh.seen).map(|_| fresh)
    }
}
