//! The sandbox of what tools run (issue 17): a `shell` command, and an MCP stdio server that
//! asks for it, run under a Landlock ruleset applied in the child before it executes, with
//! `PR_SET_NO_NEW_PRIVS`, so the rules bind the whole process tree. `workspace-write` lets it
//! read everything and write only the workspace, the temp dir and `[sandbox] writable`;
//! `read-only` writes nothing; TCP bind and connect are refused unless `[sandbox] network`.
//! On a kernel that cannot enforce this, nothing pretends: the state says so and every shell
//! call is asked about (`Sandbox::asks_every_call`).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

mod child;
pub mod denial;
mod namespace;
mod probe;
mod rules;
mod seccomp;

pub use child::{DROPPED, harden};
pub use probe::{NAMESPACE_SWITCH, TEST_SWITCH, kernel_support};

/// `[sandbox] mode` / `--sandbox`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxMode {
    /// Read anything; write only the workspace, the temp dir and the configured paths.
    #[default]
    WorkspaceWrite,
    /// Read anything, write nothing (but `/dev/null`).
    ReadOnly,
    /// No sandbox: commands run with the user's full rights.
    Off,
}

impl SandboxMode {
    /// The word the config and the command line use.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::WorkspaceWrite => "workspace-write",
            Self::ReadOnly => "read-only",
            Self::Off => "off",
        }
    }
}

/// Whether the running kernel can enforce the sandbox as configured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Support {
    /// Landlock with this ABI, enough for every rule asked for.
    Available {
        /// The kernel's Landlock ABI version.
        abi: u32,
    },
    /// It cannot, and why (said once to the user).
    Unavailable(String),
}

/// The sandbox as configured and as the kernel allows: what each sandboxed process gets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sandbox {
    /// The configured mode.
    pub mode: SandboxMode,
    /// Whether sandboxed processes may open TCP connections and listen.
    pub network: bool,
    /// More directories sandboxed processes may write (`[sandbox] writable`), absolute.
    pub writable: Vec<PathBuf>,
    /// What the kernel supports.
    pub support: Support,
    /// How metadata changes outside the writable paths are refused.
    pub metadata: Metadata,
}

/// How a sandboxed process is kept from changing metadata (chmod, chown, utime, xattr)
/// outside the writable paths, which Landlock does not cover; judged once at startup.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Metadata {
    /// A mount namespace where everything but the writable paths is read-only; with a user
    /// namespace too when taco is not root.
    Namespace {
        /// Whether a user namespace (without an id map) is part of it.
        user: bool,
    },
    /// A seccomp filter refusing the metadata calls everywhere, the workspace included,
    /// because no mount namespace could be built (why).
    Seccomp(String),
    /// Neither: metadata changes are not refused (why).
    Unguarded(String),
    /// Not judged (no sandbox).
    #[default]
    Unchecked,
}

impl Default for Sandbox {
    /// No sandbox (tests and tools built without a config); a resolved config is never this
    /// unless the user said `off`.
    fn default() -> Self {
        Self {
            mode: SandboxMode::Off,
            network: true,
            writable: Vec::new(),
            support: Support::Unavailable("not checked".to_string()),
            metadata: Metadata::Unchecked,
        }
    }
}

/// Where the sandbox stands for this session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State<'a> {
    /// Commands run confined.
    Enforced,
    /// The user turned it off.
    Off,
    /// The kernel cannot confine them; every shell call is asked about.
    Unavailable(&'a str),
}

impl Metadata {
    /// What guards metadata, in a sentence for `/status`.
    pub fn describe(&self) -> String {
        match self {
            Self::Namespace { user: false } => "chmod, chown, utime and xattr changes outside the writable paths are refused (a mount namespace: the rest of the tree is read-only)".to_string(),
            Self::Namespace { user: true } => "chmod, chown, utime and xattr changes outside the writable paths are refused (a user and mount namespace: the rest of the tree is read-only; inside it every user and group shows as nobody)".to_string(),
            Self::Seccomp(why) => format!("chmod, chown, utime and xattr changes are refused everywhere, the workspace too (a seccomp filter, since no mount namespace can be had: {why})"),
            Self::Unguarded(why) => format!("chmod, chown, utime and xattr changes are NOT refused ({why})"),
            Self::Unchecked => "metadata changes are not checked".to_string(),
        }
    }
}

