//! Scrolling back past what a resume loaded (issue 15): the pane says when its top is on
//! screen, and takes the cells of earlier runs above its own without moving the view.

use super::ChatState;

impl ChatState {
    /// Whether the first line is on screen: scrolling up shows nothing more.
    pub fn at_top(&mut self) -> bool {
        if self.height == 0 {
            return false;
        }
        if self.following {
            return self.top_when_following().is_none();
        }
        self.anchor.cell == 0 && self.anchor.line == 0
    }

    /// The first cell the user sent, if any: what is before it was said before any run.
    pub fn first_user(&self) -> Option<usize> {
        (self.cells.iter()).position(|c| matches!(c.kind, super::cell::CellKind::User(_)))
    }

    /// Replaces the cells from `at` on with those of `fresh` (the same runs' newest part,
    /// rebuilt from the session file), following the bottom, no run in progress.
    pub fn replace_from(&mut self, at: usize, fresh: ChatState) {
        self.cells.truncate(at);
        self.cells.extend(fresh.cells);
        self.run = super::RunState::default();
        self.selected = None;
        self.drawn.clear();
        self.anchor = super::Anchor::default();
        self.following = true;
        self.unseen = false;
    }

    /// Puts the cells of `earlier` (a pane built from older runs) before cell `at` (where a
    /// resume's replay began, below the greeting); what is on screen stays there.
    pub fn insert_earlier(&mut self, at: usize, earlier: ChatState) {
        let n = earlier.cells.len();
        let at = at.min(self.cells.len());
        if n == 0 {
            return;
        }
        self.cells.splice(at..at, earlier.cells);
        let shift = |i: &mut usize| {
            if *i >= at {
                *i += n;
            }
        };
        if !self.following {
            // Shown from above `at` (the greeting): the view goes to where the history
            // started, so scrolling up goes on into the runs just read.
            if self.anchor.cell < at {
                self.anchor = super::Anchor { cell: at, line: 0 };
            }
            shift(&mut self.anchor.cell);
        }
        let run = &mut self.run;
        for i in [
            &mut run.text_open,
            &mut run.reasoning_open,
            &mut run.assistant,
        ]
        .into_iter()
        .flatten()
        {
            shift(i);
        }
        run.turn_text.iter_mut().for_each(shift);
        run.turn_reasoning.iter_mut().for_each(shift);
        run.tools.values_mut().for_each(shift);
        if let Some(i) = self.selected.as_mut() {
            shift(i);
        }
        // Rows of the last frame point at cells by index: the next frame redraws them.
        self.drawn.clear();
    }
}
