//! The timeline's detail view as an overlay: over the timeline pane, which it hides, with
//! that pane's keys while it has the focus; Esc closes it (Esc is then not a cancel), `y`
//! copies the payload. `z` or Enter shows it over the whole screen ([`Zoomed`]), and Esc or
//! `z` brings it back.

use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use ratatui::layout::Rect;

use super::{DrawCtx, Effect, Handled, Hints, KeyCtx, Overlay, Place};
use crate::tui::layout::Focus;
use crate::tui::views::timeline::Detail;

/// What a key does to a detail view, wherever it shows.
enum Step {
    /// Taken by the view (scrolling, panning, wrapping).
    Used,
    /// Close it (Esc in the pane).
    Close,
    /// Switch between the pane and the whole screen.
    Zoom,
    /// Copy the payload (`y`).
    Copy,
    /// Not a key of the view.
    Ignored,
}

/// The keys both places share.
fn step(detail: &mut Detail, key: KeyEvent) -> Step {
    if key.kind == KeyEventKind::Release
        || !key.modifiers.difference(KeyModifiers::SHIFT).is_empty()
    {
        return Step::Ignored;
    }
    match key.code {
        KeyCode::Esc => return Step::Close,
        KeyCode::Enter | KeyCode::Char('z') => return Step::Zoom,
        KeyCode::Char('y') => return Step::Copy,
        KeyCode::Up | KeyCode::Char('k') => detail.scroll_by(-1),
        KeyCode::Down | KeyCode::Char('j') => detail.scroll_by(1),
        KeyCode::PageUp => detail.scroll_by(-detail.page()),
        KeyCode::PageDown => detail.scroll_by(detail.page()),
        KeyCode::Home | KeyCode::Char('g') => detail.scroll_to(false),
        KeyCode::End | KeyCode::Char('G') => detail.scroll_to(true),
        KeyCode::Left | KeyCode::Char('h') if detail.pan_by(-1) => {}
        KeyCode::Right | KeyCode::Char('l') if detail.pan_by(1) => {}
        KeyCode::Char('w') => detail.toggle_wrap(),
        _ => return Step::Ignored,
    }
    Step::Used
}

impl Overlay for Detail {
    fn place(&self) -> Place {
        Place::Pane(Focus::Timeline)
    }

    fn on_key(&mut self, key: KeyEvent, _ctx: &KeyCtx) -> Handled {
        match step(self, key) {
            Step::Used => Handled::Consumed,
            Step::Close => {
                self.closed = true;
                Handled::Consumed
            }
            // The view moves to the screen as it is (scrolled, wrapped or not).
            Step::Zoom => {
                let view = std::mem::take(self);
                self.closed = true;
                Handled::effect(Effect::Open(Box::new(Zoomed { view, done: false })))
            }
            Step::Copy => Handled::effect(Effect::Copy(self.text())),
            Step::Ignored => Handled::NotConsumed,
        }
    }

    fn render(&mut self, area: Rect, buf: &mut Buffer, ctx: &DrawCtx) {
        let area = area.intersection(buf.area);
        if !area.is_empty() {
            self.draw(area, buf, ctx.theme, false);
        }
    }

    fn finished(&self) -> bool {
        self.closed
    }
}

/// A detail view over the whole screen but the status line (which keeps saying what the
/// run waits for). Modal: it takes every key but Ctrl-C, so nothing under it is answered
/// unseen; Esc, `z` or Enter put it back over the pane.
#[derive(Debug)]
pub struct Zoomed {
    view: Detail,
    done: bool,
}

impl Overlay for Zoomed {
    fn place(&self) -> Place {
        Place::Screen
    }

    fn captures(&self, _key: &KeyEvent, _ctx: &KeyCtx) -> bool {
        true
    }

    fn on_key(&mut self, key: KeyEvent, _ctx: &KeyCtx) -> Handled {
        match step(&mut self.view, key) {
            Step::Close | Step::Zoom => {
                self.done = true;
                let view = std::mem::take(&mut self.view);
                Handled::effect(Effect::Open(Box::new(view)))
            }
            Step::Copy => Handled::effect(Effect::Copy(self.view.text())),
            Step::Used | Step::Ignored => Handled::Consumed,
        }
    }

    fn hints(&self) -> Option<Hints> {
        if self.view.wraps() {
            Some(&[("Esc/z", "back"), ("↑↓", "scroll"), ("w", "no wrap")])
        } else {
            Some(&[("Esc/z", "back"), ("←→", "pan"), ("w", "wrap")])
        }
    }

    fn render(&mut self, area: Rect, buf: &mut Buffer, ctx: &DrawCtx) {
        let area = area.intersection(buf.area);
        let area = Rect {
            height: area.height.saturating_sub(1),
            ..area
        };
        if !area.is_empty() {
            ratatui::widgets::Widget::render(ratatui::widgets::Clear, area, buf);
            self.view.draw(area, buf, ctx.theme, true);
        }
    }

    fn finished(&self) -> bool {
        self.done
    }
}