/// How one call runs: shown in the approval dialog, the chat, the stack and the timeline, and
/// carried by `tool_call` and `approval_requested` events.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "run", rename_all = "snake_case")]
pub enum Confinement {
    /// Inside the sandbox.
    Sandboxed {
        /// `workspace-write` or `read-only`.
        mode: SandboxMode,
        /// Whether TCP is allowed.
        network: bool,
    },
    /// Outside the sandbox because the user approved this one call so (an escalation).
    Unsandboxed,
    /// Unconfined: the user set `[sandbox] mode = "off"`.
    Off,
    /// Unconfined: the kernel cannot sandbox it.
    Unavailable,
}

impl Confinement {
    /// A sentence for the approval dialog and the chat.
    pub fn label(self) -> String {
        match self {
            Self::Sandboxed { mode, network } => format!(
                "sandboxed: {}, {}",
                mode.as_str(),
                if network { "network on" } else { "no network" }
            ),
            Self::Unsandboxed => "runs OUTSIDE the sandbox, with your full rights".to_string(),
            Self::Off => "not sandboxed: [sandbox] mode is off".to_string(),
            Self::Unavailable => "not sandboxed: this kernel cannot (no Landlock)".to_string(),
        }
    }

    /// A word or two for the stack and the timeline.
    pub fn short(self) -> &'static str {
        match self {
            Self::Sandboxed {
                mode: SandboxMode::ReadOnly,
                network: false,
            } => "read-only",
            Self::Sandboxed {
                mode: SandboxMode::ReadOnly,
                network: true,
            } => "read-only+net",
            Self::Sandboxed { network: false, .. } => "sandboxed",
            Self::Sandboxed { network: true, .. } => "sandboxed+net",
            Self::Unsandboxed => "UNSANDBOXED",
            Self::Off => "sandbox off",
            Self::Unavailable => "no sandbox",
        }
    }

    /// Whether the call runs confined.
    pub fn is_sandboxed(self) -> bool {
        matches!(self, Self::Sandboxed { .. })
    }
}

/// Why a process could not be put in the sandbox (it is then not started).
#[derive(Debug, thiserror::Error)]
#[error("could not build the sandbox: {0}")]
pub struct SandboxError(String);

impl Sandbox {
    /// The sandbox a config asks for, checked against this kernel (`env` may hold the test
    /// switch that makes Landlock look absent).
    pub fn resolve(
        mode: SandboxMode,
        network: bool,
        writable: Vec<PathBuf>,
        workdir: &Path,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Self {
        let mut sandbox = Self {
            mode,
            network,
            writable,
            support: kernel_support(network, env),
            metadata: Metadata::Unchecked,
        };
        if mode == SandboxMode::Off || !matches!(sandbox.support, Support::Available { .. }) {
            return sandbox;
        }
        // Building the ruleset once proves the kernel takes it (a seccomp filter or a
        // container may refuse what the version promises).
        if let Err(e) = rules::ruleset(&sandbox, workdir) {
            sandbox.support = Support::Unavailable(e.to_string());
            return sandbox;
        }
        sandbox.metadata = sandbox.judge_metadata(workdir, env);
        sandbox
    }

    /// The metadata guard this machine allows: the namespace when a child can really build
    /// it, else the seccomp filter.
    fn judge_metadata(&self, workdir: &Path, env: &dyn Fn(&str) -> Option<String>) -> Metadata {
        let namespace = if env(NAMESPACE_SWITCH).is_some_and(|v| !v.is_empty() && v != "0") {
            Err(format!(
                "namespaces are treated as absent ({NAMESPACE_SWITCH} is set)"
            ))
        } else {
            match namespace::MountPlan::new(&self.writable_dirs(workdir)) {
                None => return Metadata::Unguarded("/ is writable".to_string()),
                Some(plan) => namespace::probe(&plan).map(|()| plan.with_user_namespace()),
            }
        };
        match namespace {
            Ok(user) => Metadata::Namespace { user },
            Err(why) => match seccomp::filter() {
                Ok(_) => Metadata::Seccomp(why),
                Err(e) => Metadata::Unguarded(format!("{why}; no seccomp filter either: {e}")),
            },
        }
    }

    /// Where it stands.
    pub fn state(&self) -> State<'_> {
        match (&self.mode, &self.support) {
            (SandboxMode::Off, _) => State::Off,
            (_, Support::Unavailable(reason)) => State::Unavailable(reason),
            (_, Support::Available { .. }) => State::Enforced,
        }
    }

