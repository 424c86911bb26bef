//! [`AcpEngine`]: the TUI's engine when an external agent runs the loop. One task owns the
//! session's state: ops from the TUI, what the connection brings (in order, bounded), and
//! the agent's process; every event it makes is recorded (session file, audit log) before it
//! goes to the screen, over a bounded channel too.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use agent_client_protocol::Agent;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    ContentBlock, PromptRequest, RequestPermissionOutcome, RequestPermissionResponse, SessionId,
    TextContent,
};
use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use tokio::sync::mpsc::{self, Receiver, Sender, UnboundedReceiver, UnboundedSender};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

mod asks;
mod said;
mod terminal;

use asks::{Waiting, unsupported};

use super::connection::{Incoming, plain};
use super::process::StderrTail;
use super::terminals::Terminals;
use super::translate::Translator;
use super::{CANCEL_WAIT, choice};
use crate::conversation::Message;
use crate::engine::Engine;
use crate::event::{Event, EventData};
use crate::orchestrator::task::Op;
use crate::recorder::Recorder;
use crate::tools::ToolSettings;

/// Messages from the connection that may wait for the engine: past this, the agent waits.
const INCOMING: usize = 64;
/// Events that may wait for the screen.
const OUTGOING: usize = 1024;
/// Problems said in the chat per session; later ones go to the log only.
const PROBLEMS_SAID: usize = 20;
/// How long what the agent sent before its output closed (or it exited) may take to come
/// through the connection before the agent is declared gone.
const CLOSING_GRACE: Duration = Duration::from_millis(300);
/// The turn limit runs show: taco counts an external agent's turns but does not limit them.
pub const SHOWN_MAX_TURNS: u32 = 1000;

/// The agent's process, when taco started one (tests connect in memory).
pub struct Process {
    /// The child (its exit status says why it stopped).
    pub child: tokio::process::Child,
    /// Its process group, killed at the end.
    pub group: Option<u32>,
    /// Its last stderr lines.
    pub stderr: StderrTail,
}

/// The agent's process as the engine keeps it, once a task watches the child.
struct Watched {
    group: Option<u32>,
    stderr: StderrTail,
}

/// An external agent driven over ACP, as the TUI sees it.
pub struct AcpEngine {
    ops: UnboundedSender<Op>,
    events: Receiver<Event>,
    handle: Option<JoinHandle<()>>,
    stop: CancellationToken,
}

/// The ends the connection task needs: where to send what comes, and when to stop.
pub struct Wiring {
    /// What the connection brings.
    pub incoming: Sender<Incoming>,
    /// Cancelled when the engine is done.
    pub stop: CancellationToken,
    /// The agent's terminals, when taco offers them.
    pub terminals: Option<Arc<Terminals>>,
}

impl AcpEngine {
    /// Starts the engine for agent `name` in `workdir` (recording into `recorder`); the connection task
    /// is started by `connect` with the ends it needs. `process` is killed at the end; the
    /// agent's terminals run with `terminals` (not offered without).
    pub fn start(
        name: &str,
        workdir: &std::path::Path,
        recorder: Recorder,
        process: Option<Process>,
        terminals: Option<Arc<ToolSettings>>,
        connect: impl FnOnce(Wiring),
    ) -> Self {
        let (ops, ops_rx) = mpsc::unbounded_channel();
        let (events_tx, events) = mpsc::channel(OUTGOING);
        let (incoming, incoming_rx) = mpsc::channel(INCOMING);
        let stop = CancellationToken::new();
        let terminals = terminals.map(|settings| {
            Arc::new(Terminals::new(
                settings,
                workdir,
                incoming.clone(),
                stop.clone(),
            ))
        });
        connect(Wiring {
            incoming: incoming.clone(),
            stop: stop.clone(),
            terminals: terminals.clone(),
        });
        let process = process.map(|process| {
            let Process {
                mut child,
                group,
                stderr,
            } = process;
            // Watches the child: its exit is news; taco's end kills its group.
            let (tx, stop) = (incoming.clone(), stop.clone());
            tokio::spawn(async move {
                tokio::select! {
                    status = child.wait() => {
                        let status = status.map_or_else(|e| e.to_string(), |s| s.to_string());
                        let _ = tx.send(Incoming::Exited(status)).await;
                    }
                    () = stop.cancelled() => {
                        super::process::kill_group(group);
                        let _ = child.start_kill();
                        let _ = tokio::time::timeout(Duration::from_secs(2), child.wait()).await;
                    }
                }
            });
            Watched { group, stderr }
        });
        let state = State {
            name: name.to_string(),
            translator: Translator::new(name, workdir),
            recorder,
            events: events_tx,
            stop: stop.clone(),
            incoming,
            cx: None,
            session: None,
            request: Arc::from(""),
            queue: VecDeque::new(),
            waiting: HashMap::new(),
            prompts: 0,
            running: None,
            cancelled_at: None,
            gone: None,
            closing: None,
            problems: 0,
            process,
            terminals,
        };
        let handle = tokio::spawn(state.run(ops_rx, incoming_rx));
        Self {
            ops,
            events,
            handle: Some(handle),
            stop,
        }
    }
}

