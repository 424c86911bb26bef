//! MCP servers as a source of tools (issue 12). Servers start in parallel in the background
//! (the first frame never waits); each ready server's tools join the registry under
//! `mcp__<server>__<tool>`; a server that fails to start or dies is reported once and its
//! tools are withdrawn; `notifications/tools/list_changed` re-lists. Quitting ends every
//! server's process group.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use rmcp::service::{Peer, RoleClient};
use tokio::sync::Notify;
use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;

use crate::tools::{Tool, ToolSettings, ToolSource};

pub mod catalog;
pub mod catalog_pages;
mod client;
pub mod config;
mod log_gate;
pub mod names;
pub mod prompt_args;
pub mod prompts;
pub mod resources;
pub mod result;
mod server;
mod stderr;
pub mod tool;

pub use config::{McpConfig, ServerSpec};
use server::{StderrTail, connect, kill_group};

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
    /// taco stopped it.
    Stopped,
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
}

struct Slot {
    spec: ServerSpec,
    status: Status,
    tools: Vec<Arc<McpTool>>,
    stderr: StderrTail,
}

/// Every configured server and its tools.
pub struct McpHub {
    slots: Mutex<Vec<Slot>>,
    stop: CancellationToken,
    pids: Mutex<Vec<u32>>,
    /// Woken whenever a server's status changes.
    changed: Notify,
    /// The ready servers' prompts and resources (`catalog.rs`).
    catalog: catalog::Catalogs,
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
                        stderr: StderrTail::default(),
                    })
                    .collect(),
            ),
            stop: CancellationToken::new(),
            pids: Mutex::default(),
            changed: Notify::new(),
            catalog: catalog::Catalogs::default(),
        });
        for (index, spec) in specs.into_iter().enumerate() {
            tokio::spawn(Arc::clone(&hub).serve(index, spec, context.clone()));
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
            },
        )
    }

    /// Whether any server is configured.
    pub fn is_empty(&self) -> bool {
        lock(&self.slots).is_empty()
    }

    /// The servers, their states and tools, in config order.
    pub fn view(&self) -> Vec<ServerView> {
        lock(&self.slots)
            .iter()
            .map(|slot| ServerView {
                name: slot.spec.name.clone(),
                transport: slot.spec.describe(),
                status: slot.status.clone(),
                tools: slot
                    .tools
                    .iter()
                    .map(|t| ToolView {
                        name: t.name().to_string(),
                        remote: t.remote_name().to_string(),
                        policy: t.policy_note().to_string(),
                        summary: crate::text::summarize(
                            t.description().split(". ").next().unwrap_or(""),
                            120,
                        ),
                    })
                    .collect(),
                stderr: slot.stderr.lines(),
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

    /// Stops every server: their connections close and their process groups are killed.
    pub fn shutdown(&self) {
        self.stop.cancel();
        for pid in lock(&self.pids).drain(..) {
            kill_group(Some(pid));
        }
    }

    fn set(&self, index: usize, status: Status, tools: Vec<Arc<McpTool>>, context: &StartContext) {
        let name = {
            let mut slots = lock(&self.slots);
            let Some(slot) = slots.get_mut(index) else {
                return;
            };
            let changed = slot.status != status;
            slot.status = status.clone();
            slot.tools = tools;
            changed.then(|| slot.spec.name.clone())
        };
        self.changed.notify_waiters();
        if let (Some(server), Some(notices)) = (name, &context.notices) {
            let _ = notices.send(Notice { server, status });
        }
    }

    /// Runs one server: start, list, serve, re-list on change; reports how it ends.
    async fn serve(self: Arc<Self>, index: usize, spec: ServerSpec, context: StartContext) {
        let stderr = lock(&self.slots)
            .get(index)
            .map(|slot| slot.stderr.clone())
            .unwrap_or_default();
        let handler = client::Handler::new(&spec.name);
        let changed = Arc::clone(&handler.list_changed);
        let routes = Arc::clone(&handler.routes);
        let catalog_changed = Arc::clone(&handler.catalog);
        // `${NAME}` and bearer tokens come from the store secrets were moved to.
        let env = |name: &str| crate::vault::var(name);
        let started = tokio::select! {
            _ = self.stop.cancelled() => return,
            started = tokio::time::timeout(spec.startup_timeout, async {
                let connection =
                    connect(&spec, handler, &context.workdir, &context.settings, &env, &stderr).await?;
                if let Some(pid) = connection.pid {
                    lock(&self.pids).push(pid);
                }
                let tools = self.list(index, &spec, connection.service.peer(), &routes).await?;
                Ok::<_, String>((connection, tools))
            }) => started,
        };
        let (connection, tools) = match started {
            Ok(Ok(started)) => started,
            Ok(Err(why)) => {
                let status = Status::Failed(failure(&spec, &why, &stderr));
                self.set(index, status, Vec::new(), &context);
                return;
            }
            Err(_) => {
                let why = format!(
                    "it did not start within {} s (startup_timeout_secs)",
                    spec.startup_timeout.as_secs()
                );
                self.set(
                    index,
                    Status::Failed(failure(&spec, &why, &stderr)),
                    Vec::new(),
                    &context,
                );
                return;
            }
        };
        // Its prompts and resources are listed beside its tools, never holding them up.
        self.watch_catalog(&spec, connection.service.peer(), catalog_changed);
        self.set(index, Status::Ready, tools, &context);
        let peer = connection.service.peer().clone();
        let pid = connection.pid;
        let mut child = connection.child;
        let closed = connection.service.cancellation_token();
        let waiting = connection.service.waiting();
        tokio::pin!(waiting);
        loop {
            tokio::select! {
                _ = self.stop.cancelled() => {
                    closed.cancel();
                    kill_group(pid);
                    self.set(index, Status::Stopped, Vec::new(), &context);
                    return;
                }
                _ = &mut waiting => {
                    let why = match server::exit_of(child.as_mut()).await {
                        Some(exit) => format!("it stopped ({exit})"),
                        None => "it stopped (closed the connection)".to_string(),
                    };
                    kill_group(pid);
                    self.set(index, Status::Failed(failure(&spec, &why, &stderr)), Vec::new(), &context);
                    return;
                }
                () = changed.notified() => match self.list(index, &spec, &peer, &routes).await {
                    Ok(tools) => self.set(index, Status::Ready, tools, &context),
                    Err(why) => tracing::warn!(server = spec.name, why, "mcp re-list failed"),
                },
            }
        }
    }

    /// Lists the server's tools (every page) and names them, skipping other servers' names.
    async fn list(
        &self,
        index: usize,
        spec: &ServerSpec,
        peer: &Peer<RoleClient>,
        routes: &client::ProgressRoutes,
    ) -> Result<Vec<Arc<McpTool>>, String> {
        let listed = peer
            .list_all_tools()
            .await
            .map_err(|e| format!("tools/list failed: {e}"))?;
        let mut taken: HashSet<String> = lock(&self.slots)
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != index)
            .flat_map(|(_, slot)| slot.tools.iter().map(|t| t.name().to_string()))
            .collect();
        let mut tools = Vec::new();
        for tool in listed {
            let Ok(json) = serde_json::to_value(&tool) else {
                continue;
            };
            let remote = json["name"].as_str().unwrap_or_default();
            if remote.is_empty() || !spec.offers(remote) {
                continue;
            }
            let name = names::qualified(&spec.name, remote, &taken);
            taken.insert(name.clone());
            tools.push(Arc::new(McpTool::new(
                name,
                &json,
                spec,
                peer.clone(),
                Arc::clone(routes),
            )));
        }
        Ok(tools)
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
        lock(&self.slots)
            .iter()
            .filter(|slot| slot.status == Status::Ready)
            .flat_map(|slot| slot.tools.iter().filter(|t| t.is_live()))
            .map(|t| Arc::clone(t) as Arc<dyn Tool>)
            .collect()
    }
}

/// `/mcp` and `taco mcp list`: each server, how it is reached, its state and its tools.
pub fn describe_servers(servers: &[ServerView]) -> String {
    use std::fmt::Write;
    if servers.is_empty() {
        return "No MCP servers are configured (add [mcp.servers.NAME] to the config).\n".into();
    }
    let mut out = String::new();
    for server in servers {
        let state = match &server.status {
            Status::Starting => "starting".to_string(),
            Status::Ready => format!("ready, {} tools", server.tools.len()),
            Status::Failed(_) => "failed".to_string(),
            Status::Stopped => "stopped".to_string(),
        };
        let _ = writeln!(out, "- **{}** ({}): {state}", server.name, server.transport);
        if let Status::Failed(why) = &server.status {
            for line in why.lines() {
                let _ = writeln!(out, "    {line}");
            }
        }
        for tool in &server.tools {
            let _ = writeln!(
                out,
                "    - `{}` ({}): {}",
                tool.name, tool.policy, tool.summary
            );
        }
    }
    out
}

/// What went wrong, with the command and its last stderr lines, and what to do.
fn failure(spec: &ServerSpec, why: &str, stderr: &StderrTail) -> String {
    let end = if why.ends_with(['.', '?', '!']) {
        ""
    } else {
        "."
    };
    let mut text = format!("MCP server {} ({}): {why}{end}", spec.name, spec.describe());
    let lines = stderr.lines();
    if !lines.is_empty() {
        text.push_str(" Its last stderr lines:\n");
        text.push_str(&lines.join("\n"));
    }
    text.push_str(&format!(
        "\nIts tools are not offered. Check [mcp.servers.{}] in the config, or run the command by hand to see why.",
        spec.name
    ));
    text
}
