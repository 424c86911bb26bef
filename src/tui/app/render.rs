//! Drawing the whole screen: the panes (or the overlays over them), the dialog docked in the
//! chat, the status line, and the overlays over the whole screen.

use std::time::Instant;

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

use super::{App, FLASH_FOR};
use crate::tui::layout::{self, Focus};
use crate::tui::overlay::{DrawCtx, Hints, Place};
use crate::tui::theme::Theme;
use crate::tui::views::checklist::Checklist;
use crate::tui::views::status::Status;
use crate::tui::{put, safe};

impl App {
    /// Key hints for the focused pane, or the overlay shown there.
    fn hints(&self) -> Hints {
        if let Some(hints) = self.overlays.hints(self.focus) {
            return hints;
        }
        match self.focus {
            Focus::Chat if self.composer.popup_showing().is_some() => {
                &[("↑↓", "choose"), ("Tab", "take"), ("Esc", "close")]
            }
            Focus::Chat if self.composer.is_searching() => {
                &[("Enter", "take it"), ("Ctrl-R", "older"), ("Esc", "leave")]
            }
            Focus::Chat if self.chat.selected().is_some() => {
                &[("y", "copy"), ("↑↓", "message"), ("Esc", "leave")]
            }
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
        self.sync_mcp();
        if self
            .flash
            .as_ref()
            .is_some_and(|(_, at)| now.duration_since(*at) >= FLASH_FOR)
        {
            self.flash = None;
        }
        // `/tools` counts its grants' ages to now, not to when it opened.
        let now_ms = self.wall_ms(now);
        self.overlays
            .update(|view: &mut crate::tui::views::grants::ToolsView| view.set_now(now_ms));
        let panes = layout::panes(area, self.focus);
        self.panes = Some(panes);
        let theme = self.theme;
        if let Some(rect) = panes.chat {
            self.render_chat(rect, buf, now);
        }
        if let Some(rect) = panes.stack {
            let depth = self.run.live_depth();
            let title = if depth > 0 {
                format!(" tool stack · depth {depth} ")
            } else {
                " tool stack ".to_string()
            };
            let focused = self.focus == Focus::Stack;
            let inner = pane(rect, buf, &theme, &title, focused);
            if !self.render_place(Place::Pane(Focus::Stack), inner, buf, now) {
                // The agent's checklist over the calls: what it plans, then what it runs.
                let checklist = Checklist {
                    list: self.run.todos(),
                };
                let [top, rest] = Layout::vertical([
                    Constraint::Length(checklist.height(inner.height, self.stack.wanted_rows())),
                    Constraint::Fill(1),
                ])
                .areas(inner);
                checklist.render(top, buf, &theme);
                self.stack.render(rest, buf, &theme, now, focused);
            }
        }
        if let Some(rect) = panes.timeline {
            let title = format!(" timeline · {} ", self.timeline.filter_label());
            let focused = self.focus == Focus::Timeline;
            let inner = pane(rect, buf, &theme, &title, focused);
            if !self.render_place(Place::Pane(Focus::Timeline), inner, buf, now) {
                // A model call in flight counts its time only while a run (or a compaction)
                // goes on: a resumed session's unfinished call is not still running.
                let now_ms = self.busy.then(|| self.wall_ms(now));
                self.timeline.render(inner, buf, &theme, focused, now_ms);
            }
        }
        let status = Status {
            provider: &self.info.provider,
            model: &self.info.model,
            auto: self.info.auto_reason.as_deref(),
            turn: self.run.turn(),
            max_turns: self.info.max_turns,
            tokens_in: self.run.usage().input_tokens,
            tokens_out: self.run.usage().output_tokens,
            context: self.run.context(),
            cost: self.run.session_cost(&self.info.pricing),
            activity: self.activity,
            elapsed_ms: now.duration_since(self.activity_since).as_millis(),
            queued: self.composer.queued_len(),
            flash: self.flash.as_ref().map(|(text, _)| text.as_str()),
            hints: self.hints(),
            sandbox: self.unconfined(),
            mode: Some(self.run.mode())
                .filter(|m| *m != crate::event::Mode::Ask)
                .map(crate::event::Mode::name),
        };
        status.render(panes.status, buf, &theme);
        self.render_place(Place::Screen, area, buf, now);
        // Last, over everything drawn: nothing from outside reaches the terminal raw.
        safe::neutralize(buf);
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
        // The editor's wrapped rows, so a long line shows whole (up to the cap, then it scrolls).
        let composer_rows = self.composer.rows(inner.width) + 1;
        // One dialog at a time (the overlay stack puts approvals first).
        let gate = self.guard.gate(now, !self.composer.is_empty());
        let wanted = self.dock_rows(inner.width, now);
        let dialog_rows = if wanted > 0 {
            wanted.min(inner.height.saturating_mul(3) / 5).max(5)
        } else {
            0
        };
        let queue_rows = self.composer.queue_rows();
        let [messages, dialog, queued, composer] = Layout::vertical([
            Constraint::Min(1),
            Constraint::Length(dialog_rows),
            Constraint::Length(queue_rows),
            Constraint::Length(composer_rows),
        ])
        .areas(inner);
        self.areas = super::mouse::Areas {
            messages,
            dock: dialog,
        };
        if !self.render_place(Place::Pane(Focus::Chat), messages, buf, now) {
            // A running call flagged in the stack is flagged in the chat: one rule, one owner.
            let stack = &self.stack;
            self.chat.flag_calls(|id| stack.flag(id, now));
            self.chat.render(messages, buf, &theme, now);
        }
        if dialog.height > 0 {
            self.render_place(Place::Dock, dialog, buf, now);
        }
        if queued.height > 0 {
            // A docked dialog takes ↑ (it scrolls), so the keys are not offered under it.
            let keys = focused && !self.overlays.is_open(Place::Dock);
            self.composer.render_queue(queued, buf, &theme, keys);
        }
        if composer.height > 0 {
            let rule = Rect {
                height: 1,
                ..composer
            };
            let label = if self.composer.is_searching() {
                " search earlier prompts "
            } else if self.busy {
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
            // A waiting dialog leaves the keys to the composer, and the cursor shows it.
            let note = self.overlays.composer_note().filter(|_| !gate.holds());
            let dialog_open = note.is_some();
            let placeholder = if let Some(note) = note {
                note
            } else if self.read_only {
                "read-only: a saved trace · /quit leaves · ? help"
            } else if self.busy {
                "type to queue a message · Esc cancels"
            } else {
                "ask taco to do something · Enter sends · ? help"
            };
            self.composer
                .render(editor, buf, &theme, focused && !dialog_open, placeholder);
            if focused {
                // Over the rows above the composer (the messages, a docked dialog).
                let above = Rect {
                    height: composer.y - inner.y,
                    ..inner
                };
                self.composer.render_popup(above, buf, &theme);
            }
        }
    }

    /// Draws the overlay shown in `place` into `area`: `false` when none shows there.
    fn render_place(&mut self, place: Place, area: Rect, buf: &mut Buffer, now: Instant) -> bool {
        let gate = self.guard.gate(now, !self.composer.is_empty());
        let Some(overlay) = self.overlays.top(place) else {
            return false;
        };
        let tree = self.stack.live_tree();
        let ctx = DrawCtx {
            theme: &self.theme,
            gate,
            stack: &tree,
        };
        overlay.render(area, buf, &ctx);
        true
    }

    /// Rows the dialog docked in the chat wants at `width` (none without one).
    fn dock_rows(&mut self, width: u16, now: Instant) -> u16 {
        let gate = self.guard.gate(now, !self.composer.is_empty());
        let Some(overlay) = self.overlays.top(Place::Dock) else {
            return 0;
        };
        let tree = self.stack.live_tree();
        let ctx = DrawCtx {
            theme: &self.theme,
            gate,
            stack: &tree,
        };
        overlay.height(width, &ctx)
    }
}

/// Draws a pane's border and title; returns the inside. Drawn by hand rather than with a
/// `Block`, which first restyles every cell of the pane: three panes at 200×60 made that
/// ~15% of a frame, for cells the panes draw over anyway.
fn pane(rect: Rect, buf: &mut Buffer, theme: &Theme, title: &str, focused: bool) -> Rect {
    let rect = rect.intersection(buf.area);
    if rect.width < 2 || rect.height < 2 {
        return Rect::default();
    }
    let border = if focused {
        theme.border_focused
    } else {
        theme.border
    };
    let (left, right) = (rect.left(), rect.right() - 1);
    let (top, bottom) = (rect.top(), rect.bottom() - 1);
    let span = usize::from(rect.width - 2);
    put::repeat(buf, left + 1, top, "─", rect.width - 2, border);
    put::repeat(buf, left + 1, bottom, "─", rect.width - 2, border);
    for y in top + 1..bottom {
        buf[(left, y)].set_symbol("│").set_style(border);
        buf[(right, y)].set_symbol("│").set_style(border);
    }
    for (x, y, corner) in [
        (left, top, "┌"),
        (right, top, "┐"),
        (left, bottom, "└"),
        (right, bottom, "┘"),
    ] {
        buf[(x, y)].set_symbol(corner).set_style(border);
    }
    let title_style = if focused {
        theme.title.patch(theme.border_focused)
    } else {
        theme.title
    };
    put::stringn(buf, left + 1, top, title, span, title_style);
    Rect::new(left + 1, top + 1, rect.width - 2, rect.height - 2)
}
