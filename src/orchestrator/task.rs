//! The orchestrator as a tokio task: [`Op`]s in, [`Event`]s out. The TUI drives it as an
//! `Engine` (`crate::engine`); `exec` calls [`Orchestrator::run`] directly.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use tokio::sync::mpsc::{
    UnboundedReceiver, UnboundedSender, WeakUnboundedSender, unbounded_channel,
};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::Orchestrator;
use super::approval::{ApprovalAnswer, BatchDecision};
use super::channel::{ChannelApprover, Reply};
use super::recorded::{ProblemSink, Recorded};
use super::request::RequestOptions;
use super::switch::{Lists, Providers};
use crate::event::{Event, EventData, Grant, RewindPoint, RewindScope};
use crate::recorder::Recorder;
use crate::tools::AskReply;

/// What the UI asks of the orchestrator.
#[derive(Debug, Clone, PartialEq)]
pub enum Op {
    /// A user request; queued when a run is in progress and sent after it.
    Submit(String),
    /// A user request with options of its own (a custom command's allowed tools and
    /// model), for it alone; queued like [`Op::Submit`].
    SubmitWith(String, RequestOptions),
    /// Run this shell command for the user (`!cmd`); queued like a request. Its output goes
    /// with the next request, once.
    UserShell(String),
    /// The answer to an `approval_requested` event.
    Approve {
        /// The call id from the request.
        id: String,
        /// The decision.
        answer: ApprovalAnswer,
    },
    /// One decision for several calls of the batch waiting for approval (`Y`, `N`): each
    /// call gets its own `approval_decided` (scope `batch`). A call that may only be approved
    /// once (leaving the sandbox) is never approved this way; it waits for its own answer.
    DecideBatch {
        /// The call ids from the requests.
        ids: Vec<String>,
        /// Approve all, or deny all with one reason.
        decision: BatchDecision,
    },
    /// The answer to an `input_requested` event (`None`: declined / abandoned).
    Answer {
        /// The question id from the request.
        id: String,
        /// The answer.
        value: Option<String>,
    },
    /// The answer to a form (`input_requested` of kind `form`): the content, a decline or
    /// a cancel.
    Fill {
        /// The question id from the request.
        id: String,
        /// The answer.
        answer: AskReply,
    },
    /// Cancel the running request (DESIGN §4 rule 7).
    Cancel,
    /// Cancel one running call (by its frame id) and whatever runs under it: its result says
    /// it was cancelled by the user and the run goes on. A call not running is left alone.
    CancelCall(String),
    /// Start a new conversation (after the running request, if any).
    Clear,
    /// Summarise the older messages now (after the running request, if any).
    Compact,
    /// Take a grant back, at once (a running request asks again from its next batch on).
    Revoke(Grant),
    /// Talk to this provider and model from the next request on (after the running one).
    Switch {
        /// Provider name.
        provider: String,
        /// Model id; `None`: the provider's default.
        model: Option<String>,
    },
    /// List each provider's models (`models_listed` events, off the task's loop).
    ListModels,
    /// List the saved sessions (a `sessions_listed` event, off the task's loop).
    ListSessions,
    /// Show what rewinding to a point would change (a `listed` rewind preview, off the
    /// task's loop).
    PreviewRewind(RewindPoint),
    /// Rewind the files and/or the conversation (after the running request, if any).
    Rewind {
        /// Back to where.
        point: RewindPoint,
        /// What goes back.
        scope: RewindScope,
        /// Overwrite files edited by hand since taco's last checkpoint too.
        overwrite: bool,
    },
    /// List the changes between two checkpoints with their diffs (a `listed` changes).
    ShowChanges {
        /// From this checkpoint.
        from: String,
        /// To this one.
        to: String,
    },
    /// Read the project's hooks again (after `/trust`), from the next request on.
    ReloadHooks,
    /// Switch the permission mode, at once (a running request from its next batch).
    SetMode(crate::event::Mode),
    /// Stop the task (cancels whatever runs).
    Shutdown,
}

/// The running task: send Ops, receive Events.
pub struct OrchestratorTask {
    /// Where Ops go.
    pub ops: UnboundedSender<Op>,
    /// Where Events come from.
    pub events: UnboundedReceiver<Event>,
    /// The task itself (ends after `Op::Shutdown` or when `ops` is dropped); `None` when
    /// nothing runs (a read-only view).
    pub handle: Option<JoinHandle<Orchestrator>>,
    /// The event channel, for news from outside any request (an MCP server failed); weak,
    /// so the channel still ends with the task.
    outside: WeakUnboundedSender<Event>,
}

impl OrchestratorTask {
    /// Where news from outside any request goes (it reaches the UI, not the session file).
    pub fn outside(&self) -> WeakUnboundedSender<Event> {
        self.outside.clone()
    }
}

