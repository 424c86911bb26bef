//! The prompt history file: what the user sent, one JSON string a line in
//! `<state dir>/taco/prompt-history.jsonl`, so Up and Ctrl-R in the composer reach prompts of
//! earlier launches. The file is private (0600), redacted (known key values never reach it),
//! capped (entries, entry size, file size) and read with a bound: whatever is in it (a
//! directory, binary junk, a huge file) never stops taco from starting.
//!
//! Several tacos may share the file: lines are appended whole, and a lock file keeps a
//! rewrite (the cap) from dropping a line appended meanwhile.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::private::{self, PrivateDir};
use crate::secrets::Secrets;

/// The history file's name in the state dir.
const FILE_NAME: &str = "prompt-history.jsonl";
/// Held while appending or rewriting, so a rewrite never loses another taco's line.
const LOCK_NAME: &str = "prompt-history.lock";
/// How long to wait for another taco's lock before going on without it.
const LOCK_WAIT: Duration = Duration::from_millis(200);

/// How much the history keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Entries kept (the newest).
    pub entries: usize,
    /// Longest entry written, in bytes; a longer prompt (a big paste) is not kept.
    pub entry_bytes: usize,
    /// Bytes read from the end of the file; a file past this is rewritten smaller.
    pub file_bytes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            entries: 1000,
            entry_bytes: 32 * 1024,
            file_bytes: 4 * 1024 * 1024,
        }
    }
}

/// The history file of one state dir.
#[derive(Debug)]
pub struct PromptLog {
    path: PathBuf,
    lock: PathBuf,
    secrets: Arc<Secrets>,
    limits: Limits,
    /// A write failed and was logged: later failures are not logged again.
    failed: AtomicBool,
}

impl PromptLog {
    /// The history in the state dir (see [`crate::audit::state_dir`]); `None` without one.
    pub fn in_state_dir(secrets: Arc<Secrets>) -> Option<Self> {
        Some(Self::in_dir(&crate::audit::state_dir()?, secrets))
    }

    /// The history file in `dir`, with the default limits.
    pub fn in_dir(dir: &Path, secrets: Arc<Secrets>) -> Self {
        Self::with_limits(dir, secrets, Limits::default())
    }

    /// The history file in `dir`, keeping what `limits` allow.
    pub fn with_limits(dir: &Path, secrets: Arc<Secrets>, limits: Limits) -> Self {
        Self {
            path: dir.join(FILE_NAME),
            lock: dir.join(LOCK_NAME),
            secrets,
            limits,
            failed: AtomicBool::new(false),
        }
    }

    /// Where the history is kept.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Why the history can be neither read nor written, for the user (a symlink in place of
    /// the file or its lock: refused, never followed); `None` when nothing is in the way.
    pub fn problem(&self) -> Option<String> {
        [&self.path, &self.lock]
            .into_iter()
            .find(|path| {
                path.symlink_metadata()
                    .is_ok_and(|m| m.file_type().is_symlink())
            })
            .map(|path| {
                format!(
                    "The prompt history is off: {} is a symlink, which taco does not follow (remove it and taco makes a new one).",
                    path.display()
                )
            })
    }

    /// The entries, oldest first (at most `limits.entries`). A missing or unreadable file is
    /// an empty history; a file past its limits is rewritten smaller.
    pub fn load(&self) -> Vec<String> {
        match self.try_load() {
            Ok(entries) => entries,
            Err(e) if e.kind() == io::ErrorKind::NotFound => Vec::new(),
            Err(e) => {
                tracing::warn!(path = %self.path.display(), "cannot read the prompt history: {e}");
                Vec::new()
            }
        }
    }

    fn try_load(&self) -> io::Result<Vec<String>> {
        let tail = read_tail(&self.path, self.limits.file_bytes)?;
        let mut entries = tail.entries;
        let over = tail.truncated || entries.len() > self.limits.entries + self.limits.entries / 4;
        if over {
            let _lock = self.lock();
            if let Err(e) = self.rewrite() {
                tracing::warn!(path = %self.path.display(), "cannot shrink the prompt history: {e}");
            }
        }
        entries.dedup();
        let skip = entries.len().saturating_sub(self.limits.entries);
        entries.drain(..skip);
        Ok(entries)
    }

    /// Appends one prompt (redacted); a blank or oversized one is not kept. Failures are
    /// logged once: the history is a convenience, never a reason to stop.
    pub fn append(&self, prompt: &str) {
        match self.try_append(prompt) {
            Ok(()) => self.failed.store(false, Ordering::Relaxed),
            Err(e) => {
                if !self.failed.swap(true, Ordering::Relaxed) {
                    tracing::warn!(path = %self.path.display(), "cannot save the prompt history: {e}");
                }
            }
        }
    }

