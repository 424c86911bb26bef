//! The engine's answers to the agent's permission requests (the user's decisions, or
//! `cancelled` on a cancel), and what it says of the ops an external agent cannot do.

use agent_client_protocol::v1::schema::{
    CancelNotification, PermissionOption, RequestPermissionOutcome, RequestPermissionResponse,
};
use agent_client_protocol::{Responder, V1};

use super::State;
use crate::acp::client::choice;
use crate::orchestrator::approval::ApprovalAnswer;
use crate::orchestrator::task::Op;

/// A permission request waiting for the user.
pub(super) struct Waiting {
    pub(super) options: Vec<PermissionOption>,
    pub(super) responder: Responder<RequestPermissionResponse, V1>,
}

impl State {
    /// The user's answer to the permission request about call `id`.
    pub(super) async fn decide(&mut self, id: &str, answer: &ApprovalAnswer) {
        let Some(waiting) = self.waiting.remove(id) else {
            return;
        };
        let outcome = choice::outcome(&waiting.options, answer);
        let decision = choice::decision(&waiting.options, &outcome);
        let reason = match (&outcome, answer.decision) {
            (RequestPermissionOutcome::Cancelled, crate::event::Decision::Approved) => {
                Some(format!(
                    "{} offers no option that allows only what was approved",
                    self.name
                ))
            }
            _ => answer.reason.clone(),
        };
        if let Err(e) = waiting
            .responder
            .respond(RequestPermissionResponse::new(outcome))
        {
            tracing::warn!("the permission answer could not be sent: {e}");
        }
        let now = crate::event::unix_ms();
        let events = self
            .translator
            .decided(id, decision, answer.scope, reason, now);
        self.emit_all(events).await;
    }

    pub(super) fn send_cancel(&self) {
        if let (Some(cx), Some(session)) = (&self.cx, &self.session) {
            let _ = cx.send_notification(CancelNotification::new(session.clone()));
        }
    }

    /// Every open permission request is answered `cancelled` (the protocol's rule on a
    /// cancel).
    pub(super) fn answer_all_cancelled(&mut self) {
        for (_, waiting) in self.waiting.drain() {
            let _ = waiting.responder.respond(RequestPermissionResponse::new(
                RequestPermissionOutcome::Cancelled,
            ));
        }
    }
}

/// What an op asks for, in the words of its command.
pub(super) fn unsupported(op: &Op) -> &'static str {
    match op {
        Op::UserShell(_) => "`!` (a shell command of the user's)",
        Op::Answer { .. } | Op::Fill { .. } => "answering a question",
        Op::CancelCall(_) => "cancelling one call",
        Op::Clear => "/clear",
        Op::Compact => "/compact",
        Op::Revoke(_) => "/revoke",
        Op::Switch { .. } => "/model and /provider",
        Op::ListModels => "/model",
        Op::ListSessions => "/resume",
        Op::PreviewRewind(_) | Op::Rewind { .. } | Op::ShowChanges { .. } => "/rewind",
        Op::ReloadHooks => "hooks",
        Op::SetMode(_) => "permission modes",
        _ => "this",
    }
}
