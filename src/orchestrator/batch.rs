//! Tool calls: a turn's batch from the model, or the calls a tool needs first. Validation,
//! parameter collection, policies, the approval batch, the depth limit, the concurrent run,
//! sub-agents and the stack (DESIGN §4 rules 1, 4–7, §5).

use std::time::Instant;

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::approval::{ApprovalAnswer, ApprovalRequest, Approver};
use super::collect::{self, Collected};
use super::results::{abandon, complete, emit_result, final_state, finish};
use super::stack::argument_summary;
use super::{Conversation, Orchestrator, Run, delegate};
use crate::conversation::{Message, ToolCall};
use crate::event::{Decision, EventData, FrameState, StackFrame};
use crate::tools::outcome::{DeniedBy, Ended};
use crate::tools::runner::{CallOutcome, ReadyCall, Work, run_calls};
use crate::tools::{NeededCall, Policy};

/// A call to process.
#[derive(Debug, Clone)]
pub(super) struct Pending {
    /// Unique id for events and the stack (scoped under the parent frame when nested).
    pub frame: String,
    /// The id the model gave it (its tool message answers this id).
    pub call_id: String,
    /// Tool name.
    pub name: String,
    /// Arguments as given.
    pub arguments: Value,
    /// The frame it runs under.
    pub parent: Option<String>,
    /// Whether the model made it (invalid arguments then get guidance and one retry).
    pub from_model: bool,
}

impl Pending {
    pub(super) fn frame(&self, arguments: &Value, state: FrameState) -> StackFrame {
        StackFrame {
            id: self.frame.clone(),
            parent: self.parent.clone(),
            name: self.name.clone(),
            summary: argument_summary(arguments),
            state,
        }
    }
}

/// Runs the calls of one model turn and appends one tool message per call, in call order.
/// Returns `false` when the user cancelled (every call still has its message).
pub(super) async fn run_batch(
    orch: &mut Orchestrator,
    conv: &mut Conversation,
    run: &mut Run<'_>,
    approver: &mut dyn Approver,
    cancel: &CancellationToken,
    turn: u32,
    calls: &[ToolCall],
) -> bool {
    let pending: Vec<Pending> = calls
        .iter()
        .map(|call| Pending {
            frame: match &conv.parent {
                Some(parent) => format!("{parent}/{}", call.id),
                None => call.id.clone(),
            },
            call_id: call.id.clone(),
            name: call.name.clone(),
            arguments: call.arguments.clone(),
            parent: conv.parent.clone(),
            from_model: true,
        })
        .collect();
    let offered: Vec<String> = conv.specs.iter().map(|s| s.name.clone()).collect();
    let outcomes = process(orch, run, approver, cancel, turn, &pending, Some(&offered)).await;
    let mut instructions = Vec::new();
    for (call, outcome) in pending.iter().zip(outcomes) {
        let content = outcome.message_content();
        conv.messages.push(Message::tool(
            call.call_id.clone(),
            call.name.clone(),
            content,
        ));
        // spec/004: a tool's usage instructions reach the model the first time it is used.
        if !conv.instructed.contains(&call.name)
            && let Some(text) = orch
                .registry
                .get(&call.name)
                .and_then(|t| t.usage_instructions().map(String::from))
        {
            conv.instructed.insert(call.name.clone());
            instructions.push(format!("How to use `{}`: {text}", call.name));
        }
    }
    if !instructions.is_empty() {
        conv.messages
            .push(Message::system(instructions.join("\n\n")));
    }
    !cancel.is_cancelled()
}

