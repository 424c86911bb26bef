//! `shell`: runs `sh -c COMMAND` in the workspace, in its own process group.
//!
//! The whole group is killed on timeout, on cancellation and when the call's future is
//! dropped (the runner may drop it on its own timeout), so no stray children outlive a call.

use std::os::unix::process::ExitStatusExt;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::{Child, Command};
use tokio_util::sync::CancellationToken;

mod code;
mod command;
pub mod grants;
pub(crate) mod live;
mod names;
mod output;
mod programs;
pub mod rules;
mod through;

use super::cancelled;
use crate::sandbox::{Confinement, denial};
use crate::tools::budget;
use crate::tools::{Policy, ToolContext, ToolError, ToolSettings, TypedTool};
use output::{Capture, Shown, Stream, show_both};

/// Longest timeout a model may ask for.
const MAX_TIMEOUT_SECS: u64 = 600;
/// After the shell exits, how long background processes may keep its output pipes open.
const PIPE_GRACE: Duration = Duration::from_millis(250);
/// After a kill, how long to wait for the pipes to close and the shell to be reaped.
const KILL_DRAIN: Duration = Duration::from_secs(1);

/// Runs a shell command and returns its exit code and (capped) output.
#[derive(Debug, Clone, Copy, Default)]
pub struct Shell;

/// Arguments of `shell`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ShellParams {
    /// The command line, run with `sh -c` in the workspace root.
    pub command: String,
    /// Seconds before the command is killed (default from the settings, at most 600).
    #[serde(default)]
    pub timeout_secs: Option<u64>,
    /// Run outside the sandbox. Only after this command failed with a sandbox denial
    /// (sandbox_denied in its result) and the task needs it: the user is asked every time.
    #[serde(default)]
    pub unsandboxed: bool,
}

impl TypedTool for Shell {
    type Params = ShellParams;
    const NAME: &'static str = "shell";
    const POLICY_NOTE: &'static str =
        "ask (allow for [tools.shell] allow prefixes; unsandboxed: asked every time)";
    const RUNS_PROCESS: bool = true;
    const CHANGES_WORKSPACE: bool = true;
    const USAGE: Option<&'static str> = Some(
        "Commands run without a terminal and with stdin closed: avoid programs that wait for input or never exit (servers, watchers, pagers) and pass flags such as --yes or --no-pager. Keep output small (| head, grep, --quiet); long output is cut in the middle.",
    );
    const DESCRIPTION: &'static str = "Run a shell command (sh -c) in the workspace root, with \
        stdin closed. Returns exit_code, stdout and stderr (long output keeps its head and \
        tail; stdout_omitted and stderr_omitted count the bytes cut from the middle). A \
        non-zero exit code is reported, not treated as a failure. The command and all its \
        children are killed when it times out. It usually runs in a sandbox: writing outside \
        the workspace and the temp dir, and TCP connections, fail; such a failure comes back \
        with sandbox_denied, and the call may then be made again with unsandboxed: true, \
        which the user must approve.";

    fn default_policy(&self, params: &ShellParams, settings: &ToolSettings) -> Policy {
        rules::policy(&params.command, &settings.shell_allow, &settings.shell_ask)
            .unwrap_or(Policy::Ask)
    }

    fn confinement(&self, params: &ShellParams, settings: &ToolSettings) -> Option<Confinement> {
        Some(settings.sandbox.confinement(params.unsandboxed))
    }

    async fn run(&self, params: ShellParams, ctx: &ToolContext) -> Result<Value, ToolError> {
        let secs = params
            .timeout_secs
            .unwrap_or(ctx.settings.shell_timeout.as_secs())
            .clamp(1, MAX_TIMEOUT_SECS);
        if ctx.cancel.is_cancelled() {
            return Err(cancelled());
        }
        let mut command = Command::new("sh");
        // Provider keys and other secrets stay out of what the model can run (`env`).
        ctx.settings.child_env(&mut command);
        // A build or test run that emits OpenTelemetry nests under the call that started it.
        if let Some(trace) = &ctx.trace {
            command.env("TRACEPARENT", trace.header());
            match &trace.state {
                Some(state) => command.env("TRACESTATE", state),
                None => command.env_remove("TRACESTATE"),
            };
        }
        let confinement = ctx.settings.sandbox.confinement(params.unsandboxed);
        ctx.settings
            .sandbox
            .confine(&mut command, &ctx.workdir, confinement)
            .map_err(|e| ToolError::failed(format!("sh was not started: {e}")))?;
        let mut child = command
            .arg("-c")
            .arg(&params.command)
            .current_dir(&ctx.workdir)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| {
                let inside = if confinement.is_sandboxed() {
                    " in the sandbox"
                } else {
                    ""
                };
                ToolError::failed(format!("could not start sh{inside}: {e}"))
            })?;
        // Declared after `child` so it drops first: the group is killed while the shell is
        // still unreaped, so its process group id cannot have been reused.
        let mut group = GroupKill::new(child.id());
        let cap = ctx.settings.max_output_bytes;
        let mut out = Capture::new(cap);
        let mut err = Capture::new(cap);
        let end = supervise(&mut child, &mut group, &mut out, &mut err, secs, ctx).await;
        let (out, err) = (out.finish(), err.finish());
        match end {
            End::Exited { status, pipes_held } => {
                let result = budget::fit(cap, |room| exited(status, pipes_held, &out, &err, room));
                denied_or(result, status.success(), confinement)
            }
            End::TimedOut => {
                let head = format!(
                    "command timed out after {secs} s and was killed (with its process group)"
                );
                // The message is all the model gets, so it fits the cap like a result would.
                let error = budget::fit(cap, |room| timed_out(&head, &out, &err, room));
                let message = error["error"].as_str().unwrap_or(&head).to_string();
                Err(ToolError::failed(message))
            }
            End::Cancelled => Err(cancelled()),
            End::WaitFailed(e) => Err(ToolError::failed(format!("waiting for sh failed: {e}"))),
        }
    }
}

