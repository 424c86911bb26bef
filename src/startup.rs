//! Starting a run's history: which session `--resume` continues (and what it ran with), and
//! the recorder a run writes into. Shared by `exec` and the TUI; errors are messages for the
//! user (the binary exits 2 with them).

use std::path::PathBuf;
use std::sync::Arc;

use crate::audit::AuditLog;
use crate::config::{self, Overrides};
use crate::orchestrator::Orchestrator;
use crate::recorder::Recorder;
use crate::session::{self, Entry, SessionWriter};

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
        if chosen.provider.is_none() && !header.provider.is_empty() {
            taken.push(format!("provider `{}`", header.provider));
            chosen.provider = Some(header.provider);
        }
        if chosen.model.is_none() && !header.model.is_empty() {
            taken.push(format!("model `{}`", header.model));
            chosen.model = Some(header.model);
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

/// The session a run records into, and what it resumes.
pub struct Opened {
    /// Where the run records (session file, audit log).
    pub recorder: Recorder,
    /// What a resumed session held, for the TUI to replay.
    pub history: Vec<Entry>,
    /// Things to tell the user (warnings, what was resumed).
    pub notes: Vec<String>,
}

/// Starts a new session file, or (`--resume`) loads a saved one into the orchestrator and
/// appends to it. No writable data dir is not fatal: the run goes on unsaved and says so.
pub fn open_session(
    resolved: &config::Resolved,
    orchestrator: &mut Orchestrator,
    resuming: Option<Resuming>,
) -> Result<Opened, String> {
    let dir = session::sessions_dir();
    let secrets = Arc::clone(&resolved.tools.secrets);
    let audit = crate::audit::state_dir().and_then(|d| AuditLog::open(&d).ok());
    let (provider, model) = (&resolved.provider.name, &resolved.provider.model);
    let mut notes = Vec::new();
    let Some(resuming) = resuming else {
        if dir.is_none() {
            notes.push("this session is not saved: no data directory".to_string());
        }
        let recorder = Recorder::deferred(dir, audit, provider, model, &resolved.workdir);
        return Ok(Opened {
            recorder: recorder.with_secrets(secrets),
            history: Vec::new(),
            notes,
        });
    };
    let Some(dir) = dir else {
        return Err("cannot resume: no data directory to find sessions in".to_string());
    };
    let path = resuming.path;
    let loaded = session::load(&path).map_err(|e| e.to_string())?;
    notes.extend(loaded.warnings.iter().cloned());
    let (messages, repaired) = session::repair(loaded.messages());
    notes.extend(repaired);
    let count = messages.len();
    orchestrator.restore(messages);
    // The session ended compacted: its requests go on from the same summary (the file
    // keeps every message, so resuming costs no summary call).
    if let Some(compacted) = last_compaction(&loaded.entries) {
        orchestrator.restore_compaction(compacted.kept_from, compacted.summary.clone());
    }
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
    Ok(Opened {
        recorder: Recorder::new(writer, Some(dir), audit).with_secrets(secrets),
        history: loaded.entries,
        notes,
    })
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
