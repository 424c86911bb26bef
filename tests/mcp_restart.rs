//! A server that stops comes back (issue 28.4): restarted with backoff under
//! `restart = "on-failure"` (the default), at most `max_restarts` times; `/mcp restart NAME`
//! (`McpHub::restart`) at any time; `restart = "never"` and a first start that fails are
//! left for the user. Against the fixture server (`examples/mcp_fixture.rs`) in-process.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed unwrap is a failed test

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use taco::mcp::config::McpConfig;
use taco::mcp::{McpHub, ServerView, StartContext, Status};
use taco::tools::{ToolContext, ToolSettings, ToolSource};
use tokio_util::sync::CancellationToken;

use crate::support;
use support::mcp::fixture;

/// The hub with the fixture configured with `extra` lines (and more tables), started.
fn hub(
    extra: &str,
    more: &str,
) -> (
    Arc<McpHub>,
    tempfile::TempDir,
    tokio::sync::mpsc::UnboundedReceiver<taco::mcp::Notice>,
) {
    let work = tempfile::tempdir().unwrap();
    let (sender, notices) = tokio::sync::mpsc::unbounded_channel();
    let hub = support::mcp::start_hub(
        &format!(
            "[servers.fixture]\ncommand = {:?}\n{extra}\n{more}",
            fixture().display().to_string()
        ),
        work.path(),
        Some(sender),
    );
    (hub, work, notices)
}

