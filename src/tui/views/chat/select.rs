//! Selecting a message to copy. A click selects the message under the pointer; Alt-↑ selects
//! the newest message (and Alt-↑/↓ walk from there). While one is selected, ↑/↓ move the
//! selection, `y` copies it (as an effect: the app sends it), Esc lets go, and any other key
//! lets go and goes on as usual, so typing is never lost to a selection.
//!
//! What is copied is the message's source: an answer's Markdown as the model wrote it (code
//! fences and all), a user's message as sent (pastes whole), a tool call's name, arguments and
//! result or error.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use serde_json::Value;

use super::cell::CellKind;
use super::{Anchor, ChatState};
use crate::tui::overlay::{Effect, Handled};

impl ChatState {
    /// The selected message's cell, if one is selected.
    pub fn selected(&self) -> Option<usize> {
        self.selected.filter(|&i| i < self.cells.len())
    }

    /// Lets go of the selection.
    pub fn clear_selection(&mut self) {
        self.selected = None;
    }

    /// Selects the message drawn on `row` of the pane (as last drawn); a blank row between
    /// messages or past them lets go. Whether a message is selected now.
    pub fn select_at(&mut self, row: u16) -> bool {
        let hit = self.drawn.get(usize::from(row)).copied().flatten();
        self.selected = hit
            .filter(|&(i, line)| !(line == 0 && self.cells.get(i).is_some_and(|c| c.gap)))
            .map(|(i, _)| i)
            .filter(|&i| self.copyable(i));
        self.selected.is_some()
    }

    /// The selected message's text, as it is copied.
    pub fn selected_text(&self) -> Option<String> {
        self.cells.get(self.selected()?).map(|c| copy_text(&c.kind))
    }

    /// A key while the chat has the focus: see the module docs.
    pub fn on_key(&mut self, key: KeyEvent) -> Handled {
        if key.kind == KeyEventKind::Release {
            return Handled::NotConsumed;
        }
        let alt = key.modifiers == KeyModifiers::ALT;
        let plain = key.modifiers.difference(KeyModifiers::SHIFT).is_empty();
        if self.selected().is_none() {
            if alt && key.code == KeyCode::Up {
                self.step(-1);
                return Handled::Consumed;
            }
            return Handled::NotConsumed;
        }
        match key.code {
            KeyCode::Up if plain || alt => self.step(-1),
            KeyCode::Down if plain || alt => self.step(1),
            KeyCode::Esc => self.selected = None,
            KeyCode::Char('y') if plain => {
                if let Some(text) = self.selected_text() {
                    return Handled::effect(Effect::Copy(text));
                }
            }
            _ => {
                // Anything else is meant for the composer (or the app): let go, pass it on.
                self.selected = None;
                return Handled::NotConsumed;
            }
        }
        Handled::Consumed
    }

    /// Moves the selection `by` messages (from past the newest when none is selected);
    /// moving past the newest lets go and follows the bottom again.
    fn step(&mut self, by: isize) {
        let from = self.selected().unwrap_or(self.cells.len());
        let mut at = from;
        loop {
            let Some(next) = at.checked_add_signed(by) else {
                return; // nothing older: the selection stays
            };
            if next >= self.cells.len() {
                self.selected = None;
                self.scroll_to_bottom();
                return;
            }
            at = next;
            if self.copyable(at) {
                break;
            }
        }
        self.selected = Some(at);
        self.reveal(at);
    }

    /// Whether cell `i` has text to copy.
    fn copyable(&self, i: usize) -> bool {
        self.cells
            .get(i)
            .is_some_and(|c| !copy_text(&c.kind).trim().is_empty())
    }

    /// Scrolls so cell `i` shows, from its first line when it did not show whole.
    fn reveal(&mut self, i: usize) {
        let lines = self.height(i);
        let gap = self.cells.get(i).is_some_and(|c| c.gap);
        let first = usize::from(gap && lines > 1);
        let shown = |line: usize| self.drawn.contains(&Some((i, line)));
        if lines > 0 && shown(first) && shown(lines - 1) {
            return;
        }
        self.following = false;
        self.anchor = Anchor {
            cell: i,
            line: first,
        };
    }
}

/// The text `y` copies for a cell.
fn copy_text(kind: &CellKind) -> String {
    match kind {
        CellKind::User(user) => user.text.clone(),
        CellKind::Assistant(answer) => answer.text.clone(),
        CellKind::Reasoning(reasoning) => reasoning.text.clone(),
        CellKind::Tool(tool) => {
            let mut out = format!("{}\n{}", tool.name, pretty(&tool.arguments));
            if let Some(result) = &tool.result {
                out.push_str(&format!("\n\nresult:\n{}", pretty(result)));
            }
            if let Some(error) = &tool.error {
                out.push_str(&format!("\n\nerror: {error}"));
            }
            out
        }
        CellKind::Nested { text, .. } => text.clone(),
        CellKind::Changes(changes) => {
            let event = &changes.event;
            let mut out = event.headline();
            for file in &event.files {
                let mark = crate::tui::views::file_diff::mark(file.change);
                out.push_str(&format!("\n{mark} {}", file.path));
            }
            out
        }
        CellKind::Shell(shell) => super::shell::copy_text(shell),
        CellKind::Error { message, .. } => message.clone(),
        CellKind::Notice { text, .. } => text.clone(),
    }
}

/// A JSON value for reading: a string as its text, anything else pretty-printed.
fn pretty(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => serde_json::to_string_pretty(other).unwrap_or_default(),
    }
}
