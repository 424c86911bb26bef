//! The editor's copy of files. An ACP client that offers `fs/read_text_file` holds the
//! buffers the user sees, unsaved edits included; `read_file` reads a file through it once
//! taco has found the file inside the workspace, and reads the disk when the editor cannot
//! say. Writes stay taco's own: the confined, atomic write and the approved-diff check work
//! on the disk (an editor watching it shows the change).

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;

/// Longest taco waits for the editor before reading the disk.
pub const READ_WAIT: Duration = Duration::from_secs(10);

/// Largest text taco takes from the editor (more is read from the disk, in pieces).
pub const MAX_TEXT: usize = 8 << 20;

/// Something that holds the user's open files.
pub trait Buffers: Send + Sync {
    /// The text of `path` (absolute, checked to be a regular file in the workspace) as the
    /// editor has it; `None`: the disk says.
    fn read(&self, path: &Path) -> BoxFuture<'static, Option<String>>;
}

/// The editor's buffers, when there is an editor.
#[derive(Clone, Default)]
pub struct EditorBuffers(pub Option<Arc<dyn Buffers>>);

impl std::fmt::Debug for EditorBuffers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() { "editor" } else { "disk" })
    }
}

impl EditorBuffers {
    /// The editor's text of `path`, within [`READ_WAIT`] and [`MAX_TEXT`]; `None`: read the
    /// disk.
    pub async fn read(&self, path: &Path) -> Option<String> {
        let buffers = self.0.as_ref()?;
        let text = tokio::time::timeout(READ_WAIT, buffers.read(path))
            .await
            .ok()
            .flatten()?;
        (text.len() <= MAX_TEXT).then_some(text)
    }
}
