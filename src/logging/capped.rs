//! The diagnostic log's size cap: `taco.log` is rotated to `taco.log.1`, `.2` when it would
//! pass the cap, so a chatty server or a loop never fills the disk (issue 28.1).
//! tracing-appender rotates by time only; this is the size rule, safe for several taco
//! processes writing the same log: the rotation is done under `flock` on the file, and a
//! writer whose file was rotated away by another process reopens the name.

use std::fs::File;
use std::io::{self, Write};
use std::os::unix::fs::MetadataExt;

use rustix::fs::FlockOperation;

use crate::private::PrivateDir;

/// Bytes one log file may reach.
pub const DEFAULT_CAP: u64 = 10 * 1024 * 1024;
/// Rotated files kept beside the current one (`.1` … `.KEEP`).
pub const DEFAULT_KEEP: usize = 2;

/// An append-only log file under a size cap, rotated in its private directory.
pub struct CappedLog {
    dir: PrivateDir,
    name: String,
    file: File,
    cap: u64,
    keep: usize,
}

impl CappedLog {
    /// Opens (creates) `name` in `dir` for appending, rotated at `cap` bytes with `keep`
    /// older files.
    pub fn open(dir: PrivateDir, name: &str, cap: u64, keep: usize) -> io::Result<Self> {
        let file = dir.append(name)?;
        Ok(Self {
            dir,
            name: name.to_string(),
            file,
            cap: cap.max(1),
            keep,
        })
    }

    /// Whether the open file is still the one `name` points to (another process may have
    /// rotated it away).
    fn is_current(&self) -> bool {
        let Ok(meta) = self.file.metadata() else {
            return false;
        };
        self.dir
            .identity(&self.name)
            .is_ok_and(|id| id == (meta.dev(), meta.ino()))
    }

    fn reopen(&mut self) -> io::Result<()> {
        self.file = self.dir.append(&self.name)?;
        Ok(())
    }

    /// Makes room for `len` more bytes: reopens a file rotated by someone else, rotates a
    /// full one. A single write larger than the cap still goes into a fresh file.
    fn make_room(&mut self, len: usize) -> io::Result<()> {
        if !self.is_current() {
            self.reopen()?;
        }
        let size = self.file.metadata()?.len();
        if size == 0 || size.saturating_add(len as u64) <= self.cap {
            return Ok(());
        }
        // Under the lock, the check again: another writer may have rotated meanwhile.
        rustix::fs::flock(&self.file, FlockOperation::LockExclusive)?;
        let rotated = if self.is_current() {
            self.rotate()
        } else {
            Ok(())
        };
        let _ = rustix::fs::flock(&self.file, FlockOperation::Unlock);
        rotated?;
        self.reopen()
    }

    /// `name.KEEP` is dropped, each `name.N` becomes `name.N+1`, `name` becomes `name.1`.
    fn rotate(&self) -> io::Result<()> {
        let numbered = |n: usize| format!("{}.{n}", self.name);
        if self.keep == 0 {
            return self.dir.remove(&self.name);
        }
        match self.dir.remove(&numbered(self.keep)) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
        for n in (1..self.keep).rev() {
            match self.dir.rename(&numbered(n), &numbered(n + 1)) {
                Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
                _ => {}
            }
        }
        self.dir.rename(&self.name, &numbered(1))
    }
}

impl Write for CappedLog {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.make_room(buf.len())?;
        // One write per event: the whole line lands in one file.
        self.file.write_all(buf)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sizes(dir: &std::path::Path) -> Vec<(String, u64)> {
        let mut out: Vec<(String, u64)> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                (
                    e.file_name().to_string_lossy().into_owned(),
                    e.metadata().unwrap().len(),
                )
            })
            .collect();
        out.sort();
        out
    }

    #[test]
    fn a_flood_leaves_at_most_keep_plus_one_files_each_under_the_cap() {
        let temp = tempfile::tempdir().unwrap();
        let dir = PrivateDir::create(temp.path()).unwrap();
        let mut log = CappedLog::open(dir, "taco.log", 1_000, 2).unwrap();
        for i in 0..10_000 {
            log.write_all(format!("line {i:05} of a flood\n").as_bytes())
                .unwrap();
        }
        let files = sizes(temp.path());
        let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["taco.log", "taco.log.1", "taco.log.2"]);
        assert!(files.iter().all(|(_, size)| *size <= 1_000), "{files:?}");
        // The newest lines are in the current file, the ones before in `.1`.
        let current = std::fs::read_to_string(temp.path().join("taco.log")).unwrap();
        assert!(current.ends_with("line 09999 of a flood\n"), "{current}");
        let older = std::fs::read_to_string(temp.path().join("taco.log.1")).unwrap();
        let first_current = current.lines().next().unwrap();
        let last_older = older.lines().last().unwrap();
        let number = |l: &str| l[5..10].parse::<u32>().unwrap();
        assert_eq!(number(last_older) + 1, number(first_current));
    }

    #[test]
    fn two_writers_on_one_log_share_the_cap_and_lose_no_line() {
        let temp = tempfile::tempdir().unwrap();
        let open = || {
            CappedLog::open(PrivateDir::open(temp.path()).unwrap(), "taco.log", 2_000, 3).unwrap()
        };
        let (mut a, mut b) = (open(), open());
        for i in 0..100 {
            a.write_all(format!("a {i:03}\n").as_bytes()).unwrap();
            b.write_all(format!("b {i:03}\n").as_bytes()).unwrap();
        }
        let files = sizes(temp.path());
        assert!(files.iter().all(|(_, size)| *size <= 2_000), "{files:?}");
        // 1,200 bytes written in all: no rotation yet, every line in the one file.
        let text = std::fs::read_to_string(temp.path().join("taco.log")).unwrap();
        assert_eq!(text.lines().count(), 200);
        // Past the cap: a rotation by `a` is seen by `b`, which writes to the new file.
        for i in 0..200 {
            a.write_all(format!("A {i:03}\n").as_bytes()).unwrap();
            b.write_all(format!("B {i:03}\n").as_bytes()).unwrap();
        }
        let files = sizes(temp.path());
        assert!(files.iter().all(|(_, size)| *size <= 2_000), "{files:?}");
        let all: usize = ["taco.log", "taco.log.1", "taco.log.2", "taco.log.3"]
            .iter()
            .filter_map(|n| std::fs::read_to_string(temp.path().join(n)).ok())
            .map(|t| t.lines().count())
            .sum();
        assert_eq!(all, 600, "{files:?}");
    }

    #[test]
    fn a_line_longer_than_the_cap_goes_whole_into_a_fresh_file() {
        let temp = tempfile::tempdir().unwrap();
        let dir = PrivateDir::create(temp.path()).unwrap();
        let mut log = CappedLog::open(dir, "taco.log", 100, 1).unwrap();
        log.write_all(b"short\n").unwrap();
        let long = format!("{}\n", "x".repeat(500));
        log.write_all(long.as_bytes()).unwrap();
        assert_eq!(
            std::fs::read_to_string(temp.path().join("taco.log")).unwrap(),
            long
        );
        assert_eq!(
            std::fs::read_to_string(temp.path().join("taco.log.1")).unwrap(),
            "short\n"
        );
    }
}