/// The result of a command that exited, or a sandbox denial when it ran sandboxed and
/// failed the way the sandbox makes commands fail.
fn denied_or(
    mut result: Value,
    success: bool,
    confinement: Confinement,
) -> Result<Value, ToolError> {
    let text = |key: &str| result.get(key).and_then(Value::as_str).unwrap_or_default();
    if !confinement.is_sandboxed()
        || !denial::looks_denied(success, &[text("stderr"), text("stdout")])
    {
        // A command that said it failed is a failed call everywhere (issue 27.2).
        return match success {
            true => Ok(result),
            false => Err(ToolError::ExitNonzero(Box::new(result))),
        };
    }
    denial::annotate(&mut result, confinement);
    Err(ToolError::SandboxDenied(Box::new(result)))
}

/// How a command ended.
enum End {
    Exited {
        status: ExitStatus,
        pipes_held: bool,
    },
    TimedOut,
    Cancelled,
    WaitFailed(std::io::Error),
}

/// Waits for the shell while pumping both pipes, until exit, timeout or cancellation.
async fn supervise(
    child: &mut Child,
    group: &mut GroupKill,
    out: &mut Capture,
    err: &mut Capture,
    secs: u64,
    ctx: &ToolContext,
) -> End {
    let cancel: &CancellationToken = &ctx.cancel;
    let (stdout, stderr) = (child.stdout.take(), child.stderr.take());
    // The last lines of both streams, sent as the command runs (`tool_output`).
    let tail = std::sync::Mutex::new(live::Tail::default());
    let pumps = async {
        tokio::join!(pump(stdout, out, &tail), pump(stderr, err, &tail));
    };
    tokio::pin!(pumps);
    let mut ticker = tokio::time::interval(live::EVERY);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let deadline = tokio::time::sleep(Duration::from_secs(secs));
    tokio::pin!(deadline);
    let mut pumps_done = false;
    let end = loop {
        tokio::select! {
            () = &mut pumps, if !pumps_done => pumps_done = true,
            status = child.wait() => break match status {
                Ok(status) => End::Exited { status, pipes_held: false },
                Err(e) => End::WaitFailed(e),
            },
            () = &mut deadline => break End::TimedOut,
            () = cancel.cancelled() => break End::Cancelled,
            _ = ticker.tick() => {
                let changed = tail.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take();
                if let Some(text) = changed {
                    // What a command prints may quote a key: masked like its result.
                    ctx.output(&ctx.settings.secrets.redact(&text));
                }
            }
        }
    };
    match end {
        End::Exited { status, .. } => {
            let mut pipes_held = false;
            // A background job (`server &`) may keep the pipes open after the shell exits;
            // it would hang the call, so after a grace period the group is killed.
            if !pumps_done && tokio::time::timeout(PIPE_GRACE, &mut pumps).await.is_err() {
                pipes_held = true;
                group.kill();
                let _ = tokio::time::timeout(KILL_DRAIN, &mut pumps).await;
            }
            // Clean exit: jobs that detached from the output are left running, like a terminal does.
            group.disarm();
            End::Exited { status, pipes_held }
        }
        other => {
            group.kill();
            if !pumps_done {
                let _ = tokio::time::timeout(KILL_DRAIN, &mut pumps).await;
            }
            let _ = tokio::time::timeout(KILL_DRAIN, child.wait()).await;
            other
        }
    }
}

