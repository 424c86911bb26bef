//! `r` on a timeline row (issue 29): the point a rewind from it goes back to. A tool call's
//! row or its result's: just before that call; a `rewound` row: the checkpoint that undoes
//! it; any other row: just before its run.

use super::TimelineState;
use super::row::Kind;
use crate::event::{Event, EventData, RewindPoint};

impl TimelineState {
    /// The rewind point of the selected row, if it has one (a rewind with nothing to undo,
    /// or a row of no run, has none).
    pub(super) fn rewind_point(&self) -> Option<RewindPoint> {
        let index = *self.visible.get(self.selected)?;
        let row = self.rows.get(index)?;
        let event: Option<Event> = match row.kind {
            // Only these rows need their event: the call's id, the rewind's undo.
            Kind::ToolCall | Kind::ToolResult { .. } | Kind::Other => {
                row.payload.and_then(|p| self.store.reader().get(p))
            }
            _ => None,
        };
        match event.map(|e| e.data) {
            Some(EventData::ToolCall { id, .. } | EventData::ToolResult { id, .. }) => {
                Some(RewindPoint::Call {
                    request_id: row.run.to_string(),
                    call: id,
                })
            }
            Some(EventData::Rewound(rewound)) => {
                rewound.undo.map(|id| RewindPoint::Checkpoint { id })
            }
            _ if row.run.is_empty() => None,
            _ => Some(RewindPoint::Run {
                request_id: row.run.to_string(),
            }),
        }
    }
}
