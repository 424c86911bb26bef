//! The application state and its update logic: orchestrator events and terminal input in,
//! [`Command`]s out. No terminal, no channels: tests drive it directly.

use std::collections::{BTreeMap, HashSet, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{
    KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseEvent, MouseEventKind,
};
use ratatui::layout::{Constraint, Layout, Position, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Widget};

use super::commands::{self, CallRecord, SlashCommand, ToolInfo};
use super::layout::{self, Focus};
use super::theme::Theme;
use super::views::approval::{self, ApprovalState, Pending};
use super::views::chat::{ChatState, NoticeKind};
use super::views::composer::Composer;
use super::views::help::Help;
use super::views::input::{self, InputState};
use super::views::stack::StackState;
use super::views::status::{Activity, Status};
use super::views::timeline::TimelineState;
use crate::conversation::Usage;
use crate::event::{Decision, Event, EventData, InputKind, InputRequest, Scope};
use crate::orchestrator::task::Op;

/// A second Ctrl-C within this long quits.
pub const QUIT_WINDOW: Duration = Duration::from_secs(2);
/// How long a flash message replaces the key hints.
const FLASH_FOR: Duration = Duration::from_secs(3);

/// What the TUI knows about its setup.
#[derive(Debug, Clone)]
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
}

/// A side effect the event loop carries out.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// Send this to the orchestrator.
    Op(Op),
    /// Leave the TUI.
    Quit,
}

/// The whole UI state.
pub struct App {
    info: AppInfo,
    theme: Theme,
    focus: Focus,
    /// The chat pane.
    pub chat: ChatState,
    composer: Composer,
    /// The tool stack pane.
    pub stack: StackState,
    /// The timeline pane.
    pub timeline: TimelineState,
    approval: ApprovalState,
    input: InputState,
    help: Option<Help>,
    activity: Activity,
    activity_since: Instant,
    current_run: Option<Arc<str>>,
    busy: bool,
    turn: u32,
    /// Tool results still to come before the model is called again.
    results_due: usize,
    /// Nested calls still running: their results do not count toward `results_due`.
    nested: HashSet<String>,
    tokens: Usage,
    queued: VecDeque<String>,
    last_ctrl_c: Option<Instant>,
    flash: Option<(String, Instant)>,
    quit: bool,
    original_request: Option<String>,
    calls: Vec<CallRecord>,
    grants: BTreeMap<String, Scope>,
    panes: Option<layout::Panes>,
}

impl App {
    /// A fresh UI that greets the user and says which provider it talks to.
    pub fn new(info: AppInfo, now: Instant) -> Self {
        let mut chat = ChatState::new();
        let why = match &info.auto_reason {
            Some(reason) => format!(" (picked automatically: {reason})"),
            None => String::new(),
        };
        chat.push_notice(
            NoticeKind::Info,
            format!(
                "**Welcome to taco.** Talking to `{}` with model `{}`{why} in `{}`.\n\nType a request and press Enter. `?` shows every key, `/help` every command.",
                info.provider, info.model, info.workdir
            ),
        );
        Self {
            info,
            theme: Theme::default(),
            focus: Focus::Chat,
            chat,
            composer: Composer::new(),
            stack: StackState::new(),
            timeline: TimelineState::new(),
            approval: ApprovalState::new(),
            input: InputState::new(),
            help: None,
            activity: Activity::Idle,
            activity_since: now,
            current_run: None,
            busy: false,
            turn: 0,
            results_due: 0,
            nested: HashSet::new(),
            tokens: Usage::default(),
            queued: VecDeque::new(),
            last_ctrl_c: None,
            flash: None,
            quit: false,
            original_request: None,
            calls: Vec::new(),
            grants: BTreeMap::new(),
            panes: None,
        }
    }

    /// Whether the user asked to leave.
    pub fn should_quit(&self) -> bool {
        self.quit
    }

    /// The focused pane.
    pub fn focus(&self) -> Focus {
        self.focus
    }

    /// What the status line says is happening.
    pub fn activity(&self) -> Activity {
        self.activity
    }

    /// Whether a request is running.
    pub fn is_busy(&self) -> bool {
        self.busy
    }

    /// Prompts waiting for the running request to end.
    pub fn queued(&self) -> impl Iterator<Item = &str> {
        self.queued.iter().map(String::as_str)
    }

    /// The text in the composer.
    pub fn composer_text(&self) -> String {
        self.composer.text()
    }

