//! Each ready server's prompts and resources (issue 28.5), and the hub's small API over them:
//! [`McpHub::prompts`], [`McpHub::get_prompt`] (and [`McpHub::run_prompt`] for a typed
//! `/server:prompt args` line), [`McpHub::resources`], [`McpHub::read_resource`]. A server's
//! catalog is listed once it is ready, beside its tools (a slow listing never holds them up),
//! bounded (`catalog_pages.rs`), listed again when the server says it changed, and gone when its
//! connection closes. The UI only calls this; it knows nothing of the protocol.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use rmcp::model::{GetPromptRequestParams, PaginatedRequestParams, ReadResourceRequestParams};
use rmcp::service::{Peer, RoleClient};
use serde_json::{Map, Value};
use tokio::sync::Notify;

use super::McpHub;
use super::catalog_pages::{self as listing, Listing};
use super::config::ServerSpec;
use super::prompt_args::{self, ArgsError};
use super::prompts::{self, PromptInfo, PromptText};
use super::resources::{self, Part, ResourceInfo};

/// How often a catalog's watcher looks whether its server's connection closed.
const ALIVE_EVERY: Duration = Duration::from_secs(1);
/// Names listed per server and kind in `/mcp`.
const MAX_NAMED: usize = 20;

/// Wake-ups from a server: its prompts or resources changed.
#[derive(Debug, Default)]
pub struct Changed {
    /// `notifications/prompts/list_changed`.
    pub prompts: Notify,
    /// `notifications/resources/list_changed`.
    pub resources: Notify,
}

/// What one ready server offers besides tools.
struct Entry {
    /// This connection's entry (a restarted server's is another).
    id: u64,
    peer: Peer<RoleClient>,
    /// Time for one `prompts/get` or `resources/read` (the server's `tool_timeout_secs`).
    timeout: Duration,
    prompts: Vec<PromptInfo>,
    resources: Vec<ResourceInfo>,
    /// Why a listing is not whole, in words.
    notes: Vec<String>,
    /// Listed once at least.
    listed: bool,
}

/// Every ready server's catalog, by server name.
#[derive(Default)]
pub struct Catalogs {
    entries: Mutex<BTreeMap<String, Entry>>,
    /// Moves on every change: the UI takes the lists again only then.
    generation: AtomicU64,
    /// Woken when a listing ends.
    listed: Notify,
    /// The last entry's id.
    ids: AtomicU64,
}

impl Catalogs {
    fn lock(&self) -> MutexGuard<'_, BTreeMap<String, Entry>> {
        self.entries.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn bump(&self) {
        self.generation.fetch_add(1, Ordering::SeqCst);
        self.listed.notify_waiters();
    }

    /// What a watcher listed for `server`'s connection `id` (a stale connection's is dropped).
    fn listed_now(
        &self,
        server: &str,
        id: u64,
        prompts: Option<(Vec<PromptInfo>, Option<String>)>,
        resources: Option<(Vec<ResourceInfo>, Option<String>)>,
    ) {
        let mut entries = self.lock();
        let Some(entry) = entries.get_mut(server).filter(|e| e.id == id) else {
            return;
        };
        entry.notes.clear();
        if let Some((list, note)) = prompts {
            if let Some(note) = &note {
                tracing::warn!(server, note, "mcp prompts listing cut");
            }
            entry.prompts = list;
            entry.notes.extend(note.map(|n| format!("prompts: {n}")));
        }
        if let Some((list, note)) = resources {
            if let Some(note) = &note {
                tracing::warn!(server, note, "mcp resources listing cut");
            }
            entry.resources = list;
            entry.notes.extend(note.map(|n| format!("resources: {n}")));
        }
        entry.listed = true;
        drop(entries);
        self.bump();
    }
}

