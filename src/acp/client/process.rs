//! The external agent's process: started in its own process group with a scrubbed
//! environment (no provider key or other withheld secret; only the variables its config
//! names are added), its stderr read in bounded lines into the log (never the terminal), and
//! its whole group killed when taco is done with it, so nothing it started outlives taco.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;

use tokio::process::{Child, ChildStdin, ChildStdout};

use crate::secrets::Secrets;
use crate::tools::ToolSettings;

/// Lines of the agent's stderr kept to say why it stopped.
const STDERR_KEPT: usize = 8;
/// Longest stderr line kept.
const STDERR_LINE: usize = 400;

/// How to start an agent (`[agents.NAME]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Command {
    /// Its name in the config (`--agent NAME`).
    pub name: String,
    /// The program.
    pub command: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// Variables set for it (values may name `${VAR}`s of taco's environment).
    pub env: BTreeMap<String, String>,
    /// The authentication method (an id the agent advertises) to `authenticate` with before
    /// the session opens.
    pub auth: Option<String>,
}

/// The last lines the agent wrote to stderr (the MCP servers' tail, shared).
pub use crate::mcp::stderr::StderrTail;

/// The agent, running.
pub struct Running {
    /// Its process (killed on drop too).
    pub child: Child,
    /// Its stdin: taco's lines to it.
    pub stdin: ChildStdin,
    /// Its stdout: its lines to taco.
    pub stdout: ChildStdout,
    /// Its last stderr lines.
    pub stderr: StderrTail,
    /// Its process group.
    pub group: Option<u32>,
}

/// Starts `command` in `workdir`: the environment of a shell command (`settings`), plus the
/// config's variables (`env` resolves their `${VAR}`s).
pub fn spawn(
    command: &Command,
    workdir: &Path,
    settings: &ToolSettings,
    env: &dyn Fn(&str) -> Option<String>,
    secrets: Arc<Secrets>,
) -> Result<Running, String> {
    let mut cmd = tokio::process::Command::new(&command.command);
    cmd.args(&command.args)
        .current_dir(workdir)
        .kill_on_drop(true);
    settings.child_env(&mut cmd);
    for (key, value) in &command.env {
        let value = crate::mcp::config::expand(value, env)
            .map_err(|e| format!("agent {}: env {key}: {e}", command.name))?;
        cmd.env(key, value);
    }
    // Its own group: everything it starts is killed with it.
    #[cfg(unix)]
    cmd.process_group(0);
    // It cannot read taco's memory nor inherit its descriptors.
    crate::sandbox::harden(&mut cmd);
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let program = &command.command;
    let mut child = cmd.spawn().map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => format!(
            "agent {}: '{program}' was not found: is it installed and on PATH?",
            command.name
        ),
        _ => format!(
            "agent {}: '{program}' could not be started: {e}",
            command.name
        ),
    })?;
    let group = child.id();
    let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
        return Err(format!("agent {}: started without pipes", command.name));
    };
    let tail = StderrTail::new(STDERR_KEPT);
    if let Some(pipe) = child.stderr.take() {
        let (tail, name) = (tail.clone(), command.name.clone());
        tokio::spawn(async move {
            // Bounded lines: an endless one costs one buffer.
            crate::mcp::stderr::read_lines(pipe, |line| {
                let line = secrets.redact(&line);
                let line: String = line.chars().take(STDERR_LINE).collect();
                tracing::info!(agent = %name, line, "acp agent stderr");
                tail.push(line);
            })
            .await;
        });
    }
    Ok(Running {
        child,
        stdin,
        stdout,
        stderr: tail,
        group,
    })
}

/// Kills the agent's process group (SIGKILL): it and whatever it started (as a stdio MCP
/// server's is killed).
pub use crate::mcp::kill_group;
