//! The diagnostic log: a file in the state dir, never the terminal (the TUI owns it).

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

use tracing_appender::non_blocking::WorkerGuard;
use tracing_subscriber::EnvFilter;

mod capped;

pub use capped::CappedLog;

/// The diagnostic log's file name in the state dir.
const LOG_FILE: &str = "taco.log";

/// `<state dir>/taco` (`~/.local/state/taco` on Linux), where logs go.
pub fn state_dir() -> Option<PathBuf> {
    // One definition, shared with the audit log.
    crate::audit::state_dir()
}

/// Starts logging to `taco.log` in the state dir (level from `TACO_LOG`, default info).
/// Returns the guard that flushes the log when dropped; `Err` says why there is no log
/// (the launch goes on: the caller tells the user), `Ok(None)` when there is nowhere to
/// write or a log was already set up.
pub fn init() -> Result<Option<WorkerGuard>, String> {
    match state_dir() {
        Some(dir) => init_in(&dir),
        None => Ok(None),
    }
}

/// Lines the log's worker queue holds before it drops new ones.
const LOG_QUEUE: usize = 4096;

/// Starts logging to `taco.log` in `dir`; see [`init`]. Only the first call in a process
/// takes effect (the global subscriber is set once).
pub fn init_in(dir: &Path) -> Result<Option<WorkerGuard>, String> {
    let file = open_capped(dir).map_err(|e| format!("the diagnostic log is off: {e}"))?;
    // The worker's queue is bounded and drops lines when full: logging never blocks a run.
    // Its default (128,000 lines) is a 4 MB buffer every process touched at start (issue
    // 33): 4,096 lines hold any burst taco logs between two writes of the worker.
    let (writer, guard) = tracing_appender::non_blocking::NonBlockingBuilder::default()
        .buffered_lines_limit(LOG_QUEUE)
        .lossy(true)
        .finish(file);
    let filter = EnvFilter::try_from_env("TACO_LOG").unwrap_or_else(|_| EnvFilter::new("info"));
    // The SDK's OAuth code prints an authorization code and token responses at debug: never
    // in the log, whatever TACO_LOG asks (issue 28.7).
    let filter = match "rmcp::transport::auth=info".parse() {
        Ok(quiet) => filter.add_directive(quiet),
        Err(_) => filter,
    };
    let set = tracing_subscriber::fmt()
        .with_writer(writer)
        .with_ansi(false)
        .with_env_filter(filter)
        .try_init();
    Ok(set.ok().map(|()| guard))
}

/// `dir/taco.log` under its size cap (10 MB, two older files kept): the one writer of the
/// log, whichever taco process writes it.
pub fn open_capped(dir: &Path) -> io::Result<CappedLog> {
    let dir = crate::private::PrivateDir::create(dir)?;
    CappedLog::open(dir, LOG_FILE, capped::DEFAULT_CAP, capped::DEFAULT_KEEP)
}

/// Opens `dir/taco.log` for appending, creating `dir` (0700) and the file (0600): the log
/// names paths, tools and errors, which are the user's business only. A symlink in place
/// of either is refused (`private`).
pub fn open_log_file(dir: &Path) -> io::Result<File> {
    crate::private::append(&dir.join(LOG_FILE))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn the_log_file_is_private() {
        use std::os::unix::fs::PermissionsExt;
        let temp = tempfile::tempdir().unwrap();
        let dir = temp.path().join("state").join("taco");
        drop(open_log_file(&dir).unwrap());
        let path = dir.join(LOG_FILE);
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let dir_mode = std::fs::metadata(&dir).unwrap().permissions().mode();
        assert_eq!(dir_mode & 0o777, 0o700);

        // A file left wider by an older version is narrowed when opened again.
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        drop(open_log_file(&dir).unwrap());
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    #[test]
    fn a_symlinked_log_is_refused_with_a_reason_and_its_target_untouched() {
        use std::os::unix::fs::PermissionsExt;
        let temp = tempfile::tempdir().unwrap();
        let victim = temp.path().join("victim");
        std::fs::write(&victim, "precious\n").unwrap();
        std::fs::set_permissions(&victim, std::fs::Permissions::from_mode(0o644)).unwrap();
        let dir = temp.path().join("taco");
        std::fs::create_dir(&dir).unwrap();
        std::os::unix::fs::symlink(&victim, dir.join(LOG_FILE)).unwrap();
        let why = init_in(&dir).unwrap_err();
        assert!(why.contains("is a symlink"), "{why}");
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n");
        let mode = std::fs::metadata(&victim).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o644);
    }
}
