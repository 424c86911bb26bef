//! The agent loop (DESIGN §4): model → tool calls → tool results → model …, with approvals,
//! max turns and cancellation. It knows nothing of the terminal: events go to an
//! [`EventSink`], consent comes from an [`approval::Approver`].

use std::path::PathBuf;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use crate::clock::{Clock, SystemClock};
use crate::conversation::{Message, Role};
use crate::event::{Event, EventData, FrameState, Grant};
use crate::provider::Provider;
use crate::text::summarize;
use crate::tools::{Policy, ToolRegistry, ToolSettings};

pub mod approval;
mod asking;
mod batch;
pub mod budget;
mod call;
mod channel;
mod checkpoints;
mod collect;
mod compact;
pub mod context;
mod conversation;
mod delegate;
mod elicit;
mod hooking;
mod images;
pub mod limits;
mod log;
pub mod mode;
mod plan;
pub mod recap;
pub mod recorded;
mod repeats;
mod reply;
pub mod request;
mod results;
mod resume;
pub mod retry;
mod rewinding;
mod run_loop;
mod scope;
mod shed;
pub mod stack;
pub mod switch;
pub mod task;
pub mod turn;
pub mod user_shell;

use approval::{Approver, Policies};
use conversation::Conversation;
pub use limits::Limits;
use retry::RetryPolicy;
use scope::Run;
use stack::ToolStack;

/// The message injected when the turn limit is reached (spec/003).
pub const MAX_TURNS_PROMPT: &str = "You have reached the maximum number of turns. Please provide an answer based on the information you have gathered so far.";

/// Where events go: the TUI's channel, `exec`'s stdout, a test's vector.
pub trait EventSink: Send {
    /// Takes one event.
    fn emit(&mut self, event: Event);

    /// Takes a message appended to the user's conversation (for session files), in order.
    fn message(&mut self, _message: &Message) {}
}

impl EventSink for Vec<Event> {
    fn emit(&mut self, event: Event) {
        self.push(event);
    }
}

impl EventSink for tokio::sync::mpsc::UnboundedSender<Event> {
    fn emit(&mut self, event: Event) {
        // The receiver is gone only when the UI is shutting down; nothing left to tell.
        let _ = self.send(event);
    }
}

/// What a run needs besides the provider and the tools.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Turn limit (DESIGN §4 rule 3); at least 1.
    pub max_turns: u32,
    /// The system prompt, first message of the conversation.
    pub system_prompt: String,
    /// The project instructions (`AGENTS.md` …) as one prompt block, also given to
    /// sub-agents, who work in the same project; empty when there are none.
    pub instructions: String,
    /// The workspace root (canonical).
    pub workdir: PathBuf,
    /// Tool limits and settings.
    pub tools: Arc<ToolSettings>,
    /// Per-tool policy overrides from the config.
    pub policies: std::collections::HashMap<String, Policy>,
    /// Retries of failed provider calls.
    pub retry: RetryPolicy,
    /// How deeply tool calls may nest before the user is asked (DESIGN §5; default 20).
    pub depth_limit: usize,
    /// Most messages of history sent to the model besides the system prompt (default 50),
    /// when the context window is not known; with a known window, compaction keeps the
    /// request in bounds instead.
    pub history_limit: usize,
    /// The context window and when to compact.
    pub context: context::ContextSettings,
    /// Bounds on each request and model call.
    pub limits: Limits,
    /// The session's hooks (issue 30.1).
    pub hooks: Arc<crate::hooks::Hooks>,
    /// The cost budget (`--max-cost`, `max_cost`); `None`: no budget.
    pub budget: Option<budget::CostBudget>,
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// The model answered. `error` is set when the answer was gathered after the final call
    /// of a max-turns run failed.
    Final {
        /// The answer.
        content: String,
        /// What went wrong, if the answer is only what was gathered.
        error: Option<String>,
    },
    /// The run failed (provider error); the message says what to do.
    Failed(String),
    /// The user cancelled.
    Cancelled,
    /// The next model call would have passed the cost budget (or its model has no price):
    /// it was not sent. `gathered` is what the model said alongside its tool calls.
    OverBudget {
        /// What was said so far.
        gathered: String,
        /// What happened and what to do.
        message: String,
    },
}

