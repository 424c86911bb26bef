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
}
