//! Checkpoints in a run (issue 29): the workspace's files are recorded before each batch of
//! calls that may change them and at the run's end, and the run's changes are reported
//! (`checkpoint`, `files_changed`). The store's git work runs on a blocking thread; while the
//! first snapshot of a large workspace is still being taken, calls go on without one.

use std::sync::Arc;
use std::time::Duration;

use super::scope::Run;
use crate::checkpoint::{Checkpoint, CheckpointError, Point, Store};
use crate::event::{CheckpointTaken, EventData, FilesChanged, MAX_NAMED};

/// How long a call waits for the first snapshot of the workspace before it goes without a
/// checkpoint.
const FIRST_SNAPSHOT_WAIT: Duration = Duration::from_millis(500);
/// How often it looks whether the first snapshot is done.
const BUSY_POLL: Duration = Duration::from_millis(10);

impl Run<'_> {
    /// Records the workspace before `calls` (frame ids) run, when any of them may change it.
    pub(super) async fn checkpoint_before(&mut self, calls: Vec<String>) {
        let Some(store) = self.orch.checkpoints.clone() else {
            return;
        };
        if calls.is_empty() {
            return;
        }
        let label = format!("before {}", calls.join(", "));
        // The first snapshot of a small workspace is done in moments: the call waits for it
        // a little; a large one's is not waited for (the call goes without a checkpoint).
        let mut polls = FIRST_SNAPSHOT_WAIT.as_millis() / BUSY_POLL.as_millis();
        let taken = loop {
            let label = label.clone();
            let taken = blocking(&store, move |s| s.try_checkpoint(&label)).await;
            if polls == 0 || !matches!(taken, Err(CheckpointError::Busy)) {
                break taken;
            }
            polls -= 1;
            tokio::time::sleep(BUSY_POLL).await;
        };
        if let Ok(cp) = &taken
            && self.first_checkpoint.is_none()
        {
            self.first_checkpoint = Some(cp.id.clone());
        }
        self.emit(EventData::Checkpoint(taken_event(calls, taken)));
    }

    /// At the run's end: a checkpoint, and what the run changed since its first one.
    pub(super) async fn checkpoint_end(&mut self) {
        let (Some(store), Some(from)) =
            (self.orch.checkpoints.clone(), self.first_checkpoint.take())
        else {
            return;
        };
        let taken = blocking(&store, |s| s.checkpoint("end of run")).await;
        let to = taken.as_ref().ok().map(|cp| cp.id.clone());
        self.emit(EventData::Checkpoint(taken_event(Vec::new(), taken)));
        let Some(to) = to else {
            return;
        };
        let (a, b) = (
            Point::Checkpoint(from.clone()),
            Point::Checkpoint(to.clone()),
        );
        match blocking(&store, move |s| s.changes(&a, &b)).await {
            Ok(changes) => {
                let event = FilesChanged::new(from.to_string(), to.to_string(), &changes);
                self.emit(EventData::FilesChanged(Box::new(event)));
            }
            Err(e) => tracing::warn!(error = %e, "the run's changes could not be listed"),
        }
    }
}

/// Runs `f` on the store on a blocking thread.
async fn blocking<T: Send + 'static>(
    store: &Arc<Store>,
    f: impl FnOnce(&Store) -> Result<T, CheckpointError> + Send + 'static,
) -> Result<T, CheckpointError> {
    let store = Arc::clone(store);
    tokio::task::spawn_blocking(move || f(&store))
        .await
        .unwrap_or_else(|e| Err(CheckpointError::Background(e.to_string())))
}

/// The event for a checkpoint taken, or not.
fn taken_event(calls: Vec<String>, taken: Result<Checkpoint, CheckpointError>) -> CheckpointTaken {
    match taken {
        Ok(cp) => CheckpointTaken {
            id: Some(cp.id.to_string()),
            calls,
            changed: cp.changed,
            skipped: cp
                .skipped
                .iter()
                .take(MAX_NAMED)
                .map(|s| s.path.to_string_lossy().into_owned())
                .collect(),
            skipped_count: cp.skipped.len(),
            error: None,
        },
        Err(e) => CheckpointTaken {
            id: None,
            calls,
            changed: false,
            skipped: Vec::new(),
            skipped_count: 0,
            error: Some(e.to_string()),
        },
    }
}
