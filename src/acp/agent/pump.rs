//! One ACP session's events to the client: updates as they come, approval requests as
//! permission requests (answered off the loop, so a client slow to answer holds nothing
//! else), questions declined (ACP has no way to ask yet), and the prompt's response when
//! its run ends.

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    CurrentModeUpdate, PromptResponse, SessionId, SessionNotification, SessionUpdate, StopReason,
};

use super::updates::{self, Source};
use super::{Session, Waiting, lock, permission, problem};
use crate::conversation::Role;
use crate::event::{EventData, InputKind};
use crate::orchestrator::approval::{ApprovalAnswer, ApprovalRequest};
use crate::orchestrator::task::Op;
use crate::run_model::RunModel;
use crate::session::Entry;
use crate::tools::AskReply;

/// Sends a loaded session's newest entries as updates: the user's messages, the answers and
/// thoughts, the calls with their results, the plan.
pub fn replay(cx: &ConnectionTo<Client>, id: &SessionId, session: &Session) {
    let mut model = RunModel::new();
    for entry in &session.history {
        let sent = match entry {
            Entry::Message(message) if message.role == Role::User => message
                .content
                .as_deref()
                .map(updates::user_message)
                .into_iter()
                .collect(),
            Entry::Message(_) => Vec::new(),
            Entry::Event(event) => {
                model.apply(event);
                updates::updates(
                    event,
                    &model,
                    Source::Replay,
                    &session.workdir,
                    &session.pricing,
                )
            }
        };
        for update in sent {
            let _ = cx.send_notification(SessionNotification::new(id.clone(), update));
        }
    }
}

/// Pumps the session's events until its task ends.
pub async fn run(mut session: Session, cx: ConnectionTo<Client>, waiting: Waiting) {
    let id = SessionId::new(session.id.clone());
    let mut model = RunModel::new();
    let mut run = RunEnd::default();
    let ops = session.task.ops.clone();
    let mut held = None;
    while let Some(event) = next(&mut session.task.events, &mut held).await {
        let was_running = model.is_running();
        model.apply(&event);
        run.see(&event.data);
        match &event.data {
            EventData::ApprovalRequested {
                id: call,
                name,
                arguments,
                sandbox,
                ..
            } => {
                let request = ApprovalRequest {
                    id: call.clone(),
                    name: name.clone(),
                    arguments: arguments.clone(),
                    sandbox: *sandbox,
                };
                ask(&cx, &id, request, &session.workdir, ops.clone());
            }
            EventData::InputRequested(question) if question.kind == InputKind::Plan => {
                review(&cx, &id, question, ops.clone());
            }
            EventData::ModeChanged { mode } => notify(
                &cx,
                &id,
                SessionUpdate::CurrentModeUpdate(CurrentModeUpdate::new(mode.name())),
            ),
            // ACP has no question or form a client must answer: declined, so the model is
            // told and goes on (a workflow asking for a parameter ends).
            EventData::InputRequested(question) => {
                let op = match question.kind {
                    InputKind::Form => Op::Fill {
                        id: question.id.clone(),
                        answer: AskReply::Decline,
                    },
                    _ => Op::Answer {
                        id: question.id.clone(),
                        value: None,
                    },
                };
                let _ = ops.send(op);
            }
            _ => {}
        }
        for update in updates::updates(
            &event,
            &model,
            Source::Live,
            &session.workdir,
            &session.pricing,
        ) {
            notify(&cx, &id, update);
        }
        let ended = was_running && !model.is_running();
        // An error before any run started (a prompt refused) ends the prompt too.
        let refused = !was_running
            && !event.request_id.is_empty()
            && matches!(event.data, EventData::Error { .. });
        if ended || refused {
            finish(&waiting, run.take(), &cx, &id);
        }
    }
    // The task is gone: a prompt still waiting ends now rather than never.
    if let Some(responder) = lock(&waiting).take() {
        let _ = responder.respond(PromptResponse::new(StopReason::Cancelled));
    }
    (session.on_close)();
}

/// Most text one merged chunk carries.
const MERGED_TEXT: usize = 32 * 1024;

/// The next event; deltas already waiting behind a delta of the same kind come merged into it,
/// so a client slower than the model gets fewer, longer chunks instead of a backlog of lines
/// (the event that ends a merge is held for the next call).
async fn next(
    events: &mut tokio::sync::mpsc::UnboundedReceiver<crate::event::Event>,
    held: &mut Option<crate::event::Event>,
) -> Option<crate::event::Event> {
    let mut event = match held.take() {
        Some(event) => event,
        None => events.recv().await?,
    };
    let EventData::Delta { kind, text } = &mut event.data else {
        return Some(event);
    };
    while text.len() < MERGED_TEXT {
        let Ok(more) = events.try_recv() else {
            break;
        };
        match &more.data {
            EventData::Delta {
                kind: next_kind,
                text: next_text,
            } if next_kind == kind && more.request_id == event.request_id => {
                text.push_str(next_text);
            }
            _ => {
                *held = Some(more);
                break;
            }
        }
    }
    Some(event)
}

