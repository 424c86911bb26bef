//! What a file change was previewed against (issue 26.4): the state of the file when its diff
//! was computed, so that the change applies only to the file the user saw. The preview records
//! it, the batch hands it to the call through `ToolContext::seen`, and the write compares it
//! with the file once more through the directory handle it writes with, just before the rename
//! (`workspace/write.rs`).

use std::path::PathBuf;

use sha2::{Digest as _, Sha256};

/// The state of a file when a change to it was previewed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seen {
    /// Nothing was at the path: the change creates the file.
    Absent,
    /// A regular file with this content.
    File {
        /// Its real path relative to the workspace root (symlinks resolved), so a symlink
        /// swapped in or out makes it another file.
        rel: PathBuf,
        /// Its size in bytes.
        len: u64,
        /// The SHA-256 of its content.
        digest: Digest,
    },
}

/// A SHA-256 digest of a file's content.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Digest([u8; 32]);

impl Digest {
    /// The digest of `bytes`.
    pub fn of(bytes: &[u8]) -> Self {
        Self(Sha256::digest(bytes).into())
    }
}

impl std::fmt::Debug for Digest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for byte in &self.0[..6] {
            write!(f, "{byte:02x}")?;
        }
        f.write_str("…")
    }
}

impl Seen {
    /// A regular file at `rel` with content `bytes`.
    pub fn file(rel: PathBuf, bytes: &[u8]) -> Self {
        Self::File {
            rel,
            len: bytes.len() as u64,
            digest: Digest::of(bytes),
        }
    }

    /// How the state `now` differs from this one, if it does.
    pub fn compare(&self, now: &Seen) -> Option<Changed> {
        match (self, now) {
            (Self::Absent, Self::Absent) => None,
            (Self::Absent, Self::File { .. }) => Some(Changed::Created),
            (Self::File { .. }, Self::Absent) => Some(Changed::Deleted),
            (Self::File { rel, .. }, Self::File { rel: now_rel, .. }) if rel != now_rel => {
                Some(Changed::Replaced)
            }
            (
                Self::File { len, digest, .. },
                Self::File {
                    len: now_len,
                    digest: now_digest,
                    ..
                },
            ) => (len != now_len || digest != now_digest).then_some(Changed::Modified),
        }
    }
}

/// How a file differs from the state a change was computed from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Changed {
    /// Something was created where there was no file.
    Created,
    /// The file was deleted.
    Deleted,
    /// Another file is there now: a symlink swapped in or out, or something that is not a
    /// regular file.
    Replaced,
    /// Its content changed.
    Modified,
}

/// Since when a file had to stay as it was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Since {
    /// Since its diff was computed for the approval (the user saw that diff).
    Diff,
    /// Since the tool read it to make the change.
    Read,
}

impl Changed {
    /// What the model is told: what changed, that nothing was written, and what to do.
    pub fn message(self, shown: &str, since: Since) -> String {
        let when = match since {
            Since::Diff => "after its diff was shown",
            Since::Read => "while the change was being made",
        };
        let what = match self {
            Self::Created => format!("'{shown}' was created {when} (the diff was for a new file)"),
            Self::Deleted => format!("'{shown}' was deleted {when}"),
            Self::Replaced => {
                format!("'{shown}' was replaced {when} (by a symlink, or by another file)")
            }
            Self::Modified => format!("'{shown}' changed {when}"),
        };
        format!(
            "{what}; nothing was written; read it again and make the change on what it holds now"
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_difference_has_its_kind() {
        let a = Seen::file("a.txt".into(), b"one\n");
        assert_eq!(a.compare(&Seen::file("a.txt".into(), b"one\n")), None);
        assert_eq!(
            a.compare(&Seen::file("a.txt".into(), b"two\n")),
            Some(Changed::Modified)
        );
        assert_eq!(
            a.compare(&Seen::file("b.txt".into(), b"one\n")),
            Some(Changed::Replaced),
            "the same content through a symlink is another file"
        );
        assert_eq!(a.compare(&Seen::Absent), Some(Changed::Deleted));
        assert_eq!(Seen::Absent.compare(&a), Some(Changed::Created));
        assert_eq!(Seen::Absent.compare(&Seen::Absent), None);
    }

    #[test]
    fn the_message_says_nothing_was_written() {
        let text = Changed::Modified.message("src/a.rs", Since::Diff);
        assert_eq!(
            text,
            "'src/a.rs' changed after its diff was shown; nothing was written; read it again \
             and make the change on what it holds now"
        );
        assert!(
            Changed::Created
                .message("n", Since::Diff)
                .contains("new file")
        );
        assert!(
            Changed::Replaced
                .message("n", Since::Read)
                .contains("symlink")
        );
    }
}