    /// Whether the approval dialog shows.
    pub fn approval_open(&self) -> bool {
        self.approval.is_open()
    }

    /// Whether the question dialog shows (a missing parameter or the depth limit).
    pub fn question_open(&self) -> bool {
        self.input.is_open()
    }

    /// The question the dialog shows now.
    pub fn question(&self) -> Option<&InputRequest> {
        self.input.current()
    }

    /// Whether the question dialog asks "Continue with current task?".
    pub fn question_confirming(&self) -> bool {
        self.input.is_confirming()
    }

    /// Whether the help overlay shows.
    pub fn help_open(&self) -> bool {
        self.help.is_some()
    }

    /// Whether something moves on screen by itself (spinner, elapsed times, fading frames).
    pub fn needs_tick(&self, now: Instant) -> bool {
        self.busy
            || self.stack.is_animating(now)
            || self
                .flash
                .as_ref()
                .is_some_and(|(_, at)| now.duration_since(*at) < FLASH_FOR)
    }

    /// Says what is happening; while a dialog is open the run waits for the user, whatever
    /// else goes on.
    fn set_activity(&mut self, activity: Activity, now: Instant) {
        let activity = if self.approval.is_open() {
            Activity::AwaitingApproval
        } else if self.input.is_open() {
            Activity::AwaitingInput
        } else {
            activity
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
        self.timeline.on_event(event);
        self.stack.on_event(event, now);
        self.chat.on_event(event);
        match &event.data {
            EventData::RunStarted { .. } => {
                self.current_run = Some(Arc::clone(&event.request_id));
                self.busy = true;
                self.turn = 1;
                self.set_activity(Activity::Streaming, now);
            }
            EventData::Delta { .. } => self.set_activity(Activity::Streaming, now),
            EventData::LlmCall(call) => {
                // A sub-agent's turns are its own: only the top-level agent's count here.
                if call.parent.is_none() {
                    self.turn = call.turn.min(self.info.max_turns);
                    self.results_due = call.tool_calls.len();
                }
                self.tokens.add(call.usage);
            }
            EventData::ToolCall { id, parent, .. } => {
                if parent.is_some() {
                    self.nested.insert(id.clone());
                }
                self.set_activity(Activity::RunningTool, now);
            }
            EventData::InputRequested(request) => {
                self.input.push(request.clone());
                self.set_activity(Activity::AwaitingInput, now);
            }
            EventData::InputAnswered { id, .. } => {
                self.input.remove(id);
                self.set_activity(Activity::RunningTool, now);
            }
            EventData::ApprovalRequested {
                id,
                name,
                arguments,
                position,
                of,
            } => {
                self.approval.push(Pending {
                    id: id.clone(),
                    name: name.clone(),
                    arguments: arguments.clone(),
                    position: *position,
                    of: *of,
                    lead: self.chat.last_assistant_text().map(String::from),
                });
                self.set_activity(Activity::AwaitingApproval, now);
            }
            EventData::ApprovalDecided {
                id,
                name,
                decision,
                scope,
                ..
            } => {
                self.approval.remove(id);
                if *decision == Decision::Approved && *scope != Scope::Once {
                    self.grants.insert(name.clone(), *scope);
                }
                self.set_activity(Activity::RunningTool, now);
            }
            EventData::ToolResult {
                name,
                ok,
                duration_ms,
                id,
                ..
            } => {
                let summary = self.stack_summary(id).unwrap_or_default();
                self.calls.push(CallRecord {
                    name: name.clone(),
                    ok: *ok,
                    duration_ms: *duration_ms,
                    summary,
                });
                // The last result of a batch means the model is called again: the next turn.
                if self.nested.remove(id) {
                    // A nested call's result goes to its tool or sub-agent, not the model.
                } else if self.results_due > 0 {
                    self.results_due -= 1;
                    if self.results_due == 0 {
                        self.turn = (self.turn + 1).min(self.info.max_turns);
                    }
                }
            }
            EventData::StackPop(_) if self.stack.live().is_empty() => {
                self.set_activity(Activity::Streaming, now);
            }
            // Only the end of the request we are waiting for ends it (a max-turns run
            // reports an error and then its final answer).
            EventData::Final { .. } | EventData::Cancelled { .. } | EventData::Error { .. }
                if self.current_run.as_ref() == Some(&event.request_id) =>
            {
                return self.end_run(now);
            }
            _ => {}
        }
        Vec::new()
    }

    fn stack_summary(&self, id: &str) -> Option<String> {
        self.stack
            .live()
            .into_iter()
            .find(|f| f.id == id)
            .map(|f| f.summary.clone())
    }

    fn end_run(&mut self, now: Instant) -> Vec<Command> {
        self.busy = false;
        self.current_run = None;
        self.approval.clear();
        self.input.clear();
        self.nested.clear();
        self.grants.retain(|_, scope| *scope == Scope::Session);
        self.set_activity(Activity::Idle, now);
        match self.queued.pop_front() {
            Some(next) => self.submit(next, now),
            None => Vec::new(),
        }
    }

    fn submit(&mut self, text: String, now: Instant) -> Vec<Command> {
        self.chat.push_user(&text);
        self.chat.scroll_to_bottom();
        self.original_request = Some(text.clone());
        self.busy = true;
        self.set_activity(Activity::Streaming, now);
        vec![Command::Op(Op::Submit(text))]
    }

    /// Takes a key press.
    pub fn on_key(&mut self, key: KeyEvent, now: Instant) -> Vec<Command> {
        if key.kind == KeyEventKind::Release {
            return Vec::new();
        }
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        if ctrl && key.code == KeyCode::Char('c') {
            return self.ctrl_c(now);
        }
        if let Some(help) = &mut self.help {
            match key.code {
                KeyCode::Esc | KeyCode::Enter | KeyCode::Char('q') | KeyCode::Char('?') => {
                    self.help = None
                }
                KeyCode::Up | KeyCode::Char('k') => help.scroll = help.scroll.saturating_sub(1),
                KeyCode::Down | KeyCode::Char('j') => help.scroll = help.scroll.saturating_add(1),
                KeyCode::PageUp => help.scroll = help.scroll.saturating_sub(10),
                KeyCode::PageDown => help.scroll = help.scroll.saturating_add(10),
                _ => {}
            }
            return Vec::new();
        }
        if self.approval.is_typing_reason() {
            return self.approval_key(key);
        }
        if self.input.is_open()
            && !self.approval.is_open()
            && !matches!(key.code, KeyCode::Tab | KeyCode::BackTab)
        {
            return self.question_key(key, ctrl);
        }
        match key.code {
            KeyCode::Tab if !ctrl => {
                if self.focus == Focus::Chat && self.try_complete(now) {
                    return Vec::new();
                }
                self.focus = self.focus.next();
                return Vec::new();
            }
            KeyCode::BackTab => {
                self.focus = self.focus.previous();
                return Vec::new();
            }
            _ => {}
        }
        let used = match self.focus {
            Focus::Timeline => self.timeline.on_key(key),
            Focus::Stack => self.stack.on_key(key),
            Focus::Chat => false,
        };
        if used {
            return Vec::new();
        }
        if self.approval.is_open() {
            let commands = self.approval_key(key);
            if !commands.is_empty()
                || !matches!(key.code, KeyCode::PageUp | KeyCode::PageDown | KeyCode::Esc)
            {
                // While the dialog is open, letters belong to it, not to the composer.
                return commands;
            }
        }
        match key.code {
            KeyCode::Esc => {
                if self.busy {
                    self.flash("cancelling…", now);
                    return vec![Command::Op(Op::Cancel)];
                }
                self.chat.scroll_to_bottom();
                return Vec::new();
            }
            KeyCode::PageUp => {
                self.chat.page_up();
                return Vec::new();
            }
            KeyCode::PageDown => {
                self.chat.page_down();
                return Vec::new();
            }
            KeyCode::End if self.composer.is_empty() => {
                self.chat.scroll_to_bottom();
                return Vec::new();
            }
            KeyCode::Char('o') if ctrl => {
                self.chat.toggle_details();
                return Vec::new();
            }
            _ => {}
        }
        if self.focus != Focus::Chat {
            // Typing anywhere goes to the composer.
            if matches!(key.code, KeyCode::Char(_)) && !ctrl {
                self.focus = Focus::Chat;
            } else {
                return Vec::new();
            }
        }
        match key.code {
            KeyCode::Char('?') if self.composer.is_empty() => {
                self.help = Some(Help::default());
                Vec::new()
            }
            KeyCode::Enter
                if key
                    .modifiers
                    .intersects(KeyModifiers::SHIFT | KeyModifiers::ALT) =>
            {
                self.composer.newline();
                Vec::new()
            }
            KeyCode::Char('j') if ctrl => {
                self.composer.newline();
                Vec::new()
            }
            KeyCode::Enter => self.send_composer(now),
            _ => {
                self.composer.input(key);
                Vec::new()
            }
        }
    }

    /// A key while the question dialog is open. Letters typed for a parameter go to it from
    /// any pane; otherwise the focused pane has the first say, then the dialog. Nothing
    /// reaches the composer: only chat scrolling and Ctrl-O still work.
    fn question_key(&mut self, key: KeyEvent, ctrl: bool) -> Vec<Command> {
        let typing = self
            .input
            .current()
            .is_some_and(|q| q.kind == InputKind::Parameter);
        let letter = matches!(key.code, KeyCode::Char(_)) && !ctrl;
        if typing && letter {
            self.focus = Focus::Chat;
        }
        let used = match self.focus {
            Focus::Timeline => self.timeline.on_key(key),
            Focus::Stack => self.stack.on_key(key),
            Focus::Chat => false,
        };
        if used {
            return Vec::new();
        }
        match self.input.on_key(key) {
            input::Outcome::Answered(id, value) => {
                return vec![Command::Op(Op::Answer { id, value })];
            }
            input::Outcome::Used => return Vec::new(),
            input::Outcome::Ignored => {}
        }
        match key.code {
            KeyCode::PageUp => self.chat.page_up(),
            KeyCode::PageDown => self.chat.page_down(),
            KeyCode::Char('o') if ctrl => self.chat.toggle_details(),
            _ => {}
        }
        Vec::new()
    }

    fn approval_key(&mut self, key: KeyEvent) -> Vec<Command> {
        match self.approval.on_key(key) {
            approval::Outcome::Decided(decided) => decided
                .into_iter()
                .map(|(id, answer)| Command::Op(Op::Approve { id, answer }))
                .collect(),
            approval::Outcome::Used | approval::Outcome::Ignored => Vec::new(),
        }
    }

    fn ctrl_c(&mut self, now: Instant) -> Vec<Command> {
        if self
            .last_ctrl_c
            .is_some_and(|at| now.duration_since(at) <= QUIT_WINDOW)
        {
            self.quit = true;
            return vec![Command::Quit];
        }
        self.last_ctrl_c = Some(now);
        if self.busy {
            self.flash("cancelled · Ctrl-C again to quit", now);
            vec![Command::Op(Op::Cancel)]
        } else {
            self.flash("Ctrl-C again to quit", now);
            Vec::new()
        }
    }

    fn try_complete(&mut self, now: Instant) -> bool {
        let text = self.composer.text();
        if !text.starts_with('/') || text.contains(char::is_whitespace) {
            return false;
        }
        match commands::complete(&text) {
            Ok(done) => self.composer.set_text(&done),
            Err(candidates) if candidates.is_empty() => self.flash("no such command", now),
            Err(candidates) => self.flash(candidates.join("  "), now),
        }
        true
    }

    fn send_composer(&mut self, now: Instant) -> Vec<Command> {
        if self.composer.text().trim().is_empty() {
            return Vec::new();
        }
        let text = self.composer.take();
        if text.starts_with('/') {
            return self.run_command(&text, now);
        }
        if self.busy {
            self.queued.push_back(text);
            self.flash("queued: it is sent when the running request ends", now);
            return Vec::new();
        }
        self.submit(text, now)
    }

    fn run_command(&mut self, text: &str, now: Instant) -> Vec<Command> {
        match commands::parse(text) {
            SlashCommand::Help => self.help = Some(Help::default()),
            SlashCommand::Tools => {
                let text = commands::tools_text(&self.info.tools, &self.grants);
                self.chat.push_notice(NoticeKind::Info, text);
            }
            SlashCommand::Tool(name) => {
                let text = match self.info.tools.iter().find(|t| t.name == name) {
                    Some(tool) => commands::tool_text(tool, &self.calls),
                    None => {
                        let names: Vec<&str> =
                            self.info.tools.iter().map(|t| t.name.as_str()).collect();
                        let what = if name.is_empty() {
                            "which tool?".to_string()
                        } else {
                            format!("no tool named `{name}`.")
                        };
                        format!("{what} Tools: {}", names.join(", "))
                    }
                };
                self.chat.push_notice(NoticeKind::Info, text);
            }
            SlashCommand::Status => {
                let frames: Vec<_> = (self.stack.live_tree().into_iter())
                    .map(|(level, f)| (level, f.clone(), self.stack.elapsed_ms(&f.id, now)))
                    .collect();
                let text = commands::status_text(&commands::StatusView {
                    frames: &frames,
                    request: self.original_request.as_deref(),
                    turn: self.turn,
                    max_turns: self.info.max_turns,
                    activity: self.activity.label(),
                    depth: self.stack.depth(),
                    question: self.input.current().map(|q| q.prompt.as_str()),
                });
                self.chat.push_notice(NoticeKind::Info, text);
            }
            SlashCommand::Cancel => {
                if self.busy {
                    self.flash("cancelling…", now);
                    return vec![Command::Op(Op::Cancel)];
                }
                self.chat
                    .push_notice(NoticeKind::Info, "Nothing is running.");
            }
            SlashCommand::Clear => {
                self.chat.clear();
                self.timeline.clear();
                self.stack.clear();
                self.queued.clear();
                self.original_request = None;
                self.turn = 0;
                self.chat.push_notice(NoticeKind::Info, "New conversation.");
                let mut commands = Vec::new();
                if self.busy {
                    commands.push(Command::Op(Op::Cancel));
                }
                commands.push(Command::Op(Op::Clear));
                return commands;
            }
            SlashCommand::Quit => {
                self.quit = true;
                return vec![Command::Quit];
            }
            SlashCommand::Unknown(name) => self
                .chat
                .push_notice(NoticeKind::Warn, commands::unknown_hint(&name)),
        }
        Vec::new()
    }

    /// Takes pasted text (bracketed paste): it goes into whatever is being typed, never sent.
    pub fn on_paste(&mut self, text: &str) {
        if !self.approval.is_open() && self.input.on_paste(text) {
            self.focus = Focus::Chat;
            return;
        }
        if self.input.is_open() && !self.approval.is_typing_reason() {
            // A question that takes no text: the paste must not land in the composer.
            return;
        }
        if self.approval.is_typing_reason() {
            for c in text.chars().filter(|c| !c.is_control()) {
                self.approval
                    .on_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
            }
            return;
        }
        self.focus = Focus::Chat;
        self.composer.paste(text);
    }

    /// Takes a mouse event: the wheel scrolls the pane under the pointer.
    pub fn on_mouse(&mut self, mouse: MouseEvent) {
        let up = match mouse.kind {
            MouseEventKind::ScrollUp => true,
            MouseEventKind::ScrollDown => false,
            _ => return,
        };
        let at = Position::new(mouse.column, mouse.row);
        let over_timeline = self
            .panes
            .and_then(|p| p.timeline)
            .is_some_and(|r| r.contains(at));
        if over_timeline {
            let code = if up { KeyCode::Up } else { KeyCode::Down };
            self.timeline
                .on_key(KeyEvent::new(code, KeyModifiers::NONE));
        } else if up {
            self.chat.scroll_up(3);
        } else {
            self.chat.scroll_down(3);
        }
    }

    /// Key hints for the focused pane.
    fn hints(&self) -> &'static [(&'static str, &'static str)] {
        if self.approval.is_open() && self.focus == Focus::Chat {
            return &[("y/t/a", "approve"), ("n", "deny"), ("Tab", "panes")];
        }
        if self.input.is_open() && self.focus == Focus::Chat {
            return self.input.hints();
        }
        match self.focus {
            Focus::Chat if self.busy => &[
                ("Esc", "cancel"),
                ("PgUp/PgDn", "scroll"),
                ("Tab", "panes"),
                ("?", "help"),
            ],
            Focus::Chat => &[
                ("Enter", "send"),
                ("PgUp/PgDn", "scroll"),
                ("Tab", "panes"),
                ("?", "help"),
            ],
            Focus::Stack => &[("↑↓", "scroll"), ("Tab", "next pane")],
            Focus::Timeline => &[
                ("↑↓", "select"),
                ("Enter", "details"),
                ("f", "filter"),
                ("Tab", "next pane"),
            ],
        }
    }

