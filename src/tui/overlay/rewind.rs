//! The rewind overlay as an overlay: over the whole screen but the status line, modal (it
//! takes every key but Ctrl-C, and Tab while it waits: Tab moves to it), behind the dialog
//! gate once its preview is in (`app/guard.rs`): keys typed before it appeared, or while
//! typing, never confirm it. What it asks for leaves as [`Effect::Rewind`].

use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{KeyCode, KeyEvent};
use ratatui::layout::Rect;

use super::{DrawCtx, Effect, Handled, Hints, KeyCtx, Overlay, Place};
use crate::tui::views::rewind::{RewindView, Step};

impl Overlay for RewindView {
    fn place(&self) -> Place {
        Place::Screen
    }

    /// Every key but Tab while it waits (Tab is how the user moves to it).
    fn captures(&self, key: &KeyEvent, ctx: &KeyCtx) -> bool {
        !(ctx.held && key.code == KeyCode::Tab)
    }

    fn on_key(&mut self, key: KeyEvent, ctx: &KeyCtx) -> Handled {
        let step = if ctx.held {
            self.on_held_key(key)
        } else {
            self.on_key(key)
        };
        match step {
            Step::Used | Step::Ignored | Step::Close => Handled::Consumed,
            Step::Confirm {
                point,
                scope,
                overwrite,
            } => Handled::effect(Effect::Rewind {
                point,
                scope,
                overwrite,
            }),
            Step::Typed(keys) => Handled::effect(Effect::Yield(keys)),
        }
    }

    fn hints(&self) -> Option<Hints> {
        Some(match (self.is_loading(), self.armed()) {
            (true, _) => &[("Esc", "close")],
            (false, Some(_)) => &[("Enter", "rewind"), ("Esc", "back")],
            (false, None) => &[("a letter", "pick"), ("Enter", "confirm"), ("Esc", "close")],
        })
    }

    fn render(&mut self, area: Rect, buf: &mut Buffer, ctx: &DrawCtx) {
        let area = area.intersection(buf.area);
        // The status line stays: it says what is going on.
        let area = Rect {
            height: area.height.saturating_sub(1),
            ..area
        };
        if !area.is_empty() {
            self.draw(area, buf, ctx.theme, ctx.gate);
        }
    }

    /// Gated once there is something to confirm; a point asked again is a new dialog.
    fn guard_id(&self) -> Option<String> {
        (!self.is_loading()).then(|| format!("rewind {:?}", self.point()))
    }

    fn waiting_for(&self) -> Option<String> {
        Some("confirm the rewind".to_string())
    }

    fn step_back(&mut self) {
        RewindView::step_back(self);
    }

    fn finished(&self) -> bool {
        self.is_closed()
    }
}
