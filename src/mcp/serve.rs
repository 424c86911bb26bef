//! One server's life: start it, list its tools, serve them, list again when they change.
//! When it stops on its own it is started again with backoff (`restart = "on-failure"`, at
//! most `max_restarts` times; never after a first start that failed, which is a config
//! problem); `/mcp restart NAME` starts it again at any time. A server that passes a bound
//! (`listing.rs`) is withdrawn and waits for the user.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::PaginatedRequestParams;
use rmcp::service::{Peer, RoleClient};
use tokio::sync::Notify;

use super::client::{self, ProgressRoutes};
use super::config::{Restart, ServerSpec};
use super::listing::{self, Bounds, ListError};
use super::server::{self, ConnectError, StderrTail, connect, kill_group};
use super::{McpHub, McpTool, StartContext, Status, lock, names};
use crate::tools::Tool;

/// Time between two listings of one server: a server that says its tools changed in a
/// loop costs a listing a second at most.
const RELIST_GAP: Duration = Duration::from_secs(1);
/// The longest wait before a restart.
const MAX_BACKOFF: Duration = Duration::from_secs(30);

/// How one run of a server ended.
enum Ended {
    /// taco is quitting.
    Stopped,
    /// The user asked for a restart.
    RestartAsked,
    /// It passed a bound: what it did.
    Withdrawn(String),
    /// It failed to start or stopped; `ready` when it had served its tools.
    Failed { why: String, ready: bool },
    /// It needs an OAuth login (`oauth`); how to log in. Waits for `/mcp login NAME`.
    NeedsLogin(String),
}

/// The wait before restart `n` (1-based): 1 s, 2 s, 4 s … 30 s at most.
fn backoff(n: u32) -> Duration {
    Duration::from_secs(1u64 << n.saturating_sub(1).min(5)).min(MAX_BACKOFF)
}

impl McpHub {
    /// Runs `spec`'s server for as long as taco runs, restarting it as its policy says.
    pub(super) async fn supervise(
        self: Arc<Self>,
        index: usize,
        spec: ServerSpec,
        context: StartContext,
    ) {
        let Some((stderr, restart)) = lock(&self.slots)
            .get(index)
            .map(|slot| (slot.stderr.clone(), Arc::clone(&slot.restart)))
        else {
            return;
        };
        // Restarts taken since the user last asked for one.
        let mut taken = 0;
        // Whether any run served its tools (a first start that fails is not retried).
        let mut served = false;
        loop {
            let ended = self
                .run_once(index, &spec, &context, &stderr, &restart)
                .await;
            let wait = match ended {
                Ended::Stopped => {
                    self.set(index, Status::Stopped, Vec::new(), &context);
                    return;
                }
                Ended::RestartAsked => {
                    taken = 0;
                    None
                }
                Ended::Withdrawn(did) => {
                    let why = format!(
                        "it was stopped and its tools withdrawn because {did}. `/mcp restart {}` starts it again",
                        spec.name
                    );
                    self.record_error(index, &why);
                    let text = failure(&spec, &why, &stderr, None);
                    self.set(index, Status::Withdrawn(text), Vec::new(), &context);
                    Some(None)
                }
                Ended::NeedsLogin(how) => {
                    let text = needs_login(&spec, &how);
                    self.set(index, Status::NeedsLogin(text), Vec::new(), &context);
                    Some(None)
                }
                Ended::Failed { why, ready } => {
                    served |= ready;
                    self.record_error(index, &why);
                    let again =
                        served && spec.restart == Restart::OnFailure && taken < spec.max_restarts;
                    let delay = again.then(|| backoff(taken + 1));
                    let next = delay.map(|d| (d, taken + 1, spec.max_restarts));
                    let text = failure(&spec, &why, &stderr, next);
                    self.set(index, Status::Failed(text), Vec::new(), &context);
                    Some(delay)
                }
            };
            if let Some(delay) = wait {
                let asked = tokio::select! {
                    _ = self.stop.cancelled() => return,
                    () = restart.notified() => true,
                    () = sleep_or_forever(delay) => false,
                };
                taken = if asked { 0 } else { taken + 1 };
            }
            if let Some(slot) = lock(&self.slots).get_mut(index) {
                slot.restarts += 1;
            }
            self.set(index, Status::Starting, Vec::new(), &context);
        }
    }

    fn record_error(&self, index: usize, why: &str) {
        if let Some(slot) = lock(&self.slots).get_mut(index) {
            slot.last_error = Some(why.to_string());
        }
    }