/// Processes calls that share a parent frame; one outcome per call, in order. Recursive:
/// a tool's needed calls and a sub-agent's calls come back through here.
pub(super) fn process<'a, 's: 'a>(
    orch: &'a mut Orchestrator,
    run: &'a mut Run<'s>,
    approver: &'a mut dyn Approver,
    cancel: &'a CancellationToken,
    turn: u32,
    calls: &'a [Pending],
    offered: Option<&'a [String]>,
) -> BoxFuture<'a, Vec<CallOutcome>> {
    async move {
        for call in calls {
            run.emit(EventData::ToolCall {
                turn,
                id: call.frame.clone(),
                name: call.name.clone(),
                arguments: call.arguments.clone(),
                parent: call.parent.clone(),
            });
        }
        let mut outcomes: Vec<Option<CallOutcome>> = vec![None; calls.len()];
        let mut arguments: Vec<Value> = calls.iter().map(|c| c.arguments.clone()).collect();
        let Some(first) = calls.first() else {
            return Vec::new();
        };
        if orch.stack.too_deep(first.parent.as_deref())
            && !collect::confirm_depth(orch, run, approver, cancel, first).await
        {
            let message = format!(
                "the tool stack reached its depth limit ({}); this nested work was stopped",
                orch.stack.limit()
            );
            for (slot, call) in outcomes.iter_mut().zip(calls) {
                let ended = Ended::Denied {
                    by: DeniedBy::Limit,
                    message: message.clone(),
                };
                let outcome = CallOutcome::not_run(&call.frame, &call.name, ended);
                emit_result(run, &outcome);
                *slot = Some(outcome);
            }
            return finish(run, calls, outcomes);
        }

        let mut asks = Vec::new();
        let mut ready = Vec::new();
        for i in 0..calls.len() {
            if outcomes[i].is_some() {
                continue;
            }
            match classify(
                orch,
                run,
                approver,
                cancel,
                offered,
                &calls[i],
                &mut arguments[i],
            )
            .await
            {
                Classified::Policy(Policy::Allow) => ready.push(i),
                Classified::Policy(Policy::Ask) => asks.push(i),
                Classified::Policy(Policy::Deny) => {
                    let ended = Ended::Denied {
                        by: DeniedBy::Policy,
                        message: "the call was denied: the configured policy for this tool is deny"
                            .to_string(),
                    };
                    let denied = CallOutcome::not_run(&calls[i].frame, &calls[i].name, ended);
                    emit_result(run, &denied);
                    outcomes[i] = Some(denied);
                }
                Classified::Error(ended) => {
                    let outcome = CallOutcome::not_run(&calls[i].frame, &calls[i].name, ended);
                    emit_result(run, &outcome);
                    outcomes[i] = Some(outcome);
                }
                Classified::Abandoned(error) => {
                    // The user walked away from this workflow: nothing else in it runs.
                    let ended = Ended::Abandoned(error);
                    let outcome = CallOutcome::not_run(&calls[i].frame, &calls[i].name, ended);
                    emit_result(run, &outcome);
                    outcomes[i] = Some(outcome);
                    abandon(run, calls, &mut outcomes);
                    for frame in orch.stack.clear(FrameState::Cancelled) {
                        run.emit(EventData::StackPop(frame));
                    }
                    return finish(run, calls, outcomes);
                }
                Classified::Cancelled => return finish(run, calls, outcomes),
            }
        }

        if !asks.is_empty()
            && !approve(
                orch,
                run,
                approver,
                cancel,
                calls,
                &arguments,
                &asks,
                &mut outcomes,
                &mut ready,
            )
            .await
        {
            return finish(run, calls, outcomes);
        }
        ready.sort_unstable();
        let now = Instant::now();
        for &i in &ready {
            let pushed = orch
                .stack
                .push(calls[i].frame(&arguments[i], FrameState::Running), now);
            run.emit(EventData::StackPush(pushed));
        }

        // Ordinary tools run together; sub-agents need the orchestrator, so they go after.
        let (delegates, tools): (Vec<usize>, Vec<usize>) = ready
            .iter()
            .partition(|&&i| calls[i].name == delegate::NAME);
        let jobs: Vec<ReadyCall> = tools
            .iter()
            .map(|&i| ReadyCall {
                id: calls[i].frame.clone(),
                name: calls[i].name.clone(),
                work: Work::Call(arguments[i].clone()),
            })
            .collect();
        let ctx = orch.tool_context(cancel);
        let registry = std::sync::Arc::clone(&orch.registry);
        let stack = &mut orch.stack;
        let results = run_calls(&registry, &jobs, &ctx, |outcome| {
            if !matches!(outcome.ended, Ended::NeedsFirst(..)) {
                emit_result(run, outcome);
                for frame in stack.pop(&outcome.id, final_state(outcome, cancel)) {
                    run.emit(EventData::StackPop(frame));
                }
            }
        })
        .await;
        for (outcome, &i) in results.into_iter().zip(&tools) {
            outcomes[i] = Some(outcome);
        }
        for &i in &delegates {
            let outcome =
                delegate::run(orch, run, approver, cancel, &calls[i], &arguments[i]).await;
            complete(orch, run, cancel, &outcome);
            outcomes[i] = Some(outcome);
        }
        for i in 0..calls.len() {
            let needs = match outcomes[i].as_ref().map(|o| &o.ended) {
                Some(Ended::NeedsFirst(needed, then)) => Some((needed.clone(), then.clone())),
                _ => None,
            };
            if let Some(needs) = needs {
                let outcome =
                    resolve_needs(orch, run, approver, cancel, turn, &calls[i], needs).await;
                complete(orch, run, cancel, &outcome);
                outcomes[i] = Some(outcome);
            }
        }
        finish(run, calls, outcomes)
    }
    .boxed()
}

