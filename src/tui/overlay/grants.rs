//! The `/tools` view as an overlay: over the whole screen and modal (it takes every key but
//! Ctrl-C). ↑/↓ select a grant, `r` revokes it (an [`Effect::Revoke`]: the orchestrator takes
//! it back and reports it), Esc, Enter or `q` close.

use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{KeyCode, KeyEvent};
use ratatui::layout::Rect;

use super::{DrawCtx, Effect, Handled, Hints, KeyCtx, Overlay, Place};
use crate::tui::views::grants::ToolsView;

impl Overlay for ToolsView {
    fn place(&self) -> Place {
        Place::Screen
    }

    fn captures(&self, _key: &KeyEvent, _ctx: &KeyCtx) -> bool {
        true
    }

    fn on_key(&mut self, key: KeyEvent, _ctx: &KeyCtx) -> Handled {
        match key.code {
            KeyCode::Esc | KeyCode::Enter | KeyCode::Char('q') => self.closed = true,
            KeyCode::Up | KeyCode::Char('k') => self.move_by(-1),
            KeyCode::Down | KeyCode::Char('j') => self.move_by(1),
            KeyCode::PageUp => self.scroll = self.scroll.saturating_sub(10),
            KeyCode::PageDown => self.scroll = self.scroll.saturating_add(10),
            KeyCode::Char('r') => {
                if let Some(grant) = self.revoke_selected() {
                    return Handled::effect(Effect::Revoke(grant));
                }
            }
            _ => {}
        }
        Handled::Consumed
    }

    fn hints(&self) -> Option<Hints> {
        Some(&[("↑↓", "select"), ("r", "revoke"), ("Esc", "close")])
    }

    fn render(&mut self, area: Rect, buf: &mut Buffer, ctx: &DrawCtx) {
        let area = area.intersection(buf.area);
        if !area.is_empty() {
            self.draw(area, buf, ctx.theme);
        }
    }

    fn finished(&self) -> bool {
        self.closed
    }
}
