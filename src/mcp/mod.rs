//! MCP servers as a source of tools (issue 12). Servers start in parallel in the background
//! (the first frame never waits); each ready server's tools join the registry under
//! `mcp__<server>__<tool>`; a server that fails to start or dies is reported once and its
//! tools are withdrawn; `notifications/tools/list_changed` re-lists. Quitting ends every
//! server's process group.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use tokio::sync::Notify;
use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;

use crate::tools::{Tool, ToolSettings, ToolSource};

pub mod catalog;
pub mod catalog_pages;
mod client;
pub mod config;
pub mod listing;
mod log_gate;
mod login;
pub mod names;
pub mod oauth;
pub mod prompt_args;
pub mod prompts;
pub mod resources;
pub mod result;
mod serve;
mod server;
pub(crate) mod stderr;
pub mod tool;

pub use config::{McpConfig, ServerSpec};
use server::StderrTail;
pub use server::kill_group;

pub use tool::McpTool;

/// Where a server stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    /// Starting (or re-listing its tools).
    Starting,
    /// Serving its tools.
    Ready,
    /// It failed to start or stopped; the text says why and what to do.
    Failed(String),
    /// It needs an OAuth login (`/mcp login NAME`); the text says so.
    NeedsLogin(String),
    /// A login waits for the browser: the URL to open.
    Authorizing(String),
    /// It passed a bound (endless pages, a stalled listing…): stopped and its tools
    /// withdrawn; the text says what it did. Not restarted on its own.
    Withdrawn(String),
    /// taco stopped it.
    Stopped,
}

impl Status {
    /// What the user is told when a server reaches this state, if anything.
    pub fn report(&self) -> Option<&str> {
        match self {
            Self::Failed(why) | Self::Withdrawn(why) | Self::NeedsLogin(why) => Some(why),
            _ => None,
        }
    }
}

/// What the user is told about a server, once per change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notice {
    /// The server.
    pub server: String,
    /// Its new status.
    pub status: Status,
}

/// A server as `/mcp` shows it.
#[derive(Debug, Clone)]
pub struct ServerView {
    /// Its name.
    pub name: String,
    /// How it is reached.
    pub transport: String,
    /// Where it stands.
    pub status: Status,
    /// Its tools.
    pub tools: Vec<ToolView>,
    /// The last lines it wrote to stderr.
    pub stderr: Vec<String>,
    /// Times taco started it again after it stopped.
    pub restarts: u32,
    /// What last went wrong with it (kept after it came back).
    pub last_error: Option<String>,
}

/// A server's tool as `/mcp` and `/tools` show it.
#[derive(Debug, Clone)]
pub struct ToolView {
    /// The name the model calls it by.
    pub name: String,
    /// Its name on the server.
    pub remote: String,
    /// Its policy in words.
    pub policy: String,
    /// The first sentence of its description.
    pub summary: String,
    /// Why the model is not offered it (`max_tools` reached, its schema too large), if so.
    pub not_offered: Option<String>,
}

struct Slot {
    spec: ServerSpec,
    status: Status,
    tools: Vec<Arc<McpTool>>,
    stderr: StderrTail,
    restarts: u32,
    last_error: Option<String>,
    /// `/mcp restart NAME` asked for it.
    restart: Arc<Notify>,
}

