//! The `git` binary, run against the shadow store only: a scrubbed environment (no user or
//! system config, hooks, pager, fsmonitor, attributes filters or replace refs), every call
//! bounded in time and in output, stdin fed from a thread so a large input cannot deadlock.

use std::ffi::OsString;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

use super::error::CheckpointError;

/// Time bound of a call that reads or writes little (most of them).
pub const QUICK: Duration = Duration::from_secs(15);
/// Time bound of a call whose work grows with the workspace (hashing every file, gc).
pub const BULK: Duration = Duration::from_secs(600);
/// Most a call's stdout may hold unless it says otherwise.
pub const DEFAULT_OUTPUT_CAP: usize = 64 << 20;
/// Most of a call's stderr kept (for the error message).
const STDERR_CAP: usize = 8 << 10;

/// `-c` settings on every call: whatever the store's config says, none of the user's
/// machinery runs and files are stored byte for byte.
const CONFIG: &[&str] = &[
    "core.autocrlf=false",
    "core.safecrlf=false",
    "core.hooksPath=/dev/null",
    "core.fsmonitor=false",
    "core.attributesFile=/dev/null",
    "core.excludesFile=/dev/null",
    "core.symlinks=true",
    "core.fileMode=true",
    "core.quotePath=false",
    "core.logAllRefUpdates=false",
    "core.bare=false",
    "core.splitIndex=false",
    "gc.auto=0",
    "maintenance.auto=false",
    "commit.gpgSign=false",
    "diff.noprefix=false",
    "color.ui=false",
    "submodule.recurse=false",
    "index.threads=true",
];

/// The `git` binary and the store it works on.
#[derive(Debug, Clone)]
pub struct Git {
    bin: PathBuf,
    git_dir: PathBuf,
    work_tree: PathBuf,
    index: PathBuf,
    home: PathBuf,
    /// Where git finds its helpers: the directory it is in, then the system's.
    path: OsString,
    /// Set when taco closes the store: a running call is killed at once (quitting never
    /// waits for a large workspace's first snapshot).
    closing: Arc<AtomicBool>,
}

/// How often a running call looks whether the store is closing.
const CLOSING_POLL: Duration = Duration::from_millis(50);

/// What a call returned.
#[derive(Debug)]
pub struct Output {
    /// Its stdout, whole (the call fails when it would pass its cap).
    pub stdout: Vec<u8>,
    /// Its exit code (`None` when killed by a signal).
    pub code: Option<i32>,
    /// The start of its stderr.
    pub stderr: String,
}

/// How one call runs.
#[derive(Debug, Clone)]
pub struct Call<'a> {
    /// Arguments after the global ones.
    pub args: Vec<OsString>,
    /// Fed to stdin (closed empty otherwise).
    pub stdin: Option<Vec<u8>>,
    /// Time bound.
    pub timeout: Duration,
    /// Most stdout kept; more is an error, or a cut when `truncate`.
    pub cap: usize,
    /// Past the cap, stop reading and keep what came (a diff shown in part).
    pub truncate: bool,
    /// Extra environment (commit identity and dates).
    pub env: Vec<(&'a str, String)>,
    /// Without the store's variables (`git init` of the store, which takes its path).
    pub bare: bool,
}

impl<'a> Call<'a> {
    /// A quick call with these arguments.
    pub fn new<I, S>(args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        Self {
            args: args.into_iter().map(Into::into).collect(),
            stdin: None,
            timeout: QUICK,
            cap: DEFAULT_OUTPUT_CAP,
            truncate: false,
            env: Vec::new(),
            bare: false,
        }
    }

    /// With this stdin.
    pub fn stdin(mut self, input: Vec<u8>) -> Self {
        self.stdin = Some(input);
        self
    }

    /// With the bulk time bound.
    pub fn bulk(mut self) -> Self {
        self.timeout = BULK;
        self
    }
}

impl Git {
    /// Finds `git` on `PATH` and checks it runs; the error says checkpoints are off.
    pub fn locate(path_var: Option<OsString>) -> Result<PathBuf, CheckpointError> {
        let path_var = path_var.ok_or(CheckpointError::GitMissing)?;
        let bin = std::env::split_paths(&path_var)
            .map(|dir| dir.join("git"))
            .find(|candidate| is_executable(candidate))
            .ok_or(CheckpointError::GitMissing)?;
        Ok(bin)
    }