    pub(super) fn set(
        &self,
        index: usize,
        status: Status,
        tools: Vec<Arc<McpTool>>,
        context: &StartContext,
    ) {
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
            let _ = notices.send(super::Notice { server, status });
        }
    }

    /// One run: start, list, serve, re-list on change, until it ends.
    async fn run_once(
        &self,
        index: usize,
        spec: &ServerSpec,
        context: &StartContext,
        stderr: &StderrTail,
        restart: &Notify,
    ) -> Ended {
        let handler = client::Handler::new(&spec.name);
        let changed = Arc::clone(&handler.list_changed);
        let routes = Arc::clone(&handler.routes);
        let catalog_changed = Arc::clone(&handler.catalog);
        // `${NAME}` and bearer tokens come from the store secrets were moved to.
        let env = |name: &str| crate::vault::var(name);
        let mut pid = None;
        let mut login = None;
        // The handshake and the first listing share the startup time; a listing that
        // runs out of it is a bound passed, said as such.
        let deadline = tokio::time::Instant::now() + spec.startup_timeout;
        let started = tokio::select! {
            _ = self.stop.cancelled() => return Ended::Stopped,
            () = restart.notified() => return Ended::RestartAsked,
            started = async {
                let connection = tokio::time::timeout_at(
                    deadline,
                    connect(spec, handler, &context.workdir, &context.settings, &env, stderr),
                )
                .await
                .map_err(|_| {
                    ListError::Failed(format!(
                        "it did not start within {} s (startup_timeout_secs)",
                        spec.startup_timeout.as_secs()
                    ))
                })?
                .map_err(|e| match e {
                    ConnectError::Failed(why) => ListError::Failed(why),
                    ConnectError::NeedsLogin(how) => {
                        login = Some(how.clone());
                        ListError::Failed(how)
                    }
                })?;
                if let Some(id) = connection.pid {
                    lock(&self.pids).push(id);
                    pid = Some(id);
                }
                let left = deadline.saturating_duration_since(tokio::time::Instant::now());
                let tools = self
                    .list(index, spec, connection.service.peer(), &routes, left)
                    .await?;
                Ok::<_, ListError>((connection, tools))
            } => started,
        };
        let (connection, tools) = match started {
            Ok(started) => started,
            Err(error) => {
                kill_group(pid);
                self.forget(pid);
                if let Some(how) = login {
                    return Ended::NeedsLogin(how);
                }
                return match error {
                    ListError::Passed(did) => Ended::Withdrawn(did),
                    ListError::Failed(why) => Ended::Failed { why, ready: false },
                };
            }
        };
        // Its prompts and resources are listed beside its tools, never holding them up.
        self.watch_catalog(spec, connection.service.peer(), catalog_changed);
        self.set(index, Status::Ready, tools, context);
        let peer = connection.service.peer().clone();
        let mut child = connection.child;
        let closed = connection.service.cancellation_token();
        let waiting = connection.service.waiting();
        tokio::pin!(waiting);
        // The first re-list may come at once; the next ones a gap apart.
        let mut listed_at = tokio::time::Instant::now() - RELIST_GAP;
        let ended = loop {
            tokio::select! {
                _ = self.stop.cancelled() => break Ended::Stopped,
                () = restart.notified() => break Ended::RestartAsked,
                _ = &mut waiting => {
                    let why = match server::exit_of(child.as_mut()).await {
                        Some(exit) => format!("it stopped ({exit})"),
                        None => "it stopped (closed the connection)".to_string(),
                    };
                    break Ended::Failed { why, ready: true };
                }
                () = changed.notified() => {
                    tokio::time::sleep_until(listed_at + RELIST_GAP).await;
                    listed_at = tokio::time::Instant::now();
                    match self.list(index, spec, &peer, &routes, spec.startup_timeout).await {
                        Ok(tools) => self.set(index, Status::Ready, tools, context),
                        Err(ListError::Passed(did)) => break Ended::Withdrawn(did),
                        Err(ListError::Failed(why)) => {
                            tracing::warn!(server = spec.name, why, "mcp re-list failed");
                        }
                    }
                }
            }
        };
        closed.cancel();
        kill_group(pid);
        self.forget(pid);
        ended
    }

    /// A process group that ended is not killed again later (its id may be reused).
    fn forget(&self, pid: Option<u32>) {
        if let Some(pid) = pid {
            lock(&self.pids).retain(|p| *p != pid);
        }
    }

    /// Lists the server's tools (every page, within bounds) and names them, skipping other
    /// servers' names.
    async fn list(
        &self,
        index: usize,
        spec: &ServerSpec,
        peer: &Peer<RoleClient>,
        routes: &ProgressRoutes,
        time: Duration,
    ) -> Result<Vec<Arc<McpTool>>, ListError> {
        let listed = listing::all_pages("tools/list", Bounds::within(time), |cursor| async {
            let params = PaginatedRequestParams::default().with_cursor(cursor);
            peer.list_tools(Some(params))
                .await
                .map(|page| (page.tools, page.next_cursor))
        })
        .await?;
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

/// Sleeps `delay`, or forever when there is none (waiting for the user).
async fn sleep_or_forever(delay: Option<Duration>) {
    match delay {
        Some(delay) => tokio::time::sleep(delay).await,
        None => std::future::pending().await,
    }
}

/// What went wrong, with the command and its last stderr lines, and what happens next:
/// a restart (`next`: in how long, which one of how many) or what to do.
/// What a server that needs a login says: which, where, and how to log in.
fn needs_login(spec: &ServerSpec, how: &str) -> String {
    format!(
        "MCP server {} ({}): {how}. Its tools are not offered until then.",
        spec.name,
        spec.describe()
    )
}

fn failure(
    spec: &ServerSpec,
    why: &str,
    stderr: &StderrTail,
    next: Option<(Duration, u32, u32)>,
) -> String {
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
    match next {
        Some((delay, n, of)) => text.push_str(&format!(
            "\nIts tools are withdrawn until it is back: taco starts it again in {} s (restart {n} of {of}).",
            delay.as_secs()
        )),
        None => text.push_str(&format!(
            "\nIts tools are not offered. Check [mcp.servers.{}] in the config, or run the command by hand to see why; `/mcp restart {}` starts it again.",
            spec.name, spec.name
        )),
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn restarts_back_off_to_half_a_minute() {
        let waits: Vec<u64> = (1..=8).map(|n| backoff(n).as_secs()).collect();
        assert_eq!(waits, [1, 2, 4, 8, 16, 30, 30, 30]);
    }
}
