//! A picker as an overlay: over the whole screen and modal (it takes every key but Ctrl-C).
//! Typing filters, ↑/↓ and PgUp/PgDn move, Enter chooses (an [`Effect::Pick`]), Esc closes.

use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::Rect;

use super::{DrawCtx, Effect, Handled, Hints, KeyCtx, Overlay, Place};
use crate::tui::views::picker::Picker;

impl Overlay for Picker {
    fn place(&self) -> Place {
        Place::Screen
    }

    fn captures(&self, _key: &KeyEvent, _ctx: &KeyCtx) -> bool {
        true
    }

    fn on_key(&mut self, key: KeyEvent, _ctx: &KeyCtx) -> Handled {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        match key.code {
            KeyCode::Esc => self.closed = true,
            KeyCode::Enter => {
                if let Some(pick) = self.selected().cloned() {
                    self.closed = true;
                    return Handled::effect(Effect::Pick(pick));
                }
            }
            KeyCode::Up => self.move_by(-1),
            KeyCode::Down => self.move_by(1),
            KeyCode::Char('p') if ctrl => self.move_by(-1),
            KeyCode::Char('n') if ctrl => self.move_by(1),
            KeyCode::PageUp => self.page_by(-1),
            KeyCode::PageDown => self.page_by(1),
            KeyCode::Home => self.jump(false),
            KeyCode::End => self.jump(true),
            KeyCode::Backspace => self.backspace(),
            KeyCode::Char('u') if ctrl => self.clear_filter(),
            KeyCode::Char(c) if !ctrl && !alt => self.type_text(c.encode_utf8(&mut [0; 4])),
            _ => {}
        }
        Handled::Consumed
    }

    fn on_paste(&mut self, text: &str, _ctx: &KeyCtx) -> Handled {
        self.type_text(text);
        Handled::Consumed
    }

    fn hints(&self) -> Option<Hints> {
        Some(&[
            ("type", "filter"),
            ("↑↓", "move"),
            ("Enter", "choose"),
            ("Esc", "close"),
        ])
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
