//! The diagnostic log: a file in the state dir, never the terminal (the TUI owns it).

use std::path::PathBuf;

use tracing_appender::non_blocking::WorkerGuard;
use tracing_subscriber::EnvFilter;

/// `<state dir>/taco` (`~/.local/state/taco` on Linux), where logs go.
pub fn state_dir() -> Option<PathBuf> {
    let base = directories::BaseDirs::new()?;
    let dir = base.state_dir().unwrap_or_else(|| base.data_local_dir());
    Some(dir.join("taco"))
}

/// Starts logging to `taco.log` in the state dir (level from `TACO_LOG`, default info).
/// Returns the guard that flushes the log when dropped; `None` when there is nowhere to write.
pub fn init() -> Option<WorkerGuard> {
    let dir = state_dir()?;
    std::fs::create_dir_all(&dir).ok()?;
    let appender = tracing_appender::rolling::never(&dir, "taco.log");
    let (writer, guard) = tracing_appender::non_blocking(appender);
    let filter = EnvFilter::try_from_env("TACO_LOG").unwrap_or_else(|_| EnvFilter::new("info"));
    tracing_subscriber::fmt()
        .with_writer(writer)
        .with_ansi(false)
        .with_env_filter(filter)
        .try_init()
        .ok()?;
    Some(guard)
}
