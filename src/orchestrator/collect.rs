//! Questions to the user while tools run: required parameters the model left out, collected
//! one at a time under a `collect_tool_parameters` frame (spec/004; a reply that is a new
//! request abandons the workflow, `reply.rs`), and whether to go past the stack's depth
//! limit. Headless runs cannot ask: a missing parameter stays a validation
//! error that names it, and the depth limit stops the nested work.

use serde_json::Value;

use super::scope::{Pending, Run};
use super::stack::DEPTH_STEP;
use crate::event::{EventData, FrameState, InputKind, InputRequest, StackFrame};
use crate::tools::AskReply;

/// The name of the frame that collects parameters.
pub(super) const COLLECT: &str = "collect_tool_parameters";
/// The name of the frame that fills in a running tool's form.
pub(super) const ELICIT: &str = "elicitation";
/// Fields of a form asked at most (a hostile schema could list thousands).
const MAX_FIELDS: usize = 20;

/// The fields of a form schema: required ones first, in schema order, then the others.
fn form_fields(schema: &Value) -> Vec<String> {
    let required: Vec<String> = schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(String::from)
        .collect();
    let others = schema
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flat_map(|p| p.keys())
        .filter(|k| !required.contains(k))
        .cloned()
        .collect::<Vec<_>>();
    required
        .into_iter()
        .chain(others)
        .take(MAX_FIELDS)
        .collect()
}

/// How collecting went.
pub(super) enum Collected {
    /// Every missing parameter has a value now.
    Done,
    /// The user abandoned the workflow: this message goes to the model.
    Abandoned(String),
    /// The run was cancelled while waiting.
    Cancelled,
}

/// A parameter's JSON type and description from the schema.
fn describe(schema: &Value, name: &str) -> (Option<String>, Option<String>) {
    let property = schema.get("properties").and_then(|p| p.get(name));
    let kind = property.and_then(|p| p.get("type")).and_then(|t| match t {
        Value::String(s) => Some(s.clone()),
        // `["string", "null"]`: the first non-null type.
        Value::Array(types) => types
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null")
            .map(String::from),
        _ => None,
    });
    let mut description = property
        .and_then(|p| p.get("description"))
        .and_then(Value::as_str)
        .map(String::from);
    // A choice shows its options (a form's enum field).
    if let Some(choices) = property
        .and_then(|p| p.get("enum"))
        .and_then(Value::as_array)
    {
        let choices: Vec<String> = choices
            .iter()
            .map(|c| c.as_str().map_or_else(|| c.to_string(), String::from))
            .collect();
        let options = format!("one of: {}", choices.join(", "));
        description = Some(match description {
            Some(text) => format!("{text} ({options})"),
            None => options,
        });
    }
    (kind, description)
}

/// The typed value of an answer: text for strings, JSON where it parses for other types.
fn parse_answer(text: &str, kind: Option<&str>) -> Value {
    match kind {
        Some("string") | None => Value::String(text.to_string()),
        Some(_) => {
            serde_json::from_str(text.trim()).unwrap_or_else(|_| Value::String(text.to_string()))
        }
    }
}

