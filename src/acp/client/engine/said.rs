//! What the engine says: events recorded then sent to the screen, problems (the first ones
//! in the chat, the rest in the log), and the agent's end with its last stderr.

#[allow(clippy::wildcard_imports)]
use super::*;

impl State {
    /// The agent is gone: the run in progress fails saying why (with its last stderr).
    pub(super) async fn agent_gone(&mut self, why: String) {
        if self.gone.is_some() {
            return;
        }
        let why = format!("{why}{}", self.stderr_tail());
        tracing::warn!("{why}");
        self.gone = Some(why.clone());
        self.waiting.clear();
        self.cancelled_at = None;
        self.queue.clear();
        if self.running.take().is_some() {
            self.kill_terminals();
            let events = self.translator.abort(false, why, crate::event::unix_ms());
            self.emit_all(events).await;
        } else {
            self.say(why).await;
        }
    }

    pub(super) fn stderr_tail(&self) -> String {
        let lines = self
            .process
            .as_ref()
            .map(|p| p.stderr.lines())
            .unwrap_or_default();
        if lines.is_empty() {
            String::new()
        } else {
            format!("; its last words: {}", lines.join(" / "))
        }
    }

    pub(super) async fn emit_all(&mut self, events: Vec<EventData>) {
        for data in events {
            let event = Event::now(&self.request, data);
            self.emit(event).await;
        }
        self.report_recording().await;
    }

    /// Records, then shows (waiting for room; not past the stop).
    pub(super) async fn emit(&mut self, event: Event) {
        self.recorder.event(&event);
        tokio::select! {
            _ = self.events.send(event) => {}
            () = self.stop.cancelled() => {}
        }
    }

    /// Something the agent did wrong, outside any run: said in the chat (the first
    /// [`PROBLEMS_SAID`]; an agent that keeps at it fills the log, not the chat) and recorded.
    pub(super) async fn problem(&mut self, message: String) {
        tracing::warn!(agent = %self.name, "{message}");
        self.problems += 1;
        if self.problems > PROBLEMS_SAID {
            return;
        }
        let message = if self.problems == PROBLEMS_SAID {
            format!("{message} (further problems go to the log only)")
        } else {
            message
        };
        self.say(message).await;
    }

    /// A message outside any run (an answer to the user's op, the agent's end), said in the
    /// chat and recorded.
    pub(super) async fn say(&mut self, message: String) {
        let data = EventData::Error {
            kind: "acp".to_string(),
            message,
        };
        self.emit(Event::now(&Arc::from(""), data)).await;
    }

    pub(super) async fn report_recording(&mut self) {
        if let Some(problem) = self.recorder.take_problem() {
            let data = EventData::Error {
                kind: "session".to_string(),
                message: problem,
            };
            self.emit(Event::now(&Arc::from(""), data)).await;
        }
    }
}
