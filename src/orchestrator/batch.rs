//! One turn's tool calls: validation, policies, the approval batch, the concurrent run, and
//! the tool messages appended in call order (DESIGN §4 rules 1, 4–7).

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::approval::{ApprovalAnswer, ApprovalRequest, Approver};
use super::{Orchestrator, Run, summarize};
use crate::conversation::{Message, ToolCall};
use crate::event::{Decision, EventData, FrameState, StackFrame};
use crate::tools::Policy;
use crate::tools::ToolContext;
use crate::tools::runner::{CallOutcome, ReadyCall, run_calls};

/// Runs the calls of one turn. Returns `false` when the user cancelled (every call still gets
/// a result message, so the conversation stays valid).
pub(super) async fn run_batch(
    orch: &mut Orchestrator,
    run: &mut Run<'_>,
    approver: &mut dyn Approver,
    cancel: &CancellationToken,
    turn: u32,
    calls: &[ToolCall],
) -> bool {
    for call in calls {
        run.emit(EventData::ToolCall {
            turn,
            id: call.id.clone(),
            name: call.name.clone(),
            arguments: call.arguments.clone(),
            parent: None,
        });
    }
    let mut outcomes: Vec<Option<CallOutcome>> = vec![None; calls.len()];
    let mut asks = Vec::new();
    let mut ready = Vec::new();
    for (i, call) in calls.iter().enumerate() {
        match classify(orch, run, call) {
            Ok(Policy::Allow) => ready.push(i),
            Ok(Policy::Ask) => asks.push(i),
            Ok(Policy::Deny) => {
                outcomes[i] = Some(CallOutcome::not_run(
                    &call.id,
                    &call.name,
                    "the call was denied: the configured policy for this tool is deny",
                ));
            }
            Err(error) => outcomes[i] = Some(CallOutcome::not_run(&call.id, &call.name, error)),
        }
    }
    for outcome in outcomes.iter().flatten() {
        emit_result(run, outcome);
    }

    let mut cancelled = false;
    if !asks.is_empty() {
        for &i in &asks {
            run.emit(EventData::StackPush(frame(
                &calls[i],
                FrameState::AwaitingApproval,
            )));
        }
        let requests: Vec<ApprovalRequest> = asks
            .iter()
            .map(|&i| ApprovalRequest {
                id: calls[i].id.clone(),
                name: calls[i].name.clone(),
                arguments: calls[i].arguments.clone(),
            })
            .collect();
        for (k, request) in requests.iter().enumerate() {
            run.emit(EventData::ApprovalRequested {
                id: request.id.clone(),
                name: request.name.clone(),
                arguments: request.arguments.clone(),
                position: k + 1,
                of: requests.len(),
            });
        }
        let answers = tokio::select! {
            biased;
            _ = cancel.cancelled() => None,
            answers = approver.decide(&requests) => Some(answers),
        };
        match answers {
            None => cancelled = true,
            Some(answers) => {
                for (k, &i) in asks.iter().enumerate() {
                    let answer = answers
                        .get(k)
                        .cloned()
                        .unwrap_or_else(|| ApprovalAnswer::deny(None));
                    decide(
                        orch,
                        run,
                        &calls[i],
                        &answer,
                        &mut outcomes[i],
                        &mut ready,
                        i,
                    );
                }
            }
        }
    }

    ready.sort_unstable();
    let ready_calls: Vec<ReadyCall> = if cancelled {
        Vec::new()
    } else {
        ready
            .iter()
            .map(|&i| ReadyCall {
                id: calls[i].id.clone(),
                name: calls[i].name.clone(),
                arguments: calls[i].arguments.clone(),
            })
            .collect()
    };
    for &i in &ready {
        if !cancelled {
            run.emit(EventData::StackPush(frame(&calls[i], FrameState::Running)));
        }
    }
    let ctx = ToolContext {
        workdir: orch.settings.workdir.clone(),
        settings: orch.settings.tools.clone(),
        cancel: cancel.clone(),
    };
    let results = run_calls(&orch.registry, &ready_calls, &ctx, |outcome| {
        emit_result(run, outcome);
        let state = match (&outcome.result, cancel.is_cancelled()) {
            (Ok(_), _) => FrameState::Done,
            (Err(_), true) => FrameState::Cancelled,
            (Err(_), false) => FrameState::Failed,
        };
        if let Some(call) = calls.iter().find(|c| c.id == outcome.id) {
            run.emit(EventData::StackPop(frame(call, state)));
        }
    })
    .await;
    for (outcome, &i) in results.into_iter().zip(&ready) {
        outcomes[i] = Some(outcome);
    }

    // Whatever never ran (a cancel during approval) gets a synthetic result.
    for (slot, call) in outcomes.iter_mut().zip(calls) {
        if slot.is_none() {
            let outcome = CallOutcome::not_run(&call.id, &call.name, "cancelled by the user");
            emit_result(run, &outcome);
            run.emit(EventData::StackPop(frame(call, FrameState::Cancelled)));
            *slot = Some(outcome);
        }
    }
    for outcome in outcomes.into_iter().flatten() {
        let content = outcome.message_content();
        orch.messages
            .push(Message::tool(outcome.id, outcome.name, content));
    }
    !(cancelled || cancel.is_cancelled())
}

