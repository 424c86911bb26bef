//! A running call's form (an MCP server's `elicitation/create`): one question of kind
//! `form` under an `elicitation` frame above the call, answered whole (the content, a
//! decline or a cancel). A schema that cannot be shown is declined with its reason in the
//! log; headless runs decline and say so (`exec` prints the line).

use super::scope::Run;
use crate::event::{EventData, FrameState, InputKind, InputRequest, StackFrame};
use crate::form::{FormSpec, MAX_TEXT, check_content};
use crate::tools::{Ask, AskReply};

/// The name of the frame that fills in a running tool's form.
pub(super) const ELICIT: &str = "elicitation";

impl Run<'_> {
    /// Asks the user to fill in `ask`'s form, as one question.
    pub(super) async fn elicit(&mut self, ask: &Ask) -> AskReply {
        let (call, from) = (ask.call.as_str(), ask.from.as_str());
        let message = crate::text::summarize(&ask.message, MAX_TEXT);
        let spec = match FormSpec::parse(&ask.schema, &ask.order) {
            Ok(spec) if spec.hides_required(&ask.schema) => {
                tracing::warn!(
                    from,
                    "form declined: it has required fields past the {} shown",
                    crate::form::MAX_FIELDS
                );
                return AskReply::Decline;
            }
            Ok(spec) => spec,
            Err(reason) => {
                tracing::warn!(from, %reason, "form declined: it cannot be shown");
                return AskReply::Decline;
            }
        };
        let headless = !self.approver.can_ask();
        let frame = if headless {
            call.to_string()
        } else {
            let frame = format!("{call}/{ELICIT}-{}", self.next_number());
            self.push_frame(StackFrame {
                id: frame.clone(),
                parent: Some(call.to_string()),
                name: ELICIT.to_string(),
                summary: format!("{from}: {message}"),
                state: FrameState::AwaitingInput,
            });
            frame
        };
        let request = InputRequest {
            id: format!("{call}/form{}", self.next_number()),
            kind: InputKind::Form,
            frame: frame.clone(),
            tool: from.to_string(),
            prompt: format!("{from} asks: {message}"),
            parameter: None,
            description: None,
            value_type: None,
            depth: None,
            form: Some(spec),
        };
        self.emit(EventData::InputRequested(request.clone()));
        let cancel = self.cancel.clone();
        let answer = tokio::select! {
            biased;
            _ = cancel.cancelled() => AskReply::Cancel,
            answer = self.approver.fill(&request) => answer,
        };
        let answer = match answer {
            // The overlay checked each field; the whole schema has the last word.
            AskReply::Accept(content) => match check_content(&ask.schema, &content) {
                Ok(()) => AskReply::Accept(content),
                Err(reason) => {
                    tracing::warn!(from, %reason, "form declined: its content does not hold");
                    AskReply::Decline
                }
            },
            other => other,
        };
        self.emit(EventData::InputAnswered {
            id: request.id.clone(),
            value: None,
            form: Some(answer.clone()),
        });
        if !headless {
            let state = match answer {
                AskReply::Accept(_) => FrameState::Done,
                AskReply::Decline => FrameState::Denied,
                AskReply::Cancel => FrameState::Cancelled,
            };
            let frames = self.orch.stack.pop(&frame, state);
            self.popped(frames);
        }
        answer
    }
}
