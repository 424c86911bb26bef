//! Runs a turn's tool calls: concurrently, each under a timeout, panics caught, output capped.
//! Results come back in call order so tool messages follow the assistant's call order.

use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use futures_util::FutureExt;
use futures_util::stream::{FuturesUnordered, StreamExt};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::outcome::Ended;
use super::seen::Seen;
use super::{ToolContext, ToolError, ToolRegistry, ToolReply};
use crate::clock::Clock;

mod cap;
mod slots;
pub use cap::{cap_error, cap_output};
pub use slots::{DEFAULT_MAX_PARALLEL, Slot, Slots, Start};

/// What to ask of a tool.
#[derive(Debug, Clone)]
pub enum Work {
    /// Call it with these (validated) arguments.
    Call(Value),
    /// Resume it after the calls it needed (see [`ToolReply::NeedsFirst`]).
    Resume(Value, Vec<Result<Value, String>>),
}

/// A call ready to run: validated and approved.
#[derive(Debug)]
pub struct ReadyCall {
    /// Call id.
    pub id: String,
    /// Tool name (known to the registry).
    pub name: String,
    /// What to do.
    pub work: Work,
    /// The state of the file its approved diff was computed from (`ToolContext::seen`).
    pub seen: Option<Seen>,
    /// Whether it starts at once or waits for a process slot (`Slots::start`).
    pub start: Start,
    /// The trace context its processes get (`ToolContext::trace`).
    pub trace: Option<crate::otel::TraceParent>,
}

/// How one call ended.
#[derive(Debug, Clone, PartialEq)]
pub struct CallOutcome {
    /// Call id.
    pub id: String,
    /// Tool name.
    pub name: String,
    /// How it ended.
    pub ended: Ended,
    /// How long it ran.
    pub duration: Duration,
}

impl CallOutcome {
    /// An outcome for a call that never ran (denied, unknown, invalid, cancelled).
    pub fn not_run(id: &str, name: &str, ended: Ended) -> Self {
        Self {
            id: id.to_string(),
            name: name.to_string(),
            ended,
            duration: Duration::ZERO,
        }
    }

    /// The content of the `tool` message: JSON of the result, or `{"error": …}`.
    pub fn message_content(&self) -> String {
        self.ended.message_content()
    }
}

/// The cancel tokens of the calls running now, by call id: each a child of its run's token,
/// so one call can be cancelled alone (`Op::CancelCall`) while it runs. Shared by the run
/// and the task that takes the user's ops.
#[derive(Debug, Clone, Default)]
pub struct CallCancels(Arc<Mutex<HashMap<String, CancellationToken>>>);

impl CallCancels {
    /// Registers call `id` as running under `parent`; returns its own token.
    pub fn start(&self, id: &str, parent: &CancellationToken) -> CancellationToken {
        let token = parent.child_token();
        self.lock().insert(id.to_string(), token.clone());
        token
    }

    /// The call `id` ended: a cancel for it from now on does nothing.
    pub fn end(&self, id: &str) {
        self.lock().remove(id);
    }

    /// Cancels call `id` (and whatever runs under it); `false` when it is not running.
    pub fn cancel(&self, id: &str) -> bool {
        let token = self.lock().get(id).cloned();
        token.map(|t| t.cancel()).is_some()
    }

