//! The stack's ⚠ flags on the chat's tool cells: a running call that the stack pane flags as
//! slow or quiet shows the same flag after its name. The rule has one owner (the stack's
//! `slow_flag`); the chat only asks it, per running call, when it draws.

use super::ChatState;
use super::cell::CellKind;

impl ChatState {
    /// Sets each running call's flag to what `flag` says for its id (the stack's verdict
    /// now); a cell is laid out again only when its flag changed.
    pub fn flag_calls(&mut self, flag: impl Fn(&str) -> Option<String>) {
        for (id, &i) in &self.run.tools {
            let Some(cell) = self.cells.get_mut(i) else {
                continue;
            };
            let CellKind::Tool(tool) = &mut cell.kind else {
                continue;
            };
            let now = if tool.is_running() { flag(id) } else { None };
            if tool.flag != now {
                tool.flag = now;
                cell.invalidate();
            }
        }
    }
}
