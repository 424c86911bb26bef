//! `taco acp`: taco's agent served over ACP on stdin/stdout. Each session is prepared as the
//! TUI prepares one (config, provider, tools, the session file, MCP servers, hooks) in the
//! client's `cwd`, with the client's MCP servers added.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use agent_client_protocol::Lines;
use agent_client_protocol::v1::schema::{McpServer, SessionInfo};
use futures_util::FutureExt;
use futures_util::future::BoxFuture;

use super::{Start, prepare, runtime};
use crate::acp::agent::{self, Host, Open, Session};
use crate::acp::lines;
use crate::exec::{EXIT_OK, EXIT_RUN_ERROR};
use crate::mcp::config::{McpConfig, ServerEntry, ServerSpec};
use crate::orchestrator::switch::Providers;
use crate::orchestrator::task;
use crate::session::{self, SessionKind};

/// Serves ACP on stdio until the client closes it. Nothing but protocol goes to stdout; what
/// taco has to say goes to its log and stderr.
pub fn acp(start: &Start) -> i32 {
    let _reaper = crate::reaper::Reaper::start();
    let runtime = match runtime(true) {
        Ok(runtime) => runtime,
        Err(code) => return code,
    };
    let _log = crate::logging::init().ok().flatten();
    runtime.block_on(async {
        let host: Arc<dyn Host> = Arc::new(Sessions {
            start: start.clone(),
        });
        let problems: lines::Problems = Arc::new(|problem| {
            tracing::warn!("acp: {problem}");
            crate::say!("taco acp: {problem}");
        });
        let transport = Lines::new(
            lines::outgoing(tokio::io::stdout(), lines::WRITE_WAIT),
            lines::incoming(tokio::io::stdin(), lines::MAX_LINE, problems),
        );
        match agent::serve(host, transport).await {
            Ok(()) => EXIT_OK,
            Err(e) => {
                tracing::warn!("acp connection ended: {e}");
                crate::say!("taco acp: the connection ended: {e}");
                EXIT_RUN_ERROR
            }
        }
    })
}

/// Sessions as `taco acp` opens and lists them.
struct Sessions {
    start: Start,
}

impl Host for Sessions {
    fn open(&self, open: Open) -> BoxFuture<'static, Result<Session, String>> {
        let mut start = self.start.clone();
        // Reading the config holds values that are not `Send` across its awaits: it runs on
        // a thread of its own, on this runtime.
        let runtime = tokio::runtime::Handle::current();
        let opening = move || async move {
            start.extra_mcp = client_servers(&open.mcp_servers)?;
            start.buffers = open.buffers.clone();
            match &open.load {
                // A loaded session goes on in its own workdir, with its provider and model.
                Some(id) => {
                    start.resume = Some(id.clone());
                    start.overrides.workdir = None;
                    start.overrides.provider = None;
                    start.overrides.model = None;
                }
                None => {
                    start.resume = None;
                    start.overrides.workdir = Some(open.cwd.clone());
                }
            }
            let ready = prepare(&start, SessionKind::Acp, |_| {}).await?;
            let super::Ready {
                resolved,
                orchestrator,
                mut opened,
                mcp,
                mut notices,
            } = ready;
            // The client needs the session's id now: its file is made now, not with its
            // first line.
            opened.recorder.start_now();
            let id = match (opened.recorder.session_id(), &open.load) {
                (Some(id), _) => id.to_string(),
                (None, Some(id)) => id.clone(),
                (None, None) => format!("unsaved-{}", uuid::Uuid::new_v4()),
            };
            for note in &opened.notes {
                tracing::info!(session = %id, "{note}");
            }
            let mode = orchestrator.mode().get();
            let providers: Arc<dyn Providers> = Arc::new(resolved.catalog.clone());
            let task = task::spawn_switching(orchestrator, opened.recorder, Some(providers));
            let reporter = tokio::spawn(async move {
                while let Some(notice) = notices.recv().await {
                    if let Some(message) = notice.status.report() {
                        tracing::warn!(server = %notice.server, "{message}");
                    }
                }
            });
            let ready = {
                let mcp = Arc::clone(&mcp);
                async move { mcp.settled().await }.boxed().shared()
            };
            Ok(Session {
                id,
                ready,
                task,
                history: opened.history,
                workdir: resolved.workdir.clone(),
                pricing: resolved.pricing.clone(),
                mode,
                on_close: Box::new(move || {
                    mcp.shutdown();
                    reporter.abort();
                }),
            })
        };
        async move {
            tokio::task::spawn_blocking(move || runtime.block_on(opening()))
                .await
                .map_err(|e| format!("the session could not be opened: {e}"))?
        }
        .boxed()
    }

    fn list(&self, cwd: Option<PathBuf>) -> Vec<SessionInfo> {
        let Some(dir) = session::sessions_dir() else {
            return Vec::new();
        };
        let (sessions, _) = session::list_with_problems(&dir);
        sessions
            .into_iter()
            .filter(|s| cwd.as_ref().is_none_or(|cwd| &s.workdir == cwd))
            .map(|s| {
                let mut info = SessionInfo::new(s.id.clone(), s.workdir.clone())
                    .updated_at(rfc3339(s.last_activity));
                if let Some(prompt) = &s.first_prompt {
                    info = info.title(crate::text::shorten_end(prompt, 80));
                }
                info
            })
            .collect()
    }
}