/// Starts the orchestrator on the current tokio runtime.
pub fn spawn(orchestrator: Orchestrator) -> OrchestratorTask {
    spawn_recording(orchestrator, Recorder::default())
}

/// Starts the orchestrator with a recorder (session file, audit log) behind its events.
pub fn spawn_recording(orchestrator: Orchestrator, recorder: Recorder) -> OrchestratorTask {
    spawn_switching(orchestrator, recorder, None)
}

/// Starts the orchestrator with a recorder, and the providers `Op::Switch` may switch to
/// (`None`: none but the one it has).
pub fn spawn_switching(
    orchestrator: Orchestrator,
    recorder: Recorder,
    providers: Option<Arc<dyn Providers>>,
) -> OrchestratorTask {
    let (ops_tx, ops_rx) = unbounded_channel();
    let (events_tx, events_rx) = unbounded_channel();
    let outside = events_tx.downgrade();
    let handle = tokio::spawn(serve(
        orchestrator,
        ops_rx,
        Recorded::new(events_tx, recorder),
        Lists {
            providers,
            events: outside.clone(),
        },
    ));
    OrchestratorTask {
        ops: ops_tx,
        events: events_rx,
        handle: Some(handle),
        outside,
    }
}

/// The task's sink: everything is recorded, and sent to the UI.
type TaskSink = Recorded<UnboundedSender<Event>>;

impl ProblemSink for UnboundedSender<Event> {
    /// Tells the UI when the session file could not be written.
    fn problem(&mut self, problem: String) {
        // An empty request id: this is not the end of the running request.
        let event = Event::now(
            &std::sync::Arc::from(""),
            EventData::Error {
                kind: "session".to_string(),
                message: problem,
            },
        );
        let _ = self.send(event);
    }
}

/// Starts a new conversation, and a new session file for it.
fn clear(sink: &mut TaskSink, orchestrator: &mut Orchestrator) {
    orchestrator.clear();
    let workdir = orchestrator.settings().workdir.clone();
    let provider = orchestrator.provider().clone();
    sink.restart(provider.name(), provider.model(), &workdir);
}