/// The agent: a conversation with a provider and tools.
pub struct Orchestrator {
    provider: Arc<dyn Provider>,
    registry: Arc<ToolRegistry>,
    settings: Settings,
    policies: Policies,
    conversation: Conversation,
    stack: ToolStack,
    clock: Arc<dyn Clock>,
    /// The running calls' own cancel tokens (`Op::CancelCall`).
    cancels: crate::tools::runner::CallCancels,
    /// The session's slots for running processes (`[tools] max_parallel`), shared by the
    /// calls of every batch, sub-agents' included.
    slots: crate::tools::runner::Slots,
    /// The context window the provider gave when asked (asked once; `Some(None)`: it does
    /// not know).
    asked_window: Option<Option<u64>>,
    /// The provider refused the summary call's token bound (HTTP 400): later summary calls
    /// go without it, bounded by taco's byte cap alone.
    summary_tokens_refused: bool,
    /// The workspace's checkpoint store (`None`: checkpoints are off).
    checkpoints: Option<Arc<crate::checkpoint::Store>>,
    /// Why checkpoints are off, for a rewind asked anyway.
    checkpoints_off: String,
    /// The `session_start` hooks ran (with the session's first request).
    session_started: bool,
    /// The permission mode, shared with the task (issue 30.2).
    mode: mode::ModeCell,
    /// What the session spent, by model (a resumed session's earlier runs included): the
    /// cost budget counts it.
    spent: budget::Spent,
}

impl Drop for Orchestrator {
    /// The store's background work (a large workspace's first snapshot) ends with the
    /// session: quitting never waits for it, and no git outlives taco.
    fn drop(&mut self) {
        if let Some(store) = &self.checkpoints {
            store.close();
        }
    }
}