/// Unix milliseconds as RFC 3339 (UTC).
fn rfc3339(ms: u64) -> String {
    let secs = i64::try_from(ms / 1000).unwrap_or(i64::MAX);
    let rest = secs.rem_euclid(86_400);
    let (year, month, day) = session::civil_from_days(secs.div_euclid(86_400));
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

/// The client's MCP servers as taco's, checked as the config's are. A value that names one
/// of taco's variables (`${NAME}`) is refused: the client's servers get the client's values,
/// never a key taco holds.
fn client_servers(servers: &[McpServer]) -> Result<Vec<ServerSpec>, String> {
    let mut config = McpConfig::default();
    for server in servers {
        let (name, entry) = match server {
            McpServer::Stdio(stdio) => (
                stdio.name.clone(),
                ServerEntry {
                    command: Some(stdio.command.display().to_string()),
                    args: stdio.args.clone(),
                    env: stdio
                        .env
                        .iter()
                        .map(|v| (v.name.clone(), v.value.clone()))
                        .collect::<BTreeMap<_, _>>(),
                    ..ServerEntry::enabled()
                },
            ),
            McpServer::Http(http) => (
                http.name.clone(),
                ServerEntry {
                    url: Some(http.url.clone()),
                    headers: http
                        .headers
                        .iter()
                        .map(|h| (h.name.clone(), h.value.clone()))
                        .collect(),
                    ..ServerEntry::enabled()
                },
            ),
            _ => {
                return Err(
                    "an SSE MCP server cannot be added: taco speaks stdio and Streamable HTTP"
                        .to_string(),
                );
            }
        };
        let named = entry.env.values().chain(entry.headers.values());
        if let Some(value) = named
            .into_iter()
            .find(|v| crate::mcp::config::reference(v).is_some())
        {
            return Err(format!(
                "MCP server {name}: {value} names one of taco's variables; pass the value itself"
            ));
        }
        config.servers.insert(name, entry);
    }
    crate::mcp::config::servers(&config)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_read_as_rfc3339() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(1_795_776_000_123), "2026-11-27T10:40:00Z");
        assert_eq!(rfc3339(951_782_400_000), "2000-02-29T00:00:00Z");
    }

    #[test]
    fn a_clients_server_may_not_name_tacos_variables() {
        let server: McpServer = serde_json::from_value(serde_json::json!({
            "name": "fs", "command": "/bin/server", "args": [],
            "env": [{"name": "TOKEN", "value": "${OPENAI_API_KEY}"}]
        }))
        .unwrap();
        let refused = client_servers(&[server]).unwrap_err();
        assert!(
            refused.contains("names one of taco's variables"),
            "{refused}"
        );
        let fine: McpServer = serde_json::from_value(serde_json::json!({
            "name": "fs", "command": "/bin/server", "args": ["--ro"],
            "env": [{"name": "MODE", "value": "ro"}]
        }))
        .unwrap();
        let specs = client_servers(&[fine]).unwrap();
        assert_eq!(specs.len(), 1);
        assert_eq!(specs[0].name, "fs");
    }
}
