//! `taco rewind`: the headless side of rewind (issue 29), on the workdir's latest session (or
//! `--session ID`): `--list` prints its runs and calls with their checkpoints; `ID` rewinds
//! the files and/or the conversation to just before that call or run (or to a checkpoint: a
//! rewind's undo). Hand-edited files are kept and named unless `--force`.

use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use super::Start;
use crate::checkpoint::Store;
use crate::clock::SystemClock;
use crate::event::{Event, EventData, RewindPoint, RewindScope, Rewound};
use crate::exec::{EXIT_OK, EXIT_RUN_ERROR, EXIT_USAGE};
use crate::rewind::{History, Sources};
use crate::session::{self, SessionWriter};

/// What `taco rewind` was asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RewindRequest {
    /// `--list`: print the session's points, change nothing.
    pub list: bool,
    /// The call, run or checkpoint to go back to.
    pub id: Option<String>,
    /// What goes back (`--files`, `--conversation`; both by default).
    pub scope: RewindScope,
    /// `--session ID`: another session than the workdir's latest.
    pub session: Option<String>,
    /// `--force`: overwrite files edited by hand since taco's last checkpoint.
    pub force: bool,
}

/// Runs `taco rewind`; the exit code.
pub fn rewind(start: &Start, request: RewindRequest) -> i32 {
    match run(start, &request) {
        Ok(code) => code,
        Err((code, message)) => {
            crate::say!("taco: {message}");
            code
        }
    }
}

type Failed = (i32, String);

fn usage(message: impl std::fmt::Display) -> Failed {
    (EXIT_USAGE, message.to_string())
}

fn run(start: &Start, request: &RewindRequest) -> Result<i32, Failed> {
    let (workdir, config) =
        crate::config::checkpoints(&start.overrides, &crate::vault::var).map_err(usage)?;
    let dir = session::sessions_dir().ok_or_else(|| usage("there is no data directory"))?;
    let path = match &request.session {
        Some(id) => session::find(&dir, Some(id), &workdir),
        None => session::latest(&dir, &workdir),
    }
    .map_err(usage)?;
    let store = if config.enabled() {
        Store::open(&workdir, config.limits(), Arc::new(SystemClock)).map_err(|e| e.to_string())
    } else {
        Err("checkpoints are off ([checkpoints] enabled = false in the config)".to_string())
    };
    let sources = Sources {
        store: store.as_ref().map_err(String::as_str),
        session: Some(&path),
    };
    let history = sources.history().map_err(usage)?;
    let mut out = std::io::stdout().lock();
    let said = |e: std::io::Error| (EXIT_RUN_ERROR, format!("cannot write to stdout: {e}"));
    if request.list {
        out.write_all(list(&path, &history).as_bytes())
            .map_err(said)?;
        return Ok(EXIT_OK);
    }
    let Some(id) = &request.id else {
        return Err(usage(
            "say what to rewind to: a call, run or checkpoint id ('taco rewind --list' lists them)",
        ));
    };
    let point = history.point(id).map_err(usage)?;
    let scope = match (&point, request.scope) {
        (RewindPoint::Checkpoint { .. }, RewindScope::Conversation) => {
            return Err(usage("a checkpoint names no point of the conversation"));
        }
        (RewindPoint::Checkpoint { .. }, _) => RewindScope::Files,
        (_, scope) => scope,
    };
    let applied = sources
        .apply(&point, scope, request.force)
        .map_err(|e| (EXIT_RUN_ERROR, e))?;
    let text = report(&applied.rewound, &path);
    let event = Event::now(
        &Arc::from(uuid::Uuid::new_v4().to_string()),
        EventData::Rewound(Box::new(applied.rewound.clone())),
    );
    // The session left behind says what happened; a fork says where it came from.
    record(&path, applied.fork, &event);
    out.write_all(text.as_bytes()).map_err(said)?;
    Ok(if applied.rewound.failed.is_empty() {
        EXIT_OK
    } else {
        EXIT_RUN_ERROR
    })
}

/// Appends the `rewound` event to the session and to its fork (failures are said, not fatal:
/// the files are restored already).
fn record(path: &Path, fork: Option<SessionWriter>, event: &Event) {
    match SessionWriter::append_to(path) {
        Ok(mut writer) => {
            if let Err(e) = writer.event(event) {
                crate::say!("taco: the session file was not told of the rewind: {e}");
            }
        }
        Err(e) => crate::say!("taco: the session file was not told of the rewind: {e}"),
    }
    // A moment later in the fork: it is the newer session (`--resume` goes by the last line).
    let later = Event {
        timestamp: event.timestamp + 1,
        ..event.clone()
    };
    if let Some(mut fork) = fork
        && let Err(e) = fork.event(&later)
    {
        crate::say!("taco: the forked session was not told of the rewind: {e}");
    }
}

/// The session's runs and calls, with the checkpoint before each change.
fn list(path: &Path, history: &History) -> String {
    let id = session::header_of(path).map_or_else(|| path.display().to_string(), |h| h.id);
    let mut text = format!("session {id}\n");
    if history.runs.is_empty() {
        text.push_str("  (no runs)\n");
    }
    for run in &history.runs {
        let changed = run
            .changed
            .as_ref()
            .filter(|c| !c.files.is_empty())
            .map(|c| format!("  ✎ {}", c.headline()))
            .unwrap_or_default();
        text.push_str(&format!(
            "run {}  “{}”{changed}\n",
            run.request_id,
            crate::text::summarize(&run.prompt, 60)
        ));
        for call in &run.calls {
            let checkpoint = history
                .checkpoint_before(&call.id)
                .map(|c| format!("  ◇ {}", c.get(..12).unwrap_or(c)))
                .unwrap_or_default();
            text.push_str(&format!(
                "  {}  {} {}{checkpoint}\n",
                call.id,
                call.name,
                crate::text::summarize(&call.summary, 50)
            ));
        }
        for rewound in &run.rewinds {
            if let Some(undo) = &rewound.undo {
                text.push_str(&format!(
                    "  ⟲ rewound {} file(s); undo: taco rewind {}\n",
                    rewound.restored.len(),
                    undo.get(..12).unwrap_or(undo)
                ));
            }
        }
    }
    text
}

/// What a rewind did, for the terminal.
fn report(r: &Rewound, path: &Path) -> String {
    let mut text = String::new();
    if let Some(checkpoint) = &r.checkpoint {
        text.push_str(&format!(
            "files: back to checkpoint {} · {} restored\n",
            checkpoint.get(..12).unwrap_or(checkpoint),
            r.restored.len()
        ));
        for p in &r.restored {
            text.push_str(&format!("  {p}\n"));
        }
        if !r.kept.is_empty() {
            text.push_str("kept as they are (edited by hand since; --force overwrites):\n");
            for p in &r.kept {
                text.push_str(&format!("  {p}\n"));
            }
        }
        for f in &r.failed {
            text.push_str(&format!("not restored: {f}\n"));
        }
        if let Some(undo) = &r.undo {
            text.push_str(&format!("undo: taco rewind {undo}\n"));
        }
    }
    if let Some(fork) = &r.fork {
        text.push_str(&format!(
            "conversation: back to before “{}” in session {} (taco --resume {}); the later part stays in {} ({})\n",
            fork.prompt,
            fork.session,
            fork.session,
            fork.from_session,
            path.display()
        ));
    }
    text
}