    /// A runner for the store at `git_dir` with its own `index`, over `work_tree`.
    pub fn new(bin: PathBuf, git_dir: PathBuf, work_tree: PathBuf, index: PathBuf) -> Self {
        let home = git_dir.parent().map(Path::to_path_buf).unwrap_or_default();
        let mut dirs: Vec<PathBuf> = bin.parent().map(Path::to_path_buf).into_iter().collect();
        dirs.extend([PathBuf::from("/usr/bin"), PathBuf::from("/bin")]);
        let path = std::env::join_paths(dirs).unwrap_or_else(|_| "/usr/bin:/bin".into());
        Self {
            path,
            closing: Arc::default(),
            bin,
            git_dir,
            work_tree,
            index,
            home,
        }
    }

    /// The store's git directory.
    pub fn git_dir(&self) -> &Path {
        &self.git_dir
    }

    /// Kills what runs now and refuses every later call.
    pub fn close(&self) {
        self.closing.store(true, Ordering::SeqCst);
    }

    /// The workspace.
    pub fn work_tree(&self) -> &Path {
        &self.work_tree
    }

    fn command(&self, call: &Call<'_>) -> Command {
        let mut cmd = Command::new(&self.bin);
        cmd.env_clear()
            .env("GIT_DIR", &self.git_dir)
            .env("GIT_WORK_TREE", &self.work_tree)
            .env("GIT_INDEX_FILE", &self.index)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_ATTR_NOSYSTEM", "1")
            .env("GIT_NO_REPLACE_OBJECTS", "1")
            .env("GIT_LITERAL_PATHSPECS", "1")
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("GIT_PAGER", "cat")
            .env("GIT_OPTIONAL_LOCKS", "0")
            .env("GIT_AUTHOR_NAME", "taco")
            .env("GIT_AUTHOR_EMAIL", "taco@localhost")
            .env("GIT_COMMITTER_NAME", "taco")
            .env("GIT_COMMITTER_EMAIL", "taco@localhost")
            .env("HOME", &self.home)
            .env("XDG_CONFIG_HOME", &self.home)
            .env("LC_ALL", "C")
            .env("PATH", &self.path)
            .current_dir(&self.work_tree)
            .stdin(if call.stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if call.bare {
            cmd.env_remove("GIT_DIR")
                .env_remove("GIT_WORK_TREE")
                .env_remove("GIT_INDEX_FILE")
                .current_dir(&self.home);
        }
        for (key, value) in &call.env {
            cmd.env(key, value);
        }
        // Its own process group, so a timeout kills what git itself started (gc's repack).
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        for setting in CONFIG {
            cmd.arg("-c").arg(setting);
        }
        cmd.arg("--no-pager").args(&call.args);
        cmd
    }

    /// Runs a call; a non-zero exit is an error naming the command and git's message.
    pub fn run(&self, call: Call<'_>) -> Result<Vec<u8>, CheckpointError> {
        let what = describe(&call.args);
        let out = self.run_status(call)?;
        if out.code == Some(0) {
            Ok(out.stdout)
        } else {
            Err(CheckpointError::Git {
                command: what,
                message: out.stderr,
            })
        }
    }

    /// Removes the index's lock a git killed mid-write left behind (made after `since`, when
    /// that git started, give or take the file clock): every later call of the store — the next checkpoint, `taco rewind`,
    /// another taco — would fail on it. A lock older than that is someone else's: kept.
    fn drop_stale_lock(&self, since: std::time::SystemTime) {
        let mut lock = self.index.clone().into_os_string();
        lock.push(".lock");
        let lock = PathBuf::from(lock);
        // File times come from the kernel's coarse clock, a few ms behind `SystemTime`.
        let since = since - Duration::from_secs(2);
        let ours = std::fs::symlink_metadata(&lock)
            .and_then(|m| m.modified())
            .is_ok_and(|made| made >= since);
        if ours {
            let _ = std::fs::remove_file(&lock);
        }
    }

    /// Runs a call and returns its output whatever its exit code (within its bounds).
    pub fn run_status(&self, mut call: Call<'_>) -> Result<Output, CheckpointError> {
        let what = describe(&call.args);
        if self.closing.load(Ordering::SeqCst) {
            return Err(CheckpointError::Closed);
        }
        let started = Instant::now();
        let spawned_at = std::time::SystemTime::now();
        let mut child = self.command(&call).spawn().map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                CheckpointError::GitMissing
            } else {
                CheckpointError::Spawn(e)
            }
        })?;
        let feeder = match (call.stdin.take(), child.stdin.take()) {
            (Some(input), Some(mut pipe)) => Some(std::thread::spawn(move || {
                // A closed pipe (git stopped reading after an error) is reported by its exit.
                let _ = pipe.write_all(&input);
            })),
            _ => None,
        };
        let (tx, rx) = mpsc::channel();
        let stdout = child.stdout.take();
        let (cap, truncate) = (call.cap, call.truncate);
        std::thread::spawn(move || {
            let result = stdout.map(|s| read_capped(s, cap, truncate));
            let _ = tx.send(result);
        });
        let stderr = child.stderr.take();
        let err_reader = std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(s) = stderr {
                let _ = s.take(STDERR_CAP as u64).read_to_end(&mut buf);
            }
            buf
        });
        let kill = |child: &mut std::process::Child| {
            if let Some(pid) = rustix::process::Pid::from_raw(child.id() as i32) {
                let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
            }
            let _ = child.kill();
            let _ = child.wait();
            self.drop_stale_lock(spawned_at);
        };
        let closed = |child: &mut std::process::Child| {
            kill(child);
            CheckpointError::Closed
        };
        if self.closing.load(Ordering::SeqCst) {
            return Err(closed(&mut child));
        }
        let received = loop {
            let remaining = call.timeout.saturating_sub(started.elapsed());
            match rx.recv_timeout(remaining.min(CLOSING_POLL)) {
                Err(mpsc::RecvTimeoutError::Timeout) if !remaining.is_zero() => {
                    if self.closing.load(Ordering::SeqCst) {
                        return Err(closed(&mut child));
                    }
                }
                other => break other,
            }
        };
        let stdout = match received {
            Ok(Some(Ok(bytes))) => bytes,
            Ok(Some(Err(ReadError::TooLong))) => {
                kill(&mut child);
                return Err(CheckpointError::OutputTooLong { command: what, cap });
            }
            Ok(Some(Err(ReadError::Io(e)))) => {
                kill(&mut child);
                return Err(CheckpointError::Spawn(e));
            }
            Ok(None) | Err(mpsc::RecvTimeoutError::Disconnected) => Vec::new(),
            Err(mpsc::RecvTimeoutError::Timeout) => {
                kill(&mut child);
                return Err(CheckpointError::Timeout {
                    command: what,
                    after: call.timeout,
                });
            }
        };
        // Stdout is closed: git is exiting; wait for it within what is left of the bound.
        let mut pause = Duration::from_micros(50);
        let status = loop {
            match child.try_wait().map_err(CheckpointError::Spawn)? {
                Some(status) => break status,
                None if started.elapsed() >= call.timeout => {
                    kill(&mut child);
                    return Err(CheckpointError::Timeout {
                        command: what,
                        after: call.timeout,
                    });
                }
                None => {
                    std::thread::sleep(pause);
                    pause = (pause * 2).min(Duration::from_millis(5));
                }
            }
        };
        if let Some(feeder) = feeder {
            let _ = feeder.join();
        }
        let stderr = err_reader.join().unwrap_or_default();
        Ok(Output {
            stdout,
            code: status.code(),
            stderr: String::from_utf8_lossy(&stderr).trim().to_string(),
        })
    }
}

