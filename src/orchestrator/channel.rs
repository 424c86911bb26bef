//! How the task's approver waits for the UI: answers arrive as ops, are routed to the
//! approval, question or form that waits for them, and are kept when they come early.

use std::collections::HashMap;

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use tokio::sync::mpsc::UnboundedReceiver;

use super::approval::{ApprovalAnswer, ApprovalRequest, Approver};
use crate::event::{Grant, InputRequest};
use crate::tools::AskReply;

/// An answer from the UI, routed to whoever waits for it.
pub(super) enum Reply {
    Approval(String, ApprovalAnswer),
    Input(String, Option<String>),
    Form(String, AskReply),
    Revoke(Grant),
}

/// Waits for the UI's answers (approvals by call id, questions by question id); answers
/// that arrive before anyone waits for them are kept.
pub(super) struct ChannelApprover {
    pub(super) replies: UnboundedReceiver<Reply>,
    pub(super) approvals: HashMap<String, ApprovalAnswer>,
    pub(super) inputs: HashMap<String, Option<String>>,
    pub(super) forms: HashMap<String, AskReply>,
    pub(super) revoked: Vec<Grant>,
}

impl ChannelApprover {
    /// Files the next reply; `false` when the UI is gone.
    pub(super) async fn receive(&mut self) -> bool {
        match self.replies.recv().await {
            Some(reply) => {
                self.file(reply);
                true
            }
            None => false,
        }
    }

    fn file(&mut self, reply: Reply) {
        match reply {
            Reply::Approval(id, answer) => {
                self.approvals.insert(id, answer);
            }
            Reply::Input(id, value) => {
                self.inputs.insert(id, value);
            }
            Reply::Form(id, answer) => {
                self.forms.insert(id, answer);
            }
            Reply::Revoke(grant) => self.revoked.push(grant),
        }
    }
}

impl Approver for ChannelApprover {
    fn decide<'a>(
        &'a mut self,
        batch: &'a [ApprovalRequest],
    ) -> BoxFuture<'a, Vec<ApprovalAnswer>> {
        async move {
            loop {
                // A batch-wide approval of a call it may not approve is dropped: that call
                // is still asked about.
                for r in batch {
                    if self.approvals.get(&r.id).is_some_and(|a| !r.accepts(a)) {
                        self.approvals.remove(&r.id);
                    }
                }
                if batch.iter().all(|r| self.approvals.contains_key(&r.id)) || !self.receive().await
                {
                    break;
                }
            }
            batch
                .iter()
                .map(|r| {
                    self.approvals
                        .remove(&r.id)
                        .unwrap_or_else(|| ApprovalAnswer::deny(None))
                })
                .collect()
        }
        .boxed()
    }

    fn can_ask(&self) -> bool {
        true
    }

    fn ask<'a>(&'a mut self, request: &'a InputRequest) -> BoxFuture<'a, Option<String>> {
        async move {
            while !self.inputs.contains_key(&request.id) {
                if !self.receive().await {
                    return None;
                }
            }
            self.inputs.remove(&request.id).flatten()
        }
        .boxed()
    }

    fn fill<'a>(&'a mut self, request: &'a InputRequest) -> BoxFuture<'a, AskReply> {
        async move {
            while !self.forms.contains_key(&request.id) {
                if !self.receive().await {
                    return AskReply::Cancel;
                }
            }
            self.forms.remove(&request.id).unwrap_or(AskReply::Cancel)
        }
        .boxed()
    }

    fn revocations(&mut self) -> Vec<Grant> {
        while let Ok(reply) = self.replies.try_recv() {
            self.file(reply);
        }
        std::mem::take(&mut self.revoked)
    }
}