/// How a conversation's loop ended, before the top level turns it into events.
enum LoopEnd {
    /// The model answered; `error` is set when the answer was gathered after the final call
    /// of a max-turns run failed.
    Answer {
        content: String,
        turns: u32,
        error: Option<(&'static str, String)>,
    },
    /// A provider error ended it.
    Failed { kind: &'static str, message: String },
    /// The user cancelled.
    Cancelled { running: &'static str },
    /// The cost budget stopped it before a model call; `content` is what the model said
    /// alongside its tool calls.
    OverBudget { content: String, message: String },
}

impl Orchestrator {
    /// A new conversation that starts with the system prompt.
    pub fn new(
        provider: Arc<dyn Provider>,
        registry: Arc<ToolRegistry>,
        settings: Settings,
    ) -> Self {
        let policies = Policies::new(settings.policies.clone());
        let conversation = Conversation::new(
            settings.system_prompt.clone(),
            registry.specs(),
            None,
            settings.max_turns,
        );
        let stack = ToolStack::new(settings.depth_limit);
        let slots = crate::tools::runner::Slots::new(settings.tools.max_parallel);
        Self {
            provider,
            registry,
            settings,
            policies,
            conversation,
            stack,
            clock: Arc::new(SystemClock),
            cancels: Default::default(),
            slots,
            asked_window: None,
            summary_tokens_refused: false,
            checkpoints: None,
            checkpoints_off: "checkpoints are off".to_string(),
            session_started: false,
            mode: mode::ModeCell::default(),
            spent: budget::Spent::default(),
        }
    }

    /// What the session spent so far, by model (`--max-cost` counts it).
    pub fn spent(&self) -> &budget::Spent {
        &self.spent
    }

    /// Takes checkpoints of the workspace in `store` (rewind).
    pub fn with_checkpoints(mut self, store: Arc<crate::checkpoint::Store>) -> Self {
        self.checkpoints = Some(store);
        self
    }

    /// Says why checkpoints are off (`[checkpoints] enabled = false`, no git …).
    pub fn without_checkpoints(mut self, why: String) -> Self {
        self.checkpoints = None;
        self.checkpoints_off = why;
        self
    }

    /// Why checkpoints are off (meaningless while they are on).
    pub fn checkpoints_off(&self) -> &str {
        &self.checkpoints_off
    }

    /// The permission mode, shared: setting it applies to a running request from its next
    /// batch of calls.
    pub fn mode(&self) -> mode::ModeCell {
        self.mode.clone()
    }

    /// The checkpoint store, when checkpoints are on.
    pub fn checkpoints(&self) -> Option<&Arc<crate::checkpoint::Store>> {
        self.checkpoints.as_ref()
    }

    /// The same orchestrator on another clock (tests).
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// The conversation so far, system prompt first.
    pub fn messages(&self) -> &[Message] {
        &self.conversation.messages
    }

    /// The provider this conversation talks to.
    pub fn provider(&self) -> &Arc<dyn Provider> {
        &self.provider
    }

    /// The tools offered to the model.
    pub fn registry(&self) -> &Arc<ToolRegistry> {
        &self.registry
    }

    /// Adds tools that come and go (MCP servers); they are offered from the next request on.
    pub fn add_tool_source(&mut self, source: Arc<dyn crate::tools::ToolSource>) {
        let mut registry = (*self.registry).clone();
        registry.add_source(source);
        self.registry = Arc::new(registry);
    }

    /// The running calls' cancel tokens: cancelling one stops that call alone (the run goes
    /// on, the model sees it cancelled). Shared: clone it before a run borrows `self`.
    pub fn call_cancels(&self) -> crate::tools::runner::CallCancels {
        self.cancels.clone()
    }

    /// The run settings.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// Policies and the grants given so far.
    pub fn policies(&self) -> &Policies {
        &self.policies
    }

    /// Takes a grant back between requests (`/revoke`); reported when there was one.
    pub fn revoke(&mut self, grant: Grant, sink: &mut dyn EventSink) {
        if self.policies.revoke(&grant) {
            let request_id: Arc<str> = Arc::from(uuid::Uuid::new_v4().to_string());
            sink.emit(Event {
                timestamp: self.clock.unix_ms(),
                request_id,
                data: EventData::ApprovalRevoked { grant },
            });
        }
    }

    /// Forgets the conversation (keeps the system prompt and session grants).
    pub fn clear(&mut self) {
        self.conversation.messages.truncate(1);
        self.conversation.compaction = None;
        self.conversation.measured = None;
        self.conversation.reported = 0;
        self.conversation.recorded = 0;
        self.conversation.instructed.clear();
    }

    /// Continues a saved conversation (`--resume`): the current system prompt replaces the
    /// saved one, the rest follows. The messages count as recorded and reported: the session
    /// file has them, so the next `llm_call` carries only what is new (its `message_count`
    /// still says how long the conversation sent was).
    pub fn restore(&mut self, messages: impl IntoIterator<Item = Message>) {
        self.clear();
        let mut messages = messages.into_iter().peekable();
        if messages.peek().is_some_and(|m| m.role == Role::System) {
            messages.next();
        }
        let conv = &mut self.conversation;
        conv.messages.extend(messages);
        conv.recorded = conv.messages.len();
        conv.reported = conv.messages.len();
        // No run is in progress: every restored request is an earlier one.
        conv.run_start = conv.messages.len();
    }

    /// Answers one user request: runs the loop until a final answer, an error or a cancel.
    pub async fn run(
        &mut self,
        prompt: &str,
        sink: &mut dyn EventSink,
        approver: &mut dyn Approver,
        cancel: &CancellationToken,
    ) -> Outcome {
        // A key pasted into the prompt goes no further than the composer.
        let prompt = self.settings.tools.secrets.redact(prompt).into_owned();
        self.shed();
        let mut conv = std::mem::take(&mut self.conversation);
        conv.max_turns = self.settings.max_turns.max(1);
        let started = EventData::RunStarted {
            prompt: summarize(&prompt, 200),
            provider: self.provider.name().to_string(),
            model: self.provider.model().to_string(),
            max_turns: conv.max_turns,
            trace_parent: (self.settings.tools.trace.parent.as_ref()).map(|p| p.header()),
        };
        let clock = Arc::clone(&self.clock);
        let max_turns = conv.max_turns;
        let mut run = Run::new(self, sink, approver, cancel.clone(), clock, prompt.clone());
        run.agents = vec![max_turns];
        run.emit(started);
        let workdir = run.orch.settings.workdir.clone();
        let provider = Arc::clone(&run.orch.provider);
        let images = match images::attach(&prompt, &workdir, provider.as_ref(), cancel).await {
            Ok(images) => images,
            // Nothing was sent and the conversation is as it was: the user sends again.
            Err(refused) => {
                let outcome = match refused {
                    images::Refused::Error(message) => {
                        run.error("image", message.clone());
                        Outcome::Failed(message)
                    }
                    images::Refused::Cancelled => {
                        run.emit(EventData::Cancelled {
                            running: "preparing the images".to_string(),
                        });
                        Outcome::Cancelled
                    }
                };
                self.conversation = conv;
                return outcome;
            }
        };
        let (blocked, context) = run.prompt_hooks(&prompt).await;
        let end = match blocked {
            Some(reason) => LoopEnd::Failed {
                kind: "hook",
                message: format!("a user_prompt_submit hook blocked the request: {reason}"),
            },
            None => {
                let shown = images.clone();
                conv.messages
                    .push(Message::user_with_images(prompt, images));
                conv.run_start = conv.messages.len() - 1;
                if run.orch.mode.get() == crate::event::Mode::Plan {
                    conv.messages.push(Message::system(mode::PLAN_PROMPT));
                }
                if !context.is_empty() {
                    conv.messages.push(Message::system(context.join("\n\n")));
                }
                conv.record(run.sink);
                if !shown.is_empty() {
                    // After the message line, so a replayed session puts the chips on its cell.
                    run.emit(EventData::ImagesAttached { images: shown });
                }
                run.run_loop(&mut conv).await
            }
        };
        conv.record(run.sink);
        run.checkpoint_end().await;
        run.orch.policies.end_turn();
        // Whatever is still on the stack (a cancel mid-workflow) leaves it now.
        let frames = run.orch.stack.clear(FrameState::Cancelled);
        run.popped(frames);
        let outcome = match end {
            LoopEnd::Answer {
                content,
                turns,
                error,
            } => {
                let error = error.map(|(kind, message)| {
                    run.error(kind, message.clone());
                    message
                });
                final_event(&mut run, content, turns, error)
            }
            LoopEnd::Failed { kind, message } => {
                run.error(kind, message.clone());
                Outcome::Failed(message)
            }
            LoopEnd::Cancelled { running } => {
                run.emit(EventData::Cancelled {
                    running: running.to_string(),
                });
                Outcome::Cancelled
            }
            LoopEnd::OverBudget { content, message } => {
                run.error("budget", message.clone());
                Outcome::OverBudget {
                    gathered: content,
                    message,
                }
            }
        };
        self.conversation = conv;
        outcome
    }
}

/// Emits `final` and returns the matching outcome.
fn final_event(run: &mut Run<'_>, content: String, turns: u32, error: Option<String>) -> Outcome {
    run.emit(EventData::Final {
        content: content.clone(),
        turns,
        usage: run.usage,
    });
    Outcome::Final { content, error }
}