/// The result of a command that exited (any exit code), its output within `room` bytes of
/// JSON cost; also returns the cost used.
fn exited(
    status: ExitStatus,
    pipes_held: bool,
    out: &Stream,
    err: &Stream,
    room: usize,
) -> (Value, usize) {
    let mut notes = Vec::new();
    match (status.code(), status.signal()) {
        (Some(0), _) => {}
        (Some(code), _) => notes.push(format!("the command exited with code {code}")),
        (None, Some(signal)) => notes.push(format!("the command was killed by signal {signal}")),
        (None, None) => notes.push("the command ended abnormally".to_string()),
    }
    let shown = show_both(out, err, room);
    for (name, stream, shown) in [("stdout", out, &shown[0]), ("stderr", err, &shown[1])] {
        if shown.omitted > 0 {
            notes.push(format!(
                "{name} was {} bytes; {} bytes from its middle are omitted ({name}_omitted)",
                stream.total(),
                shown.omitted
            ));
        }
    }
    if pipes_held {
        notes.push(
            "background processes kept the output open after the shell exited and were \
             killed; redirect their output (cmd > file 2>&1 &) to keep them running"
                .to_string(),
        );
    }
    let [stdout, stderr] = shown;
    let used = stdout.cost + stderr.cost;
    let mut result = json!({
        "exit_code": status.code(),
        "stdout": stdout.text,
        "stderr": stderr.text,
        "timed_out": false,
    });
    for (key, omitted) in [
        ("stdout_omitted", stdout.omitted),
        ("stderr_omitted", stderr.omitted),
    ] {
        if omitted > 0 {
            result[key] = json!(omitted);
        }
    }
    if let Some(signal) = status.signal() {
        result["signal"] = json!(signal);
    }
    if !notes.is_empty() {
        result["note"] = json!(notes.join("; "));
    }
    (result, used)
}

/// The error of a command that timed out, quoting its output so far within `room` bytes of
/// JSON cost, as `{"error": …}`; also returns the cost used.
fn timed_out(head: &str, out: &Stream, err: &Stream, room: usize) -> (Value, usize) {
    let mut text = head.to_string();
    let mut used = 0;
    let shown: [Shown; 2] = show_both(out, err, room);
    for (name, shown) in ["stdout", "stderr"].iter().zip(shown) {
        if !shown.text.is_empty() {
            text.push_str(&format!("\n{name} so far:\n{}", shown.text));
            used += shown.cost;
        }
    }
    (json!({ "error": text }), used)
}

/// Copies a pipe into a capture until EOF (or a read error, which ends the output too).
async fn pump(
    reader: Option<impl AsyncRead + Unpin>,
    capture: &mut Capture,
    live: &std::sync::Mutex<live::Tail>,
) {
    let Some(mut reader) = reader else { return };
    let mut buf = vec![0u8; 16 * 1024];
    while let Ok(n) = reader.read(&mut buf).await {
        if n == 0 {
            break;
        }
        capture.push(&buf[..n]);
        live.lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(&buf[..n]);
    }
}

/// Kills the command's whole process group unless disarmed; runs on drop too.
struct GroupKill {
    pgid: Option<libc::pid_t>,
}

impl GroupKill {
    fn new(pid: Option<u32>) -> Self {
        // pgid 0 would mean "our own group": never let that through.
        let pgid = pid
            .and_then(|p| libc::pid_t::try_from(p).ok())
            .filter(|&p| p > 0);
        Self { pgid }
    }

    fn kill(&mut self) {
        if let Some(pgid) = self.pgid.take() {
            // SAFETY: killpg has no memory-safety preconditions; pgid is a positive id of
            // the group created for this command (process_group(0) makes pgid == pid).
            unsafe {
                libc::killpg(pgid, libc::SIGKILL);
            }
        }
    }

    fn disarm(&mut self) {
        self.pgid = None;
    }
}

impl Drop for GroupKill {
    fn drop(&mut self) {
        self.kill();
    }
}