fn notify(cx: &ConnectionTo<Client>, id: &SessionId, update: SessionUpdate) {
    let _ = cx.send_notification(SessionNotification::new(id.clone(), update));
}

/// Asks the client about one call; its pick (or its silence, or its going away) is the
/// answer sent back to the orchestrator.
fn ask(
    cx: &ConnectionTo<Client>,
    id: &SessionId,
    request: ApprovalRequest,
    workdir: &std::path::Path,
    ops: tokio::sync::mpsc::UnboundedSender<Op>,
) {
    let asked = permission::request(id, &request, workdir);
    let cx = cx.clone();
    tokio::spawn(async move {
        let answer = match cx.send_request(asked).block_task().await {
            Ok(response) => permission::answer(&request, &response.outcome),
            Err(e) => {
                tracing::warn!(call = %request.id, "permission request failed: {e}");
                ApprovalAnswer::deny(Some(
                    "the client could not be asked for permission".to_string(),
                ))
            }
        };
        let _ = ops.send(Op::Approve {
            id: request.id,
            answer,
        });
    });
}

/// Asks the client to review plan mode's plan; its pick is the question's answer.
fn review(
    cx: &ConnectionTo<Client>,
    id: &SessionId,
    question: &crate::event::InputRequest,
    ops: tokio::sync::mpsc::UnboundedSender<Op>,
) {
    let asked = super::modes::plan_request(id, question);
    let question = question.id.clone();
    let cx = cx.clone();
    tokio::spawn(async move {
        let value = match cx.send_request(asked).block_task().await {
            Ok(response) => super::modes::plan_answer(&response.outcome),
            Err(_) => None,
        };
        let _ = ops.send(Op::Answer {
            id: question,
            value,
        });
    });
}

/// How the run in progress is ending.
#[derive(Debug, Default)]
struct RunEnd {
    max_turns: bool,
    error: Option<String>,
    cancelled: bool,
}

impl RunEnd {
    fn see(&mut self, data: &EventData) {
        match data {
            EventData::RunStarted { .. } => *self = Self::default(),
            EventData::MaxTurnsReached { .. } => self.max_turns = true,
            EventData::Cancelled { .. } => self.cancelled = true,
            EventData::Error { message, .. } => self.error = Some(message.clone()),
            _ => {}
        }
    }

    fn take(&mut self) -> Self {
        std::mem::take(self)
    }
}

/// Answers the waiting prompt for the run that ended.
fn finish(waiting: &Waiting, end: RunEnd, cx: &ConnectionTo<Client>, id: &SessionId) {
    let Some(responder) = lock(waiting).take() else {
        return;
    };
    let reason = if end.cancelled {
        StopReason::Cancelled
    } else if end.max_turns {
        StopReason::MaxTurnRequests
    } else if let Some(error) = end.error {
        // Said in the conversation too, so a client that shows only the transcript shows it.
        notify(
            cx,
            id,
            SessionUpdate::AgentMessageChunk(agent_client_protocol::v1::schema::ContentChunk::new(
                agent_client_protocol::v1::schema::ContentBlock::Text(
                    agent_client_protocol::v1::schema::TextContent::new(format!(
                        "\n\ntaco: {error}"
                    )),
                ),
            )),
        );
        let _ = responder.respond_with_error(problem(error));
        return;
    } else {
        StopReason::EndTurn
    };
    let _ = responder.respond(PromptResponse::new(reason));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{DeltaKind, Event};
    use std::sync::Arc;

    fn delta(kind: DeltaKind, text: &str) -> Event {
        Event::now(
            &Arc::from("r1"),
            EventData::Delta {
                kind,
                text: text.into(),
            },
        )
    }

    #[tokio::test]
    async fn waiting_deltas_of_one_kind_merge_and_the_event_after_them_keeps_its_place() {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        for event in [
            delta(DeltaKind::Text, "a"),
            delta(DeltaKind::Text, "b"),
            delta(DeltaKind::Reasoning, "c"),
            delta(DeltaKind::Reasoning, "d"),
            Event::now(
                &Arc::from("r1"),
                EventData::Cancelled {
                    running: String::new(),
                },
            ),
            delta(DeltaKind::Text, "e"),
        ] {
            tx.send(event).unwrap();
        }
        drop(tx);
        let mut held = None;
        let mut seen = Vec::new();
        while let Some(event) = next(&mut rx, &mut held).await {
            seen.push(match event.data {
                EventData::Delta { kind, text } => format!("{kind:?}:{text}"),
                other => format!("{other:?}").chars().take(9).collect(),
            });
        }
        assert_eq!(seen, ["Text:ab", "Reasoning:cd", "Cancelled", "Text:e"]);
    }
}