/// Why a prompt or resource could not be had.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CatalogError {
    /// No ready server of that name.
    #[error("no MCP server named {0} is ready ('/mcp' shows the servers)")]
    NoServer(String),
    /// The server has no such prompt.
    #[error("the MCP server {server} has no prompt named {name} ({known})")]
    NoPrompt {
        /// The server.
        server: String,
        /// The name asked for.
        name: String,
        /// Its prompts, in words.
        known: String,
    },
    /// The arguments do not fit the prompt.
    #[error(transparent)]
    Args(#[from] ArgsError),
    /// No answer in time.
    #[error("the MCP server {server} did not answer within {secs} s (tool_timeout_secs)")]
    Timeout {
        /// The server.
        server: String,
        /// The time it had.
        secs: u64,
    },
    /// The server answered with an error, or something taco cannot read.
    #[error("the MCP server {server} failed: {why}")]
    Failed {
        /// The server.
        server: String,
        /// What it said.
        why: String,
    },
}

impl McpHub {
    /// Starts keeping `spec`'s server's catalog: listed now and whenever it says it changed,
    /// forgotten when its connection closes (looked at every [`ALIVE_EVERY`]) or taco stops.
    pub(super) fn watch_catalog(
        &self,
        spec: &ServerSpec,
        peer: &Peer<RoleClient>,
        changed: Arc<Changed>,
    ) {
        let (has_prompts, has_resources) = peer.peer_info().map_or((false, false), |info| {
            (
                info.capabilities.prompts.is_some(),
                info.capabilities.resources.is_some(),
            )
        });
        let server = spec.name.clone();
        let id = self.catalog.ids.fetch_add(1, Ordering::SeqCst) + 1;
        // There before the server is ready, so `catalog_settled` waits for its listing.
        self.catalog.lock().insert(
            server.clone(),
            Entry {
                id,
                peer: peer.clone(),
                timeout: spec.tool_timeout,
                prompts: Vec::new(),
                resources: Vec::new(),
                notes: Vec::new(),
                listed: !has_prompts && !has_resources,
            },
        );
        self.catalog.bump();
        if !has_prompts && !has_resources {
            return;
        }
        let catalog = Arc::clone(&self.catalog);
        let stop = self.stop.clone();
        let peer = peer.clone();
        tokio::spawn(async move {
            let (mut prompts_due, mut resources_due) = (has_prompts, has_resources);
            let mut alive = tokio::time::interval(ALIVE_EVERY);
            loop {
                if prompts_due || resources_due {
                    let prompts = if prompts_due {
                        Some(list_prompts(&peer, &server).await)
                    } else {
                        None
                    };
                    let resources = if resources_due {
                        Some(list_resources(&peer, &server).await)
                    } else {
                        None
                    };
                    catalog.listed_now(&server, id, prompts, resources);
                    (prompts_due, resources_due) = (false, false);
                }
                tokio::select! {
                    () = stop.cancelled() => break,
                    () = changed.prompts.notified() => prompts_due = has_prompts,
                    () = changed.resources.notified() => resources_due = has_resources,
                    _ = alive.tick() => if peer.is_transport_closed() { break },
                }
            }
            let mut entries = catalog.lock();
            // A restarted server has a new entry: only this connection's goes.
            if entries.get(&server).is_some_and(|e| e.id == id) {
                entries.remove(&server);
            }
            drop(entries);
            catalog.bump();
        });
    }

    /// Every ready server's prompts, by server name then in the server's order.
    pub fn prompts(&self) -> Vec<PromptInfo> {
        let entries = self.catalog.lock();
        (entries.values())
            .filter(|e| !e.peer.is_transport_closed())
            .flat_map(|e| e.prompts.iter().cloned())
            .collect()
    }

    /// Every ready server's resources and resource templates.
    pub fn resources(&self) -> Vec<ResourceInfo> {
        let entries = self.catalog.lock();
        (entries.values())
            .filter(|e| !e.peer.is_transport_closed())
            .flat_map(|e| e.resources.iter().cloned())
            .collect()
    }

    /// The names of the servers with a catalog (ready ones).
    pub fn catalog_servers(&self) -> Vec<String> {
        self.catalog.lock().keys().cloned().collect()
    }

    /// Moves whenever a catalog changes: what the UI took is stale when it differs.
    pub fn catalog_generation(&self) -> u64 {
        self.catalog.generation.load(Ordering::SeqCst)
    }

    /// Waits until every ready server's catalog was listed once (each listing is bounded by
    /// [`listing::LIST_TIMEOUT`]): `taco exec` runs a prompt only when it can be found.
    pub async fn catalog_settled(&self) {
        loop {
            let notified = self.catalog.listed.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.catalog.lock().values().all(|e| e.listed) {
                return;
            }
            notified.await;
        }
    }

