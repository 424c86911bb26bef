//! Starting one MCP server: a child process in its own process group with a scrubbed
//! environment and its stderr sent to the log (never the terminal), or a Streamable HTTP
//! endpoint with its headers; then `initialize` and the tool listing, within the startup time.

use std::collections::HashMap;
use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;

use rmcp::ServiceExt;
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::common::client_side_sse::ExponentialBackoff;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;

use super::client::Handler;
use super::config::{ServerSpec, Transport, expand};
use super::oauth::Access;
pub use super::stderr::StderrTail;
use crate::tools::ToolSettings;

/// Lines of a server's stderr kept for the report when it fails.
pub(super) const STDERR_KEPT: usize = 12;
/// How long a server that failed its handshake may take to finish its stderr.
const STDERR_GRACE: std::time::Duration = std::time::Duration::from_millis(300);
/// Longest stderr line kept.
const STDERR_LINE: usize = 400;

/// A connected server.
pub struct Connection {
    /// The running client service (its peer makes calls).
    pub service: RunningService<RoleClient, Handler>,
    /// The child's process id (its process group), for stdio servers.
    pub pid: Option<u32>,
    /// The child itself (its exit code when it stops), for stdio servers.
    pub child: Option<tokio::process::Child>,
}

/// Puts a server that asked for it in the sandbox; one the kernel cannot confine is not
/// started (it asked not to run unconfined), unless the user turned the sandbox off.
fn confine(
    cmd: &mut tokio::process::Command,
    workdir: &Path,
    settings: &ToolSettings,
) -> Result<(), String> {
    let sandbox = &settings.sandbox;
    if let crate::sandbox::State::Unavailable(reason) = sandbox.state() {
        return Err(format!(
            "it is configured with sandbox = true, but the sandbox is unavailable: {reason}"
        ));
    }
    sandbox
        .confine(cmd, workdir, sandbox.confinement(false))
        .map_err(|e| e.to_string())
}

/// Why a server could not be reached.
#[derive(Debug)]
pub enum ConnectError {
    /// It failed; the text says why, for the user.
    Failed(String),
    /// It needs an OAuth login first (`oauth`); the text says how.
    NeedsLogin(String),
}

impl From<String> for ConnectError {
    fn from(why: String) -> Self {
        Self::Failed(why)
    }
}

