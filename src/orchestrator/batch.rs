//! Tool calls: a turn's batch from the model, or the calls a tool needs first. Each batch is
//! planned (`plan.rs`), then executed: parameter collection, the approval batch, the depth
//! limit, the concurrent run, sub-agents and the stack (DESIGN §4 rules 1, 4–7, §5).

use serde_json::Value;

use super::collect::Collected;
use super::conversation::Conversation;
use super::plan::{Planned, Planner};
use super::repeats;
use super::results::final_state;
use super::scope::{Pending, Run};
use crate::conversation::{Message, ToolCall};
use crate::event::{EventData, FrameState};
use crate::tools::builtin::delegate::is_delegate;
use crate::tools::outcome::{DeniedBy, Ended};
use crate::tools::runner::{CallOutcome, ReadyCall, Start, Work, cap_error, run_calls};
use crate::tools::seen::Seen;
use crate::tools::{NeededCall, Policy, Progress};

/// Longest progress message kept (a server's text, shown in the stack and timeline).
const MAX_PROGRESS_MESSAGE: usize = 200;

/// Where a batch stands after planning and asking: one slot per call, and which run.
pub(super) struct Decided {
    pub(super) outcomes: Vec<Option<CallOutcome>>,
    pub(super) arguments: Vec<Value>,
    pub(super) ready: Vec<usize>,
    /// The state of the file each approved diff was computed from: the call changes the
    /// file only if it is still in it.
    pub(super) seen: Vec<Option<Seen>>,
}