/// Waits (10 s at most) until the first server's view passes `check`.
async fn until(hub: &McpHub, what: &str, check: impl Fn(&ServerView) -> bool) -> ServerView {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let view = hub.view().remove(0);
        if check(&view) {
            return view;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "never {what}: {:?} {:?}",
            view.status,
            view.stderr
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Calls the fixture's `crash` tool: the server exits with code 3 mid-call.
async fn crash(hub: &McpHub, work: &std::path::Path) {
    let tool = hub
        .tools()
        .into_iter()
        .find(|t| t.name() == "mcp__fixture__crash")
        .expect("the crash tool is offered");
    let ctx = ToolContext {
        workdir: work.to_path_buf(),
        settings: Arc::new(ToolSettings::default()),
        cancel: CancellationToken::new(),
        call: String::new(),
        progress: None,
        seen: None,
        trace: None,
    };
    assert!(tool.call(json!({}), &ctx).await.is_err(), "the call fails");
}

fn ready(view: &ServerView) -> bool {
    view.status == Status::Ready
}

#[tokio::test]
async fn a_server_that_dies_is_restarted_and_its_tools_come_back() {
    let (hub, work, mut notices) = hub("", "");
    until(&hub, "ready", ready).await;
    crash(&hub, work.path()).await;
    let failed = until(&hub, "failed", |v| matches!(v.status, Status::Failed(_))).await;
    let Status::Failed(why) = &failed.status else {
        unreachable!()
    };
    assert!(why.contains("exit code 3"), "{why}");
    assert!(
        why.contains("taco starts it again in 1 s (restart 1 of 3)"),
        "{why}"
    );
    assert!(hub.tools().is_empty(), "withdrawn while it is down");
    let back = until(&hub, "back", |v| ready(v) && v.restarts == 1).await;
    assert!(back.tools.iter().any(|t| t.name == "mcp__fixture__echo"));
    assert!(!hub.tools().is_empty(), "its tools are offered again");
    assert!(
        back.last_error.as_deref().unwrap().contains("exit code 3"),
        "the last error stays for /mcp: {:?}",
        back.last_error
    );
    let listed = taco::mcp::describe_servers(&hub.view());
    assert!(listed.contains("restarted 1 times"), "{listed}");
    assert!(
        listed.contains("last error: it stopped (exit code 3)"),
        "{listed}"
    );
    // The failure was said once, as it happened.
    let mut said = Vec::new();
    while let Ok(notice) = notices.try_recv() {
        said.extend(notice.status.report().map(String::from));
    }
    assert_eq!(said.len(), 1, "{said:?}");
    hub.shutdown();
}

#[tokio::test]
async fn restarts_stop_at_max_restarts_and_mcp_restart_starts_again() {
    let (hub, work, _notices) = hub("max_restarts = 1", "");
    until(&hub, "ready", ready).await;
    crash(&hub, work.path()).await;
    until(&hub, "back", |v| ready(v) && v.restarts == 1).await;
    crash(&hub, work.path()).await;
    let down = until(&hub, "failed", |v| matches!(v.status, Status::Failed(_))).await;
    let Status::Failed(why) = &down.status else {
        unreachable!()
    };
    assert!(
        why.contains("`/mcp restart fixture` starts it again"),
        "{why}"
    );
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    assert!(
        matches!(hub.view()[0].status, Status::Failed(_)),
        "no third start on its own"
    );
    hub.restart("fixture").unwrap();
    until(&hub, "restarted by hand", |v| ready(v) && v.restarts == 2).await;
    // A running server restarts too: a new process, the same tools.
    hub.restart("fixture").unwrap();
    until(&hub, "restarted while running", |v| {
        ready(v) && v.restarts == 3
    })
    .await;
    let error = hub.restart("nope").unwrap_err();
    assert!(
        error.contains("no MCP server \"nope\" (configured: fixture)"),
        "{error}"
    );
    hub.shutdown();
}

#[tokio::test]
async fn never_restart_and_a_first_start_that_fails_wait_for_the_user() {
    let (hub, work, _notices) = hub("restart = \"never\"", "");
    until(&hub, "ready", ready).await;
    crash(&hub, work.path()).await;
    until(&hub, "failed", |v| matches!(v.status, Status::Failed(_))).await;
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    let view = hub.view().remove(0);
    assert!(matches!(view.status, Status::Failed(_)));
    assert_eq!(view.restarts, 0);
    hub.shutdown();

    let config: McpConfig =
        toml::from_str("[servers.missing]\ncommand = \"no-such-mcp-server-here\"\n").unwrap();
    let hub = McpHub::start(
        taco::mcp::config::servers(&config).unwrap(),
        StartContext {
            workdir: std::env::temp_dir(),
            settings: Arc::new(ToolSettings::default()),
            notices: None,
            max_tools: 100,
        },
    );
    until(&hub, "failed", |v| matches!(v.status, Status::Failed(_))).await;
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    assert_eq!(hub.view()[0].restarts, 0, "a config problem is not retried");
    hub.shutdown();
}

/// Forwards loopback connections to whatever address `target` holds when they arrive.
async fn proxy(target: Arc<std::sync::Mutex<String>>) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap().to_string();
    tokio::spawn(async move {
        while let Ok((mut inbound, _)) = listener.accept().await {
            let to = target.lock().unwrap().clone();
            tokio::spawn(async move {
                if let Ok(mut outbound) = tokio::net::TcpStream::connect(&to).await {
                    let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                }
            });
        }
    });
    address
}

/// Calls the fixture's `echo` through the hub: its text back, or why not.
async fn echo(hub: &McpHub, text: &str) -> Result<String, String> {
    let tool = hub
        .tools()
        .into_iter()
        .find(|t| t.name() == "mcp__fixture__echo")
        .ok_or("echo is not offered")?;
    let ctx = ToolContext {
        workdir: std::env::temp_dir(),
        settings: Arc::new(ToolSettings::default()),
        cancel: CancellationToken::new(),
        call: String::new(),
        progress: None,
        seen: None,
        trace: None,
    };
    match tool.call(json!({"text": text}), &ctx).await {
        Ok(reply) => Ok(format!("{reply:?}")),
        Err(e) => Err(format!("{e:?}")),
    }
}

/// A Streamable HTTP server that lost its sessions (restarted behind the same address) is
/// initialised again and serves the next calls: the session is not a dead end.
#[tokio::test]
async fn an_http_server_that_lost_the_session_is_initialised_again() {
    let (first, url) = support::mcp::fixture_http().await;
    let authority = |url: &str| {
        url.trim_start_matches("http://")
            .trim_end_matches("/mcp")
            .to_string()
    };
    let target = Arc::new(std::sync::Mutex::new(authority(&url)));
    let front = proxy(Arc::clone(&target)).await;
    let hub = support::mcp::start_hub(
        &format!("[servers.fixture]\nurl = \"http://{front}/mcp\"\n"),
        &std::env::temp_dir(),
        None,
    );
    until(&hub, "ready", ready).await;
    let said = echo(&hub, "before").await.unwrap();
    assert!(said.contains("before"), "{said}");
    // The server goes away; a new one (no sessions) answers at the same front address.
    drop(first);
    let (_second, url) = support::mcp::fixture_http().await;
    *target.lock().unwrap() = authority(&url);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
    loop {
        let last = match echo(&hub, "after").await {
            Ok(said) if said.contains("after") => break,
            Ok(said) => said,
            Err(why) => why,
        };
        assert!(
            tokio::time::Instant::now() < deadline,
            "never served again: {last}; {:?}",
            hub.view()[0].status
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    hub.shutdown();
}