/// Unknown tool or invalid arguments → an error for the model; otherwise the call's policy.
fn classify(orch: &Orchestrator, run: &mut Run<'_>, call: &ToolCall) -> Result<Policy, String> {
    let Some(tool) = orch.registry.get(&call.name) else {
        let names: Vec<&str> = orch.registry.iter().map(|t| t.name()).collect();
        return Err(if names.is_empty() {
            format!("unknown tool '{}': no tools are available", call.name)
        } else {
            format!(
                "unknown tool '{}'. Available tools: {}",
                call.name,
                names.join(", ")
            )
        });
    };
    if let Err(problem) = tool.validate(&call.arguments) {
        let failures = run.invalid_args.entry(call.name.clone()).or_insert(0);
        *failures += 1;
        return Err(if *failures == 1 {
            format!(
                "invalid arguments for {}: {problem}. The arguments must match this JSON Schema: {}. Correct them and call {} again.",
                call.name,
                tool.parameters(),
                call.name
            )
        } else {
            format!(
                "invalid arguments for {} again: {problem}. This call failed; do not retry it the same way.",
                call.name
            )
        });
    }
    Ok(orch
        .policies
        .policy_for(tool.as_ref(), &call.arguments, &orch.settings.tools))
}

fn decide(
    orch: &mut Orchestrator,
    run: &mut Run<'_>,
    call: &ToolCall,
    answer: &ApprovalAnswer,
    outcome: &mut Option<CallOutcome>,
    ready: &mut Vec<usize>,
    index: usize,
) {
    run.emit(EventData::ApprovalDecided {
        id: call.id.clone(),
        name: call.name.clone(),
        decision: answer.decision,
        scope: answer.scope,
        reason: answer.reason.clone(),
    });
    match answer.decision {
        Decision::Approved => {
            orch.policies.grant(&call.name, answer.scope);
            ready.push(index);
        }
        Decision::Denied => {
            let error = match &answer.reason {
                Some(reason) => format!("the call was denied: {reason}"),
                None => "the call was denied by the user".to_string(),
            };
            let denied = CallOutcome::not_run(&call.id, &call.name, error);
            emit_result(run, &denied);
            run.emit(EventData::StackPop(frame(call, FrameState::Denied)));
            *outcome = Some(denied);
        }
    }
}

fn emit_result(run: &mut Run<'_>, outcome: &CallOutcome) {
    let (ok, result, error) = match &outcome.result {
        Ok(value) => (true, Some(value.clone()), None),
        Err(error) => (false, None, Some(error.clone())),
    };
    run.emit(EventData::ToolResult {
        id: outcome.id.clone(),
        name: outcome.name.clone(),
        ok,
        result,
        error,
        duration_ms: outcome.duration.as_millis() as u64,
    });
}

fn frame(call: &ToolCall, state: FrameState) -> StackFrame {
    StackFrame {
        id: call.id.clone(),
        parent: None,
        name: call.name.clone(),
        summary: argument_summary(&call.arguments),
        state,
    }
}

/// `key=value` pairs of the top-level arguments on one short line, the telling keys first.
pub fn argument_summary(arguments: &Value) -> String {
    const FIRST: [&str; 6] = ["command", "path", "url", "pattern", "task", "query"];
    let text = match arguments {
        Value::Object(map) => {
            let mut pairs: Vec<(&String, &Value)> = map.iter().collect();
            pairs.sort_by_key(|(k, _)| FIRST.iter().position(|f| f == k).unwrap_or(FIRST.len()));
            pairs
                .iter()
                .map(|(k, v)| match v {
                    Value::String(s) => format!("{k}={s}"),
                    other => format!("{k}={other}"),
                })
                .collect::<Vec<_>>()
                .join(" ")
        }
        other => other.to_string(),
    };
    summarize(&text, 60)
}