enum ReadError {
    TooLong,
    Io(std::io::Error),
}

fn read_capped(mut source: impl Read, cap: usize, truncate: bool) -> Result<Vec<u8>, ReadError> {
    let mut buf = Vec::new();
    let limit = cap.saturating_add(1) as u64;
    (&mut source)
        .take(limit)
        .read_to_end(&mut buf)
        .map_err(ReadError::Io)?;
    if buf.len() > cap {
        if !truncate {
            return Err(ReadError::TooLong);
        }
        buf.truncate(cap);
        // Drain the rest so git is not stopped by a full pipe before it exits.
        let _ = std::io::copy(&mut source, &mut std::io::sink());
    }
    Ok(buf)
}

fn describe(args: &[OsString]) -> String {
    let words: Vec<String> = args
        .iter()
        .take(3)
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    format!("git {}", words.join(" "))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path)
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

/// Splits `-z` output into its NUL-terminated records (an empty record is never a path).
pub fn split_z(bytes: &[u8]) -> impl Iterator<Item = &[u8]> {
    bytes.split(|b| *b == 0).filter(|rec| !rec.is_empty())
}

/// The first line of an output, trimmed (an object id).
pub fn first_line(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes)
        .lines()
        .next()
        .unwrap_or("")
        .trim()
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_git_on_path_says_checkpoints_are_off() {
        let dir = tempfile::tempdir().unwrap();
        let err = Git::locate(Some(dir.path().as_os_str().to_owned())).unwrap_err();
        assert!(matches!(err, CheckpointError::GitMissing));
        assert!(err.to_string().contains("checkpoints are off"), "{err}");
        assert!(matches!(
            Git::locate(None),
            Err(CheckpointError::GitMissing)
        ));
    }

    #[test]
    fn a_call_past_its_bound_is_stopped() {
        let dir = tempfile::tempdir().unwrap();
        let bin = Git::locate(std::env::var_os("PATH")).unwrap();
        let git = Git::new(
            bin,
            dir.path().join("r.git"),
            dir.path().into(),
            dir.path().join("i"),
        );
        // Hashing 64 MB from stdin takes longer than a millisecond.
        let mut call = Call::new(["hash-object", "--stdin"]).stdin(vec![b'x'; 64 << 20]);
        call.timeout = Duration::from_millis(1);
        let err = git.run(call).unwrap_err();
        assert!(matches!(err, CheckpointError::Timeout { .. }), "{err}");
        let mut small = Call::new(["version"]);
        small.cap = 4;
        assert!(matches!(
            git.run(small),
            Err(CheckpointError::OutputTooLong { .. })
        ));
    }

    #[test]
    fn closing_stops_a_running_call_and_refuses_the_next() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        // A git that would take half a minute (a huge workspace's first snapshot).
        let bin = dir.path().join("slow-git");
        std::fs::write(&bin, "#!/bin/sh\nsleep 30\n").unwrap();
        std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
        let git = Arc::new(Git::new(
            bin,
            dir.path().join("r.git"),
            dir.path().into(),
            dir.path().join("i"),
        ));
        let running = Arc::clone(&git);
        let started = Instant::now();
        let call = std::thread::spawn(move || {
            let mut call = Call::new(["status"]);
            call.timeout = Duration::from_secs(60);
            running.run(call)
        });
        std::thread::sleep(Duration::from_millis(100));
        git.close();
        let err = call.join().unwrap().unwrap_err();
        assert!(matches!(err, CheckpointError::Closed), "{err}");
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{:?}",
            started.elapsed()
        );
        assert!(matches!(
            git.run(Call::new(["version"])),
            Err(CheckpointError::Closed)
        ));
    }

    #[test]
    fn a_git_killed_while_it_holds_the_index_lock_leaves_no_lock_behind() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let index = dir.path().join("i");
        // A git that takes the index's lock, then is killed mid-write (its time runs out).
        let bin = dir.path().join("locking-git");
        let script = format!("#!/bin/sh\ntouch '{}.lock'\nsleep 30\n", index.display());
        std::fs::write(&bin, script).unwrap();
        std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
        let git = Git::new(
            bin,
            dir.path().join("r.git"),
            dir.path().into(),
            index.clone(),
        );
        let mut call = Call::new(["add", "-A"]);
        call.timeout = Duration::from_millis(500);
        let err = git.run(call).unwrap_err();
        assert!(matches!(err, CheckpointError::Timeout { .. }), "{err}");
        assert!(
            !dir.path().join("i.lock").exists(),
            "the killed git's lock is gone"
        );
        // A lock that was there before the call started is not this git's.
        std::fs::write(dir.path().join("i.lock"), "").unwrap();
        let past = std::time::SystemTime::now() - Duration::from_secs(60);
        let file = std::fs::File::options()
            .write(true)
            .open(dir.path().join("i.lock"))
            .unwrap();
        file.set_modified(past).unwrap();
        let mut call = Call::new(["status"]);
        call.timeout = Duration::from_millis(300);
        let bin = dir.path().join("slow-git");
        std::fs::write(&bin, "#!/bin/sh\nsleep 30\n").unwrap();
        std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
        let git = Git::new(bin, dir.path().join("r.git"), dir.path().into(), index);
        assert!(git.run(call).is_err());
        assert!(
            dir.path().join("i.lock").exists(),
            "someone else's lock is kept"
        );
    }
}
