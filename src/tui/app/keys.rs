//! Keys and paste: what terminal input does to the app (the mouse is in `mouse.rs`). A key
//! walks the layers of `tui/overlay.rs`: capturing overlays, focus keys, the focused pane, the
//! other overlays, global keys, the composer. No dialog is named here: each overlay decides
//! for itself.

use std::time::Instant;

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use super::{App, Command, QUIT_WINDOW};
use crate::orchestrator::task::Op;
use crate::tui::commands::{self, SlashCommand};
use crate::tui::layout::Focus;
use crate::tui::overlay::{Effect, Handled, KeyCtx, Place};
use crate::tui::views::composer::SearchStep;

impl App {
    /// Takes a key press.
    pub fn on_key(&mut self, key: KeyEvent, now: Instant) -> Vec<Command> {
        if key.kind == KeyEventKind::Release {
            return Vec::new();
        }
        self.sync_mcp();
        let mut commands = self.take_key(key, now);
        self.save_prompts();
        self.overlays.prune();
        // An answer may bring up the next dialog, which starts guarded.
        self.sync_guard(now);
        commands.extend(self.notice_dialog());
        commands
    }

    fn take_key(&mut self, key: KeyEvent, now: Instant) -> Vec<Command> {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        // Deliberate, and the way out of anything: before every layer.
        if ctrl && key.code == KeyCode::Char('c') {
            return self.ctrl_c(now);
        }
        let draft = !self.composer.is_empty();
        let ctx = KeyCtx {
            focus: self.focus,
            held: self.guard.holds(now, types(&key), draft),
        };
        let handled = self.overlays.capture(key, &ctx);
        if let Some(commands) = self.apply(handled, now) {
            return commands;
        }
        // A Ctrl-R search takes the keys it knows; any other ends it and goes on as usual.
        if self.focus == Focus::Chat
            && self.composer.is_searching()
            && self.composer.search_key(key) == SearchStep::Used
        {
            return Vec::new();
        }
        // The command or file popup takes its keys (↑↓, Tab, Enter, Esc) before the rest.
        if self.focus == Focus::Chat && self.composer.popup_key(key) {
            return Vec::new();
        }
        // Tab moves to a dialog that waits for the user (the dialog says so).
        if ctx.held && key.code == KeyCode::Tab && key.modifiers.is_empty() && self.guard.engage() {
            self.focus_on(Focus::Chat);
            return Vec::new();
        }
        // A letter meant as an answer is not lost without a word: it went to the message.
        if ctx.held && matches!(key.code, KeyCode::Char(_)) && !ctrl {
            self.flash("typing goes to your message · Tab answers the dialog", now);
        }
        // In the chat, Shift-Tab cycles the permission mode (ask → auto-edit → plan), as
        // other agents' users expect; in the other panes it moves the focus back.
        if key.code == KeyCode::BackTab && self.focus == Focus::Chat && !self.read_only {
            let mode = self.run.mode().next();
            self.flash(&format!("mode: {} · Shift-Tab cycles", mode.name()), now);
            return vec![Command::Op(Op::SetMode(mode))];
        }
        if self.focus_key(key, ctrl, now) {
            return Vec::new();
        }
        // A pane not used since it got focus leaves typing to the composer (see `focus_on`).
        if !self.pane_letter_waits(&key) {
            let handled = self.pane_key(self.focus, key, &ctx);
            if handled.taken() && !printable(&key) {
                self.pane_used = true;
            }
            if let Some(commands) = self.apply(handled, now) {
                return commands;
            }
        }
        let handled = self.overlays.offer(key, &ctx);
        if let Some(commands) = self.apply(handled, now) {
            return commands;
        }
        self.global_key(key, ctrl, now)
    }

    /// Carries out what a layer did with a key: `None` when it did not take it.
    fn apply(&mut self, handled: Handled, now: Instant) -> Option<Vec<Command>> {
        match handled {
            Handled::NotConsumed => None,
            Handled::Consumed => Some(Vec::new()),
            Handled::Effects(effects) => Some(
                (effects.into_iter())
                    .flat_map(|effect| self.effect(effect, now))
                    .collect(),
            ),
        }
    }