impl Engine for AcpEngine {
    fn send(&mut self, op: Op) -> bool {
        self.ops.send(op).is_ok()
    }

    fn poll_event(&mut self, cx: &mut std::task::Context<'_>) -> std::task::Poll<Option<Event>> {
        self.events.poll_recv(cx)
    }

    fn try_event(&mut self) -> Option<Event> {
        self.events.try_recv().ok()
    }

    fn shutdown(mut self: Box<Self>, grace: Duration) -> BoxFuture<'static, ()> {
        let _ = self.ops.send(Op::Shutdown);
        let handle = self.handle.take();
        let stop = self.stop.clone();
        // The screen reads no more events: the task must not wait for room.
        drop(self);
        async move {
            if let Some(handle) = handle
                && tokio::time::timeout(grace, handle).await.is_err()
            {
                stop.cancel();
            }
        }
        .boxed()
    }
}

/// The engine task's state.
struct State {
    name: String,
    translator: Translator,
    recorder: Recorder,
    events: Sender<Event>,
    stop: CancellationToken,
    /// For prompt tasks to send their answers.
    incoming: Sender<Incoming>,
    cx: Option<ConnectionTo<Agent>>,
    session: Option<SessionId>,
    /// The run in progress (or the last one).
    request: Arc<str>,
    /// Prompts sent while a run was in progress or before the agent was ready.
    queue: VecDeque<String>,
    /// Permission requests by tool call id.
    waiting: HashMap<String, Waiting>,
    prompts: u64,
    /// The prompt whose answer ends the run in progress.
    running: Option<u64>,
    /// When the user cancelled the run in progress: the agent has [`CANCEL_WAIT`] to end it.
    cancelled_at: Option<tokio::time::Instant>,
    /// Why the agent is gone, once it is.
    gone: Option<String>,
    /// Its output closed or it exited: gone at this time, saying this.
    closing: Option<(tokio::time::Instant, String)>,
    problems: usize,
    process: Option<Watched>,
    terminals: Option<Arc<Terminals>>,
}

impl State {
    async fn run(mut self, mut ops: UnboundedReceiver<Op>, mut incoming: Receiver<Incoming>) {
        loop {
            let deadline = self.cancelled_at.map(|at| at + CANCEL_WAIT);
            let closing = self.closing.as_ref().map(|(at, _)| *at);
            tokio::select! {
                () = self.stop.cancelled() => break,
                op = ops.recv() => match op {
                    None | Some(Op::Shutdown) => break,
                    Some(op) => self.op(op).await,
                },
                Some(message) = incoming.recv() => self.incoming(message).await,
                () = sleep_until(closing), if closing.is_some() => {
                    if let Some((_, why)) = self.closing.take() {
                        self.agent_gone(why).await;
                    }
                }
                () = sleep_until(deadline), if deadline.is_some() => {
                    self.cancelled_at = None;
                    let message = format!(
                        "{} did not end its turn within {} s of the cancel; taco stopped waiting",
                        self.name,
                        CANCEL_WAIT.as_secs()
                    );
                    tracing::warn!("{message}");
                    self.running = None;
                    self.kill_terminals();
                    let events = self.translator.abort(true, message, crate::event::unix_ms());
                    self.emit_all(events).await;
                    self.next().await;
                }
            }
        }
        self.end().await;
    }

    /// taco is done: the run in progress is cancelled (its end recorded), the agent asked to
    /// stop and its process group killed.
    async fn end(&mut self) {
        if self.running.take().is_some() {
            self.send_cancel();
            self.kill_terminals();
            let events = self
                .translator
                .abort(true, String::new(), crate::event::unix_ms());
            self.emit_all(events).await;
        }
        self.answer_all_cancelled();
        // The connection ends and the watcher kills the child; its group goes now.
        self.stop.cancel();
        if let Some(process) = &self.process {
            super::process::kill_group(process.group);
        }
    }

    async fn op(&mut self, op: Op) {
        match op {
            Op::Submit(text) | Op::SubmitWith(text, _) => {
                if let Some(gone) = &self.gone {
                    let message = format!("{gone}; restart taco to talk to it again");
                    self.say(message).await;
                    return;
                }
                self.queue.push_back(text);
                self.next().await;
            }
            Op::Approve { id, answer } => self.decide(&id, &answer).await,
            Op::DecideBatch { ids, decision } => {
                let answer = decision.answer();
                for id in ids {
                    self.decide(&id, &answer).await;
                }
            }
            Op::Cancel => {
                if self.running.is_some() && self.cancelled_at.is_none() {
                    self.send_cancel();
                    self.answer_all_cancelled();
                    self.cancelled_at = Some(tokio::time::Instant::now());
                }
            }
            Op::Shutdown => {}
            other => {
                let what = unsupported(&other);
                let message = format!(
                    "{what} is not available with an external agent ({})",
                    self.name
                );
                self.say(message).await;
            }
        }
    }