async fn serve(
    mut orchestrator: Orchestrator,
    mut ops: UnboundedReceiver<Op>,
    mut events: TaskSink,
    lists: Lists,
) -> Orchestrator {
    let (replies_tx, replies_rx) = unbounded_channel();
    let mut approver = ChannelApprover {
        replies: replies_rx,
        approvals: HashMap::new(),
        inputs: HashMap::new(),
        forms: HashMap::new(),
        revoked: Vec::new(),
    };
    let mut queue = VecDeque::new();
    let mut shutting_down = false;
    // The output of the user's `!` commands since the last request: the next one carries it.
    let mut shell_context: Vec<String> = Vec::new();
    while !shutting_down {
        let work = match queue.pop_front() {
            Some(work) => work,
            None => match ops.recv().await {
                None | Some(Op::Shutdown) => break,
                Some(Op::Submit(prompt)) => Work::Prompt(prompt, RequestOptions::default()),
                Some(Op::SubmitWith(prompt, options)) => Work::Prompt(prompt, options),
                Some(Op::UserShell(command)) => Work::Shell(command),
                Some(Op::Compact) => Work::Compact,
                Some(Op::Revoke(grant)) => {
                    orchestrator.revoke(grant, &mut events);
                    continue;
                }
                Some(Op::Clear) => {
                    clear(&mut events, &mut orchestrator);
                    shell_context.clear();
                    continue;
                }
                Some(Op::Switch { provider, model }) => Work::Switch(provider, model),
                Some(Op::ListModels) => {
                    lists.models();
                    continue;
                }
                Some(Op::ListSessions) => {
                    lists.sessions(events.session_id());
                    continue;
                }
                Some(Op::PreviewRewind(point)) => {
                    super::rewinding::preview(
                        &orchestrator,
                        &mut events,
                        lists.events.clone(),
                        point,
                    );
                    continue;
                }
                Some(Op::ShowChanges { from, to }) => {
                    super::rewinding::changes(
                        super::rewinding::store_of(&orchestrator),
                        lists.events.clone(),
                        from,
                        to,
                    );
                    continue;
                }
                Some(Op::Rewind {
                    point,
                    scope,
                    overwrite,
                }) => Work::Rewind(point, scope, overwrite),
                Some(Op::ReloadHooks) => {
                    orchestrator.reload_hooks();
                    continue;
                }
                Some(Op::SetMode(mode)) => {
                    orchestrator.set_mode(mode, &mut events);
                    continue;
                }
                // Nothing is running: stale answers and cancels have nothing to act on.
                Some(
                    Op::Approve { .. }
                    | Op::DecideBatch { .. }
                    | Op::Answer { .. }
                    | Op::Fill { .. }
                    | Op::Cancel
                    | Op::CancelCall(_),
                ) => {
                    continue;
                }
            },
        };
        if let Work::Switch(provider, model) = work {
            lists.switch(&mut orchestrator, &mut events, &provider, model.as_deref());
            continue;
        }
        let cancel = CancellationToken::new();
        // Reached while the run holds the orchestrator: a call is cancelled as it runs.
        let calls = orchestrator.call_cancels();
        let mut clear_after = false;
        let mut reload_after = false;
        // The run holds the sink; `/resume` is refused while it runs, so a listing asked
        // meanwhile may say the session of before it (a first run's file is made by it).
        let open = events.session_id();
        let store = super::rewinding::store_of(&orchestrator);
        let mode_cell = orchestrator.mode();
        {
            let job = async {
                match &work {
                    Work::Prompt(prompt, options) => {
                        let prompt = super::user_shell::with_context(
                            prompt,
                            &std::mem::take(&mut shell_context),
                        );
                        let switched = (options.model.as_deref())
                            .and_then(|model| lists.for_request(&orchestrator, &mut events, model));
                        orchestrator
                            .run_with(
                                &prompt,
                                options,
                                switched,
                                &mut events,
                                &mut approver,
                                &cancel,
                            )
                            .await;
                    }
                    Work::Shell(command) => {
                        let context =
                            super::user_shell::run(&orchestrator, command, &mut events, &cancel)
                                .await;
                        shell_context.extend(context);
                    }
                    Work::Compact => {
                        orchestrator.compact(&mut events, &cancel).await;
                    }
                    Work::Rewind(point, scope, overwrite) => {
                        super::rewinding::rewind(
                            &mut orchestrator,
                            &mut events,
                            point.clone(),
                            *scope,
                            *overwrite,
                        )
                        .await;
                    }
                    Work::Switch(..) => {}
                }
            };
            tokio::pin!(job);
            loop {
                tokio::select! {
                    _ = &mut job => break,
                    op = ops.recv() => match op {
                        Some(Op::Submit(next)) => {
                            queue.push_back(Work::Prompt(next, RequestOptions::default()));
                        }
                        Some(Op::SubmitWith(next, options)) => {
                            queue.push_back(Work::Prompt(next, options));
                        }
                        Some(Op::UserShell(command)) => queue.push_back(Work::Shell(command)),
                        Some(Op::Compact) => queue.push_back(Work::Compact),
                        // The running request ends with the provider it started with.
                        Some(Op::Switch { provider, model }) => {
                            queue.push_back(Work::Switch(provider, model));
                        }
                        Some(Op::ListModels) => lists.models(),
                        Some(Op::ListSessions) => lists.sessions(open.clone()),
                        // A preview made while a run changes files would be stale at once.
                        Some(Op::PreviewRewind(_)) => {}
                        Some(Op::ShowChanges { from, to }) => {
                            super::rewinding::changes(store.clone(), lists.events.clone(), from, to);
                        }
                        Some(Op::Rewind { point, scope, overwrite }) => {
                            queue.push_back(Work::Rewind(point, scope, overwrite));
                        }
                        Some(Op::ReloadHooks) => reload_after = true,
                        // At once: the run reads the mode at its next batch; the UI hears it
                        // now (the session file hears of it from the next switch between runs).
                        Some(Op::SetMode(mode)) => {
                            mode_cell.set(mode);
                            if let Some(events) = lists.events.upgrade() {
                                let _ = events.send(Event::now(
                                    &Arc::from(""),
                                    EventData::ModeChanged { mode },
                                ));
                            }
                        }
                        Some(Op::Revoke(grant)) => {
                            let _ = replies_tx.send(Reply::Revoke(grant));
                        }
                        Some(Op::Approve { id, answer }) => {
                            let _ = replies_tx.send(Reply::Approval(id, answer));
                        }
                        Some(Op::DecideBatch { ids, decision }) => {
                            for id in ids {
                                let _ = replies_tx.send(Reply::Approval(id, decision.answer()));
                            }
                        }
                        Some(Op::Answer { id, value }) => {
                            let _ = replies_tx.send(Reply::Input(id, value));
                        }
                        Some(Op::Fill { id, answer }) => {
                            let _ = replies_tx.send(Reply::Form(id, answer));
                        }
                        Some(Op::Cancel) => cancel.cancel(),
                        Some(Op::CancelCall(id)) => {
                            calls.cancel(&id);
                        }
                        Some(Op::Clear) => clear_after = true,
                        None | Some(Op::Shutdown) => {
                            cancel.cancel();
                            shutting_down = true;
                        }
                    },
                }
            }
        }
        if clear_after {
            clear(&mut events, &mut orchestrator);
            shell_context.clear();
        }
        if reload_after {
            orchestrator.reload_hooks();
        }
    }
    orchestrator
}

/// What the task does next: a request, a compaction or a switch the user asked for.
enum Work {
    Prompt(String, RequestOptions),
    Shell(String),
    Compact,
    Switch(String, Option<String>),
    Rewind(RewindPoint, RewindScope, bool),
}