    /// Draws the whole screen.
    pub fn render(&mut self, area: Rect, buf: &mut Buffer, now: Instant) {
        if self
            .flash
            .as_ref()
            .is_some_and(|(_, at)| now.duration_since(*at) >= FLASH_FOR)
        {
            self.flash = None;
        }
        let panes = layout::panes(area, self.focus);
        self.panes = Some(panes);
        let theme = self.theme;
        if let Some(rect) = panes.chat {
            self.render_chat(rect, buf, now);
        }
        if let Some(rect) = panes.stack {
            let depth = self.stack.depth();
            let title = if depth > 0 {
                format!(" tool stack · depth {depth} ")
            } else {
                " tool stack ".to_string()
            };
            let inner = pane(rect, buf, &theme, &title, self.focus == Focus::Stack);
            self.stack
                .render(inner, buf, &theme, now, self.focus == Focus::Stack);
        }
        if let Some(rect) = panes.timeline {
            let title = format!(" timeline · {} ", self.timeline.filter_label());
            let inner = pane(rect, buf, &theme, &title, self.focus == Focus::Timeline);
            self.timeline
                .render(inner, buf, &theme, self.focus == Focus::Timeline);
        }
        let status = Status {
            provider: &self.info.provider,
            model: &self.info.model,
            auto: self.info.auto_reason.as_deref(),
            turn: self.turn,
            max_turns: self.info.max_turns,
            tokens_in: self.tokens.input_tokens,
            tokens_out: self.tokens.output_tokens,
            activity: self.activity,
            elapsed_ms: now.duration_since(self.activity_since).as_millis(),
            queued: self.queued.len(),
            flash: self.flash.as_ref().map(|(text, _)| text.as_str()),
            hints: self.hints(),
        };
        status.render(panes.status, buf, &theme);
        if let Some(help) = &self.help {
            help.render(area, buf, &theme);
        }
    }