/// What classification decided for one call.
enum Classified {
    Policy(Policy),
    /// Unknown or invalid: the call ends here.
    Error(Ended),
    Abandoned(String),
    Cancelled,
}

/// Unknown tool, invalid arguments (after collecting missing ones from the user, where
/// someone can answer) → an error; otherwise the call's policy.
async fn classify(
    orch: &mut Orchestrator,
    run: &mut Run<'_>,
    approver: &mut dyn Approver,
    cancel: &CancellationToken,
    offered: Option<&[String]>,
    call: &Pending,
    arguments: &mut Value,
) -> Classified {
    let known = offered.is_none_or(|o| o.contains(&call.name));
    let Some(tool) = orch.registry.get(&call.name).filter(|_| known).cloned() else {
        let names: Vec<&str> = match offered {
            Some(offered) => offered.iter().map(String::as_str).collect(),
            None => orch.registry.iter().map(|t| t.name()).collect(),
        };
        return Classified::Error(Ended::Unknown(if names.is_empty() {
            format!("unknown tool '{}': no tools are available", call.name)
        } else {
            format!(
                "unknown tool '{}'. Available tools: {}",
                call.name,
                names.join(", ")
            )
        }));
    };
    // Missing required parameters are asked of the user where someone can answer (rule 4);
    // headless, the validation error below names them.
    if approver.can_ask()
        && matches!(arguments, Value::Object(_) | Value::Null)
        && tool
            .validate(arguments)
            .is_err_and(|e| e.contains("missing field"))
    {
        let missing = collect::missing_required(&tool.parameters(), arguments);
        if !missing.is_empty() {
            match collect::collect(
                orch,
                run,
                approver,
                cancel,
                call,
                &tool.parameters(),
                &missing,
                arguments,
            )
            .await
            {
                Collected::Done => {}
                Collected::Abandoned(error) => return Classified::Abandoned(error),
                Collected::Cancelled => return Classified::Cancelled,
            }
        }
    }
    if let Err(problem) = tool.validate(arguments) {
        if !call.from_model {
            return Classified::Error(Ended::Invalid(format!(
                "invalid arguments for {}: {problem}",
                call.name
            )));
        }
        let failures = run.invalid_args.entry(call.name.clone()).or_insert(0);
        *failures += 1;
        return Classified::Error(Ended::Invalid(if *failures == 1 {
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
        }));
    }
    Classified::Policy(
        orch.policies
            .policy_for(tool.as_ref(), arguments, &orch.settings.tools),
    )
}