impl Run<'_> {
    /// Runs the calls of one model turn and appends one tool message per call, in call
    /// order. Returns `false` when the user cancelled (every call still has its message).
    pub(super) async fn run_batch(
        &mut self,
        conv: &mut Conversation,
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
        let repeated = self.repeats.count_turn(&pending);
        let outcomes = self.process(turn, &pending, Some(&offered)).await;
        self.warn_loops(&pending, &repeated);
        let mut instructions = Vec::new();
        for ((call, outcome), times) in pending.iter().zip(outcomes).zip(repeated) {
            let mut content = outcome.message_content();
            if let Some(times) = times {
                content = repeats::with_note(content, &repeats::note(&call.name, times));
            }
            conv.messages.push(Message::tool(
                call.call_id.clone(),
                call.name.clone(),
                content,
            ));
            // spec/004: a tool's usage instructions reach the model the first time it is used.
            if !conv.instructed.contains(&call.name)
                && let Some(text) = self
                    .orch
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
        if !self.hook_context.is_empty() {
            let context = std::mem::take(&mut self.hook_context);
            conv.messages.push(Message::system(format!(
                "Context from the user's hooks:\n{}",
                context.join("\n")
            )));
        }
        !self.cancel.is_cancelled()
    }

    /// Processes calls that share a parent frame; one outcome per call, in order. Recursive:
    /// a tool's needed calls and a sub-agent's calls come back through here.
    pub(super) fn process<'a>(
        &'a mut self,
        turn: u32,
        calls: &'a [Pending],
        offered: Option<&'a [String]>,
    ) -> futures_util::future::BoxFuture<'a, Vec<CallOutcome>> {
        Box::pin(async move {
            for call in calls {
                let sandbox = self.confinement(&call.name, &call.arguments);
                self.emit(EventData::ToolCall {
                    turn,
                    id: call.frame.clone(),
                    name: call.name.clone(),
                    arguments: call.arguments.clone(),
                    parent: call.parent.clone(),
                    sandbox,
                });
            }
            let Some(first) = calls.first() else {
                return Vec::new();
            };
            if self.orch.stack.too_deep(first.parent.as_deref()) && !self.confirm_depth(first).await
            {
                let message = format!(
                    "the tool stack reached its depth limit ({}); this nested work was stopped",
                    self.orch.stack.limit()
                );
                let outcomes = calls
                    .iter()
                    .map(|call| {
                        let ended = Ended::Denied {
                            by: DeniedBy::Limit,
                            message: message.clone(),
                        };
                        Some(self.not_run(call, ended))
                    })
                    .collect();
                return self.finish(calls, outcomes);
            }
            let mut decided = self.decide(calls, offered).await;
            if decided.outcomes.iter().all(Option::is_some) || self.cancel.is_cancelled() {
                return self.finish(calls, decided.outcomes);
            }
            self.execute(turn, calls, &mut decided).await;
            let outcomes = self.finish(calls, decided.outcomes);
            self.post_tool_hooks(calls, &outcomes).await;
            outcomes
        })
    }

    /// Plans every call (collecting missing parameters where someone can answer), then asks
    /// about the `ask` calls as one batch. A cancel leaves the undecided slots empty for
    /// [`Run::finish`].
    async fn decide(&mut self, calls: &[Pending], offered: Option<&[String]>) -> Decided {
        // A grant taken back while the run went on no longer allows these calls.
        self.take_revocations();
        let mut decided = Decided {
            outcomes: vec![None; calls.len()],
            arguments: calls.iter().map(|c| c.arguments.clone()).collect(),
            ready: Vec::new(),
            seen: vec![None; calls.len()],
        };
        let mut asks = Vec::new();
        for (i, call) in calls.iter().enumerate() {
            let mut planned = self.plan(call, &decided.arguments[i], offered, true);
            if let Planned::Collect(missing) = &planned {
                let tool = self.orch.registry.get(&call.name);
                let schema = tool.map(|t| t.parameters()).unwrap_or_default();
                match self
                    .collect(call, &schema, missing, &mut decided.arguments[i])
                    .await
                {
                    Collected::Done => {}
                    Collected::Abandoned(error) => {
                        // The user walked away from this workflow: nothing else in it runs.
                        let outcome = self.not_run(call, Ended::Abandoned(error));
                        decided.outcomes[i] = Some(outcome);
                        self.abandon(calls, &mut decided.outcomes);
                        let frames = self.orch.stack.clear(FrameState::Cancelled);
                        self.popped(frames);
                        return decided;
                    }
                    Collected::Cancelled => return decided,
                }
                planned = self.plan(call, &decided.arguments[i], offered, false);
            }
            if let Planned::Policy(policy) = planned {
                match self
                    .pre_tool_hooks(call, &decided.arguments[i], policy)
                    .await
                {
                    Ok(policy) => planned = Planned::Policy(policy),
                    Err(ended) => {
                        decided.outcomes[i] = Some(self.not_run(call, ended));
                        continue;
                    }
                }
            }
            match planned {
                Planned::Policy(Policy::Allow) => {
                    self.note_grant(call, &decided.arguments[i]);
                    decided.ready.push(i);
                }
                Planned::Policy(Policy::Ask) => asks.push(i),
                Planned::Policy(Policy::Deny) => {
                    let ended = Ended::Denied {
                        by: DeniedBy::Policy,
                        message: "the call was denied: the configured policy for this tool is deny"
                            .to_string(),
                    };
                    decided.outcomes[i] = Some(self.not_run(call, ended));
                }
                Planned::Ends(ended) => {
                    if matches!(ended, Ended::Invalid(_)) && call.from_model {
                        *self.invalid_args.entry(call.name.clone()).or_insert(0) += 1;
                    }
                    decided.outcomes[i] = Some(self.not_run(call, ended));
                }
                Planned::Collect(_) => {
                    let ended = Ended::Invalid(format!("invalid arguments for {}", call.name));
                    decided.outcomes[i] = Some(self.not_run(call, ended));
                }
            }
        }
        if !asks.is_empty() {
            self.approve(calls, &asks, &mut decided).await;
        }
        decided
    }

    /// The plan for one call, from the run's state.
    fn plan(
        &self,
        call: &Pending,
        arguments: &Value,
        offered: Option<&[String]>,
        may_collect: bool,
    ) -> Planned {
        let planner = Planner {
            registry: &self.orch.registry,
            offered,
            policies: &self.orch.policies,
            settings: &self.orch.settings.tools,
        };
        let failures = self.invalid_args.get(&call.name).copied().unwrap_or(0);
        planner.plan(
            call,
            arguments,
            failures,
            may_collect && self.approver.can_ask(),
        )
    }

    /// Runs the approved calls: ordinary tools together, then sub-agents (they need the
    /// run), then the calls tools asked for first.
    async fn execute(&mut self, turn: u32, calls: &[Pending], decided: &mut Decided) {
        decided.ready.sort_unstable();
        let (delegates, tools): (Vec<usize>, Vec<usize>) = decided
            .ready
            .iter()
            .partition(|&&i| is_delegate(&calls[i].name));
        // A call that starts a process takes a slot now or is queued for one, in call order.
        let mut starts: Vec<Option<Start>> = (0..calls.len()).map(|_| None).collect();
        for &i in &tools {
            let needs = (self.orch.registry.get(&calls[i].name)).is_some_and(|t| t.runs_process());
            starts[i] = Some(self.orch.slots.start(needs));
        }
        for &i in &decided.ready {
            let state = match &starts[i] {
                Some(start) if start.is_queued() => FrameState::Queued,
                _ => FrameState::Running,
            };
            self.push_frame(calls[i].frame(&decided.arguments[i], state));
        }
        // One checkpoint before the calls that may change the workspace (they run together).
        let changing: Vec<String> = tools
            .iter()
            .filter(|&&i| {
                (self.orch.registry.get(&calls[i].name))
                    .is_some_and(|t| t.changes_workspace(&decided.arguments[i]))
            })
            .map(|&i| calls[i].frame.clone())
            .collect();
        self.checkpoint_before(changing).await;
        let jobs: Vec<ReadyCall> = tools
            .iter()
            .map(|&i| ReadyCall {
                id: calls[i].frame.clone(),
                name: calls[i].name.clone(),
                work: Work::Call(decided.arguments[i].clone()),
                seen: decided.seen[i].take(),
                start: starts[i].take().unwrap_or(Start::Now),
                trace: self.trace_for(&calls[i].frame),
            })
            .collect();
        let results = self.run_tools(jobs, true).await;
        for (outcome, &i) in results.into_iter().zip(&tools) {
            decided.outcomes[i] = Some(outcome);
        }
        for &i in &delegates {
            // The sub-agent runs under its own token, so cancelling its call stops
            // everything under it and nothing else.
            let frame = calls[i].frame.clone();
            let cancels = self.orch.cancels.clone();
            let own = cancels.start(&frame, &self.cancel);
            let outer = std::mem::replace(&mut self.cancel, own);
            let outcome = self.delegate(&calls[i], &decided.arguments[i]).await;
            self.cancel = outer;
            cancels.end(&frame);
            self.complete(&outcome);
            decided.outcomes[i] = Some(outcome);
        }
        for (i, call) in calls.iter().enumerate() {
            let needs = match decided.outcomes[i].as_ref().map(|o| &o.ended) {
                Some(Ended::NeedsFirst(needed, then)) => Some((needed.clone(), then.clone())),
                _ => None,
            };
            if let Some(needs) = needs {
                let outcome = self.resolve_needs(turn, call, needs).await;
                self.complete(&outcome);
                decided.outcomes[i] = Some(outcome);
            }
        }
    }

    /// Runs tools concurrently; with `report`, each one's result and stack pop go out as it
    /// finishes (a tool that needs other calls first is reported when it resumes).
    /// Progress the tools report goes out as `tool_progress` events while they run.
    async fn run_tools(&mut self, jobs: Vec<ReadyCall>, report: bool) -> Vec<CallOutcome> {
        let (sender, mut reports) = tokio::sync::mpsc::unbounded_channel();
        let mut ctx = self.tool_context();
        ctx.progress = Some(sender.clone());
        let registry = std::sync::Arc::clone(&self.orch.registry);
        let clock = std::sync::Arc::clone(&self.clock);
        let cancels = self.orch.cancels.clone();
        // One channel for progress and ends keeps their order: a call's last progress comes
        // before its result.
        let (ends, mut ended) = tokio::sync::mpsc::unbounded_channel();
        let running = run_calls(&registry, jobs, &ctx, clock.as_ref(), &cancels, |outcome| {
            if report && !matches!(outcome.ended, Ended::NeedsFirst(..)) {
                let _ = ends.send(outcome.clone());
            }
        });
        tokio::pin!(running);
        let results = loop {
            tokio::select! {
                biased;
                Some(progress) = reports.recv() => self.progress(progress).await,
                Some(outcome) = ended.recv() => self.complete(&outcome),
                results = &mut running => break results,
            }
        };
        while let Ok(progress) = reports.try_recv() {
            self.progress(progress).await;
        }
        while let Ok(outcome) = ended.try_recv() {
            self.complete(&outcome);
        }
        results
    }

    /// A report becomes a `tool_progress` event; a form is asked of the user. While the
    /// user answers, the batch's other calls wait (their processes keep running).
    async fn progress(&mut self, progress: Progress) {
        match progress {
            Progress::Started { call } => self.started(&call),
            Progress::Report {
                call,
                progress,
                total,
                message,
            } => self.emit(EventData::ToolProgress {
                id: call,
                progress,
                total,
                message: message.map(|m| crate::text::summarize(&m, MAX_PROGRESS_MESSAGE)),
            }),
            Progress::Output { call, tail } => self.emit(EventData::ToolOutput { id: call, tail }),
            Progress::Ask(ask) => {
                let answer = self.elicit(&ask).await;
                // The call may have ended meanwhile (a timeout): then nobody waits.
                let _ = ask.reply.send(answer);
            }
            Progress::Generate(generate) => self.generate(generate).await,
        }
    }

    /// Runs the calls a tool needs first, above it on the stack, then resumes it with their
    /// results; repeats while it needs more. A needed call that fails fails the tool, so the
    /// whole workflow unwinds (spec/004: a tool failure clears the stack).
    async fn resolve_needs(
        &mut self,
        turn: u32,
        call: &Pending,
        (mut needed, mut then): (Vec<NeededCall>, Value),
    ) -> CallOutcome {
        let started = self.clock.now();
        loop {
            let children: Vec<Pending> = needed
                .iter()
                .map(|n| {
                    let frame = format!("{}/needs-{}", call.frame, self.next_number());
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
            let results = self.process(turn, &children, None).await;
            let failed = children
                .iter()
                .zip(&results)
                .find_map(|(c, r)| r.ended.to_result().err().map(|e| (c, e)));
            let mut outcome = if self.cancel.is_cancelled() {
                self.quiet(call, Ended::Cancelled)
            } else if let Some((child, failed)) = failed {
                let error = format!("needed call '{}' failed: {failed}", child.name);
                self.quiet(call, Ended::Failed(error))
            } else {
                let job = ReadyCall {
                    id: call.frame.clone(),
                    name: call.name.clone(),
                    work: Work::Resume(then, results.iter().map(|r| r.ended.to_result()).collect()),
                    seen: None,
                    start: Start::Now,
                    trace: self.trace_for(&call.frame),
                };
                let mut resumed = self.run_tools(vec![job], false).await;
                match resumed.pop() {
                    Some(CallOutcome {
                        ended: Ended::NeedsFirst(more, next),
                        ..
                    }) => {
                        (needed, then) = (more, next);
                        continue;
                    }
                    Some(resumed) => resumed,
                    None => self.quiet(call, Ended::Failed("the tool did not resume".to_string())),
                }
            };
            outcome.duration = self.clock.now() - started;
            return outcome;
        }
    }

    /// An outcome for a call that did not run, reported at once.
    pub(super) fn not_run(&mut self, call: &Pending, ended: Ended) -> CallOutcome {
        let outcome = self.quiet(call, ended);
        self.emit_result(&outcome);
        outcome
    }

    /// An outcome not reported yet (its caller completes it). Its error (which may quote the
    /// arguments, a schema or a reason) fits the result cap like any result.
    fn quiet(&self, call: &Pending, ended: Ended) -> CallOutcome {
        let max = self.orch.settings.tools.max_output_bytes;
        let ended = ended.map_text(|text| cap_error(text, max));
        CallOutcome::not_run(&call.frame, &call.name, ended)
    }

    /// Reports a call that finished and takes its frame off.
    pub(super) fn complete(&mut self, outcome: &CallOutcome) {
        self.emit_result(outcome);
        let state = final_state(outcome, &self.cancel);
        let frames = self.orch.stack.pop(&outcome.id, state);
        self.popped(frames);
    }
}
