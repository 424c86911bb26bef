//! Rewind in the TUI (issue 29): `r` on a timeline row or a `/rewind` pick opens the rewind
//! overlay for a point and asks the task for its preview (never while a run runs: the
//! preview would be stale before it is read); its confirmation is `Op::Rewind`. The diffs
//! of a run's `✎ N files changed` are asked for when details are expanded (Ctrl-O).
//! `/status` has the checkpoint store measured off the UI thread.

use std::time::Instant;

use super::{App, Command};
use crate::event::{RewindPoint, RewindPreview, RewindScope};
use crate::orchestrator::task::Op;
use crate::run_model::Turns;
use crate::tui::views::chat::NoticeKind;
use crate::tui::views::picker::{Pick, Picker, Row};
use crate::tui::views::rewind::RewindView;

/// A checkpoint store to measure (`/status`): the same store is the same command.
#[derive(Debug, Clone)]
pub struct Measure(pub std::sync::Arc<crate::checkpoint::Store>);

impl PartialEq for Measure {
    fn eq(&self, other: &Self) -> bool {
        std::sync::Arc::ptr_eq(&self.0, &other.0)
    }
}

/// The rewind picker's topic and its one group.
const TURNS: &str = "turns";
/// Most rows the rewind picker lists.
const MAX_ROWS: usize = 2000;

impl App {
    /// Opens the rewind overlay for `point` and asks for its preview; while a run runs (or a
    /// saved trace shows) it says why not instead.
    pub(super) fn ask_rewind(&mut self, point: RewindPoint, now: Instant) -> Vec<Command> {
        if self.read_only {
            self.flash("read-only: this is a saved trace", now);
            return Vec::new();
        }
        if self.busy {
            self.flash("rewind waits for the run to end: press r again then", now);
            return Vec::new();
        }
        let label = point_label(self.run.turns(), &point);
        self.overlays.remove::<RewindView>();
        self.overlays
            .push(Box::new(RewindView::new(point.clone(), label)));
        vec![Command::Op(Op::PreviewRewind(point))]
    }

    /// A preview arrived: the overlay asking about its point takes it.
    pub(super) fn rewind_listed(&mut self, preview: &RewindPreview) {
        if let Some(view) = self.overlays.get_mut::<RewindView>() {
            view.loaded(preview);
        }
    }

    /// The overlay confirmed: the task rewinds, and says so with `rewound` (or why not).
    pub(super) fn rewind(
        &mut self,
        point: RewindPoint,
        scope: RewindScope,
        overwrite: bool,
        now: Instant,
    ) -> Vec<Command> {
        if self.busy {
            self.flash("a run started: nothing was rewound", now);
            return Vec::new();
        }
        self.flash("rewinding…", now);
        vec![Command::Op(Op::Rewind {
            point,
            scope,
            overwrite,
        })]
    }

    /// `/rewind`: the picker of the session's runs and their calls, newest first.
    pub(super) fn rewind_command(&mut self, now: Instant) -> Vec<Command> {
        if self.read_only {
            self.flash("read-only: this is a saved trace", now);
            return Vec::new();
        }
        let rows = turn_rows(self.run.turns());
        self.overlays.remove::<Picker>();
        self.overlays.push(Box::new(Picker::new(
            TURNS,
            "rewind to before…",
            rows,
            "no runs yet: nothing to rewind",
        )));
        Vec::new()
    }

    /// The diffs expanded details want (Ctrl-O on `✎ N files changed`), asked for.
    pub(super) fn ask_changes(&mut self) -> Vec<Command> {
        if self.read_only {
            return Vec::new();
        }
        (self.chat.wanted_changes().into_iter())
            .map(|(from, to)| Command::Op(Op::ShowChanges { from, to }))
            .collect()
    }

    /// `/status`'s word on checkpoints: why they are off, or the store measured (its size
    /// follows in [`on_checkpoints_measured`](Self::on_checkpoints_measured)).
    pub(super) fn checkpoints_status(&self) -> (String, Option<Command>) {
        match &self.info.checkpoints {
            None => (String::new(), None),
            Some(Err(why)) => (format!("\n\nCheckpoints: {why}."), None),
            Some(Ok(store)) => (
                format!(
                    "\n\nCheckpoints: on, kept outside the workspace in `{}` (measuring…).",
                    store.dir().display()
                ),
                Some(Command::MeasureCheckpoints(Measure(std::sync::Arc::clone(
                    store,
                )))),
            ),
        }
    }

    /// The checkpoint store's size, measured for `/status`.
    pub fn on_checkpoints_measured(&mut self, bytes: u64) {
        self.chat.push_notice(
            NoticeKind::Info,
            format!(
                "Checkpoint store: {} on disk (`[checkpoints] keep_days` prunes it; `taco rewind --list` lists it).",
                size(bytes)
            ),
        );
    }
}

/// `12.3 MiB`.
fn size(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

/// What a point is, in words, from the runs the run model folded.
fn point_label(turns: &Turns, point: &RewindPoint) -> String {
    match point {
        RewindPoint::Run { request_id } => match turns.iter().find(|t| &t.request_id == request_id)
        {
            Some(turn) => format!("before “{}”", crate::text::summarize(&turn.prompt, 60)),
            None => "before this run".to_string(),
        },
        RewindPoint::Call { request_id, call } => {
            let found = (turns.iter())
                .filter(|t| &t.request_id == request_id)
                .find_map(|t| t.calls.iter().find(|c| &c.id == call));
            match found {
                Some(c) => format!(
                    "before {} {}",
                    c.name,
                    crate::text::summarize(&c.summary, 40)
                ),
                None => format!("before call {call}"),
            }
        }
        RewindPoint::Checkpoint { id } => {
            format!(
                "checkpoint {} (undoes a rewind)",
                id.get(..12).unwrap_or(id)
            )
        }
    }
}

/// The picker's rows: each run (newest first) with its prompt and what it changed, then
/// its calls (newest first), `✎` on those that had a checkpoint before them.
fn turn_rows(turns: &Turns) -> Vec<Row> {
    let mut rows = Vec::new();
    for turn in turns.iter().rev() {
        if rows.len() >= MAX_ROWS {
            break;
        }
        let changed = match &turn.changes {
            Some(changes) => format!("✎ {}", changes.headline),
            None => "no files changed".to_string(),
        };
        let detail = if turn.left_behind {
            format!("{changed} · left behind")
        } else {
            changed
        };
        let point = RewindPoint::Run {
            request_id: turn.request_id.clone(),
        };
        let row = Row::item(
            TURNS,
            &format!("“{}”", turn.prompt),
            &detail,
            Pick::Rewind(point),
        );
        rows.push(if turn.left_behind { row.dimmed() } else { row });
        for call in turn.calls.iter().rev() {
            let mark = if call.checkpoint { "✎" } else { "·" };
            // Rows are one line of collapsed spaces: the nesting shows as dots.
            let indent = "·".repeat(call.depth.min(8));
            let text = format!("{indent}└ {mark} {} {}", call.name, call.summary);
            let point = RewindPoint::Call {
                request_id: turn.request_id.clone(),
                call: call.id.clone(),
            };
            let detail = if call.checkpoint { "checkpoint" } else { "" };
            rows.push(Row::item(TURNS, &text, detail, Pick::Rewind(point)));
        }
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_people_say_them() {
        assert_eq!(size(512), "512 B");
        assert_eq!(size(1536), "1.5 KiB");
        assert_eq!(size(5 * 1024 * 1024), "5.0 MiB");
    }
}
