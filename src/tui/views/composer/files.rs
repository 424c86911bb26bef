//! The workspace's files for the `@` finder, listed off the UI thread: a walk that honours
//! `.gitignore` (the `ignore` crate, as `search_files` uses), skips `.git`, `target`,
//! `node_modules` and hidden entries, never follows a symlink, and stops at
//! [`MAX_FILES`] files or [`MAX_WALK`], whichever comes first.

use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, TryRecvError};
use std::time::{Duration, Instant};

use ignore::WalkBuilder;

/// Most files listed.
pub const MAX_FILES: usize = 20_000;
/// Longest a walk runs (a slow network file system must not keep the finder empty for long).
pub const MAX_WALK: Duration = Duration::from_secs(2);
/// Deepest directory level walked.
const MAX_DEPTH: usize = 32;
/// Directories never listed, ignored or not.
const SKIPPED: [&str; 3] = [".git", "target", "node_modules"];

/// Why a listing is not the whole workspace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cut {
    /// It stopped at [`MAX_FILES`].
    Files,
    /// It stopped at [`MAX_WALK`].
    Time,
}

/// The files found, relative to the workspace root with `/` separators, in walk order
/// (directories' entries sorted by name).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Listing {
    /// The paths.
    pub paths: Vec<String>,
    /// Set when the walk stopped early.
    pub cut: Option<Cut>,
}

/// The finder's file list: the latest finished walk, and the one running, if any.
#[derive(Debug, Default)]
pub struct FileIndex {
    root: Option<PathBuf>,
    listing: Option<Listing>,
    /// Bumped when a walk finishes, so rankings of the old list are redone.
    generation: u64,
    walking: Option<Receiver<Listing>>,
}

impl FileIndex {
    /// An index of the files under `root` (none: nothing to list); nothing is walked yet.
    pub fn new(root: Option<PathBuf>) -> Self {
        Self {
            root,
            ..Self::default()
        }
    }

    /// Starts a new walk, unless one runs (the finder opened again: files may have come and
    /// gone). The old list stays until the new one is done.
    pub fn refresh(&mut self) {
        if self.walking.is_some() {
            return;
        }
        let Some(root) = self.root.clone() else {
            return;
        };
        let (tx, rx) = mpsc::channel();
        let spawned = std::thread::Builder::new()
            .name("taco-files".into())
            .spawn(move || {
                // The finder may have gone (taco quit): nobody to tell.
                let _ = tx.send(walk(&root, MAX_FILES, MAX_WALK));
            });
        match spawned {
            Ok(_) => self.walking = Some(rx),
            Err(e) => {
                tracing::warn!("cannot start the file listing thread: {e}");
                self.finish(Listing::default());
            }
        }
    }

    /// Takes a walk that finished; `true` when the list changed.
    pub fn poll(&mut self) -> bool {
        let Some(rx) = &self.walking else {
            return false;
        };
        match rx.try_recv() {
            Ok(listing) => {
                self.walking = None;
                self.finish(listing);
                true
            }
            Err(TryRecvError::Empty) => false,
            Err(TryRecvError::Disconnected) => {
                // The walk panicked: an empty list, not a finder stuck listing.
                self.walking = None;
                self.finish(Listing::default());
                true
            }
        }
    }

    fn finish(&mut self, listing: Listing) {
        self.listing = Some(listing);
        self.generation += 1;
    }

    /// Whether a walk runs now.
    pub fn is_walking(&self) -> bool {
        self.walking.is_some()
    }

    /// Whether there is a workspace to list.
    pub fn has_root(&self) -> bool {
        self.root.is_some()
    }

    /// The latest finished list.
    pub fn listing(&self) -> Option<&Listing> {
        self.listing.as_ref()
    }

    /// Which list [`FileIndex::listing`] is (changes when a walk finishes).
    pub fn generation(&self) -> u64 {
        self.generation
    }
}

/// Lists the files under `root`: at most `max_files`, for at most `budget`.
pub fn walk(root: &Path, max_files: usize, budget: Duration) -> Listing {
    let started = Instant::now();
    let walker = WalkBuilder::new(root)
        // Honour .gitignore even when the workspace is not a git repository.
        .require_git(false)
        .follow_links(false)
        .max_depth(Some(MAX_DEPTH))
        .sort_by_file_name(|a, b| a.cmp(b))
        .filter_entry(|entry| {
            let dir = entry.file_type().is_some_and(|t| t.is_dir());
            !(dir && SKIPPED.iter().any(|s| entry.file_name() == *s))
        })
        .build();
    let mut listing = Listing::default();
    for entry in walker {
        if started.elapsed() >= budget {
            listing.cut = Some(Cut::Time);
            break;
        }
        // Unreadable directories or entries are skipped, as search_files does.
        let Ok(entry) = entry else { continue };
        // Symlinks are left out: one could lead out of the workspace.
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let Ok(rel) = entry.path().strip_prefix(root) else {
            continue;
        };
        // A name that is not UTF-8 cannot be typed after `@`.
        let Some(rel) = rel.to_str() else { continue };
        if listing.paths.len() == max_files {
            listing.cut = Some(Cut::Files);
            break;
        }
        listing
            .paths
            .push(rel.replace(std::path::MAIN_SEPARATOR, "/"));
    }
    listing
}

#[cfg(test)]
mod tests;
