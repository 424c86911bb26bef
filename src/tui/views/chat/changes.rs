//! The chat's `✎ 3 files changed (+40 −12)` cell at a run's end (issue 29): the files the
//! run changed (shell commands' changes too: it is built from the checkpoints), and with
//! details expanded (Ctrl-O) their diffs, asked of the task when first wanted
//! ([`ChatState::wanted_changes`]) and bounded when shown.

use ratatui::text::{Line, Span};

use super::ChatState;
use super::cell::CellKind;
use super::tool::{truncate, truncate_spans};
use crate::event::{ChangesView, FileDiffView, FilesChanged};
use crate::tui::theme::Theme;
use crate::tui::views::file_diff;

/// Most files a cell lists (the rest are counted).
const MAX_LISTED: usize = 12;
/// Most diff lines one file shows expanded.
const FILE_LINES: usize = 60;
/// Most diff lines a cell shows expanded, all files together.
const CELL_LINES: usize = 240;
/// Cells whose diffs Ctrl-O asks for at once, newest first (older ones say how to see theirs).
pub(super) const ASKED_AT_ONCE: usize = 8;

/// Where a cell's diffs stand.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Diffs {
    /// Not wanted yet (details were never expanded while it was shown).
    NotAsked,
    /// Asked for; on their way.
    Asked,
    /// Here.
    Loaded(Vec<FileDiffView>),
    /// Could not be read, and why.
    Failed(String),
}

/// A run's changes and their diffs.
#[derive(Debug)]
pub(super) struct Changes {
    pub event: FilesChanged,
    pub diffs: Diffs,
}

impl Changes {
    /// Lays the cell out: the headline and files, and with `details` the diffs.
    pub(super) fn layout(
        &self,
        lines: &mut Vec<Line<'static>>,
        width: u16,
        details: bool,
        t: &Theme,
    ) {
        let room = usize::from(width);
        lines.push(Line::from(vec![
            Span::styled("✎ ", t.tool),
            Span::styled(
                truncate(&self.event.headline(), room.saturating_sub(2)),
                t.heading,
            ),
        ]));
        for file in self.event.files.iter().take(MAX_LISTED) {
            let counts = file_diff::counts(file);
            let path_room = room.saturating_sub(6 + counts.chars().count());
            lines.push(Line::from(vec![
                Span::raw("  "),
                Span::styled(
                    file_diff::mark(file.change),
                    file_diff::mark_style(file.change, t),
                ),
                Span::raw(" "),
                Span::styled(truncate(&crate::text::plain(&file.path), path_room), t.text),
                Span::raw("  "),
                Span::styled(counts, t.dim),
            ]));
        }
        if self.event.count() > MAX_LISTED {
            let more = format!("  … and {} more", self.event.count() - MAX_LISTED);
            lines.push(Line::from(Span::styled(more, t.dim)));
        }
        if !details {
            lines.push(Line::from(Span::styled(
                "  ▸ Ctrl-O shows the diffs",
                t.dim,
            )));
            return;
        }
        match &self.diffs {
            Diffs::NotAsked => lines.push(dim(
                "  ▾ diffs not read: Ctrl-O reads those of the newest 8 runs",
                t,
            )),
            Diffs::Asked => lines.push(dim("  ▾ reading the diffs…", t)),
            Diffs::Failed(why) => {
                let why = crate::text::plain(why);
                lines.push(Line::from(vec![
                    Span::styled("  ▾ no diffs: ", t.dim),
                    Span::styled(truncate(&why, room.saturating_sub(14)), t.error),
                ]));
            }
            Diffs::Loaded(files) => diff_lines(lines, files, room, t),
        }
    }
}

/// The diffs, each file cut at [`FILE_LINES`] and all at [`CELL_LINES`].
fn diff_lines(lines: &mut Vec<Line<'static>>, files: &[FileDiffView], room: usize, t: &Theme) {
    let mut left = CELL_LINES;
    for (i, view) in files.iter().enumerate() {
        if left == 0 {
            let more = format!("  … {} more files not shown", files.len() - i);
            lines.push(dim(&more, t));
            return;
        }
        let shown = file_diff::styled(view, t);
        let take = shown.len().min(FILE_LINES).min(left);
        let cut = shown.len() - take;
        for line in shown.into_iter().take(take) {
            let mut spans = vec![Span::raw("    ")];
            spans.extend(truncate_spans(line.spans, room.saturating_sub(4)));
            lines.push(Line::from(spans));
        }
        if cut > 0 {
            lines.push(dim(&format!("    … {cut} more lines of diff"), t));
        }
        left -= take;
    }
}

fn dim(text: &str, t: &Theme) -> Line<'static> {
    Line::from(Span::styled(text.to_string(), t.dim))
}

impl ChatState {
    /// The runs whose diffs details want and nobody asked for yet (`from`, `to`), newest
    /// first, [`ASKED_AT_ONCE`] at most: marked asked, for the app to send `ShowChanges`.
    /// Nothing while details are collapsed.
    pub fn wanted_changes(&mut self) -> Vec<(String, String)> {
        if !self.details {
            return Vec::new();
        }
        let mut wanted = Vec::new();
        let mut seen = 0;
        for cell in self.cells.iter_mut().rev() {
            let CellKind::Changes(changes) = &mut cell.kind else {
                continue;
            };
            seen += 1;
            if seen > ASKED_AT_ONCE {
                break;
            }
            if changes.diffs == Diffs::NotAsked {
                changes.diffs = Diffs::Asked;
                wanted.push((changes.event.from.clone(), changes.event.to.clone()));
                cell.invalidate();
            }
        }
        wanted
    }

    /// Takes the diffs a `ShowChanges` listed into the cells of that run.
    pub fn changes_listed(&mut self, view: &ChangesView) {
        let mut changed = false;
        for cell in &mut self.cells {
            let CellKind::Changes(changes) = &mut cell.kind else {
                continue;
            };
            if changes.event.from != view.from || changes.event.to != view.to {
                continue;
            }
            changes.diffs = match &view.files {
                Ok(files) => Diffs::Loaded(files.clone()),
                Err(why) => Diffs::Failed(why.clone()),
            };
            cell.invalidate();
            changed = true;
        }
        if changed {
            self.changed();
        }
    }
}