    fn peer_of(&self, server: &str) -> Result<(Peer<RoleClient>, Duration), CatalogError> {
        self.catalog
            .lock()
            .get(server)
            .filter(|e| !e.peer.is_transport_closed())
            .map(|e| (e.peer.clone(), e.timeout))
            .ok_or_else(|| CatalogError::NoServer(server.to_string()))
    }

    /// Runs a typed `/server:prompt args…` line: its prompt found, its arguments collected
    /// (`prompt_args.rs`; missing ones come back as [`ArgsError::Missing`] with their form),
    /// then [`McpHub::get_prompt`].
    pub async fn run_prompt(&self, line: &str) -> Result<PromptText, CatalogError> {
        let Some((server, name, rest)) = prompt_args::parse_line(line) else {
            return Err(CatalogError::NoServer(line.trim().to_string()));
        };
        self.peer_of(server)?;
        let prompts = self.prompts();
        let Some(prompt) = prompts
            .iter()
            .find(|p| p.server == server && p.name == name)
        else {
            let known: Vec<String> = (prompts.iter())
                .filter(|p| p.server == server)
                .map(|p| p.name.clone())
                .collect();
            let known = if known.is_empty() {
                "it offers none".to_string()
            } else {
                format!(
                    "its prompts: {}",
                    crate::text::summarize(&known.join(", "), 300)
                )
            };
            return Err(CatalogError::NoPrompt {
                server: server.to_string(),
                name: name.to_string(),
                known,
            });
        };
        let args = prompt_args::collect(&prompt.command(), &prompt.arguments, rest)?;
        self.get_prompt(server, name, args).await
    }

    /// `prompts/get` of `server`'s prompt `name` with `args`, within the server's
    /// `tool_timeout_secs`: its messages as one user message (`prompts.rs`).
    pub async fn get_prompt(
        &self,
        server: &str,
        name: &str,
        args: Map<String, Value>,
    ) -> Result<PromptText, CatalogError> {
        let (peer, timeout) = self.peer_of(server)?;
        let mut params = GetPromptRequestParams::new(name);
        if !args.is_empty() {
            params = params.with_arguments(args);
        }
        let result = answered(server, timeout, peer.get_prompt(params)).await?;
        let json = serde_json::to_value(&result).map_err(|e| failed(server, e))?;
        Ok(prompts::to_text(&format!("/{server}:{name}"), &json))
    }

    /// `resources/read` of `uri` on `server`, within its `tool_timeout_secs`; at most
    /// `budget` bytes of text are kept (`resources.rs`).
    pub async fn read_resource(
        &self,
        server: &str,
        uri: &str,
        budget: usize,
    ) -> Result<Vec<Part>, CatalogError> {
        let (peer, timeout) = self.peer_of(server)?;
        let params = ReadResourceRequestParams::new(uri);
        let result = answered(server, timeout, peer.read_resource(params)).await?;
        let json = serde_json::to_value(&result).map_err(|e| failed(server, e))?;
        Ok(resources::to_parts(&json, budget))
    }

    /// `/mcp`'s part on prompts and resources: per server, how many and their names
    /// (at most [`MAX_NAMED`] each), and why a listing is not whole.
    pub fn describe_catalog(&self) -> String {
        let entries = self.catalog.lock();
        let mut out = String::new();
        for (server, entry) in entries
            .iter()
            .filter(|(_, e)| !e.peer.is_transport_closed())
        {
            if !entry.listed {
                let _ = writeln!(out, "- **{server}**: listing its prompts and resources…");
                continue;
            }
            if entry.prompts.is_empty() && entry.resources.is_empty() && entry.notes.is_empty() {
                continue;
            }
            let _ = writeln!(
                out,
                "- **{server}**: {}, {}",
                count(entry.prompts.len(), "prompt"),
                count(entry.resources.len(), "resource")
            );
            for prompt in entry.prompts.iter().take(MAX_NAMED) {
                let usage = prompt_args::usage(&prompt.arguments);
                let usage = if usage.is_empty() {
                    String::new()
                } else {
                    format!(" {usage}")
                };
                let _ = writeln!(
                    out,
                    "    - `{}`{usage}: {}",
                    prompt.command(),
                    prompt.description
                );
            }
            more(&mut out, entry.prompts.len());
            for resource in entry.resources.iter().take(MAX_NAMED) {
                let kind = if resource.template { " (template)" } else { "" };
                let _ = writeln!(
                    out,
                    "    - `{}`{kind}: {}",
                    resource.mention(),
                    resource.name
                );
            }
            more(&mut out, entry.resources.len());
            for note in &entry.notes {
                let _ = writeln!(out, "    - note: {note}");
            }
        }
        out
    }
}