    fn try_append(&self, prompt: &str) -> io::Result<()> {
        let Some(line) = self.encode(prompt) else {
            return Ok(());
        };
        let (dir, name) = private::split(&self.path)?;
        let dir = PrivateDir::create(dir)?;
        let _lock = self.lock();
        let mut file = dir.append(name)?;
        // One write of a whole line on an O_APPEND file: lines of two tacos never interleave.
        file.write_all(line.as_bytes())?;
        if file.metadata()?.len() > self.limits.file_bytes.saturating_mul(2) {
            self.rewrite()?;
        }
        Ok(())
    }

    /// The file line for a prompt, or `None` when it is not kept.
    fn encode(&self, prompt: &str) -> Option<String> {
        if prompt.trim().is_empty() {
            return None;
        }
        let clean = self.secrets.redact(prompt);
        if clean.len() > self.limits.entry_bytes {
            return None;
        }
        let mut line = serde_json::to_string(clean.as_ref()).ok()?;
        line.push('\n');
        Some(line)
    }

    /// Rewrites the file with its newest entries, half the byte budget at most (so the next
    /// launches do not rewrite it again). Call with the lock held.
    fn rewrite(&self) -> io::Result<()> {
        let tail = read_tail(&self.path, self.limits.file_bytes)?;
        let budget = usize::try_from(self.limits.file_bytes / 2).unwrap_or(usize::MAX);
        let mut kept = Vec::new();
        let mut used = 0;
        for entry in tail.entries.iter().rev().take(self.limits.entries) {
            let Ok(mut line) = serde_json::to_string(entry) else {
                continue;
            };
            line.push('\n');
            used += line.len();
            if used > budget {
                break;
            }
            kept.push(line);
        }
        let (dir, name) = private::split(&self.path)?;
        let dir = PrivateDir::open(dir)?;
        let tmp = format!("{name}.{}.tmp", std::process::id());
        // A temp file left by a crash of a process with the same id goes first.
        let _ = dir.remove(&tmp);
        let written = dir
            .create_new(&tmp, false)
            .and_then(|file| write_all(file, kept.iter().rev().map(String::as_bytes)));
        if let Err(e) = written.and_then(|()| dir.rename(&tmp, name)) {
            let _ = dir.remove(&tmp);
            return Err(e);
        }
        Ok(())
    }

    /// Takes the lock file, waiting a little for another taco; `None` (go on without it)
    /// when it cannot be had.
    fn lock(&self) -> Option<File> {
        let file = private::append(&self.lock).ok()?;
        let deadline = Instant::now() + LOCK_WAIT;
        loop {
            match file.try_lock() {
                Ok(()) => return Some(file),
                Err(std::fs::TryLockError::WouldBlock) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(2));
                }
                Err(_) => return None,
            }
        }
    }
}

/// The entries found in the last `budget` bytes of a file.
struct Tail {
    entries: Vec<String>,
    /// The file is bigger than the budget: older lines were not read.
    truncated: bool,
}

/// Reads at most `budget` bytes from the end of `path`; lines that are not a JSON string
/// (junk, a line cut by the budget) are skipped. Only a regular file is opened, never
/// through a symlink, so a FIFO or a device there cannot block or flood the launch and a
/// link cannot feed another file's lines into the history.
fn read_tail(path: &Path, budget: u64) -> io::Result<Tail> {
    let (dir, name) = private::split(path)?;
    let mut file = PrivateDir::open(dir)?.read(name)?;
    let len = file.metadata()?.len();
    let start = len.saturating_sub(budget);
    file.seek(SeekFrom::Start(start))?;
    let mut bytes = Vec::new();
    file.take(budget).read_to_end(&mut bytes)?;
    let mut lines = bytes.split(|b| *b == b'\n');
    if start > 0 {
        // Starts inside a line.
        lines.next();
    }
    let entries = lines
        .filter(|line| !line.is_empty())
        .filter_map(|line| serde_json::from_slice::<String>(line).ok())
        .filter(|entry| !entry.trim().is_empty())
        .collect();
    Ok(Tail {
        entries,
        truncated: start > 0,
    })
}

