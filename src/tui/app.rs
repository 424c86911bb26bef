//! The application state and its update logic: orchestrator events and terminal input in,
//! [`Command`]s out. No terminal, no channels: tests drive it directly.

use std::time::{Duration, Instant};

use super::commands::{CallRecord, ToolInfo};
use super::layout::{self, Focus};
use super::overlay::{ApprovalDialog, FormDialog, OverlayStack, QuestionDialog};
use super::theme::Theme;
use super::views::approval::Pending;
use super::views::chat::{ChatState, NoticeKind};
use super::views::composer::Composer;
use super::views::stack::StackState;
use super::views::status::Activity;
use super::views::timeline::TimelineState;
use crate::event::{Event, EventData, InputKind};
use crate::history::PromptLog;
use crate::orchestrator::approval::ApprovalRequest;
use crate::orchestrator::task::Op;
use crate::run_model::RunModel;

/// A second Ctrl-C within this long quits.
pub const QUIT_WINDOW: Duration = Duration::from_secs(2);
/// How long a flash message replaces the key hints.
const FLASH_FOR: Duration = Duration::from_secs(3);

/// What the TUI knows about its setup.
#[derive(Debug, Clone, Default)]
pub struct AppInfo {
    /// Provider name.
    pub provider: String,
    /// Model id.
    pub model: String,
    /// Why the provider was auto-selected, if it was.
    pub auto_reason: Option<String>,
    /// Turn limit.
    pub max_turns: u32,
    /// The workspace.
    pub workdir: String,
    /// The tools offered to the model.
    pub tools: Vec<ToolInfo>,
    /// The quiet after the last typed key before a dialog takes keys by itself (zero: at
    /// once, unless a message is unsent; see `app/guard.rs`).
    pub dialog_guard: Duration,
    /// The MCP servers (`/mcp`, `/tools`); `None` when viewing a saved trace.
    pub mcp: Option<std::sync::Arc<crate::mcp::McpHub>>,
    /// The project instructions in the system prompt (the welcome line, `/status`).
    pub instructions: crate::instructions::Instructions,
    /// What model calls cost (the status line, timeline rows).
    pub pricing: crate::config::pricing::Pricing,
    /// When the stack flags a call as slow or quiet (`[tui] slow_after_secs`,
    /// `quiet_after_secs`).
    pub stack_flags: super::views::stack::FlagSettings,
    /// Known key values, masked in what `y` copies to the clipboard.
    pub secrets: std::sync::Arc<crate::secrets::Secrets>,
    /// The providers `/model` and `/provider` offer (none: no switching).
    pub providers: Vec<crate::orchestrator::switch::ProviderModels>,
    /// Tokens by model of a resumed session's part that was not read.
    pub earlier_usage: std::collections::BTreeMap<String, crate::conversation::Usage>,
    /// That part, read when the user scrolls back to it.
    pub earlier: Option<crate::startup::Earlier>,
    /// The sandbox shell commands run in (the status line, `/status`); `None` when viewing a
    /// saved trace.
    pub sandbox: Option<crate::sandbox::Sandbox>,
    /// The configured approval rules, one line each (`/tools`).
    pub rules: Vec<String>,
    /// What was withheld from the environment, by name (`/status`); empty when viewing a
    /// saved trace.
    pub environment: String,
    /// Where spans are exported (`[otel]`), in words for `/status`; `None`: nowhere.
    pub otel: Option<String>,
    /// The workspace's checkpoint store (`/status` measures it), or why checkpoints are
    /// off; `None` when viewing a saved trace.
    pub checkpoints: Option<Result<std::sync::Arc<crate::checkpoint::Store>, String>>,
    /// The user's custom commands (`<config dir>/taco/commands`); `None`: only the
    /// workspace's `.taco/commands/` are read.
    pub user_commands: Option<std::path::PathBuf>,
    /// The config's external agents (`[agents.NAME]`), for `/agent`.
    pub agents: Vec<String>,
    /// The external agent this screen drives; `None`: taco's own loop.
    pub driving: Option<String>,
    /// Where the session is being recorded (the panes let go of older runs and read them
    /// back from it); `None`: not recorded, the panes keep everything.
    pub session: Option<crate::recorder::Locator>,
}