/// Every configured server and its tools.
pub struct McpHub {
    slots: Mutex<Vec<Slot>>,
    /// What its servers were started with (a server is started again after a login).
    context: StartContext,
    stop: CancellationToken,
    pids: Mutex<Vec<u32>>,
    /// Woken whenever a server's status changes.
    changed: Notify,
    /// The ready servers' prompts and resources (`catalog.rs`).
    catalog: Arc<catalog::Catalogs>,
    /// MCP tools offered at most, across servers in config order.
    max_tools: usize,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// What a server task needs besides its spec.
#[derive(Clone)]
pub struct StartContext {
    /// The workspace (default working directory of stdio servers).
    pub workdir: PathBuf,
    /// Tool settings (the environment scrub).
    pub settings: Arc<ToolSettings>,
    /// Where status changes go (the TUI's chat, `exec`'s stderr).
    pub notices: Option<UnboundedSender<Notice>>,
    /// MCP tools offered at most (`[mcp] max_tools`).
    pub max_tools: usize,
}

impl McpHub {
    /// Starts every server in the background on the current runtime; returns at once.
    pub fn start(specs: Vec<ServerSpec>, context: StartContext) -> Arc<Self> {
        let hub = Arc::new(Self {
            slots: Mutex::new(
                specs
                    .iter()
                    .map(|spec| Slot {
                        spec: spec.clone(),
                        status: Status::Starting,
                        tools: Vec::new(),
                        stderr: StderrTail::new(server::STDERR_KEPT),
                        restarts: 0,
                        last_error: None,
                        restart: Arc::new(Notify::new()),
                    })
                    .collect(),
            ),
            context: context.clone(),
            stop: CancellationToken::new(),
            pids: Mutex::default(),
            changed: Notify::new(),
            catalog: Arc::default(),
            max_tools: context.max_tools,
        });
        for (index, spec) in specs.into_iter().enumerate() {
            tokio::spawn(Arc::clone(&hub).supervise(index, spec, context.clone()));
        }
        hub
    }

    /// No servers (nothing configured).
    pub fn empty() -> Arc<Self> {
        Self::start(
            Vec::new(),
            StartContext {
                workdir: PathBuf::new(),
                settings: Arc::default(),
                notices: None,
                max_tools: config::DEFAULT_MAX_TOOLS,
            },
        )
    }

    /// Whether any server is configured.
    pub fn is_empty(&self) -> bool {
        lock(&self.slots).is_empty()
    }

    /// The servers, their states and tools, in config order; each tool says whether the
    /// model is offered it.
    pub fn view(&self) -> Vec<ServerView> {
        let mut budget = self.max_tools;
        lock(&self.slots)
            .iter()
            .map(|slot| {
                let serving = slot.status == Status::Ready;
                let tools = slot
                    .tools
                    .iter()
                    .map(|t| {
                        let not_offered = t.unfit().or_else(|| {
                            if !serving {
                                return None;
                            }
                            if budget == 0 {
                                return Some(format!(
                                    "not offered: {} MCP tools are offered already ([mcp] max_tools)",
                                    self.max_tools
                                ));
                            }
                            budget -= 1;
                            None
                        });
                        ToolView {
                            name: t.name().to_string(),
                            remote: t.remote_name().to_string(),
                            policy: t.policy_note().to_string(),
                            summary: crate::text::summarize(
                                t.description().split(". ").next().unwrap_or(""),
                                120,
                            ),
                            not_offered,
                        }
                    })
                    .collect();
                ServerView {
                    name: slot.spec.name.clone(),
                    transport: slot.spec.describe(),
                    status: slot.status.clone(),
                    tools,
                    stderr: slot.stderr.lines(),
                    restarts: slot.restarts,
                    last_error: slot.last_error.clone(),
                }
            })
            .collect()
    }

    /// Waits until no server is starting any more (each is bounded by its startup time):
    /// `exec` makes its first model call with every tool that could be had.
    pub async fn settled(&self) {
        loop {
            let notified = self.changed.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if !lock(&self.slots)
                .iter()
                .any(|slot| slot.status == Status::Starting)
            {
                return;
            }
            notified.await;
        }
    }

    /// `/mcp restart NAME`: stops the server if it runs and starts it again, its restart
    /// count from zero. `Err` says there is no such server.
    pub fn restart(&self, name: &str) -> Result<(), String> {
        let slots = lock(&self.slots);
        let slot = slots
            .iter()
            .find(|slot| slot.spec.name == name)
            .ok_or_else(|| {
                let known: Vec<&str> = slots.iter().map(|s| s.spec.name.as_str()).collect();
                format!(
                    "there is no MCP server {name:?} (configured: {})",
                    if known.is_empty() {
                        "none".to_string()
                    } else {
                        known.join(", ")
                    }
                )
            })?;
        slot.restart.notify_one();
        Ok(())
    }

