//! The task's side of rewind (issue 29): previews and diffs are made on a blocking thread and
//! go to the UI as `listed` events; a rewind runs between requests, records `rewound` in the
//! session it leaves and (after a conversation fork) in the one it goes on in.

use std::path::PathBuf;
use std::sync::Arc;

use tokio::sync::mpsc::{UnboundedSender, WeakUnboundedSender};

use super::recorded::Recorded;
use super::{EventSink, Orchestrator};
use crate::checkpoint::Store;
use crate::event::{ChangesView, Event, EventData, Listed, RewindPoint, RewindScope};
use crate::rewind::Sources;

/// Entries of a forked session read back for the screen (as a resume reads them).
const FORK_ENTRIES: usize = 200;

/// What a rewind needs from the task, owned so it can go to a blocking thread.
struct Owned {
    store: Result<Arc<Store>, String>,
    session: Option<PathBuf>,
}

impl Owned {
    fn of(orchestrator: &Orchestrator, sink: &mut Recorded<UnboundedSender<Event>>) -> Self {
        Self {
            store: orchestrator
                .checkpoints()
                .cloned()
                .ok_or_else(|| orchestrator.checkpoints_off().to_string()),
            session: sink.recorder_mut().session_path().map(PathBuf::from),
        }
    }

    fn sources(&self) -> Sources<'_> {
        Sources {
            store: self.store.as_deref().map_err(String::as_str),
            session: self.session.as_deref(),
        }
    }
}

/// The store and why it is off, for [`changes`] while a run holds the orchestrator.
pub(super) fn store_of(orchestrator: &Orchestrator) -> (Option<Arc<Store>>, String) {
    (
        orchestrator.checkpoints().cloned(),
        orchestrator.checkpoints_off().to_string(),
    )
}

/// Sends a listing to the UI (outside any request).
fn send(events: &WeakUnboundedSender<Event>, listed: Listed) {
    if let Some(events) = events.upgrade() {
        let _ = events.send(Event::now(
            &Arc::from(""),
            EventData::Listed(Box::new(listed)),
        ));
    }
}

/// Makes the preview of a rewind off the task's loop.
pub(super) fn preview(
    orchestrator: &Orchestrator,
    sink: &mut Recorded<UnboundedSender<Event>>,
    events: WeakUnboundedSender<Event>,
    point: RewindPoint,
) {
    let owned = Owned::of(orchestrator, sink);
    tokio::task::spawn_blocking(move || {
        let preview = owned.sources().preview(&point);
        send(&events, Listed::Rewind(Box::new(preview)));
    });
}

/// Lists a run's changes with their diffs off the task's loop.
pub(super) fn changes(
    (store, off): (Option<Arc<Store>>, String),
    events: WeakUnboundedSender<Event>,
    from: String,
    to: String,
) {
    tokio::task::spawn_blocking(move || {
        let files = match &store {
            Some(store) => crate::rewind::changes_view(store, &from, &to),
            None => Err(off),
        };
        send(
            &events,
            Listed::Changes(Box::new(ChangesView { from, to, files })),
        );
    });
}

/// Rewinds (between requests): the files, then the conversation's fork, which the
/// orchestrator goes on with and the recorder writes into.
pub(super) async fn rewind(
    orchestrator: &mut Orchestrator,
    sink: &mut Recorded<UnboundedSender<Event>>,
    point: RewindPoint,
    scope: RewindScope,
    overwrite: bool,
) {
    let owned = Owned::of(orchestrator, sink);
    let applied =
        tokio::task::spawn_blocking(move || owned.sources().apply(&point, scope, overwrite))
            .await
            .unwrap_or_else(|e| Err(format!("the rewind did not finish: {e}")));
    let request_id: Arc<str> = Arc::from(uuid::Uuid::new_v4().to_string());
    let applied = match applied {
        Ok(applied) => applied,
        Err(message) => {
            // Nothing was done: the UI hears why, the session records nothing.
            sink.inner_mut().emit(Event::now(
                &request_id,
                EventData::Error {
                    kind: "rewind".to_string(),
                    message,
                },
            ));
            return;
        }
    };
    let event = Event::now(&request_id, EventData::Rewound(Box::new(applied.rewound)));
    let Some(fork) = applied.fork else {
        sink.emit(event);
        return;
    };
    // The session left behind says where it went; the new one says where it came from, a
    // moment later, so it is the newer one (`--resume` and the picker go by the last line).
    sink.recorder_mut().event(&event);
    let event = Event {
        timestamp: event.timestamp + 1,
        ..event
    };
    let path = fork.path().to_path_buf();
    sink.recorder_mut().switch_session(fork);
    if let Err(message) = orchestrator.load_session(&path, FORK_ENTRIES) {
        sink.inner_mut().emit(Event::now(
            &request_id,
            EventData::Error {
                kind: "rewind".to_string(),
                message: format!("the forked conversation could not be read back: {message}"),
            },
        ));
    }
    sink.emit(event);
}