/// A side effect the event loop carries out.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// Send this to the orchestrator.
    Op(Op),
    /// Leave the TUI.
    Quit,
    /// Write this clipboard copy (OSC 52) to the terminal.
    Copy(super::clipboard::Osc52),
    /// Leave this session for the saved one with this id (`/resume`), in place.
    Resume(String),
    /// Leave this screen for one driven by this external agent (`None`: taco's own loop),
    /// in place (`/agent`).
    Agent(Option<String>),
    /// Read the runs of the session file before this point, then give them to
    /// [`App::prepend_earlier`].
    LoadEarlier(crate::startup::Earlier),
    /// Read the end of this session file, then give it to [`App::trimmed`].
    Trim(std::path::PathBuf),
    /// Write this notification (the bell, OSC 9 or 777) to the terminal: something waits
    /// for a user who looks elsewhere.
    Notify(super::notify::Escapes),
    /// Log in to this MCP server with OAuth (`/mcp login NAME`), in the background.
    McpLogin(String),
    /// Measure this checkpoint store's size on disk off the UI thread, then give it to
    /// [`App::on_checkpoints_measured`] (`/status`).
    MeasureCheckpoints(rewind::Measure),
    /// Fetch this from the MCP servers ([`McpFetch::run`]), then give it to
    /// [`App::on_mcp_fetched`].
    Mcp(McpFetch),
}

/// The whole UI state.
pub struct App {
    info: AppInfo,
    theme: Theme,
    focus: Focus,
    /// The focused pane has been used (a navigation key, a click) since it got the focus:
    /// its letter keys act (`keys.rs`, `focus_on`).
    pane_used: bool,
    /// The chat pane.
    pub chat: ChatState,
    composer: Composer,
    /// The tool stack pane.
    pub stack: StackState,
    /// The timeline pane.
    pub timeline: TimelineState,
    /// Dialogs and views over the panes; the one owner of "is a dialog open".
    overlays: OverlayStack,
    activity: Activity,
    activity_since: Instant,
    /// What the event stream says about the run: call tree, turn, tokens, grants.
    run: RunModel,
    /// A request was sent and its run has not ended (set before `run_started` arrives).
    busy: bool,
    /// A `/compact` the user asked for is running (it ends with its `compacted` event).
    compacting: bool,
    /// A `/compact` asked for while a request ran: done when it ends, before queued prompts.
    compact_after: bool,
    last_ctrl_c: Option<Instant>,
    flash: Option<(String, Instant)>,
    quit: bool,
    original_request: Option<String>,
    calls: Vec<CallRecord>,
    panes: Option<layout::Panes>,
    /// A saved trace is on screen: nothing can be sent.
    read_only: bool,
    /// Keeps typing meant for the composer from answering a dialog.
    guard: guard::DialogGuard,
    /// Where sent prompts are kept for later launches; `None` keeps them in memory only.
    prompt_log: Option<PromptLog>,
    /// How a copy reaches the terminal (through tmux or not).
    clipboard: super::clipboard::Route,
    /// When to call the user back, and how.
    notifier: super::notify::Notifier,
    /// What tmux last said about taco's pane (inside tmux).
    tmux: Option<super::tmux::PaneState>,
    /// Where the chat's messages and its docked dialog were drawn, for the mouse.
    areas: mouse::Areas,
    /// The part of a resumed session not read yet.
    earlier: Option<crate::startup::Earlier>,
    /// It is being read.
    loading_earlier: bool,
    /// The chat cell a resume's replay began at (earlier runs go before it).
    history_at: usize,
    /// A saved session is being replayed: its user messages come from its message lines.
    replaying: bool,
    /// The latest event's time (Unix ms) and when it arrived: the wall clock `/tools` ages
    /// grants by.
    wall: Option<(u64, Instant)>,
    /// The MCP catalogs' generation the composer last took.
    mcp_seen: Option<u64>,
    /// What an MCP fetch in flight was for (`app/mcp.rs`); `None` when none is, or it was
    /// cancelled (what it brings is then dropped).
    fetching: Option<String>,
    /// The custom commands as last read (`app/custom.rs`).
    custom: crate::custom_commands::CustomCommands,
    /// The `!` command running (`app/bang.rs`).
    user_shell: Option<String>,
    /// When the panes let go of older runs (`app/trim.rs`).
    trim: trim::Trim,
}

