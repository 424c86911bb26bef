//! The diagnostic log: a file in the state dir, never the terminal (the TUI owns it).

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

use tracing_appender::non_blocking::WorkerGuard;
use tracing_subscriber::EnvFilter;

/// The diagnostic log's file name in the state dir.
const LOG_FILE: &str = "taco.log";

/// `<state dir>/taco` (`~/.local/state/taco` on Linux), where logs go.
pub fn state_dir() -> Option<PathBuf> {
    // One definition, shared with the audit log.
    crate::audit::state_dir()
}

/// Starts logging to `taco.log` in the state dir (level from `TACO_LOG`, default info).
/// Returns the guard that flushes the log when dropped; `None` when there is nowhere to write.
pub fn init() -> Option<WorkerGuard> {
    init_in(&state_dir()?)
}

/// Starts logging to `taco.log` in `dir`; see [`init`]. Only the first call in a process
/// takes effect (the global subscriber is set once).
pub fn init_in(dir: &Path) -> Option<WorkerGuard> {
    let file = open_log_file(dir).ok()?;
    let (writer, guard) = tracing_appender::non_blocking(file);
    let filter = EnvFilter::try_from_env("TACO_LOG").unwrap_or_else(|_| EnvFilter::new("info"));
    tracing_subscriber::fmt()
        .with_writer(writer)
        .with_ansi(false)
        .with_env_filter(filter)
        .try_init()
        .ok()?;
    Some(guard)
}

/// Opens `dir/taco.log` for appending, creating `dir` (0700) and the file (0600): the log
/// names paths, tools and errors, which are the user's business only.
pub fn open_log_file(dir: &Path) -> io::Result<File> {
    crate::audit::create_private_dir(dir)?;
    crate::audit::open_private(&dir.join(LOG_FILE))
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
}
