//! Loading a saved conversation into the orchestrator: a resume, and a rewind's fork.

use std::path::Path;

use super::Orchestrator;
use super::context;
use crate::session;

impl Orchestrator {
    /// Loads the end of the session file at `path` into the conversation (a resume, a rewind's
    /// fork): the tail the next requests can send, and the compaction it ended with.
    /// Returns the tail, the conversation's length in the file, and what was repaired or skipped.
    pub fn load_session(
        &mut self,
        path: &Path,
        entries: usize,
    ) -> Result<(session::Tail, usize, Vec<String>), String> {
        // Only the end is read: what the next requests can send, and what the screen shows.
        let want = session::Want {
            tokens: context::resume_tokens(self.settings().context.window),
            messages: self.settings().history_limit.saturating_add(1),
            entries,
        };
        let tail = session::tail(path, &want).map_err(|e| e.to_string())?;
        let loaded = &tail.loaded;
        let mut notes = loaded.warnings.clone();
        let (mut messages, repaired) = session::repair(loaded.messages());
        notes.extend(repaired);
        // The images' bytes are kept beside the session files, by hash.
        if let Some(dir) = path.parent() {
            notes.extend(crate::images::store::hydrate(dir, &mut messages));
        }
        let count = messages.len() + tail.skipped_messages;
        self.restore(messages);
        // The session's cost counts every run in the file, as its status line does: the
        // part read, replayed, and the part left, as the index counted it.
        let read =
            crate::run_model::RunModel::replay(loaded.entries.iter().filter_map(
                |entry| match entry {
                    session::Entry::Event(event) => Some(event),
                    session::Entry::Message(_) => None,
                },
            ));
        self.spent = super::budget::Spent::default();
        self.spent.add_all(read.usage_by_model());
        self.spent.add_all(&tail.skipped_usage);
        // The session ended compacted: its requests go on from the same summary (the file
        // keeps every message, so resuming costs no summary call). Its cut counts the file's
        // messages; the orchestrator holds its own system prompt, then the ones read.
        if let Some(compacted) = last_compaction(&loaded.entries) {
            let skipped = tail.skipped_messages;
            if let Some(kept_from) = compacted.kept_from.checked_sub(skipped) {
                let kept_from = kept_from + usize::from(skipped > 0);
                self.restore_compaction(
                    kept_from,
                    compacted.summary.clone(),
                    compacted.requests.clone(),
                    compacted.requests_left_out,
                );
            }
        }
        Ok((tail, count, notes))
    }
}

/// The last compaction of the user's conversation in a session file (a `/clear` starts a
/// new file, so it belongs to the conversation being resumed).
fn last_compaction(entries: &[session::Entry]) -> Option<&crate::event::Compacted> {
    entries.iter().rev().find_map(|entry| match entry {
        session::Entry::Event(event) => match &event.data {
            crate::event::EventData::Compacted(c) if c.parent.is_none() && c.error.is_none() => {
                Some(c.as_ref())
            }
            _ => None,
        },
        session::Entry::Message(_) => None,
    })
}