impl App {
    /// A fresh UI that greets the user and says which provider it talks to.
    pub fn new(info: AppInfo, now: Instant) -> Self {
        let mut chat = ChatState::new();
        let why = match &info.auto_reason {
            Some(reason) => format!(" (picked automatically: {reason})"),
            None => String::new(),
        };
        // Said only when there is something to say, so a project without them greets as before.
        let instructions = if info.instructions.is_empty() {
            String::new()
        } else {
            format!(
                "\n\n{}",
                super::commands::instructions_text(&info.instructions)
            )
        };
        chat.push_notice(
            NoticeKind::Info,
            format!(
                "**Welcome to taco.** Talking to `{}` with model `{}`{why} in `{}`.{instructions}\n\nType a request and press Enter. `?` shows every key, `/help` every command.",
                info.provider, info.model, info.workdir
            ),
        );
        let mut timeline = TimelineState::new();
        timeline.pricing = info.pricing.clone();
        let mut stack = StackState::new();
        stack.flags.settings = info.stack_flags.clone();
        let mut composer = Composer::new();
        // `@` lists and attaches the workspace's files.
        composer.set_workspace((!info.workdir.is_empty()).then(|| info.workdir.clone().into()));
        let earlier = info.earlier.clone();
        let mut app = Self {
            guard: guard::DialogGuard::new(info.dialog_guard),
            info,
            theme: Theme::default(),
            focus: Focus::Chat,
            pane_used: false,
            chat,
            composer,
            stack,
            timeline,
            overlays: OverlayStack::new(),
            activity: Activity::Idle,
            activity_since: now,
            run: RunModel::new(),
            busy: false,
            compacting: false,
            compact_after: false,
            last_ctrl_c: None,
            flash: None,
            quit: false,
            original_request: None,
            calls: Vec::new(),
            panes: None,
            read_only: false,
            prompt_log: None,
            clipboard: Default::default(),
            notifier: Default::default(),
            tmux: None,
            areas: Default::default(),
            earlier,
            loading_earlier: false,
            history_at: 0,
            replaying: false,
            wall: None,
            mcp_seen: None,
            fetching: None,
            custom: Default::default(),
            user_shell: None,
            trim: Default::default(),
        };
        app.reload_custom();
        app
    }

    /// Starts the composer's history with `entries` (oldest first, from earlier launches);
    /// prompts sent from now on are appended to `log`.
    pub fn set_prompt_history(&mut self, entries: Vec<String>, log: Option<PromptLog>) {
        self.composer.set_history(entries);
        self.prompt_log = log;
    }

    /// Takes what is happening from the run model (a compaction the app asked for, or a
    /// request sent whose run has not started, are the app's own); the status line's clock
    /// restarts when it changes.
    fn sync_activity(&mut self, now: Instant) {
        let activity = if self.compacting {
            Activity::Compacting
        } else if self.run.is_running() {
            self.run.activity()
        } else if self.user_shell.is_some() {
            Activity::RunningTool
        } else if self.busy {
            Activity::Streaming
        } else {
            Activity::Idle
        };
        if self.activity != activity {
            self.activity = activity;
            self.activity_since = now;
        }
    }

    fn flash(&mut self, text: impl Into<String>, now: Instant) {
        self.flash = Some((text.into(), now));
    }

    /// Takes one orchestrator event.
    pub fn on_event(&mut self, event: &Event, now: Instant) -> Vec<Command> {
        let mut commands = self.take_event(event, now);
        commands.extend(self.want_trim());
        // A `✎ N files changed` cell that came while details are expanded shows its diffs.
        commands.extend(self.ask_changes());
        self.sync_activity(now);
        self.sync_guard(now);
        commands.extend(self.notice_dialog());
        commands
    }

    /// Tells the guard which dialog is on screen (the top one the guard watches).
    pub(super) fn sync_guard(&mut self, now: Instant) {
        let draft = !self.composer.is_empty();
        self.guard.show(self.overlays.guard_id(), now, draft);
    }