    /// Turns an overlay's effect into app state and commands.
    fn effect(&mut self, effect: Effect, now: Instant) -> Vec<Command> {
        match effect {
            Effect::Approve(decided) => (decided.into_iter())
                .map(|(id, answer)| Command::Op(Op::Approve { id, answer }))
                .collect(),
            Effect::Answer { id, value } => vec![Command::Op(Op::Answer { id, value })],
            Effect::Fill { id, answer } => match id.strip_prefix(super::mcp::PROMPT_FORM) {
                Some(line) => self.on_prompt_form(line, answer, now),
                None => vec![Command::Op(Op::Fill { id, answer })],
            },
            Effect::Command(line) => self.run_command(&line, now),
            Effect::Focus(focus) => {
                self.focus_on(focus);
                Vec::new()
            }
            Effect::Open(overlay) => {
                self.overlays.push(overlay);
                Vec::new()
            }
            Effect::CancelCall(id) => vec![Command::Op(Op::CancelCall(id))],
            Effect::Revoke(grant) => self.revoke(grant, now),
            Effect::DecideBatch { ids, decision } => {
                vec![Command::Op(Op::DecideBatch { ids, decision })]
            }
            Effect::Copy(text) => self.copy(&text, now),
            Effect::Pick(pick) => self.picked(pick, now),
            Effect::PreviewRewind(point) => self.ask_rewind(point, now),
            Effect::Rewind {
                point,
                scope,
                overwrite,
            } => self.rewind(point, scope, overwrite, now),
            Effect::Yield(keys) => {
                self.type_past_dialog(&keys, now);
                Vec::new()
            }
        }
    }

