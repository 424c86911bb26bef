//! Keys, paste and mouse: what terminal input does to the app, dialogs first.

use std::time::Instant;

use ratatui::crossterm::event::{
    KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseEvent, MouseEventKind,
};
use ratatui::layout::Position;

use super::{App, Command, QUIT_WINDOW};
use crate::conversation::Usage;
use crate::event::InputKind;
use crate::orchestrator::task::Op;
use crate::tui::commands::{self, SlashCommand};
use crate::tui::layout::Focus;
use crate::tui::views::approval;
use crate::tui::views::chat::NoticeKind;
use crate::tui::views::help::Help;
use crate::tui::views::input;

impl App {
    /// Takes a key press.
    pub fn on_key(&mut self, key: KeyEvent, now: Instant) -> Vec<Command> {
        if key.kind == KeyEventKind::Release {
            return Vec::new();
        }
        let commands = self.take_key(key, now);
        // An answer may bring up the next dialog, which starts guarded.
        self.sync_guard(now);
        commands
    }

    fn take_key(&mut self, key: KeyEvent, now: Instant) -> Vec<Command> {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        if ctrl && key.code == KeyCode::Char('c') {
            return self.ctrl_c(now);
        }
        let held = self.guard.holds(now, types(&key));
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
        if held {
            return self.held_key(key, ctrl, now);
        }
        if self.input.is_open()
            && !self.approval.is_open()
            && !matches!(key.code, KeyCode::Tab | KeyCode::BackTab)
        {
            return self.question_key(key, ctrl, now);
        }
        self.ladder(key, ctrl, now, true)
    }

    /// A key while a dialog that just opened is guarded: the user may still be typing
    /// something else, so the key goes where it would go without the dialog. Only scrolling
    /// the dialog works at once, and Esc does nothing (it would deny or abandon, and without
    /// the dialog cancel the run: neither was meant by someone typing).
    fn held_key(&mut self, key: KeyEvent, ctrl: bool, now: Instant) -> Vec<Command> {
        let plain = !key
            .modifiers
            .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT);
        match key.code {
            KeyCode::Up | KeyCode::Down if plain && self.focus == Focus::Chat => {
                // Neither dialog answers on an arrow key.
                if self.approval.is_open() {
                    self.approval.on_key(key);
                } else {
                    self.input.on_key(key);
                }
                Vec::new()
            }
            KeyCode::Esc => {
                // A pane may still use it (closing the timeline's detail); nothing else does.
                match self.focus {
                    Focus::Timeline => self.timeline.on_key(key),
                    Focus::Stack => self.stack.on_key(key),
                    Focus::Chat => false,
                };
                Vec::new()
            }
            _ => self.ladder(key, ctrl, now, false),
        }
    }

    /// Focus keys, the focused pane, the approval dialog (when `dialog`), global keys, then
    /// the composer.
    fn ladder(&mut self, key: KeyEvent, ctrl: bool, now: Instant, dialog: bool) -> Vec<Command> {
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
        if dialog && self.approval.is_open() {
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
    fn question_key(&mut self, key: KeyEvent, ctrl: bool, now: Instant) -> Vec<Command> {
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
        // `/status`, `/cancel`, … still work while a parameter is asked for; text that is
        // no command (an absolute path) is an answer.
        if typing && key.code == KeyCode::Enter && !self.input.is_confirming() {
            let line = self.input.line().trim();
            if line.starts_with('/') && !matches!(commands::parse(line), SlashCommand::Unknown(_)) {
                let line = self.input.take_line();
                return self.run_command(line.trim(), now);
            }
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
        if self.read_only {
            self.flash("read-only: this is a saved trace, nothing is sent", now);
            return Vec::new();
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
                // A new conversation starts its own count (the status line's tokens).
                self.tokens = Usage::default();
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
    /// Into a dialog that just opened is not where it was meant to go: the composer takes it.
    pub fn on_paste(&mut self, text: &str, now: Instant) {
        if !self.guard.holds(now, true) {
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
}

/// Whether a key types or answers, as opposed to only moving around: typing keeps a burst
/// going (see `guard`), moving does not, so scrolling a dialog then answering is not held.
fn types(key: &KeyEvent) -> bool {
    !matches!(
        key.code,
        KeyCode::Up
            | KeyCode::Down
            | KeyCode::Left
            | KeyCode::Right
            | KeyCode::PageUp
            | KeyCode::PageDown
            | KeyCode::Home
            | KeyCode::End
            | KeyCode::Tab
            | KeyCode::BackTab
            | KeyCode::Modifier(_)
    )
}