    /// Whether call `id` is running (registered).
    pub fn is_running(&self, id: &str) -> bool {
        self.lock().contains_key(id)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, CancellationToken>> {
        // A panic while holding the map leaves it whole: keep using it.
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Runs `calls` concurrently. `on_done` sees each outcome as it finishes (for live events);
/// the returned outcomes are in call order. A queued call starts when it gets a slot, and
/// says so on the progress channel (`Progress::Started`).
pub async fn run_calls(
    registry: &ToolRegistry,
    calls: Vec<ReadyCall>,
    ctx: &ToolContext,
    clock: &dyn Clock,
    cancels: &CallCancels,
    mut on_done: impl FnMut(&CallOutcome),
) -> Vec<CallOutcome> {
    let names: Vec<(String, String)> = (calls.iter())
        .map(|call| (call.id.clone(), call.name.clone()))
        .collect();
    let mut pending: FuturesUnordered<_> = calls
        .into_iter()
        .enumerate()
        .map(|(i, call)| {
            run_one(registry, call, ctx, clock, cancels).map(move |outcome| (i, outcome))
        })
        .collect();
    let mut slots: Vec<Option<CallOutcome>> = vec![None; names.len()];
    while let Some((i, outcome)) = pending.next().await {
        on_done(&outcome);
        slots[i] = Some(outcome);
    }
    slots
        .into_iter()
        .zip(names)
        .map(|(slot, (id, name))| {
            slot.unwrap_or_else(|| {
                CallOutcome::not_run(
                    &id,
                    &name,
                    Ended::Failed("the call did not finish".to_string()),
                )
            })
        })
        .collect()
}

async fn run_one(
    registry: &ToolRegistry,
    call: ReadyCall,
    ctx: &ToolContext,
    clock: &dyn Clock,
    cancels: &CallCancels,
) -> CallOutcome {
    // The tool's progress reports name this call; its own token lets it be cancelled alone,
    // queued or running.
    let ctx = &ToolContext {
        call: call.id.clone(),
        cancel: cancels.start(&call.id, &ctx.cancel),
        seen: call.seen.clone(),
        trace: call.trace.clone(),
        ..ctx.clone()
    };
    // Held until the call ends; its time and its timeout count from when it starts.
    let _slot = match call.start {
        Start::Now => None,
        Start::Holding(slot) => Some(slot),
        Start::Queued(slots) => {
            let slot = tokio::select! {
                biased;
                _ = ctx.cancel.cancelled() => None,
                slot = slots.take() => slot,
            };
            if slot.is_none() {
                cancels.end(&call.id);
                return CallOutcome::not_run(&call.id, &call.name, Ended::Cancelled);
            }
            ctx.started();
            slot
        }
    };
    let started = clock.now();
    let ended = match registry.get(&call.name) {
        None => Ended::Unknown(format!("unknown tool '{}'", call.name)),
        Some(tool) => {
            let future = match &call.work {
                Work::Call(arguments) => tool.call(arguments.clone(), ctx),
                Work::Resume(then, results) => tool.resume(then.clone(), results.clone(), ctx),
            };
            let work = AssertUnwindSafe(future).catch_unwind();
            tokio::select! {
                biased;
                _ = ctx.cancel.cancelled() => Ended::Cancelled,
                finished = tokio::time::timeout(ctx.settings.timeout, work) => match finished {
                    Err(_) => Ended::TimedOut(format!(
                        "timed out after {} s and was stopped",
                        ctx.settings.timeout.as_secs()
                    )),
                    Ok(Err(panic)) => {
                        Ended::Failed(format!("the tool crashed: {}", panic_message(&panic)))
                    }
                    Ok(Ok(Err(ToolError::InvalidArguments(e)))) => {
                        Ended::Invalid(format!("invalid arguments: {e}"))
                    }
                    Ok(Ok(Err(ToolError::Failed(e)))) => Ended::Failed(e),
                    Ok(Ok(Err(ToolError::SandboxDenied(mut value)))) => {
                        ctx.settings.secrets.redact_value(&mut value);
                        Ended::SandboxDenied(cap_output(*value, ctx.settings.max_output_bytes))
                    }
                    Ok(Ok(Err(ToolError::ExitNonzero(mut value)))) => {
                        ctx.settings.secrets.redact_value(&mut value);
                        Ended::ExitNonzero(cap_output(*value, ctx.settings.max_output_bytes))
                    }
                    Ok(Ok(Ok(ToolReply::Done(mut value)))) => {
                        ctx.settings.secrets.redact_value(&mut value);
                        Ended::Done(cap_output(value, ctx.settings.max_output_bytes))
                    }
                    Ok(Ok(Ok(ToolReply::NeedsFirst { calls, then }))) => {
                        Ended::NeedsFirst(calls, then)
                    }
                },
            }
        }
    };
    cancels.end(&call.id);
    // Error texts quote output too (a timed-out command's partial stdout, a server's error):
    // redacted, and cut like any result so `{"error": …}` fits the cap.
    let max = ctx.settings.max_output_bytes;
    let ended = ended.map_text(|text| cap_error(&ctx.settings.secrets.redact(text), max));
    CallOutcome {
        id: call.id.clone(),
        name: call.name.clone(),
        ended,
        duration: clock.now() - started,
    }
}

fn panic_message(panic: &Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = panic.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = panic.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic".to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn error_content_is_a_json_object() {
        let outcome = CallOutcome::not_run("1", "x", Ended::Failed("no \"such\" tool".into()));
        let parsed: Value = serde_json::from_str(&outcome.message_content()).unwrap();
        assert_eq!(parsed, json!({"error": "no \"such\" tool"}));
    }

    #[test]
    fn call_cancels_reach_only_running_calls() {
        let cancels = CallCancels::default();
        let run = CancellationToken::new();
        assert!(!cancels.cancel("nobody"), "not running: a no-op");
        let a = cancels.start("a", &run);
        let b = cancels.start("b", &run);
        assert!(
            cancels.cancel("a") && cancels.cancel("a"),
            "twice is harmless"
        );
        assert!(a.is_cancelled() && !b.is_cancelled() && !run.is_cancelled());
        cancels.end("b");
        assert!(!cancels.cancel("b") && !b.is_cancelled(), "ended: a no-op");
        run.cancel();
        let c = cancels.start("c", &run);
        assert!(c.is_cancelled(), "the run's cancel reaches every call");
    }
}
