//! One way to put a [`Recorder`] behind a sink: every event and message is recorded (session
//! file, audit log), then passed on; a session file that cannot be written is reported once,
//! the way the inner sink tells its user. `exec` and the orchestrator task both use it.

use std::path::Path;

use super::EventSink;
use crate::conversation::Message;
use crate::event::Event;
use crate::recorder::Recorder;

/// A sink that can tell its user that the session is no longer saved.
pub trait ProblemSink: EventSink {
    /// Reports a recording problem (said once per problem).
    fn problem(&mut self, problem: String);
}

/// `S` with a recorder in front: records, then forwards, then reports what went wrong.
pub struct Recorded<S> {
    inner: S,
    recorder: Recorder,
}

impl<S: ProblemSink> Recorded<S> {
    /// Records into `recorder` what reaches `inner`.
    pub fn new(inner: S, recorder: Recorder) -> Self {
        Self { inner, recorder }
    }

    /// The sink behind the recorder, to finish its output.
    pub fn inner_mut(&mut self) -> &mut S {
        &mut self.inner
    }

    /// The id of the session file being written, if it exists yet.
    pub fn session_id(&self) -> Option<String> {
        self.recorder.session_id().map(String::from)
    }

    /// The recorder behind the sink (a rewind forks its session).
    pub fn recorder_mut(&mut self) -> &mut Recorder {
        &mut self.recorder
    }

    /// Starts a new session (after `/clear`); its file is created with its first line.
    pub fn restart(&mut self, provider: &str, model: &str, workdir: &Path) {
        self.recorder.restart(provider, model, workdir);
        self.report();
    }

    /// Hands a problem the user has not heard of yet to the inner sink.
    fn report(&mut self) {
        if let Some(problem) = self.recorder.take_problem() {
            self.inner.problem(problem);
        }
    }
}

impl<S: ProblemSink> EventSink for Recorded<S> {
    fn emit(&mut self, event: Event) {
        self.recorder.event(&event);
        self.inner.emit(event);
        self.report();
    }

    fn message(&mut self, message: &Message) {
        self.recorder.message(message);
        self.inner.message(message);
        self.report();
    }
}
