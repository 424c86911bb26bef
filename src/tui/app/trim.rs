//! Memory independent of how long a live session runs (issue 33): the chat and the timeline
//! hold a bounded window of the newest runs. Once they hold [`TRIM_AFTER`] runs, both follow
//! the newest line and no run is in progress, the app asks for the end of the session file
//! (read off the UI thread) and rebuilds both panes from it exactly as a resume does —
//! the newest [`KEEP_ENTRIES`] entries — with the runs before them left in the file, read
//! back when the user scrolls to the top (`earlier.rs`). The run model keeps only
//! aggregates, so it is left alone. A read that events overtook (a new run started, the
//! file holds a run the panes have not seen) is dropped, and asked again after the next run.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use super::{App, Command};
use crate::event::{Event, EventData};
use crate::session::{Entry, SessionError, Tail};
use crate::startup::Earlier;

/// Runs the panes hold before the older ones are let go.
pub const TRIM_AFTER: usize = 100;
/// Entries of the session file's end the panes are rebuilt from (whole runs; some 30 of a
/// working session's).
pub const KEEP_ENTRIES: usize = 300;

/// What the app keeps to know when to trim.
#[derive(Debug, Default)]
pub(super) struct Trim {
    /// Runs the panes hold.
    runs: usize,
    /// The newest run the panes hold.
    last_run: Option<Arc<str>>,
    /// Events taken so far: a read asked at one count and answered at another is stale.
    events: u64,
    /// A read in flight, asked at this count.
    asked: Option<u64>,
}

impl App {
    /// Counts an event the panes took.
    pub(super) fn count_for_trim(&mut self, event: &Event) {
        self.trim.events += 1;
        if let EventData::RunStarted { .. } = event.data {
            self.trim.runs += 1;
            self.trim.last_run = Some(Arc::clone(&event.request_id));
        }
    }

    /// Asks for the session file's end when the panes hold too many runs and nobody is
    /// looking back at them.
    pub(super) fn want_trim(&mut self) -> Option<Command> {
        if self.trim.runs < TRIM_AFTER || self.trim.asked.is_some() || !self.may_trim() {
            return None;
        }
        let path = self.info.session.as_ref()?.path()?;
        self.trim.asked = Some(self.trim.events);
        Some(Command::Trim(path))
    }

    /// Whether the panes can be rebuilt now: nothing runs, nothing is being read back,
    /// and both show their newest line.
    fn may_trim(&self) -> bool {
        !self.busy
            && !self.read_only
            && !self.replaying
            && !self.loading_earlier
            && !self.run.is_running()
            && self.chat.is_following()
            && self.timeline.is_following()
    }

    /// Runs read back from the file (scrolled to the top) are held by the panes too.
    pub(super) fn count_earlier_runs(&mut self, runs: usize) {
        self.trim.runs += runs;
    }

    /// A read back of the earlier runs supersedes a trim in flight (the loop reads one at
    /// a time): the next run asks again.
    pub(super) fn forget_trim(&mut self) {
        self.trim.asked = None;
    }

    /// Rebuilds the panes from `read`, the end of session file `path`, if nothing happened
    /// since it was asked and it ends with the newest run the panes hold.
    pub fn trimmed(&mut self, path: PathBuf, read: Result<Tail, SessionError>, now: Instant) {
        let asked = self.trim.asked.take();
        let tail = match read {
            Ok(tail) => tail,
            Err(e) => {
                tracing::warn!("the session's end could not be read to trim the panes: {e}");
                return;
            }
        };
        if asked != Some(self.trim.events) || !self.may_trim() || !tail.loaded.warnings.is_empty() {
            return;
        }
        let entries = &tail.loaded.entries;
        let newest = entries.iter().rev().find_map(|e| match e {
            Entry::Event(e) if matches!(e.data, EventData::RunStarted { .. }) => {
                Some(Arc::clone(&e.request_id))
            }
            _ => None,
        });
        let runs = super::earlier::runs_in(entries);
        if newest.is_none() || newest != self.trim.last_run || runs >= self.trim.runs {
            return;
        }
        let (chat, timeline) =
            super::earlier::views_of(entries, self.timeline.pricing.clone(), now);
        // What was said before the first run (the greeting, notes) stays.
        let at = match self.history_at {
            0 => self.chat.first_user().unwrap_or(self.chat.len()),
            at => at,
        };
        self.chat.replace_from(at, chat);
        self.history_at = at;
        self.timeline.adopt(timeline);
        tracing::info!(
            kept = runs,
            let_go = self.trim.runs - runs,
            "the panes let go of older runs"
        );
        self.trim.runs = runs;
        if tail.has_earlier() {
            self.earlier = Some(Earlier {
                path,
                before: tail.from,
            });
        }
    }
}
