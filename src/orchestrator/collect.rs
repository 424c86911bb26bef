//! Questions to the user while tools run: required parameters the model left out, collected
//! one at a time under a `collect_tool_parameters` frame (spec/004; a reply that is a new
//! request abandons the workflow, `reply.rs`), and whether to go past the stack's depth
//! limit (a server's form is `elicit.rs`). Headless runs cannot ask: a missing parameter stays a validation
//! error that names it, and the depth limit stops the nested work.

use serde_json::Value;

use super::scope::{Pending, Run};
use super::stack::DEPTH_STEP;
use crate::event::{EventData, FrameState, InputKind, InputRequest, StackFrame};

/// The name of the frame that collects parameters.
pub(super) const COLLECT: &str = "collect_tool_parameters";
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
                form: None,
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
            form: None,
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

    /// Asks one question with its `input_requested` / `input_answered` events. `None`: the
    /// run was cancelled while waiting; `Some(None)`: the user declined.
    pub(super) async fn ask(&mut self, request: &InputRequest) -> Option<Option<String>> {
        self.emit(EventData::InputRequested(request.clone()));
        self.notify_hooks(format!("taco asks: {}", request.prompt))
            .await;
        let cancel = self.cancel.clone();
        let answer = tokio::select! {
            biased;
            _ = cancel.cancelled() => return None,
            answer = self.approver.ask(request) => answer,
        };
        self.emit(EventData::InputAnswered {
            id: request.id.clone(),
            value: answer.clone(),
            form: None,
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
