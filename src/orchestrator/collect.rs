//! Questions to the user while tools run: required parameters the model left out, collected
//! one at a time under a `collect_tool_parameters` frame (spec/004), and whether to go past
//! the stack's depth limit. Headless runs cannot ask: a missing parameter stays a validation
//! error that names it, and the depth limit stops the nested work.

use std::time::Instant;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::approval::Approver;
use super::batch::Pending;
use super::stack::DEPTH_STEP;
use super::{Orchestrator, Run};
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

/// Required parameters that `arguments` lacks (absent or null), in schema order.
pub(super) fn missing_required(schema: &Value, arguments: &Value) -> Vec<String> {
    let given = arguments.as_object();
    schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .filter(|name| given.and_then(|g| g.get(*name)).is_none_or(Value::is_null))
        .map(String::from)
        .collect()
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
    let description = property
        .and_then(|p| p.get("description"))
        .and_then(Value::as_str)
        .map(String::from);
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

/// Collects `missing` parameters of `call` from the user into `arguments`.
#[allow(clippy::too_many_arguments)]
pub(super) async fn collect(
    orch: &mut Orchestrator,
    run: &mut Run<'_>,
    approver: &mut dyn Approver,
    cancel: &CancellationToken,
    call: &Pending,
    schema: &Value,
    missing: &[String],
    arguments: &mut Value,
) -> Collected {
    if !arguments.is_object() {
        *arguments = Value::Object(Default::default());
    }
    let now = Instant::now();
    let waiting = orch
        .stack
        .push(call.frame(arguments, FrameState::AwaitingInput), now);
    run.emit(EventData::StackPush(waiting));
    let collector = format!("{}/{COLLECT}", call.frame);
    let frame = StackFrame {
        id: collector.clone(),
        parent: Some(call.frame.clone()),
        name: COLLECT.to_string(),
        summary: format!("{} needs {}", call.name, missing.join(", ")),
        state: FrameState::AwaitingInput,
    };
    let pushed = orch.stack.push(frame, now);
    run.emit(EventData::StackPush(pushed));
    for name in missing {
        let (kind, description) = describe(schema, name);
        run.next_id += 1;
        let request = InputRequest {
            id: format!("{}/q{}", call.frame, run.next_id),
            kind: InputKind::Parameter,
            frame: collector.clone(),
            tool: call.name.clone(),
            prompt: format!("{} needs `{name}`", call.name),
            parameter: Some(name.clone()),
            description,
            value_type: kind.clone(),
            depth: None,
        };
        run.emit(EventData::InputRequested(request.clone()));
        let answer = tokio::select! {
            biased;
            _ = cancel.cancelled() => return Collected::Cancelled,
            answer = approver.ask(&request) => answer,
        };
        run.emit(EventData::InputAnswered {
            id: request.id.clone(),
            value: answer.clone(),
        });
        match answer {
            Some(text) => {
                if let Some(map) = arguments.as_object_mut() {
                    map.insert(name.clone(), parse_answer(&text, kind.as_deref()));
                }
            }
            None => {
                return Collected::Abandoned(format!(
                    "the user abandoned this {} call when asked for `{name}`; do not retry it unless they ask",
                    call.name
                ));
            }
        }
    }
    for frame in orch.stack.pop(&collector, FrameState::Done) {
        run.emit(EventData::StackPop(frame));
    }
    Collected::Done
}

/// At the depth limit: shows the question and, if the user says so, allows another
/// [`DEPTH_STEP`] levels. `false` stops the nested work.
pub(super) async fn confirm_depth(
    orch: &mut Orchestrator,
    run: &mut Run<'_>,
    approver: &mut dyn Approver,
    cancel: &CancellationToken,
    first: &Pending,
) -> bool {
    if !approver.can_ask() {
        return false;
    }
    let depth = orch.stack.depth_under(first.parent.as_deref());
    run.next_id += 1;
    let request = InputRequest {
        id: format!("depth/q{}", run.next_id),
        kind: InputKind::DepthLimit,
        frame: first.parent.clone().unwrap_or_else(|| first.frame.clone()),
        tool: first.name.clone(),
        prompt: format!(
            "The tool stack reached its depth limit ({}). Continue for another {DEPTH_STEP} levels?",
            orch.stack.limit()
        ),
        parameter: None,
        description: None,
        value_type: None,
        depth: Some(depth),
    };
    run.emit(EventData::InputRequested(request.clone()));
    let answer = tokio::select! {
        biased;
        _ = cancel.cancelled() => return false,
        answer = approver.ask(&request) => answer,
    };
    run.emit(EventData::InputAnswered {
        id: request.id.clone(),
        value: answer.clone(),
    });
    let yes = answer.is_some_and(|a| matches!(a.trim().to_ascii_lowercase().as_str(), "y" | "yes"));
    if yes {
        orch.stack.extend();
    }
    yes
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn finds_missing_required_parameters() {
        let schema = json!({"type": "object", "properties": {"path": {"type": "string"}, "n": {"type": "integer"}}, "required": ["path", "n"]});
        assert_eq!(missing_required(&schema, &json!({"n": 1})), ["path"]);
        assert_eq!(
            missing_required(&schema, &json!({"path": null})),
            ["path", "n"]
        );
        assert!(missing_required(&schema, &json!({"path": "a", "n": 2})).is_empty());
        assert_eq!(
            missing_required(&schema, &json!("not an object")),
            ["path", "n"]
        );
    }

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