/// Writes `parts` to `file` and syncs it.
fn write_all<'a>(file: File, parts: impl Iterator<Item = &'a [u8]>) -> io::Result<()> {
    let mut out = io::BufWriter::new(file);
    for part in parts {
        out.write_all(part)?;
    }
    let file = out.into_inner().map_err(io::IntoInnerError::into_error)?;
    file.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn log_in(dir: &Path) -> PromptLog {
        PromptLog::in_dir(dir, Arc::new(Secrets::default()))
    }

    fn small(dir: &Path, entries: usize, file_bytes: u64) -> PromptLog {
        let limits = Limits {
            entries,
            entry_bytes: 1000,
            file_bytes,
        };
        PromptLog::with_limits(dir, Arc::new(Secrets::default()), limits)
    }

    #[test]
    fn prompts_come_back_in_order_with_their_newlines() {
        let temp = tempfile::tempdir().unwrap();
        let dir = temp.path().join("state/taco");
        let log = log_in(&dir);
        assert!(log.load().is_empty(), "no file yet");
        log.append("first");
        log.append("two\nlines \"quoted\" and 界");
        log.append("   ");
        log.append("last");
        let again = log_in(&dir);
        assert_eq!(
            again.load(),
            ["first", "two\nlines \"quoted\" and 界", "last"]
        );
        let text = std::fs::read_to_string(log.path()).unwrap();
        assert_eq!(text.lines().count(), 3, "one line each:\n{text}");
    }

    #[cfg(unix)]
    #[test]
    fn the_file_is_private() {
        use std::os::unix::fs::PermissionsExt;
        let temp = tempfile::tempdir().unwrap();
        let log = log_in(temp.path());
        log.append("hello");
        let mode = std::fs::metadata(log.path()).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        // A rewrite keeps it private.
        let log = small(temp.path(), 1, 10);
        log.append("x".repeat(40).as_str());
        let mode = std::fs::metadata(log.path()).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    #[test]
    fn known_keys_are_redacted_before_they_are_written() {
        let temp = tempfile::tempdir().unwrap();
        let key = "sk-test-0123456789abcdef";
        let log = PromptLog::in_dir(temp.path(), Arc::new(Secrets::new([key.to_string()])));
        log.append(&format!("use the key {key} please"));
        let text = std::fs::read_to_string(log.path()).unwrap();
        assert!(!text.contains(key), "{text}");
        assert_eq!(log.load(), ["use the key sk-…*** please"]);
    }

    #[test]
    fn oversized_prompts_are_not_kept() {
        let temp = tempfile::tempdir().unwrap();
        let log = log_in(temp.path());
        log.append(&"x".repeat(Limits::default().entry_bytes + 1));
        log.append("small");
        assert_eq!(log.load(), ["small"]);
    }

    #[test]
    fn the_newest_entries_are_kept_and_the_file_shrinks() {
        let temp = tempfile::tempdir().unwrap();
        let log = small(temp.path(), 10, 1 << 20);
        for i in 0..30 {
            log.append(&format!("prompt {i}"));
        }
        let entries = log.load();
        assert_eq!(entries.len(), 10);
        assert_eq!(entries.first().unwrap(), "prompt 20");
        assert_eq!(entries.last().unwrap(), "prompt 29");
        let text = std::fs::read_to_string(log.path()).unwrap();
        assert_eq!(text.lines().count(), 10, "rewritten:\n{text}");
        // Repeats in a row count once.
        log.append("prompt 29");
        assert_eq!(log.load().len(), 10);
    }

    #[test]
    fn a_huge_file_is_read_from_its_end_only_and_rewritten() {
        let temp = tempfile::tempdir().unwrap();
        let log = small(temp.path(), 100, 4096);
        let mut junk = vec![b'z'; 1 << 20];
        junk.extend_from_slice(b"\n\"kept\"\n");
        std::fs::write(log.path(), &junk).unwrap();
        assert_eq!(log.load(), ["kept"]);
        let len = std::fs::metadata(log.path()).unwrap().len();
        assert!(len <= 2048, "rewritten within half the budget: {len}");
        assert_eq!(log.load(), ["kept"]);
        // Appends past twice the budget rewrite it too.
        for i in 0..400 {
            log.append(&format!("entry number {i}"));
        }
        let len = std::fs::metadata(log.path()).unwrap().len();
        assert!(len <= 2 * 4096 + 100, "{len}");
        assert_eq!(log.load().last().unwrap(), "entry number 399");
    }

    #[test]
    fn junk_in_the_file_is_skipped() {
        let temp = tempfile::tempdir().unwrap();
        let log = log_in(temp.path());
        let mut bytes =
            b"\"one\"\n\xff\xfe\x00binary\n{\"not\": \"a string\"}\n42\n\"unterminated\n".to_vec();
        bytes.extend_from_slice(b"\"two\"\n\n\"\\u0000 three\"");
        std::fs::write(log.path(), &bytes).unwrap();
        assert_eq!(log.load(), ["one", "two", "\u{0} three"]);
    }

    #[test]
    fn a_directory_or_a_fifo_in_its_place_is_an_empty_history() {
        let temp = tempfile::tempdir().unwrap();
        let log = log_in(temp.path());
        std::fs::create_dir(log.path()).unwrap();
        assert!(log.load().is_empty());
        log.append("nowhere to go");
        log.append("still nowhere");
        assert!(log.path().is_dir(), "left alone");
        #[cfg(unix)]
        {
            let temp = tempfile::tempdir().unwrap();
            let log = log_in(temp.path());
            let path = std::ffi::CString::new(log.path().to_str().unwrap()).unwrap();
            // SAFETY: a valid NUL-terminated path.
            assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o600) }, 0);
            assert!(
                log.load().is_empty(),
                "a FIFO is not opened (it would block)"
            );
        }
    }

    #[cfg(unix)]
    #[test]
    fn an_unreadable_file_is_an_empty_history() {
        use std::os::unix::fs::PermissionsExt;
        let temp = tempfile::tempdir().unwrap();
        let log = log_in(temp.path());
        log.append("secret");
        std::fs::set_permissions(log.path(), std::fs::Permissions::from_mode(0o000)).unwrap();
        // Root reads it anyway; either way nothing breaks.
        let loaded = log.load();
        assert!(loaded.is_empty() || loaded == ["secret"]);
        log.append("more");
    }

    #[test]
    fn tacos_appending_at_once_lose_nothing() {
        let temp = tempfile::tempdir().unwrap();
        let dir = temp.path().to_path_buf();
        // Small enough that the writers rewrite the file while the others append.
        let threads: Vec<_> = (0..8)
            .map(|t| {
                let dir = dir.clone();
                std::thread::spawn(move || {
                    let log = small(&dir, 10_000, 3000);
                    for i in 0..100 {
                        log.append(&format!("writer {t} line {i} {}", "pad ".repeat(5)));
                    }
                })
            })
            .collect();
        for thread in threads {
            thread.join().unwrap();
        }
        let text = std::fs::read_to_string(dir.join(FILE_NAME)).unwrap();
        let mut seen: Vec<Vec<usize>> = vec![Vec::new(); 8];
        for line in text.lines() {
            let entry: String =
                serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
            let words: Vec<&str> = entry.split(' ').collect();
            let (t, i): (usize, usize) = (words[1].parse().unwrap(), words[3].parse().unwrap());
            seen[t].push(i);
        }
        // A rewrite keeps the newest lines: what is left of each writer is its last lines,
        // in order and without a gap (a line appended during a rewrite would leave one).
        for (t, lines) in seen.iter().enumerate() {
            if let (Some(first), Some(last)) = (lines.first(), lines.last()) {
                assert_eq!(*last, 99, "writer {t}: {lines:?}");
                assert_eq!(*lines, (*first..100).collect::<Vec<_>>(), "writer {t}");
            }
        }
        assert!(seen.iter().any(|lines| !lines.is_empty()));
        // Without rewrites nothing at all is lost, and no two lines run into each other.
        let temp = tempfile::tempdir().unwrap();
        let dir = temp.path().to_path_buf();
        let threads: Vec<_> = (0..4)
            .map(|t| {
                let dir = dir.clone();
                std::thread::spawn(move || {
                    let log = log_in(&dir);
                    for i in 0..100 {
                        log.append(&format!("writer {t} line {i}"));
                    }
                })
            })
            .collect();
        for thread in threads {
            thread.join().unwrap();
        }
        let mut entries = log_in(&dir).load();
        entries.sort();
        entries.dedup();
        assert_eq!(entries.len(), 400);
    }

    #[test]
    fn an_append_waits_for_another_tacos_rewrite() {
        let temp = tempfile::tempdir().unwrap();
        let dir = temp.path().to_path_buf();
        let holder = log_in(&dir);
        holder.append("before");
        // Another taco is rewriting: it holds the lock.
        let held = holder.lock().expect("the lock");
        let writer = std::thread::spawn(move || log_in(&dir).append("during"));
        std::thread::sleep(Duration::from_millis(60));
        let text = std::fs::read_to_string(holder.path()).unwrap();
        assert!(!text.contains("during"), "the append waits:\n{text}");
        drop(held);
        writer.join().unwrap();
        assert_eq!(holder.load(), ["before", "during"]);
    }
}