fn count(n: usize, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}

fn more(out: &mut String, n: usize) {
    if n > MAX_NAMED {
        let _ = writeln!(out, "    - … and {} more", n - MAX_NAMED);
    }
}

fn failed(server: &str, why: impl std::fmt::Display) -> CatalogError {
    CatalogError::Failed {
        server: server.to_string(),
        why: why.to_string(),
    }
}

/// A request's answer within `timeout` (dropping it cancels the request).
async fn answered<T, E: std::fmt::Display>(
    server: &str,
    timeout: Duration,
    request: impl std::future::Future<Output = Result<T, E>>,
) -> Result<T, CatalogError> {
    match tokio::time::timeout(timeout, request).await {
        Err(_) => Err(CatalogError::Timeout {
            server: server.to_string(),
            secs: timeout.as_secs(),
        }),
        Ok(Err(e)) => Err(failed(server, e)),
        Ok(Ok(value)) => Ok(value),
    }
}

/// The server's prompts, bounded, and why not all if so.
async fn list_prompts(peer: &Peer<RoleClient>, server: &str) -> (Vec<PromptInfo>, Option<String>) {
    let Listing { items, cut } = listing::bounded("prompts", |cursor| {
        let peer = peer.clone();
        async move {
            let params = cursor.map(|c| PaginatedRequestParams::default().with_cursor(Some(c)));
            let page = peer.list_prompts(params).await.map_err(|e| e.to_string())?;
            let items = (page.prompts.iter())
                .filter_map(|p| serde_json::to_value(p).ok())
                .collect();
            Ok((items, page.next_cursor))
        }
    })
    .await;
    let prompts = (items.iter())
        .filter_map(|p| PromptInfo::from_listed(server, p))
        .collect();
    (prompts, cut)
}

/// The server's resources, then its templates (within what the resources left), bounded.
async fn list_resources(
    peer: &Peer<RoleClient>,
    server: &str,
) -> (Vec<ResourceInfo>, Option<String>) {
    let Listing { items, mut cut } = listing::bounded("resources", |cursor| {
        let peer = peer.clone();
        async move {
            let params = cursor.map(|c| PaginatedRequestParams::default().with_cursor(Some(c)));
            let page = peer
                .list_resources(params)
                .await
                .map_err(|e| e.to_string())?;
            let items = (page.resources.iter())
                .filter_map(|r| serde_json::to_value(r).ok())
                .collect();
            Ok((items, page.next_cursor))
        }
    })
    .await;
    let mut resources: Vec<ResourceInfo> = (items.iter())
        .filter_map(|r| ResourceInfo::from_listed(server, r, false))
        .collect();
    if resources.len() < listing::MAX_ITEMS && cut.is_none() {
        let templates = listing::bounded("resource templates", |cursor| {
            let peer = peer.clone();
            async move {
                let params = cursor.map(|c| PaginatedRequestParams::default().with_cursor(Some(c)));
                let page =
                    (peer.list_resource_templates(params).await).map_err(|e| e.to_string())?;
                let items = (page.resource_templates.iter())
                    .filter_map(|t| serde_json::to_value(t).ok())
                    .collect();
                Ok((items, page.next_cursor))
            }
        })
        .await;
        let room = listing::MAX_ITEMS - resources.len();
        resources.extend(
            (templates.items.iter())
                .filter_map(|t| ResourceInfo::from_listed(server, t, true))
                .take(room),
        );
        cut = templates.cut;
    }
    (resources, cut)
}
