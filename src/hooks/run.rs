//! Running one hook: `sh -c COMMAND` in the workspace, in the sandbox as a shell command runs,
//! with the tools' scrubbed environment (no secrets), the event as JSON on stdin, its own
//! process group (killed on timeout, on cancel, and when the run is dropped), output capped.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::Command;
use tokio_util::sync::CancellationToken;

use super::Hook;
use crate::tools::ToolSettings;

/// Bytes of stdout and of stderr kept from a hook (the rest is read and dropped).
pub const MAX_OUTPUT: usize = 64 * 1024;

/// How a hook run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ran {
    /// Its exit code (`None`: killed, or never started).
    pub exit: Option<i32>,
    /// What it printed (capped, secrets masked).
    pub stdout: String,
    /// What it printed on stderr (capped, secrets masked).
    pub stderr: String,
    /// How long it took.
    pub duration: Duration,
    /// Why it did not finish: not started, timed out, cancelled.
    pub error: Option<String>,
}

/// Runs `hook` with `input` on stdin.
pub async fn run(
    hook: &Hook,
    input: &Value,
    settings: &ToolSettings,
    workdir: &Path,
    cancel: &CancellationToken,
) -> Ran {
    let started = Instant::now();
    let failed = |error: String| Ran {
        exit: None,
        stdout: String::new(),
        stderr: String::new(),
        duration: started.elapsed(),
        error: Some(error),
    };
    let mut command = Command::new("sh");
    settings.child_env(&mut command);
    let confinement = settings.sandbox.confinement(false);
    if let Err(e) = settings.sandbox.confine(&mut command, workdir, confinement) {
        return failed(format!("it was not started: {e}"));
    }
    command
        .arg("-c")
        .arg(&hook.command)
        .env("TACO_HOOK_EVENT", hook.event.name())
        .current_dir(workdir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(e) => return failed(format!("it could not be started: {e}")),
    };
    let group = child.id();
    let stdin = child.stdin.take();
    // A key the model wrote into a call's arguments does not reach a hook either.
    let text = serde_json::to_string(input).unwrap_or_default();
    let bytes = settings.secrets.redact(&text).into_owned().into_bytes();
    let feed = async move {
        if let Some(mut stdin) = stdin {
            // A hook that does not read its input closes the pipe: that is its business.
            let _ = stdin.write_all(&bytes).await;
            let _ = stdin.shutdown().await;
        }
    };
    let (out, err) = (child.stdout.take(), child.stderr.take());
    let work = async {
        let (_, out, err, status) = tokio::join!(feed, capped(out), capped(err), child.wait());
        (out, err, status)
    };
    let ended = tokio::select! {
        done = tokio::time::timeout(hook.timeout, work) => done.map_err(|_| {
            format!("it took longer than {} s and was stopped", hook.timeout.as_secs())
        }),
        () = cancel.cancelled() => Err("it was cancelled".to_string()),
    };
    match ended {
        Ok((out, err, status)) => {
            let mask = |bytes: Vec<u8>| {
                let text = String::from_utf8_lossy(&bytes).into_owned();
                settings.secrets.redact(&text).into_owned()
            };
            Ran {
                exit: status.ok().and_then(|s| s.code()),
                stdout: mask(out),
                stderr: mask(err),
                duration: started.elapsed(),
                error: None,
            }
        }
        Err(error) => {
            kill_group(group);
            let _ = child.start_kill();
            let _ = tokio::time::timeout(Duration::from_secs(1), child.wait()).await;
            failed(error)
        }
    }
}

/// Reads a pipe to its end, keeping the first [`MAX_OUTPUT`] bytes.
async fn capped(pipe: Option<impl AsyncRead + Unpin>) -> Vec<u8> {
    let mut kept = Vec::new();
    let Some(mut pipe) = pipe else {
        return kept;
    };
    let mut buf = [0u8; 8192];
    loop {
        match pipe.read(&mut buf).await {
            Ok(0) | Err(_) => return kept,
            Ok(n) => {
                let room = MAX_OUTPUT.saturating_sub(kept.len());
                kept.extend_from_slice(&buf[..n.min(room)]);
            }
        }
    }
}

/// Kills the hook's process group (what it started goes with it).
fn kill_group(pid: Option<u32>) {
    if let Some(pid) = pid.and_then(|p| rustix::process::Pid::from_raw(p as i32)) {
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
}