    fn render_chat(&mut self, rect: Rect, buf: &mut Buffer, now: Instant) {
        let theme = self.theme;
        let focused = self.focus == Focus::Chat;
        let title = if self.chat.is_following() {
            " chat ".to_string()
        } else {
            " chat · scrolled ".to_string()
        };
        let inner = pane(rect, buf, &theme, &title, focused);
        let composer_rows = self.composer.rows() + 1;
        // One dialog at a time: approvals first, since the run cannot go on without them.
        let tree = self.stack.live_tree();
        let wanted = if self.approval.is_open() {
            self.approval.wanted_rows(inner.width)
        } else {
            self.input.wanted_rows(inner.width, tree.len())
        };
        let dialog_rows = if wanted > 0 {
            wanted.min(inner.height.saturating_mul(3) / 5).max(5)
        } else {
            0
        };
        let [messages, dialog, composer] = Layout::vertical([
            Constraint::Min(1),
            Constraint::Length(dialog_rows),
            Constraint::Length(composer_rows),
        ])
        .areas(inner);
        self.chat.render(messages, buf, &theme, now);
        if dialog.height > 0 {
            if self.approval.is_open() {
                self.approval.render(dialog, buf, &theme);
            } else {
                self.input.render(dialog, buf, &theme, &tree);
            }
        }
        if composer.height > 0 {
            let rule = Rect {
                height: 1,
                ..composer
            };
            let label = if self.busy {
                " queue a message "
            } else {
                " message "
            };
            Line::from(vec![
                Span::styled("─".repeat(2), theme.border),
                Span::styled(label, theme.dim),
                Span::styled("─".repeat(rule.width as usize), theme.border),
            ])
            .render(rule, buf);
            let editor = Rect {
                y: composer.y + 1,
                height: composer.height - 1,
                ..composer
            };
            let dialog_open = self.approval.is_open() || self.input.is_open();
            let placeholder = if self.approval.is_open() {
                "answer the approval above (y / t / a / n)"
            } else if self.input.is_open() {
                "answer the question above"
            } else if self.busy {
                "type to queue a message · Esc cancels"
            } else {
                "ask taco to do something · Enter sends · ? help"
            };
            self.composer
                .render(editor, buf, &theme, focused && !dialog_open, placeholder);
        }
    }
}

/// Draws a pane's border and title; returns the inside.
fn pane(rect: Rect, buf: &mut Buffer, theme: &Theme, title: &str, focused: bool) -> Rect {
    let border = if focused {
        theme.border_focused
    } else {
        theme.border
    };
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(border)
        .title(Span::styled(
            title.to_string(),
            if focused {
                theme.title.patch(theme.border_focused)
            } else {
                theme.title
            },
        ));
    let inner = block.inner(rect);
    block.render(rect, buf);
    inner
}
