//! The spans of a run's calls and waits (the fold's second half): tool calls with the spans
//! they hold, approvals, questions and forms, hooks, compactions, and the span events of
//! warnings and checkpoints.

use opentelemetry::KeyValue;
use opentelemetry::trace::{SpanKind, Status};
use opentelemetry_sdk::trace::SpanData;
use serde_json::Value;

use super::attrs::{self, Content, int, text};
use super::fold::{Run, Tool};
use super::ids;
use super::open::Open;
use crate::event::{Decision, Event, EventData, ToolStatus};

/// A tool is an MCP server's when its name says so (`mcp__server__tool`).
fn mcp_tool(name: &str) -> Option<&str> {
    name.strip_prefix("mcp__")
        .and_then(|rest| rest.split_once("__"))
        .map(|(_, tool)| tool)
        .filter(|tool| !tool.is_empty())
}

/// Folds an event of the run's calls in; what ended goes to `ended`.
pub(super) fn apply(run: &mut Run, event: &Event, content: &Content, ended: &mut Vec<SpanData>) {
    let at = event.timestamp;
    match &event.data {
        EventData::ToolCall {
            turn,
            id,
            name,
            arguments,
            parent,
            sandbox,
        } => {
            let span_id = ids::tool_span(&run.request_id, id, *turn);
            let parent_id = run.parent_of(parent.as_deref());
            let call_id = id.rsplit('/').next().unwrap_or(id);
            let mut span = Open::new(
                span_id,
                parent_id,
                format!("execute_tool {name}"),
                SpanKind::Internal,
                at,
            )
            .with([
                text(attrs::OPERATION, "execute_tool"),
                text(attrs::TOOL_NAME, name.clone()),
                text(attrs::TOOL_CALL_ID, call_id.to_string()),
                text(
                    attrs::TOOL_TYPE,
                    if mcp_tool(name).is_some() {
                        "extension"
                    } else {
                        "function"
                    },
                ),
            ]);
            if let Some(sandbox) = sandbox {
                span.attributes
                    .push(text("taco.sandbox", attrs::schema_name(sandbox)));
            }
            span.attributes
                .extend(content.attribute(attrs::TOOL_ARGUMENTS, &arguments.to_string()));
            let key = [id.as_str(), &turn.to_string()];
            let inner = if name == "delegate" {
                Some(
                    Open::new(
                        ids::span_id(&run.request_id, "agent", &key),
                        span_id,
                        "invoke_agent delegate".into(),
                        SpanKind::Internal,
                        at,
                    )
                    .with([
                        text(attrs::OPERATION, "invoke_agent"),
                        text(attrs::AGENT_NAME, "delegate"),
                    ]),
                )
            } else {
                mcp_tool(name).map(|tool| {
                    Open::new(
                        ids::span_id(&run.request_id, "mcp", &key),
                        span_id,
                        format!("tools/call {tool}"),
                        SpanKind::Client,
                        at,
                    )
                    .with([
                        text(attrs::MCP_METHOD, "tools/call"),
                        text(attrs::TOOL_NAME, tool.to_string()),
                    ])
                })
            };
            // A frame id a model reuses after its call ended names a new call.
            if let Some(old) = run.tools.insert(id.clone(), Tool { span, inner }) {
                end_tool(run, old, at, Status::error("replaced"), ended);
            }
        }
        EventData::ToolResult {
            id,
            ok,
            status,
            result,
            error,
            ..
        } => {
            let Some(mut tool) = run.tools.remove(id) else {
                return;
            };
            let status = ToolStatus::of(*status, *ok, result.as_ref());
            let label = attrs::schema_name(&status);
            tool.span
                .attributes
                .push(text("taco.tool.status", label.clone()));
            if let Some(code) = result
                .as_ref()
                .and_then(|r| r.get("exit_code"))
                .and_then(Value::as_i64)
            {
                tool.span
                    .attributes
                    .push(KeyValue::new(attrs::EXIT_CODE, code));
            }
            if let Some(result) = result {
                (tool.span.attributes)
                    .extend(content.attribute(attrs::TOOL_RESULT, &result.to_string()));
            }
            let span_status = if status == ToolStatus::Ok {
                Status::Unset
            } else {
                tool.span.attributes.push(text(attrs::ERROR_TYPE, label));
                attrs::failed(&error.clone().unwrap_or_else(|| format!("{status:?}")))
            };
            end_tool(run, tool, at, span_status, ended);
        }
        EventData::ApprovalRequested {
            id,
            name,
            position,
            of,
            ..
        } => {
            let parent = run.tools.get(id).map_or(run.root.id, |t| t.span.id);
            let key = format!("approval:{id}");
            let span = Open::new(
                ids::span_id(&run.request_id, "approval", &[id, &at.to_string()]),
                parent,
                format!("approval {name}"),
                SpanKind::Internal,
                at,
            )
            .with([
                int("taco.approval.position", *position as u64),
                int("taco.approval.of", *of as u64),
            ]);
            run.waits.entry(key).or_insert(span);
        }
        EventData::ApprovalDecided {
            id,
            decision,
            scope,
            ..
        } => {
            if let Some(span) = run.waits.remove(&format!("approval:{id}")) {
                let decided = match decision {
                    Decision::Approved => "approved",
                    Decision::Denied => "denied",
                };
                let span = span.with([
                    text("taco.approval.decision", decided),
                    text("taco.approval.scope", attrs::schema_name(scope)),
                ]);
                ended.push(span.end(at, Status::Unset, &run.trace));
            }
        }
        EventData::InputRequested(request) => {
            let parent = run
                .tools
                .get(&request.frame)
                .map_or(run.root.id, |t| t.span.id);
            let what = if request.form.is_some() {
                "form"
            } else {
                "question"
            };
            let span = Open::new(
                ids::span_id(&run.request_id, "question", &[&request.id]),
                parent,
                format!("{what} {}", request.tool),
                SpanKind::Internal,
                at,
            )
            .with([text(
                "taco.question.kind",
                attrs::schema_name(&request.kind),
            )]);
            run.waits.insert(format!("question:{}", request.id), span);
        }
        EventData::InputAnswered { id, value, form } => {
            if let Some(span) = run.waits.remove(&format!("question:{id}")) {
                let answered = value.is_some()
                    || form
                        .as_ref()
                        .is_some_and(|f| matches!(f, crate::tools::AskReply::Accept(_)));
                let span = span.with([text(
                    "taco.question.answer",
                    if answered { "answered" } else { "declined" },
                )]);
                ended.push(span.end(at, Status::Unset, &run.trace));
            }
        }
        EventData::Hook(hook) => {
            let parent = (hook.call.as_deref())
                .and_then(|c| run.tools.get(c))
                .map_or(run.root.id, |t| t.span.id);
            let mut span = Open::new(
                ids::span_id(&run.request_id, "hook", &[&hook.id, &at.to_string()]),
                parent,
                format!("hook {}", hook.event.name()),
                SpanKind::Internal,
                at.saturating_sub(hook.duration_ms),
            )
            .with([text("taco.hook.source", attrs::schema_name(&hook.source))]);
            if let Some(decision) = hook.decision {
                span.attributes
                    .push(text("taco.hook.decision", attrs::schema_name(&decision)));
            }
            if let Some(code) = hook.exit_code {
                span.attributes
                    .push(KeyValue::new(attrs::EXIT_CODE, i64::from(code)));
            }
            span.attributes
                .extend(content.attribute("taco.hook.command", &hook.command));
            let status = match &hook.error {
                Some(error) => attrs::failed(error),
                None => Status::Unset,
            };
            ended.push(span.end(at, status, &run.trace));
        }
        EventData::Compacted(compacted) => {
            let summary = compacted.call.and_then(|n| run.llm.remove(&n));
            let start = summary
                .as_ref()
                .map_or(at.saturating_sub(compacted.duration_ms), |s| s.start_ms);
            let key = compacted.call.map_or(at.to_string(), |n| n.to_string());
            let parent = run.parent_of(compacted.parent.as_deref());
            let span = Open::new(
                ids::span_id(&run.request_id, "compaction", &[&key]),
                parent,
                "compaction".into(),
                SpanKind::Internal,
                start,
            )
            .with([
                text(
                    "taco.compaction.trigger",
                    attrs::schema_name(&compacted.trigger),
                ),
                int("taco.compaction.before_tokens", compacted.before_tokens),
                int("taco.compaction.after_tokens", compacted.after_tokens),
            ]);
            let status = match &compacted.error {
                Some(error) => attrs::failed(error),
                None => Status::Unset,
            };
            if let Some(mut chat) = summary {
                chat.parent = span.id;
                let chat = chat.with([
                    int(attrs::INPUT_TOKENS, compacted.usage.input_tokens),
                    int(attrs::OUTPUT_TOKENS, compacted.usage.output_tokens),
                ]);
                ended.push(chat.end(at, status.clone(), &run.trace));
            }
            ended.push(span.end(at, status, &run.trace));
        }
        EventData::LoopWarning { name, times, .. } => run.root.event(
            "loop_warning",
            at,
            vec![
                text(attrs::TOOL_NAME, name.clone()),
                int("taco.times", u64::from(*times)),
            ],
        ),
        EventData::BudgetReached(budget) => run.root.event(
            "budget_reached",
            at,
            vec![
                KeyValue::new("taco.budget.max_cost", budget.max_cost),
                KeyValue::new("taco.budget.spent", budget.spent),
                KeyValue::new("taco.budget.next_call", budget.next_call),
                text(attrs::REQUEST_MODEL, budget.model.clone()),
            ],
        ),
        EventData::MaxTurnsReached { turns } => run.root.event(
            "max_turns_reached",
            at,
            vec![int("taco.turns", u64::from(*turns))],
        ),
        EventData::Checkpoint(cp) => {
            if let Some(id) = &cp.id {
                run.root.event(
                    "checkpoint",
                    at,
                    vec![text("taco.checkpoint.id", id.clone())],
                );
            }
        }
        EventData::FilesChanged(changed) => run.root.event(
            "files_changed",
            at,
            vec![text("taco.files_changed", changed.headline())],
        ),
        _ => {}
    }
}

/// Ends a tool call's span and the one it holds.
fn end_tool(run: &Run, tool: Tool, at: u64, status: Status, ended: &mut Vec<SpanData>) {
    if let Some(inner) = tool.inner {
        ended.push(inner.end(at, status.clone(), &run.trace));
    }
    ended.push(tool.span.end(at, status, &run.trace));
}
