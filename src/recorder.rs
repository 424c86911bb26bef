//! Where a run's history goes besides the screen or stdout: the session file (messages and
//! trace events) and the audit log (what happened, never content). Both `exec` and the TUI
//! hang one of these behind their event sink.

use std::path::PathBuf;
use std::sync::Arc;

use crate::audit::AuditLog;
use crate::conversation::Message;
use crate::event::Event;
use crate::secrets::Secrets;
use crate::session::{SessionKind, SessionWriter};

mod progress;

/// The session file and the audit log of a run; either may be missing (no writable data dir,
/// or a write failed: taco goes on without it and says so once).
#[derive(Default)]
pub struct Recorder {
    session: Option<SessionWriter>,
    audit: Option<AuditLog>,
    /// Where new sessions go (`/clear` starts one).
    dir: Option<PathBuf>,
    /// What went wrong with the session file, once, for the user.
    problem: Option<String>,
    /// Key values that never reach the session file.
    secrets: Arc<Secrets>,
    /// The session file to start when the first line is recorded: a launch or a `/clear`
    /// that records nothing leaves no empty session behind.
    planned: Option<Planned>,
    /// Where the sessions it starts were started (the TUI or `exec`), for their headers.
    kind: Option<SessionKind>,
    /// Progress reports kept to a few a second in the file.
    progress: progress::Coalescer,
    /// Spans exported as the run goes (`[otel]`), if on.
    otel: Option<crate::otel::live::Live>,
    /// Where the session file is, for the screen to read back what it let go of.
    locator: Locator,
}

/// Where the session being recorded is written, shared with the screen (which reads runs
/// back from it, issue 33); the recorder alone sets it.
#[derive(Debug, Clone, Default)]
pub struct Locator(Arc<std::sync::Mutex<Option<PathBuf>>>);

impl Locator {
    /// The session file being written now, if any.
    pub fn path(&self) -> Option<PathBuf> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    fn set(&self, path: Option<PathBuf>) {
        *self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = path;
    }
}

/// What a session file that does not exist yet will say in its header.
struct Planned {
    provider: String,
    model: String,
    workdir: PathBuf,
}

impl Recorder {
    /// Records into `session` (kept in `dir`) and `audit`.
    pub fn new(
        session: Option<SessionWriter>,
        dir: Option<PathBuf>,
        audit: Option<AuditLog>,
    ) -> Self {
        let locator = Locator::default();
        locator.set(session.as_ref().map(|s| s.path().to_path_buf()));
        Self {
            session,
            audit,
            dir,
            problem: None,
            secrets: Arc::default(),
            planned: None,
            kind: None,
            locator,
            progress: progress::Coalescer::default(),
            otel: None,
        }
    }

    /// Records into a new session file in `dir`, created with the first line recorded.
    pub fn deferred(
        dir: Option<PathBuf>,
        audit: Option<AuditLog>,
        provider: &str,
        model: &str,
        workdir: &std::path::Path,
    ) -> Self {
        let mut recorder = Self::new(None, dir, audit);
        recorder.restart(provider, model, workdir);
        recorder
    }

    /// Says in the header of each session it starts (this one and any `/clear` starts) that
    /// it was started in `kind`.
    pub fn made_in(mut self, kind: SessionKind) -> Self {
        self.kind = Some(kind);
        self
    }

    /// Redacts these key values from the session file (this one and any `/clear` starts).
    pub fn with_secrets(mut self, secrets: Arc<Secrets>) -> Self {
        if let Some(session) = &mut self.session {
            session.set_secrets(Arc::clone(&secrets));
        }
        self.secrets = secrets;
        self
    }

    /// Exports the events it records as spans too.
    pub fn with_otel(mut self, otel: Option<crate::otel::live::Live>) -> Self {
        self.otel = otel;
        self
    }

    /// Sends the spans still queued and stops exporting, within `bound` (taco ends); what
    /// went wrong with the export, if the user has not heard of it yet.
    pub fn finish_otel(&mut self, bound: std::time::Duration) -> Option<String> {
        let mut otel = self.otel.take()?;
        otel.shutdown(bound);
        otel.take_report()
    }

    /// The session being written, if any.
    pub fn session_id(&self) -> Option<&str> {
        self.session.as_ref().map(SessionWriter::id)
    }

    /// The session file being written, if any.
    pub fn session_path(&self) -> Option<&std::path::Path> {
        self.session.as_ref().map(SessionWriter::path)
    }

