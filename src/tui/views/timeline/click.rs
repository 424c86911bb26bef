//! A click on the list: the row under the pointer becomes the selection.

use super::TimelineState;

impl TimelineState {
    /// Selects the row drawn `row` rows below the list's top (as last drawn); the selection
    /// stays there as new rows come (End follows again). Whether a row was there.
    pub fn select_at(&mut self, row: u16) -> bool {
        let position = self.scroll + usize::from(row);
        if position >= self.visible.len() {
            return false;
        }
        self.selected = position;
        self.follow = false;
        true
    }

    /// The selected row's place in the (filtered) list; `None` when the list is empty.
    pub fn selected_position(&self) -> Option<usize> {
        let last = self.visible.len().checked_sub(1)?;
        Some(self.selected.min(last))
    }
}
