//! Starting a run's history: which session `--resume` continues (and what it ran with), and
//! the recorder a run writes into. Shared by `exec` and the TUI; errors are messages for the
//! user (the binary exits 2 with them).

use std::path::PathBuf;
use std::sync::Arc;

use crate::audit::AuditLog;
use crate::config::{self, Overrides};
use crate::orchestrator::Orchestrator;
use crate::recorder::Recorder;
use crate::session::{self, Entry, SessionKind, SessionWriter};

/// The session `--resume` picks, if any, with what it says about its run.
pub struct Resuming {
    /// The session file.
    pub path: PathBuf,
    /// Which provider, model and workdir were taken from the session, for the user.
    pub note: String,
}

/// For `--resume`: finds the session first, so that the provider, model and workdir it ran
/// with fill in what the command line leaves open (`-p`, `-m`, `-C` still win).
pub fn resume_overrides(
    mut chosen: Overrides,
    resume: Option<&str>,
) -> Result<(Overrides, Option<Resuming>), String> {
    let Some(id) = resume else {
        return Ok((chosen, None));
    };
    let Some(dir) = session::sessions_dir() else {
        return Err("cannot resume: no data directory to find sessions in".to_string());
    };
    let here = match &chosen.workdir {
        Some(dir) => dir.clone(),
        None => std::env::current_dir().unwrap_or_default(),
    };
    let here = here.canonicalize().unwrap_or(here);
    let path =
        session::find(&dir, (!id.is_empty()).then_some(id), &here).map_err(|e| e.to_string())?;
    let mut taken = Vec::new();
    if let Some(header) = session::header_of(&path) {
        // The provider and model it ended with (a `/model` switch's or a run's, which the
        // session index keeps), else its start's.
        let (provider, model) =
            session::last_model(&path).unwrap_or((header.provider, header.model));
        if chosen.provider.is_none() && !provider.is_empty() {
            taken.push(format!("provider `{provider}`"));
            chosen.provider = Some(provider);
        }
        if chosen.model.is_none() && !model.is_empty() {
            taken.push(format!("model `{model}`"));
            chosen.model = Some(model);
        }
        if chosen.workdir.is_none() && header.workdir != here {
            if header.workdir.is_dir() {
                taken.push(format!("workdir `{}`", header.workdir.display()));
                chosen.workdir = Some(header.workdir);
            } else {
                taken.push(format!(
                    "not its workdir `{}`, which is gone",
                    header.workdir.display()
                ));
            }
        }
    }
    let note = if taken.is_empty() {
        String::new()
    } else {
        format!(
            "From the session: {} (-p, -m and -C choose otherwise).",
            taken.join(", ")
        )
    };
    Ok((chosen, Some(Resuming { path, note })))
}

/// How many of a resumed session's newest entries the screen starts with; older ones are
/// read when the user scrolls back to them.
pub const RESUME_ENTRIES: usize = 1_000;

/// The part of a resumed session left in its file, for the screen to read on demand.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Earlier {
    /// The session file.
    pub path: PathBuf,
    /// Where the part already shown starts.
    pub before: u64,
}

/// The session a run records into, and what it resumes.
pub struct Opened {
    /// Where the run records (session file, audit log).
    pub recorder: Recorder,
    /// What a resumed session held, for the TUI to replay: its newest entries.
    pub history: Vec<Entry>,
    /// The older part of a resumed session, not read yet.
    pub earlier: Option<Earlier>,
    /// Its tokens by model (the session's cost counts them).
    pub earlier_usage: std::collections::BTreeMap<String, crate::conversation::Usage>,
    /// Things to tell the user (warnings, what was resumed).
    pub notes: Vec<String>,
}

/// Starts a new session file (its header says it was started in `kind`), or (`--resume`)
/// loads a saved one into the orchestrator and appends to it. No writable data dir is not
/// fatal: the run goes on unsaved and says so.
pub fn open_session(
    resolved: &config::Resolved,
    orchestrator: &mut Orchestrator,
    resuming: Option<Resuming>,
    kind: SessionKind,
) -> Result<Opened, String> {
    let dir = session::sessions_dir();
    let secrets = Arc::clone(&resolved.tools.secrets);
    let mut notes = Vec::new();
    // No audit log is no reason to stop; the user is told why (a symlink in its place).
    let audit = match crate::audit::state_dir().map(|d| AuditLog::open(&d)) {
        Some(Ok(log)) => Some(log),
        Some(Err(e)) => {
            notes.push(format!("the audit log is off: {e}"));
            None
        }
        None => None,
    };
    let (provider, model) = (&resolved.provider.name, &resolved.provider.model);
    // A collector that cannot be reached is no reason to stop; one that cannot be set up
    // is said.
    let otel = match &resolved.otel {
        Some(to) => match crate::otel::live::Live::start(to, Arc::clone(&secrets)) {
            Ok(live) => Some(live),
            Err(e) => {
                notes.push(e);
                None
            }
        },
        None => None,
    };
    let Some(resuming) = resuming else {
        if dir.is_none() {
            notes.push("this session is not saved: no data directory".to_string());
        }
        let recorder = Recorder::deferred(dir, audit, provider, model, &resolved.workdir);
        return Ok(Opened {
            recorder: recorder.made_in(kind).with_secrets(secrets).with_otel(otel),
            history: Vec::new(),
            earlier: None,
            earlier_usage: Default::default(),
            notes,
        });
    };
    let Some(dir) = dir else {
        return Err("cannot resume: no data directory to find sessions in".to_string());
    };
    let path = resuming.path;
    let (tail, count, loaded_notes) = orchestrator.load_session(&path, RESUME_ENTRIES)?;
    notes.extend(loaded_notes);
    let loaded = &tail.loaded;
    let writer = match SessionWriter::append_to(&path) {
        Ok(writer) => Some(writer),
        Err(e) => {
            notes.push(format!("the resumed session is not saved further: {e}"));
            None
        }
    };
    let id = loaded
        .header
        .as_ref()
        .map_or_else(|| path.display().to_string(), |h| h.id.clone());
    notes.push(format!("Resumed session `{id}` ({count} messages)."));
    if !resuming.note.is_empty() {
        notes.push(resuming.note);
    }
    let earlier = tail.has_earlier().then(|| Earlier {
        path: path.clone(),
        before: tail.from,
    });
    Ok(Opened {
        // A `/clear` in it starts a session of this kind.
        recorder: Recorder::new(writer, Some(dir), audit)
            .made_in(kind)
            .with_secrets(secrets)
            .with_otel(otel),
        history: tail.loaded.entries,
        earlier,
        earlier_usage: tail.skipped_usage,
        notes,
    })
}
