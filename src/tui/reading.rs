//! The session file read off the UI thread: runs before the panes' first (scrolled back to
//! the top) or the newest runs the panes are rebuilt from (`app/trim.rs`).

use std::io;

/// What reading earlier runs gives.
pub(super) type EarlierRead = Result<crate::session::Tail, crate::session::SessionError>;
/// Runs being read from a session file, and what for.
pub(super) type Reading = (
    std::path::PathBuf,
    tokio::task::JoinHandle<EarlierRead>,
    Purpose,
);

/// What a read of the session file is for.
#[derive(Debug, Clone, Copy)]
pub(super) enum Purpose {
    /// The runs before the panes' first (scrolled back to the top).
    Earlier,
    /// The newest runs, the panes rebuilt from them (`app/trim.rs`).
    Trim,
}

/// The earlier runs being read, once read; never when none are.
pub(super) async fn recv_read(reading: &mut Option<Reading>) -> EarlierRead {
    match reading {
        Some((path, handle, _)) => handle.await.unwrap_or_else(|e| {
            Err(crate::session::SessionError::Unreadable {
                path: path.clone(),
                source: io::Error::other(e.to_string()),
            })
        }),
        None => std::future::pending().await,
    }
}