/// Connects to `spec`'s server. `Err` says what went wrong in words for the user.
pub async fn connect(
    spec: &ServerSpec,
    handler: Handler,
    workdir: &Path,
    settings: &ToolSettings,
    env: &(dyn Fn(&str) -> Option<String> + Sync),
    stderr: &StderrTail,
) -> Result<Connection, ConnectError> {
    match &spec.transport {
        Transport::Stdio {
            command,
            args,
            env: configured,
            cwd,
        } => {
            let mut cmd = tokio::process::Command::new(command);
            cmd.args(args)
                .current_dir(cwd.as_deref().unwrap_or(workdir))
                .kill_on_drop(true);
            // The same scrubbed environment as a shell command, plus what the config names.
            settings.child_env(&mut cmd);
            for (key, value) in configured {
                cmd.env(key, expand(value, env)?);
            }
            // Its own process group: quitting or a crash ends the server and its children.
            #[cfg(unix)]
            cmd.process_group(0);
            if spec.sandbox {
                confine(&mut cmd, workdir, settings)?;
            } else {
                // Unsandboxed, it still cannot read taco's memory nor inherit its fds.
                crate::sandbox::harden(&mut cmd);
            }
            cmd.stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
            // Spawned here rather than by the SDK, so taco keeps the child and can tell its
            // exit code when it stops.
            let mut child = cmd.spawn().map_err(|e| match e.kind() {
                std::io::ErrorKind::NotFound => {
                    format!("'{command}' was not found: is it installed and on PATH?")
                }
                _ => format!("'{command}' could not be started: {e}"),
            })?;
            let pid = child.id();
            let (Some(stdout), Some(stdin)) = (child.stdout.take(), child.stdin.take()) else {
                return Err(format!("'{command}' started without pipes").into());
            };
            let mut reader = None;
            if let Some(pipe) = child.stderr.take() {
                let tail = stderr.clone();
                let server = spec.name.clone();
                let secrets = Arc::clone(&settings.secrets);
                reader = Some(tokio::spawn(async move {
                    let gate = super::log_gate::LogGate::default();
                    // Bounded lines: an endless one costs one buffer (`stderr.rs`).
                    super::stderr::read_lines(pipe, |line| {
                        // A server that prints its key does not get it into the log or a report.
                        let line = secrets.redact(&line);
                        let line: String = line.chars().take(STDERR_LINE).collect();
                        if gate.allows(&server, "stderr") {
                            tracing::info!(server, line, "mcp server stderr");
                        }
                        tail.push(line);
                    })
                    .await;
                }));
            }
            // One message at most 8 MB: a longer line is dropped by the SDK, and the request
            // it answered runs into its timeout.
            let transport = rmcp::transport::async_rw::AsyncRwTransport::new_client(stdout, stdin)
                .with_max_line_length(super::listing::MAX_MESSAGE);
            let service = match handler.serve(transport).await {
                Ok(service) => service,
                Err(e) => {
                    // Its last words explain the failure: let them arrive (briefly).
                    if let Some(reader) = reader {
                        let _ = tokio::time::timeout(STDERR_GRACE, reader).await;
                    }
                    return Err(
                        format!("it did not complete the MCP handshake: {}", plain(&e)).into(),
                    );
                }
            };
            Ok(Connection {
                service,
                pid,
                child: Some(child),
            })
        }
        Transport::Http {
            url,
            headers,
            bearer_token_env,
        } => {
            let mut config = StreamableHttpClientTransportConfig::with_uri(url.as_str());
            // The SDK's default reconnects forever: a call to a dead server would never end.
            let mut retry = ExponentialBackoff::default();
            retry.max_times = Some(2);
            retry.max_delay = Some(std::time::Duration::from_secs(2));
            config.retry_config = Arc::new(retry);
            if let Some(name) = bearer_token_env {
                let token = env(name)
                    .ok_or_else(|| format!("the environment variable {name} is not set"))?;
                config = config.auth_header(token);
            }
            let mut custom = HashMap::new();
            for (key, value) in headers {
                let name = reqwest::header::HeaderName::from_bytes(key.as_bytes())
                    .map_err(|_| format!("header name {key:?} is not valid"))?;
                let mut value = reqwest::header::HeaderValue::from_str(&expand(value, env)?)
                    .map_err(|_| format!("the value of header {key} is not valid"))?;
                value.set_sensitive(true);
                custom.insert(name, value);
            }
            config = config
                .custom_headers(custom)
                .max_sse_event_size(super::listing::MAX_MESSAGE)
                .max_json_response_size(super::listing::MAX_MESSAGE);
            let client = crate::vault::with_proxies(reqwest::Client::builder())
                .connect_timeout(spec.startup_timeout)
                .redirect(same_origin_redirects())
                .build()
                .map_err(|e| format!("no HTTP client: {e}"))?;
            // With the server's saved OAuth tokens when it has some (`oauth`).
            let served = match super::oauth::access(spec, url, client.clone()).await? {
                Access::Plain => {
                    let transport = StreamableHttpClientTransport::with_client(client, config);
                    handler.serve(transport).await
                }
                Access::Authorized(authorized) => {
                    let transport = StreamableHttpClientTransport::with_client(authorized, config);
                    handler.serve(transport).await
                }
                Access::NeedsLogin(how) => return Err(ConnectError::NeedsLogin(how)),
            };
            if let Err(e) = &served
                && super::oauth::needs_login(spec, e.auth_challenge())
            {
                return Err(ConnectError::NeedsLogin(super::oauth::login_hint(spec)));
            }
            let service = served.map_err(|e| {
                let mut why = plain(&e);
                // The SDK keeps only reqwest's words; the policy's reason is lost on the way.
                if why.contains("error following redirect") {
                    why.push_str(
                        " (taco follows a server's redirects only within its own origin, so \
                         its headers and token never go elsewhere)",
                    );
                }
                format!("it did not complete the MCP handshake at {url}: {why}")
            })?;
            Ok(Connection {
                service,
                pid: None,
                child: None,
            })
        }
    }
}

/// Redirects an MCP server may send: within its own origin, a few. Its configured headers
/// (an `X-Api-Key`) and its bearer token go with every request, and reqwest strips only the
/// standard credential headers when a redirect leaves the origin: a server that sends taco
/// elsewhere is refused instead (issue 28.1).
pub(super) fn same_origin_redirects() -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(|attempt| {
        let first = attempt.previous().first().map(reqwest::Url::origin);
        if first.is_some_and(|origin| origin != attempt.url().origin()) {
            let to = attempt.url().origin().ascii_serialization();
            attempt.error(format!(
                "the server redirected to another origin ({to}); refused"
            ))
        } else if attempt.previous().len() > 5 {
            attempt.error("too many redirects")
        } else {
            attempt.follow()
        }
    })
}

/// An SDK error without the transport's type names: the part after the last `error: `.
pub(super) fn plain(error: &dyn std::fmt::Display) -> String {
    let text = error.to_string();
    let tail = text.rsplit("] error: ").next().unwrap_or(&text);
    tail.trim_start_matches("Client error: ").to_string()
}

/// How a stopped server ended, in words: its exit code or signal, if it has exited.
pub async fn exit_of(child: Option<&mut tokio::process::Child>) -> Option<String> {
    let status = tokio::time::timeout(std::time::Duration::from_millis(500), child?.wait())
        .await
        .ok()?
        .ok()?;
    #[cfg(unix)]
    if let Some(signal) = std::os::unix::process::ExitStatusExt::signal(&status) {
        return Some(format!("killed by signal {signal}"));
    }
    status.code().map(|code| format!("exit code {code}"))
}

/// Ends a stdio server's whole process group (the server and anything it started).
pub fn kill_group(pid: Option<u32>) {
    #[cfg(unix)]
    if let Some(pid) = pid.and_then(|p| i32::try_from(p).ok()).filter(|p| *p > 1) {
        // SAFETY: killpg takes plain integers; no memory is shared.
        unsafe {
            libc::killpg(pid, libc::SIGKILL);
        }
    }
}
