//! A click on the stack: the frame under the pointer becomes the selection.

use super::StackState;

impl StackState {
    /// Selects the frame drawn on `row` of the pane (as last drawn); a detail line or an
    /// empty row selects nothing. Whether a frame was selected.
    pub fn select_at(&mut self, row: u16) -> bool {
        let Some(Some(id)) = self.drawn.get(usize::from(row)).cloned() else {
            return false;
        };
        let tree = self.tree();
        let Some(position) =
            (tree.iter()).position(|(i, _)| self.entries.get(*i).is_some_and(|e| e.frame.id == id))
        else {
            return false;
        };
        if self.selected() != Some(id.as_str()) {
            // Another frame: its detail opens with Enter, as with the keys.
            self.expanded = false;
        }
        self.selected = Some((id, position));
        true
    }
}