    /// Stops every server: their connections close and their process groups are killed.
    pub fn shutdown(&self) {
        self.stop.cancel();
        for pid in lock(&self.pids).drain(..) {
            kill_group(Some(pid));
        }
    }
}

impl std::fmt::Debug for McpHub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<String> = lock(&self.slots)
            .iter()
            .map(|s| s.spec.name.clone())
            .collect();
        f.debug_struct("McpHub")
            .field("servers", &names)
            .finish_non_exhaustive()
    }
}

impl ToolSource for McpHub {
    fn tools(&self) -> Vec<Arc<dyn Tool>> {
        // The same walk as `view`: config order, fit tools, `max_tools` at most.
        lock(&self.slots)
            .iter()
            .filter(|slot| slot.status == Status::Ready)
            .flat_map(|slot| slot.tools.iter().filter(|t| t.unfit().is_none()))
            .take(self.max_tools)
            .filter(|t| t.is_live())
            .map(|t| Arc::clone(t) as Arc<dyn Tool>)
            .collect()
    }
}

/// Tools listed per server in `/mcp` at most (a server may offer thousands).
const SHOWN_TOOLS: usize = 200;

/// `/mcp` and `taco mcp list`: each server, how it is reached, its state, restarts and last
/// error, and its tools (those not offered to the model say why).
pub fn describe_servers(servers: &[ServerView]) -> String {
    use std::fmt::Write;
    if servers.is_empty() {
        return "No MCP servers are configured (add [mcp.servers.NAME] to the config).\n".into();
    }
    let mut out = String::new();
    for server in servers {
        let offered = server
            .tools
            .iter()
            .filter(|t| t.not_offered.is_none())
            .count();
        let mut state = match &server.status {
            Status::Starting => "starting".to_string(),
            Status::Ready if offered == server.tools.len() => {
                format!("ready, {} tools", server.tools.len())
            }
            Status::Ready => format!(
                "ready, {offered} of its {} tools offered",
                server.tools.len()
            ),
            Status::Failed(_) => "failed".to_string(),
            Status::NeedsLogin(_) => "needs a login".to_string(),
            Status::Authorizing(_) => "logging in: waiting for the browser".to_string(),
            Status::Withdrawn(_) => "withdrawn (it passed a bound)".to_string(),
            Status::Stopped => "stopped".to_string(),
        };
        if server.restarts > 0 {
            let _ = write!(state, ", restarted {} times", server.restarts);
        }
        let _ = writeln!(out, "- **{}** ({}): {state}", server.name, server.transport);
        match (server.status.report(), &server.last_error) {
            (Some(why), _) => {
                for line in why.lines() {
                    let _ = writeln!(out, "    {line}");
                }
            }
            (None, Some(last)) => {
                let first = last.lines().next().unwrap_or_default();
                let _ = writeln!(out, "    last error: {first}");
            }
            (None, None) => {}
        }
        if let Status::Authorizing(url) = &server.status {
            let _ = writeln!(out, "    open this URL in a browser to log in:\n    {url}");
        }
        for tool in server.tools.iter().take(SHOWN_TOOLS) {
            let _ = write!(
                out,
                "    - `{}` ({}): {}",
                tool.name, tool.policy, tool.summary
            );
            if let Some(why) = &tool.not_offered {
                let _ = write!(out, " — {why}");
            }
            out.push('\n');
        }
        if server.tools.len() > SHOWN_TOOLS {
            let _ = writeln!(
                out,
                "    - … and {} more tools",
                server.tools.len() - SHOWN_TOOLS
            );
        }
    }
    out
}
