//! The timeline's detail view as an overlay: over the timeline pane, which it hides, with
//! that pane's keys while it has the focus. Enter or Esc closes it (Esc is then not a cancel);
//! `y` copies the payload.

use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use ratatui::layout::Rect;

use super::{DrawCtx, Effect, Handled, KeyCtx, Overlay, Place};
use crate::tui::layout::Focus;
use crate::tui::views::timeline::Detail;

impl Overlay for Detail {
    fn place(&self) -> Place {
        Place::Pane(Focus::Timeline)
    }

    fn on_key(&mut self, key: KeyEvent, _ctx: &KeyCtx) -> Handled {
        if key.kind == KeyEventKind::Release
            || !key.modifiers.difference(KeyModifiers::SHIFT).is_empty()
        {
            return Handled::NotConsumed;
        }
        match key.code {
            KeyCode::Esc | KeyCode::Enter => self.closed = true,
            KeyCode::Up | KeyCode::Char('k') => self.scroll_by(-1),
            KeyCode::Down | KeyCode::Char('j') => self.scroll_by(1),
            KeyCode::PageUp => self.scroll_by(-self.page()),
            KeyCode::PageDown => self.scroll_by(self.page()),
            KeyCode::Home | KeyCode::Char('g') => self.scroll_to(false),
            KeyCode::End | KeyCode::Char('G') => self.scroll_to(true),
            KeyCode::Char('y') => return Handled::effect(Effect::Copy(self.text())),
            _ => return Handled::NotConsumed,
        }
        Handled::Consumed
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