    /// How a call runs; `escalated` when the user approved it outside the sandbox.
    pub fn confinement(&self, escalated: bool) -> Confinement {
        match self.state() {
            State::Off => Confinement::Off,
            State::Unavailable(_) => Confinement::Unavailable,
            State::Enforced if escalated => Confinement::Unsandboxed,
            State::Enforced => Confinement::Sandboxed {
                mode: self.mode,
                network: self.network,
            },
        }
    }

    /// The kernel cannot confine commands the user expects confined: each one is asked
    /// about, and no turn or session grant covers it.
    pub fn asks_every_call(&self) -> bool {
        matches!(self.state(), State::Unavailable(_))
    }

    /// The directories a sandboxed process may write: none in `read-only`; the workspace,
    /// the temp dir and the configured ones in `workspace-write`.
    pub fn writable_dirs(&self, workdir: &Path) -> Vec<PathBuf> {
        if self.mode != SandboxMode::WorkspaceWrite {
            return Vec::new();
        }
        let mut dirs = vec![workdir.to_path_buf(), std::env::temp_dir()];
        dirs.extend(self.writable.iter().cloned());
        dirs
    }

    /// Puts `command` in the sandbox when `confinement` says it runs sandboxed, and in any
    /// case makes it drop the capabilities that read other processes and inherit no fd but
    /// 0–2 ([`harden`]). Everything is built here, before the fork; the child only makes
    /// syscalls.
    pub fn confine(
        &self,
        command: &mut tokio::process::Command,
        workdir: &Path,
        confinement: Confinement,
    ) -> Result<(), SandboxError> {
        let mut plan = child::Plan::default();
        if confinement.is_sandboxed() {
            plan.ruleset = Some(rules::ruleset(self, workdir)?);
            match &self.metadata {
                Metadata::Namespace { .. } => {
                    plan.mounts = namespace::MountPlan::new(&self.writable_dirs(workdir));
                }
                Metadata::Seccomp(_) => {
                    plan.filter = Some(seccomp::filter().map_err(SandboxError)?)
                }
                Metadata::Unguarded(_) | Metadata::Unchecked => {}
            }
        }
        plan.install(command);
        Ok(())
    }

    /// What is said once when the kernel cannot give the sandbox the user expects.
    pub fn fallback_notice(&self) -> Option<String> {
        match self.state() {
            State::Unavailable(reason) => Some(format!(
                "the sandbox is unavailable: {reason}. Every shell command is asked about, one by one, and no grant covers it; set [sandbox] mode = \"off\" to run commands unconfined without asking"
            )),
            _ => None,
        }
    }

    /// The state in a few lines, for `/status`.
    pub fn describe(&self, workdir: &Path) -> String {
        match self.state() {
            State::Off => {
                "off ([sandbox] mode = \"off\"): shell commands run with your full rights"
                    .to_string()
            }
            State::Unavailable(reason) => format!(
                "unavailable: {reason}. Every shell command is asked about, one by one (set [sandbox] mode = \"off\" to run them unconfined)"
            ),
            State::Enforced => {
                let writes = match self.mode {
                    SandboxMode::ReadOnly => "writes nothing".to_string(),
                    _ => {
                        let dirs: Vec<String> = self
                            .writable_dirs(workdir)
                            .iter()
                            .map(|d| d.display().to_string())
                            .collect();
                        format!("writes only {}", dirs.join(", "))
                    }
                };
                let abi = match self.support {
                    Support::Available { abi } => abi,
                    Support::Unavailable(_) => 0,
                };
                format!(
                    "{} (Landlock ABI {abi}): shell commands read anything, {writes}; {}; {}",
                    self.mode.as_str(),
                    if self.network {
                        "TCP allowed"
                    } else {
                        "no TCP connections or listening"
                    },
                    self.metadata.describe()
                )
            }
        }
    }
}

#[cfg(test)]
mod tests;
