//! The recorder's side of a live export: each event folded into spans, the ended ones
//! handed to the exporter, the session they belong to kept up to date.

use std::sync::Arc;

use super::Exporting;
use super::attrs::Content;
use super::export::Exporter;
use super::fold::SpanFold;
use crate::event::{Event, EventData};
use crate::secrets::Secrets;

/// A live export: the fold and the exporter behind it.
pub struct Live {
    fold: SpanFold,
    exporter: Exporter,
    /// The last event's time: spans still open at the end end there.
    last: u64,
}

impl Live {
    /// Starts exporting to `to`; content, when captured, is masked with `secrets`.
    pub fn start(to: &Exporting, secrets: Arc<Secrets>) -> Result<Self, String> {
        let content = if to.capture_content {
            Content::captured(secrets)
        } else {
            Content::none()
        };
        Ok(Self {
            fold: SpanFold::new(content, None),
            exporter: Exporter::start(to)?,
            last: 0,
        })
    }

    /// Folds one event in (of session `session`); its ended spans are queued.
    pub fn event(&mut self, event: &Event, session: Option<&str>) {
        if matches!(event.data, EventData::RunStarted { .. }) {
            self.fold.set_conversation(session.map(String::from));
        }
        self.last = self.last.max(event.timestamp);
        let spans = self.fold.apply(event);
        self.exporter.send(spans);
    }

    /// A trouble with the export the user has not heard of yet.
    pub fn take_report(&mut self) -> Option<String> {
        self.exporter.take_report()
    }

    /// Ends what is still open, sends everything queued, and stops, within `bound`.
    pub fn shutdown(&mut self, bound: std::time::Duration) {
        let open = self.fold.finish(self.last);
        self.exporter.send(open);
        self.exporter.shutdown(bound);
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        self.shutdown(super::export::SHUTDOWN_TIMEOUT);
    }
}