/// Asks about the `ask` calls as one batch. Returns `false` when the user cancelled.
#[allow(clippy::too_many_arguments)]
async fn approve(
    orch: &mut Orchestrator,
    run: &mut Run<'_>,
    approver: &mut dyn Approver,
    cancel: &CancellationToken,
    calls: &[Pending],
    arguments: &[Value],
    asks: &[usize],
    outcomes: &mut [Option<CallOutcome>],
    ready: &mut Vec<usize>,
) -> bool {
    let now = Instant::now();
    for &i in asks {
        let pushed = orch.stack.push(
            calls[i].frame(&arguments[i], FrameState::AwaitingApproval),
            now,
        );
        run.emit(EventData::StackPush(pushed));
    }
    let requests: Vec<ApprovalRequest> = asks
        .iter()
        .map(|&i| ApprovalRequest {
            id: calls[i].frame.clone(),
            name: calls[i].name.clone(),
            arguments: arguments[i].clone(),
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
        _ = cancel.cancelled() => return false,
        answers = approver.decide(&requests) => answers,
    };
    for (k, &i) in asks.iter().enumerate() {
        let answer = answers
            .get(k)
            .cloned()
            .unwrap_or_else(|| ApprovalAnswer::deny(None));
        let call = &calls[i];
        run.emit(EventData::ApprovalDecided {
            id: call.frame.clone(),
            name: call.name.clone(),
            decision: answer.decision,
            scope: answer.scope,
            reason: answer.reason.clone(),
        });
        match answer.decision {
            Decision::Approved => {
                orch.policies.grant(&call.name, answer.scope);
                ready.push(i);
            }
            Decision::Denied => {
                let message = match &answer.reason {
                    Some(reason) => format!("the call was denied: {reason}"),
                    None => "the call was denied by the user".to_string(),
                };
                let ended = Ended::Denied {
                    by: answer.by,
                    message,
                };
                let denied = CallOutcome::not_run(&call.frame, &call.name, ended);
                emit_result(run, &denied);
                for frame in orch.stack.pop(&call.frame, FrameState::Denied) {
                    run.emit(EventData::StackPop(frame));
                }
                outcomes[i] = Some(denied);
            }
        }
    }
    true
}

/// Runs the calls a tool needs first, above it on the stack, then resumes it with their
/// results; repeats while it needs more. A needed call that fails fails the tool, so the
/// whole workflow unwinds (spec/004: a tool failure clears the stack).
async fn resolve_needs(
    orch: &mut Orchestrator,
    run: &mut Run<'_>,
    approver: &mut dyn Approver,
    cancel: &CancellationToken,
    turn: u32,
    call: &Pending,
    (mut needed, mut then): (Vec<NeededCall>, Value),
) -> CallOutcome {
    let started = Instant::now();
    loop {
        let children: Vec<Pending> = needed
            .iter()
            .map(|n| {
                run.next_id += 1;
                let frame = format!("{}/needs-{}", call.frame, run.next_id);
                Pending {
                    call_id: frame.clone(),
                    frame,
                    name: n.name.clone(),
                    arguments: n.arguments.clone(),
                    parent: Some(call.frame.clone()),
                    from_model: false,
                }
            })
            .collect();
        let results = process(orch, run, approver, cancel, turn, &children, None).await;
        let mut outcome = if cancel.is_cancelled() {
            CallOutcome::not_run(&call.frame, &call.name, Ended::Cancelled)
        } else if let Some((child, failed)) = children
            .iter()
            .zip(&results)
            .find_map(|(c, r)| r.ended.to_result().err().map(|e| (c, e)))
        {
            let error = format!("needed call `{}` failed: {failed}", child.name);
            CallOutcome::not_run(&call.frame, &call.name, Ended::Failed(error))
        } else {
            let job = ReadyCall {
                id: call.frame.clone(),
                name: call.name.clone(),
                work: Work::Resume(then, results.iter().map(|r| r.ended.to_result()).collect()),
            };
            let ctx = orch.tool_context(cancel);
            let registry = std::sync::Arc::clone(&orch.registry);
            let mut resumed = run_calls(&registry, std::slice::from_ref(&job), &ctx, |_| {}).await;
            match resumed.pop() {
                Some(CallOutcome {
                    ended: Ended::NeedsFirst(more, next),
                    ..
                }) => {
                    (needed, then) = (more, next);
                    continue;
                }
                Some(resumed) => resumed,
                None => CallOutcome::not_run(
                    &call.frame,
                    &call.name,
                    Ended::Failed("the tool did not resume".to_string()),
                ),
            }
        };
        outcome.duration = started.elapsed();
        return outcome;
    }
}