impl Run<'_> {
    /// Collects `missing` parameters of `call` from the user into `arguments`.
    pub(super) async fn collect(
        &mut self,
        call: &Pending,
        schema: &Value,
        missing: &[String],
        arguments: &mut Value,
    ) -> Collected {
        if !arguments.is_object() {
            *arguments = Value::Object(Default::default());
        }
        self.push_frame(call.frame(arguments, FrameState::AwaitingInput));
        let collector = format!("{}/{COLLECT}", call.frame);
        self.push_frame(StackFrame {
            id: collector.clone(),
            parent: Some(call.frame.clone()),
            name: COLLECT.to_string(),
            summary: format!("{} needs {}", call.name, missing.join(", ")),
            state: FrameState::AwaitingInput,
        });
        for name in missing {
            let (kind, description) = describe(schema, name);
            let request = InputRequest {
                id: format!("{}/q{}", call.frame, self.next_number()),
                kind: InputKind::Parameter,
                frame: collector.clone(),
                tool: call.name.clone(),
                prompt: format!("{} needs '{name}'", call.name),
                parameter: Some(name.clone()),
                description,
                value_type: kind.clone(),
                depth: None,
            };
            let Some(answer) = self.ask(&request).await else {
                return Collected::Cancelled;
            };
            match answer {
                Some(text) => {
                    if let Some(by) = self.new_request(&request, schema, &text).await {
                        return self.switch(call, name, by, text);
                    }
                    if let Some(map) = arguments.as_object_mut() {
                        map.insert(name.clone(), parse_answer(&text, kind.as_deref()));
                    }
                }
                None => {
                    return Collected::Abandoned(format!(
                        "the user abandoned this {} call when asked for '{name}'; do not retry it unless they ask",
                        call.name
                    ));
                }
            }
        }
        let frames = self.orch.stack.pop(&collector, FrameState::Done);
        self.popped(frames);
        Collected::Done
    }

    /// At the depth limit: shows the question and, if the user says so, allows another
    /// [`DEPTH_STEP`] levels. `false` stops the nested work.
    pub(super) async fn confirm_depth(&mut self, first: &Pending) -> bool {
        if !self.approver.can_ask() {
            return false;
        }
        let depth = self.orch.stack.depth_under(first.parent.as_deref());
        let request = InputRequest {
            id: format!("depth/q{}", self.next_number()),
            kind: InputKind::DepthLimit,
            frame: first.parent.clone().unwrap_or_else(|| first.frame.clone()),
            tool: first.name.clone(),
            prompt: format!(
                "The tool stack reached its depth limit ({}). Continue for another {DEPTH_STEP} levels?",
                self.orch.stack.limit()
            ),
            parameter: None,
            description: None,
            value_type: None,
            depth: Some(depth),
        };
        let yes = self
            .ask(&request)
            .await
            .flatten()
            .is_some_and(|a| is_yes(&a));
        if yes {
            self.orch.stack.extend();
        }
        yes
    }

    /// A running call's form (an MCP server's elicitation), one field at a time under an
    /// `elicitation` frame above the call. Headless, it is shown as asked and declined.
    pub(super) async fn elicit(
        &mut self,
        call: &str,
        from: &str,
        message: &str,
        schema: &Value,
    ) -> AskReply {
        let message = crate::text::summarize(message, 500);
        if !self.approver.can_ask() {
            let request = InputRequest {
                id: format!("{call}/e{}", self.next_number()),
                kind: InputKind::Parameter,
                frame: call.to_string(),
                tool: from.to_string(),
                prompt: format!("{from} asks: {message}"),
                parameter: None,
                description: None,
                value_type: None,
                depth: None,
            };
            self.emit(EventData::InputRequested(request.clone()));
            self.emit(EventData::InputAnswered {
                id: request.id,
                value: None,
            });
            return AskReply::Decline;
        }
        let frame = format!("{call}/{ELICIT}-{}", self.next_number());
        self.push_frame(StackFrame {
            id: frame.clone(),
            parent: Some(call.to_string()),
            name: ELICIT.to_string(),
            summary: format!("{from}: {message}"),
            state: FrameState::AwaitingInput,
        });
        let mut answers = serde_json::Map::new();
        let mut end = None;
        for name in form_fields(schema) {
            let (kind, description) = describe(schema, &name);
            let request = InputRequest {
                id: format!("{frame}/q{}", self.next_number()),
                kind: InputKind::Parameter,
                frame: frame.clone(),
                tool: from.to_string(),
                prompt: format!("{from} asks: {message}"),
                parameter: Some(name.clone()),
                description,
                value_type: kind.clone(),
                depth: None,
            };
            match self.ask(&request).await {
                None => {
                    end = Some((AskReply::Cancel, FrameState::Cancelled));
                    break;
                }
                Some(None) => {
                    end = Some((AskReply::Decline, FrameState::Denied));
                    break;
                }
                Some(Some(text)) => {
                    answers.insert(name, parse_answer(&text, kind.as_deref()));
                }
            }
        }
        let (reply, state) = match end {
            Some(end) => end,
            None => self.confirm_form(&frame, from, answers).await,
        };
        let frames = self.orch.stack.pop(&frame, state);
        self.popped(frames);
        reply
    }

    /// A filled-in form is sent only when the user says so after seeing it whole: filling
    /// the last field is not the same as choosing to send (issue 26). Secret-looking fields
    /// show masked.
    async fn confirm_form(
        &mut self,
        frame: &str,
        from: &str,
        answers: serde_json::Map<String, Value>,
    ) -> (AskReply, FrameState) {
        let summary: Vec<String> = (answers.iter())
            .map(|(name, value)| {
                let shown = if crate::secrets::is_secret_name(name, &[]) {
                    "••••••".to_string()
                } else {
                    match value {
                        Value::String(text) => crate::text::summarize(text, 200),
                        other => crate::text::summarize(&other.to_string(), 200),
                    }
                };
                format!("{name}: {shown}")
            })
            .collect();
        let request = InputRequest {
            id: format!("{frame}/send{}", self.next_number()),
            kind: InputKind::Submit,
            frame: frame.to_string(),
            tool: from.to_string(),
            prompt: format!("Send these answers to {from}?"),
            parameter: None,
            description: Some(summary.join("\n")),
            value_type: None,
            depth: None,
        };
        match self.ask(&request).await {
            None => (AskReply::Cancel, FrameState::Cancelled),
            Some(Some(yes)) if is_yes(&yes) => (AskReply::Accept(answers), FrameState::Done),
            Some(_) => (AskReply::Decline, FrameState::Denied),
        }
    }

    /// Asks one question with its `input_requested` / `input_answered` events. `None`: the
    /// run was cancelled while waiting; `Some(None)`: the user declined.
    async fn ask(&mut self, request: &InputRequest) -> Option<Option<String>> {
        self.emit(EventData::InputRequested(request.clone()));
        let cancel = self.cancel.clone();
        let answer = tokio::select! {
            biased;
            _ = cancel.cancelled() => return None,
            answer = self.approver.ask(request) => answer,
        };
        self.emit(EventData::InputAnswered {
            id: request.id.clone(),
            value: answer.clone(),
        });
        Some(answer)
    }
}

/// Whether a yes/no question's answer is yes.
fn is_yes(answer: &str) -> bool {
    matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn answers_take_the_parameter_type() {
        assert_eq!(parse_answer("12", Some("integer")), json!(12));
        assert_eq!(parse_answer("true", Some("boolean")), json!(true));
        assert_eq!(parse_answer("[1, 2]", Some("array")), json!([1, 2]));
        assert_eq!(parse_answer("12", Some("string")), json!("12"));
        assert_eq!(
            parse_answer("twelve", Some("integer")),
            json!("twelve"),
            "validation reports it"
        );
        let schema = json!({"properties": {"p": {"type": ["string", "null"], "description": "d"}}});
        assert_eq!(
            describe(&schema, "p"),
            (Some("string".into()), Some("d".into()))
        );
    }
}