    /// Goes on writing into `session` (a conversation's fork).
    pub fn switch_session(&mut self, mut session: SessionWriter) {
        session.set_secrets(Arc::clone(&self.secrets));
        self.planned = None;
        self.set_session(Some(session));
    }

    /// A problem with the session file that the user has not been told about yet.
    pub fn take_problem(&mut self) -> Option<String> {
        (self.problem.take()).or_else(|| self.otel.as_mut().and_then(|o| o.take_report()))
    }

    /// Records one event (deltas go nowhere).
    pub fn event(&mut self, event: &Event) {
        if let Some(audit) = &mut self.audit {
            audit.record(event);
        }
        if !event.is_trace() {
            return;
        }
        // A switch before anything was recorded is what the new file's header says, not a
        // line of a session that holds nothing else.
        if let (crate::event::EventData::ModelSwitched(chosen), Some(planned)) =
            (&event.data, &mut self.planned)
        {
            planned.provider.clone_from(&chosen.provider);
            planned.model.clone_from(&chosen.model);
            return;
        }
        self.start_planned();
        // After the session file is made: a new session's first run names it.
        if let Some(otel) = &mut self.otel {
            let session = self.session.as_ref().map(SessionWriter::id);
            otel.event(event, session);
        }
        for event in self.progress.take(event) {
            if let Some(session) = &mut self.session
                && let Err(e) = session.event(&event)
            {
                self.fail(e);
            }
        }
    }

    /// Records a message of the user's conversation.
    pub fn message(&mut self, message: &Message) {
        self.start_planned();
        if let Some(session) = &mut self.session
            && let Err(e) = session.message(message)
        {
            self.fail(e);
        }
        self.keep_images(message);
    }

    /// Keeps the bytes of a message's images beside the session file, once each (the file
    /// itself carries only their references).
    fn keep_images(&mut self, message: &Message) {
        let Some(dir) = self.session_path().and_then(std::path::Path::parent) else {
            return;
        };
        let dir = dir.to_path_buf();
        for image in &message.images {
            if let Err(error) = crate::images::store::save(&dir, image) {
                tracing::warn!(name = %image.name, %error, "image not stored");
                self.problem = Some(format!(
                    "image {} is not stored beside the session ({error}): a resume will \
                     send a note in its place",
                    image.name
                ));
            }
        }
    }

    /// Starts a new session (after `/clear`); its file is created with its first line.
    pub fn restart(&mut self, provider: &str, model: &str, workdir: &std::path::Path) {
        self.set_session(None);
        self.planned = Some(Planned {
            provider: provider.to_string(),
            model: model.to_string(),
            workdir: workdir.to_path_buf(),
        });
    }

    /// Creates the planned session file now rather than with its first line (an ACP client
    /// needs the session's id before anything is recorded).
    pub fn start_now(&mut self) {
        self.start_planned();
    }

    /// Creates the planned session file, if one waits.
    fn start_planned(&mut self) {
        let Some(planned) = self.planned.take() else {
            return;
        };
        let Some(dir) = &self.dir else {
            return;
        };
        let (provider, model, workdir) = (&planned.provider, &planned.model, &planned.workdir);
        let created = match self.kind {
            Some(kind) => SessionWriter::create_for(kind, dir, provider, model, workdir),
            None => SessionWriter::create(dir, provider, model, workdir),
        };
        match created {
            Ok(mut session) => {
                session.set_secrets(Arc::clone(&self.secrets));
                self.set_session(Some(session));
            }
            Err(e) => {
                self.problem = Some(format!(
                    "this session is not saved: cannot write to {}: {e}",
                    dir.display()
                ));
            }
        }
    }

    fn fail(&mut self, error: std::io::Error) {
        let path = self
            .session
            .as_ref()
            .map(|s| s.path().display().to_string())
            .unwrap_or_default();
        tracing::warn!(%path, %error, "session file write failed; recording stopped");
        self.problem = Some(format!(
            "cannot write the session file {path}: {error}; the session is no longer saved"
        ));
        self.set_session(None);
    }

    /// The session being written, and the locator told.
    fn set_session(&mut self, session: Option<SessionWriter>) {
        self.locator
            .set(session.as_ref().map(|s| s.path().to_path_buf()));
        self.session = session;
    }

    /// Where the session file is, now and after every `/clear` (shared).
    pub fn locator(&self) -> Locator {
        self.locator.clone()
    }
}