    /// Sends the next queued prompt, when the agent is ready and idle.
    async fn next(&mut self) {
        if self.running.is_some() || self.gone.is_some() {
            return;
        }
        let (Some(cx), Some(session)) = (self.cx.clone(), self.session.clone()) else {
            return;
        };
        let Some(text) = self.queue.pop_front() else {
            return;
        };
        self.prompts += 1;
        let prompt = self.prompts;
        self.running = Some(prompt);
        self.request = Arc::from(uuid::Uuid::new_v4().to_string());
        let events = self.translator.start(&text, SHOWN_MAX_TURNS);
        self.emit_all(events).await;
        self.recorder.message(&Message::user(text.clone()));
        self.report_recording().await;
        let tx = self.incoming.clone();
        tokio::spawn(async move {
            let request =
                PromptRequest::new(session, vec![ContentBlock::Text(TextContent::new(text))]);
            let result = cx
                .send_request(request)
                .block_task()
                .await
                .map_err(|e| plain(&e));
            let _ = tx.send(Incoming::Answered { prompt, result }).await;
        });
    }

    async fn incoming(&mut self, message: Incoming) {
        let now = crate::event::unix_ms();
        match message {
            Incoming::Ready { cx, session, info } => {
                tracing::info!(agent = %self.name, info = ?info, session = %session.0, "acp agent ready");
                self.cx = Some(cx);
                self.session = Some(session);
                self.next().await;
            }
            Incoming::Update { update, raw } => {
                // Between runs only usage is news; a late update of a run that ended is not.
                let usage = matches!(
                    *update,
                    agent_client_protocol::v1::schema::SessionUpdate::UsageUpdate(_)
                );
                if self.running.is_some() || usage {
                    let events = self.translator.update(&update, raw, now);
                    self.emit_all(events).await;
                    for notice in self.translator.take_notices() {
                        self.problem(notice).await;
                    }
                }
            }
            Incoming::Permission {
                request,
                raw,
                responder,
            } => {
                if self.running.is_none() || self.cancelled_at.is_some() {
                    let _ = responder.respond(RequestPermissionResponse::new(
                        RequestPermissionOutcome::Cancelled,
                    ));
                    return;
                }
                let id = request.tool_call.tool_call_id.0.to_string();
                let note = choice::note(&self.name, &request.options);
                let waiting = Waiting {
                    options: request.options.clone(),
                    responder,
                };
                // Asked again about the same call: the earlier request is cancelled.
                if let Some(old) = self.waiting.insert(id, waiting) {
                    let _ = old.responder.respond(RequestPermissionResponse::new(
                        RequestPermissionOutcome::Cancelled,
                    ));
                }
                let events = self.translator.approval(&request.tool_call, raw, note, now);
                self.emit_all(events).await;
            }
            Incoming::Answered { prompt, result } => {
                if self.running != Some(prompt) {
                    return;
                }
                self.running = None;
                self.kill_terminals();
                let cancelled = self.cancelled_at.take().is_some();
                self.answer_all_cancelled();
                let events = match result {
                    Ok(response) => self.translator.finish(response.stop_reason, now),
                    Err(why) if cancelled => self.translator.abort(true, why, now),
                    Err(why) => self.translator.abort(
                        false,
                        format!(
                            "{} failed the prompt: {why}{}",
                            self.name,
                            self.stderr_tail()
                        ),
                        now,
                    ),
                };
                self.emit_all(events).await;
                self.next().await;
            }
            Incoming::Problem(problem) => self.problem(problem).await,
            Incoming::CreateTerminal { request, responder } => {
                self.create_terminal(&request, responder, now).await;
            }
            Incoming::Terminal(news) => {
                let events = self.translator.terminal(news, now);
                self.emit_all(events).await;
            }
            // What it sent before may still be on its way through the connection.
            Incoming::Exited(status) => {
                let why = format!("the agent {} exited ({status})", self.name);
                let at = (self.closing.take())
                    .map_or_else(|| tokio::time::Instant::now() + CLOSING_GRACE, |(at, _)| at);
                self.closing = Some((at, why));
            }
            // Its exit, if it exits, says more: it has the grace to come.
            Incoming::Ended(why) => {
                if self.closing.is_none() {
                    let why = match why {
                        Some(why) => format!("the connection to {} ended: {why}", self.name),
                        None => format!("the agent {} closed the connection", self.name),
                    };
                    self.closing = Some((tokio::time::Instant::now() + CLOSING_GRACE, why));
                }
            }
        }
    }
}

async fn sleep_until(deadline: Option<tokio::time::Instant>) {
    match deadline {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}