    /// Keys a dialog gave back as typing: they go into the composer as typed, and the dialog
    /// waits until the user moves to it again.
    fn type_past_dialog(&mut self, keys: &[char], now: Instant) {
        self.guard.step_back(now);
        self.overlays.step_back();
        self.focus_on(Focus::Chat);
        for &c in keys {
            self.composer
                .input(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
        }
        self.flash(
            "that was typing: it went to your message · Tab answers the dialog",
            now,
        );
    }

    /// Tab completes a command or moves the focus; Shift-Tab moves it back.
    fn focus_key(&mut self, key: KeyEvent, ctrl: bool, now: Instant) -> bool {
        match key.code {
            KeyCode::Tab if !ctrl => {
                if !(self.focus == Focus::Chat && self.try_complete(now)) {
                    self.focus_on(self.focus.next());
                }
                true
            }
            KeyCode::BackTab => {
                self.focus_on(self.focus.previous());
                true
            }
            _ => false,
        }
    }

    /// Moves the keyboard focus to `focus`. A pane that gets it is not *used* yet: its
    /// single-letter keys (`f` filter, `j`/`k`, `c` cancel, `y` copy) wait until the user
    /// moves in it (an arrow, PgUp/PgDn, Home/End, Enter) or clicks it, so a sentence typed
    /// with a pane focused reaches the composer whole instead of its first letter switching
    /// the filter. Like the dialog gate (`guard.rs`): keys act on a thing only once the user
    /// is with it, and typing is never taken for a command.
    pub(super) fn focus_on(&mut self, focus: Focus) {
        if self.focus != focus {
            self.pane_used = false;
        }
        self.focus = focus;
    }

    /// Whether `key` is a printable key the focused pane must leave to the composer: the pane
    /// (not the chat, whose keys are the composer's) has not been used since it got focus.
    fn pane_letter_waits(&self, key: &KeyEvent) -> bool {
        self.focus != Focus::Chat && !self.pane_used && printable(key)
    }

    /// A key for `pane`: the overlay over it takes it if there is one (the pane is hidden),
    /// else the pane.
    pub(super) fn pane_key(&mut self, pane: Focus, key: KeyEvent, ctx: &KeyCtx) -> Handled {
        if let Some(overlay) = self.overlays.top(Place::Pane(pane)) {
            return overlay.on_key(key, ctx);
        }
        match pane {
            Focus::Timeline => self.timeline.on_key(key),
            Focus::Stack => self.stack.on_key(key),
            Focus::Chat => self.chat_key(key),
        }
    }

    /// Keys no pane or overlay took: cancelling, chat scrolling, then the composer.
    fn global_key(&mut self, key: KeyEvent, ctrl: bool, now: Instant) -> Vec<Command> {
        match key.code {
            KeyCode::Esc => {
                if let Some(commands) = self.drop_fetch(now) {
                    return commands;
                }
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
                // Expanded `✎ N files changed` cells show their diffs: asked for now.
                return self.ask_changes();
            }
            _ => {}
        }
        if self.focus != Focus::Chat {
            // Typing anywhere goes to the composer.
            if matches!(key.code, KeyCode::Char(_)) && !ctrl {
                self.focus_on(Focus::Chat);
            } else {
                return Vec::new();
            }
        }
        match key.code {
            KeyCode::Char('?') if self.composer.is_empty() => {
                self.open_help();
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
            // An empty editor: ↑ takes the newest queued message back, Ctrl-D drops it.
            KeyCode::Up if key.modifiers.is_empty() && self.composer.unqueue() => {
                self.flash("the queued message is back to edit · Enter sends it", now);
                Vec::new()
            }
            KeyCode::Char('d') if ctrl && self.composer.drop_queued() => {
                self.flash("dropped the last queued message", now);
                Vec::new()
            }
            _ => {
                self.composer.input(key);
                Vec::new()
            }
        }
    }

    /// Ctrl-C ends a search, then clears a draft (into the history: Up brings it back), and
    /// only then cancels the run or, twice, quits. While a dialog waits for an answer it
    /// cancels at once (the draft stays): the run waits on the user, not on the draft.
    fn ctrl_c(&mut self, now: Instant) -> Vec<Command> {
        if self.composer.is_searching() {
            self.composer.cancel_search();
            return Vec::new();
        }
        let dialog = self.approval_open() || self.question_open();
        if !dialog && self.composer.clear_to_history() {
            // Clearing is not the first of the two Ctrl-C that quit.
            self.last_ctrl_c = None;
            self.flash("draft cleared · ↑ brings it back", now);
            return Vec::new();
        }
        if self
            .last_ctrl_c
            .is_some_and(|at| now.duration_since(at) <= QUIT_WINDOW)
        {
            self.quit = true;
            return vec![Command::Quit];
        }
        self.last_ctrl_c = Some(now);
        if let Some(commands) = self.drop_fetch(now) {
            self.flash("cancelled · Ctrl-C again to quit", now);
            return commands;
        }
        if self.busy {
            self.flash("cancelled · Ctrl-C again to quit", now);
            vec![Command::Op(Op::Cancel)]
        } else {
            self.flash("Ctrl-C again to quit", now);
            Vec::new()
        }
    }

    /// Appends the prompts the composer remembered to the history file.
    fn save_prompts(&mut self) {
        let prompts = self.composer.take_unsaved();
        if let Some(log) = &self.prompt_log {
            // One short append per prompt sent: the file is the user's recall, not a record
            // the run waits on. `/quit` would only ever be the first thing Up brings back.
            (prompts.iter())
                .filter(|prompt| commands::parse(prompt) != SlashCommand::Quit)
                .for_each(|prompt| log.append(prompt));
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

    /// Takes pasted text (bracketed paste): it goes into whatever is being typed, never sent.
    /// Into a dialog that just opened is not where it was meant to go: the composer takes it.
    pub fn on_paste(&mut self, text: &str, now: Instant) {
        let draft = !self.composer.is_empty();
        let held = self.guard.holds(now, true, draft);
        let ctx = KeyCtx {
            focus: self.focus,
            held,
        };
        let handled = self.overlays.paste(text, &ctx);
        // A paste only edits text: nothing it does sends anything.
        if self.apply(handled, now).is_none() {
            // Pasted past a dialog that took keys: the user is writing a message.
            if !held && self.overlays.guard_id().is_some() {
                self.guard.step_back(now);
                self.overlays.step_back();
            }
            self.focus_on(Focus::Chat);
            self.composer.paste(text);
        }
        self.overlays.prune();
        self.sync_guard(now);
    }
}

/// Whether a key is a printable character typed as such (Shift allowed, no Ctrl or Alt).
fn printable(key: &KeyEvent) -> bool {
    matches!(key.code, KeyCode::Char(_))
        && !key
            .modifiers
            .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT)
}

/// Whether a key types (text, Enter, deleting), as opposed to moving around: typing past a
/// dialog starts its quiet again (see `guard`), moving does not.
fn types(key: &KeyEvent) -> bool {
    matches!(
        key.code,
        KeyCode::Char(_) | KeyCode::Enter | KeyCode::Backspace | KeyCode::Delete
    )
}
