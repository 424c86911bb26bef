//! The help page as an overlay: over the whole screen, modal (it takes every key but
//! Ctrl-C), closed with Esc, Enter, `q` or `?`.

use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{KeyCode, KeyEvent};
use ratatui::layout::Rect;

use super::{DrawCtx, Handled, KeyCtx, Overlay, Place};
use crate::tui::views::help::Help;

impl Overlay for Help {
    fn place(&self) -> Place {
        Place::Screen
    }

    fn captures(&self, _key: &KeyEvent, _ctx: &KeyCtx) -> bool {
        true
    }

    fn on_key(&mut self, key: KeyEvent, _ctx: &KeyCtx) -> Handled {
        match key.code {
            KeyCode::Esc | KeyCode::Enter | KeyCode::Char('q') | KeyCode::Char('?') => {
                self.closed = true;
            }
            KeyCode::Up | KeyCode::Char('k') => self.scroll = self.scroll.saturating_sub(1),
            KeyCode::Down | KeyCode::Char('j') => self.scroll = self.scroll.saturating_add(1),
            KeyCode::PageUp => self.scroll = self.scroll.saturating_sub(10),
            KeyCode::PageDown => self.scroll = self.scroll.saturating_add(10),
            _ => {}
        }
        Handled::Consumed
    }

    fn render(&mut self, area: Rect, buf: &mut Buffer, ctx: &DrawCtx) {
        self.draw(area, buf, ctx.theme);
    }

    fn finished(&self) -> bool {
        self.closed
    }
}