    fn take_event(&mut self, event: &Event, now: Instant) -> Vec<Command> {
        // The run model first: the views read nesting and questions from it.
        let ended = self.run.apply(event);
        self.count_for_trim(event);
        self.switch_event(event);
        self.timeline.on_event(event, &self.run);
        self.stack.follow(event, &self.run, now);
        self.chat.on_event_at(event, &self.run, now);
        self.refresh_tools(event, now);
        // A call that left the stack undecided (its sub-agent was cancelled) asks no more.
        if let EventData::StackPop(frame) = &event.data {
            self.overlays
                .update(|dialog: &mut ApprovalDialog| dialog.remove(&frame.id));
        }
        if let Some(commands) = self.bang_ended(event, now) {
            return commands;
        }
        match &event.data {
            EventData::RunStarted { .. } => self.busy = true,
            EventData::InputRequested(request) if request.kind == InputKind::Form => {
                let request = request.clone();
                self.overlays
                    .upsert(FormDialog::new, |dialog| _ = dialog.push(request));
                self.overlays.prune();
            }
            EventData::InputRequested(request) => {
                let request = request.clone();
                self.overlays
                    .upsert(QuestionDialog::new, |dialog| dialog.push(request));
            }
            // Images refused before sending: the text goes back to the composer to be sent
            // again without them (nothing was sent).
            EventData::Error { kind, .. } if kind == "image" && !self.replaying => {
                if let (true, Some(text)) = (self.composer.is_empty(), &self.original_request) {
                    self.composer.set_text(text);
                }
            }
            // The reply that was a new request is the user's next message.
            EventData::WorkflowAbandoned(abandoned) if !self.replaying => {
                self.chat.push_user(&abandoned.request);
                self.original_request = Some(abandoned.request.clone());
            }
            EventData::InputAnswered { id, .. } => {
                self.overlays
                    .update(|dialog: &mut QuestionDialog| dialog.remove(id));
                self.overlays
                    .update(|dialog: &mut FormDialog| dialog.remove(id));
            }
            EventData::ApprovalRequested {
                id,
                name,
                arguments,
                position,
                of,
                note,
                diff,
                sandbox,
            } => {
                // A sub-agent's call: its own words led to it, not the parent's.
                let (lead, from) = match self.stack.sub_agent(id) {
                    Some(agent) => (agent.said, Some(agent.from)),
                    None => (self.chat.last_assistant_text().map(String::from), None),
                };
                let pending = Pending {
                    call: ApprovalRequest {
                        id: id.clone(),
                        name: name.clone(),
                        arguments: arguments.clone(),
                        sandbox: *sandbox,
                    },
                    position: *position,
                    of: *of,
                    lead,
                    from,
                    note: note.clone(),
                    diff: diff.clone(),
                };
                self.overlays
                    .upsert(ApprovalDialog::new, |dialog| dialog.push(pending));
            }
            EventData::ApprovalDecided { id, .. } => {
                self.overlays
                    .update(|dialog: &mut ApprovalDialog| dialog.remove(id));
            }
            EventData::ToolResult {
                name,
                duration_ms,
                id,
                ..
            } => {
                // How it ended, how long it ran and what it was asked are the run model's.
                let call = self.run.call(id);
                self.calls.push(CallRecord {
                    name: name.clone(),
                    ok: call.is_none_or(|c| !c.state.is_problem()),
                    duration_ms: call.and_then(|c| c.duration_ms).unwrap_or(*duration_ms),
                    summary: call.map(|c| c.summary.clone()).unwrap_or_default(),
                });
            }
            EventData::Compacted(c)
                if self.compacting && c.trigger == crate::event::CompactTrigger::Manual =>
            {
                self.compacting = false;
                return self.end_run(now);
            }
            _ => {}
        }
        // Only the end of the request we are waiting for ends it (a max-turns run reports an
        // error and then its final answer); the run model knows which that is.
        if ended {
            let mut commands: Vec<Command> = self.notice_run_end(&event.data).into_iter().collect();
            commands.extend(self.end_run(now));
            return commands;
        }
        Vec::new()
    }

    fn end_run(&mut self, now: Instant) -> Vec<Command> {
        self.busy = false;
        self.overlays.end_run();
        self.sync_activity(now);
        if std::mem::take(&mut self.compact_after) {
            return self.start_compaction(now);
        }
        match self.composer.next_queued() {
            Some(next) => self.submit(next, now),
            None => Vec::new(),
        }
    }

    /// Compacts the conversation now (`/compact` when idle): busy until its `compacted`
    /// event, so Esc cancels it and prompts typed meanwhile wait for it.
    fn start_compaction(&mut self, now: Instant) -> Vec<Command> {
        self.chat
            .push_notice(NoticeKind::Info, "Compacting the conversation…");
        self.busy = true;
        self.compacting = true;
        self.sync_activity(now);
        vec![Command::Op(Op::Compact)]
    }

    fn submit(&mut self, text: String, now: Instant) -> Vec<Command> {
        // Big pastes show as the chips they were in the composer.
        let shown = self.composer.shown(&text);
        self.chat.push_user_shown(&text, shown);
        self.chat.scroll_to_bottom();
        self.original_request = Some(text.clone());
        self.busy = true;
        self.sync_activity(now);
        vec![Command::Op(Op::Submit(text))]
    }
}

mod agent;
mod bang;
mod copy;
mod custom;
mod earlier;
mod trim;
pub use trim::{KEEP_ENTRIES as TRIM_KEEP_ENTRIES, TRIM_AFTER};
mod grants;
mod guard;
mod keys;
mod mcp;
mod mouse;
mod notice;
mod query;
mod render;
mod replay;
mod rewind;
mod slash;
mod switch;

pub use mcp::{McpFetch, McpFetched};
pub use rewind::Measure;
