//! `web_fetch` against loopback servers started here: redirects followed hop by hop, the
//! address policy on resolved and literal addresses, the hop limit, cross-host hops approved
//! through the orchestrator, and bounded HTML conversion (in-process and in the helper).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed unwrap is a failed test

use std::collections::HashMap;
use std::io::{Read, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use taco::event::EventData;
use taco::orchestrator::approval::{Approver, FixedApprover};
use taco::orchestrator::{Orchestrator, Settings};
use taco::tools::{
    NeededCall, Tool, ToolContext, ToolError, ToolRegistry, ToolReply, ToolSettings,
};
use tokio_util::sync::CancellationToken;

use crate::support;
use support::scripted::{Scripted, calls, settings as run_settings, text, tool_messages};

/// What a route answers: status, extra headers, body.
type Answer = (u16, Vec<(&'static str, String)>, Vec<u8>);

/// A loopback HTTP/1.1 server that counts the requests it gets.
struct Server {
    base: String,
    port: u16,
    hits: Arc<AtomicUsize>,
}

impl Server {
    fn start(address: &str, route: impl Fn(&str) -> Answer + Send + Sync + 'static) -> Self {
        let listener = std::net::TcpListener::bind(address).unwrap();
        let local = listener.local_addr().unwrap();
        let hits = Arc::new(AtomicUsize::new(0));
        let counter = Arc::clone(&hits);
        let route = Arc::new(route);
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                counter.fetch_add(1, Ordering::SeqCst);
                let route = Arc::clone(&route);
                std::thread::spawn(move || respond(stream, route.as_ref()));
            }
        });
        Self {
            base: format!("http://{local}"),
            port: local.port(),
            hits,
        }
    }

    fn hits(&self) -> usize {
        self.hits.load(Ordering::SeqCst)
    }
}

fn respond(mut stream: std::net::TcpStream, route: &dyn Fn(&str) -> Answer) {
    let mut request = Vec::new();
    let mut buf = [0u8; 1024];
    while !request.windows(4).any(|w| w == b"\r\n\r\n") {
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => request.extend_from_slice(&buf[..n]),
        }
    }
    let head = String::from_utf8_lossy(&request);
    let path = head.split_whitespace().nth(1).unwrap_or("/").to_string();
    let (status, headers, body) = route(&path);
    let mut response = format!("HTTP/1.1 {status} X\r\n");
    for (name, value) in headers {
        response.push_str(&format!("{name}: {value}\r\n"));
    }
    response.push_str(&format!(
        "Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    ));
    let _ = stream
        .write_all(response.as_bytes())
        .and_then(|()| stream.write_all(&body));
}

fn page(body: &str) -> Answer {
    (
        200,
        vec![("Content-Type", "text/html".into())],
        format!("<html><body>{body}</body></html>").into_bytes(),
    )
}

fn redirect(to: String) -> Answer {
    (302, vec![("Location", to)], Vec::new())
}

fn tool() -> Arc<dyn Tool> {
    taco::tools::builtin::all()
        .into_iter()
        .find(|t| t.name() == "web_fetch")
        .unwrap()
}

fn ctx(settings: ToolSettings) -> ToolContext {
    ToolContext {
        workdir: std::env::temp_dir(),
        settings: Arc::new(settings),
        cancel: CancellationToken::new(),
        call: String::new(),
        progress: None,
        seen: None,
        trace: None,
    }
}

/// One call, validated like the orchestrator does.
async fn call(args: Value, ctx: &ToolContext) -> Result<ToolReply, ToolError> {
    let tool = tool();
    tool.validate(&args).map_err(ToolError::InvalidArguments)?;
    tool.call(args, ctx).await
}

/// One call that must finish without needing other calls.
async fn fetch(url: &str, ctx: &ToolContext) -> Result<Value, ToolError> {
    match call(json!({"url": url}), ctx).await? {
        ToolReply::Done(value) => Ok(value),
        other => panic!("expected a result, got {other:?}"),
    }
}

fn refusal(result: Result<Value, ToolError>) -> String {
    match result {
        Err(ToolError::Failed(message)) if message.starts_with("refused: ") => message,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[tokio::test]
async fn a_redirect_chain_from_an_allowed_host_cannot_reach_a_private_one() {
    let inner = Server::start("127.0.0.1:0", |_| page("the secret"));
    let other_loopback = Server::start("127.0.0.2:0", |_| page("the other secret"));
    let (inner_port, other_port) = (inner.port, other_loopback.port);
    let outer = Server::start("127.0.0.1:0", move |path| match path {
        "/page" => page("public page"),
        "/hop" => redirect("/page".into()),
        "/to-port" => redirect(format!("http://127.0.0.1:{inner_port}/secret")),
        "/to-localhost" => redirect(format!("http://localhost:{inner_port}/secret")),
        "/to-other" => redirect(format!("http://127.0.0.2:{other_port}/secret")),
        _ => (404, vec![], Vec::new()),
    });
    // Only the outer server's port is allowed, as a user would allow one local service.
    let ctx = ctx(ToolSettings {
        allow_hosts: vec!["127.0.0.1".into()],
        allow_private: vec![format!("127.0.0.1:{}", outer.port)],
        ..Default::default()
    });

    let followed = fetch(&format!("{}/hop", outer.base), &ctx).await.unwrap();
    assert!(followed["text"].as_str().unwrap().contains("public page"));
    assert_eq!(followed["url"], format!("{}/page", outer.base));
    assert_eq!(
        followed["redirects"],
        json!([format!("{}/hop", outer.base)])
    );

    // Same host, another port: followed at once, and refused by the address policy.
    let message = refusal(fetch(&format!("{}/to-port", outer.base), &ctx).await);
    assert!(
        message.contains("127.0.0.1 is a loopback address"),
        "{message}"
    );

    // Other hosts: handed back as calls of their own, which are refused when they run.
    for (path, target, refused) in [
        (
            "/to-localhost",
            format!("http://localhost:{inner_port}/secret"),
            "refused: localhost resolves to 127.0.0.1, a loopback address; allow it with [tools.web_fetch] allow_private = [\"localhost\"]",
        ),
        (
            "/to-other",
            format!("http://127.0.0.2:{other_port}/secret"),
            "refused: 127.0.0.2 is a loopback address; allow it with [tools.web_fetch] allow_private = [\"127.0.0.2\"]",
        ),
    ] {
        let reply = call(json!({"url": format!("{}{path}", outer.base)}), &ctx)
            .await
            .unwrap();
        let ToolReply::NeedsFirst { calls, then } = reply else {
            panic!("{path}: expected a needed call, got {reply:?}");
        };
        assert_eq!(
            calls,
            vec![NeededCall {
                name: "web_fetch".into(),
                arguments: json!({"url": target, "max_redirects": 4}),
            }]
        );
        assert_eq!(then["redirects"], json!([format!("{}{path}", outer.base)]));
        assert_eq!(
            tool().default_policy(&calls[0].arguments, &ctx.settings),
            taco::tools::Policy::Ask,
            "{path}: the hop is asked about like a fresh call"
        );
        let hop = fetch(&target, &ctx).await;
        assert_eq!(refusal(hop), refused);
    }
    assert_eq!(inner.hits(), 0, "the private server was never reached");
    assert_eq!(other_loopback.hits(), 0);
}

#[tokio::test]
async fn names_are_checked_on_the_address_they_resolve_to() {
    let server = Server::start("127.0.0.1:0", |_| page("local page"));
    let url = format!("http://localhost:{}/x", server.port);
    let message = refusal(fetch(&url, &ctx(ToolSettings::default())).await);
    assert_eq!(
        message,
        "refused: localhost resolves to 127.0.0.1, a loopback address; allow it with [tools.web_fetch] allow_private = [\"localhost\"]"
    );
    // An entry for another port does not help.
    let other_port = ctx(ToolSettings {
        allow_private: vec![format!("localhost:{}", server.port.wrapping_add(1))],
        ..Default::default()
    });
    refusal(fetch(&url, &other_port).await);
    assert_eq!(server.hits(), 0);

    for allowed in [
        "localhost".to_string(),
        format!("localhost:{}", server.port),
        "127.0.0.0/8".to_string(),
    ] {
        let ctx = ctx(ToolSettings {
            allow_private: vec![allowed.clone()],
            ..Default::default()
        });
        let result = fetch(&url, &ctx).await.unwrap();
        assert!(
            result["text"].as_str().unwrap().contains("local page"),
            "{allowed}: {result}"
        );
    }
    assert_eq!(server.hits(), 3);
}

#[tokio::test]
async fn literal_private_addresses_are_refused_before_connecting() {
    let v4 = Server::start("127.0.0.1:0", |_| page("v4"));
    let v6 = Server::start("[::1]:0", |_| page("v6"));
    let ctx = ctx(ToolSettings::default());
    for (url, expected) in [
        (
            "http://169.254.169.254/latest/meta-data/".to_string(),
            "refused: 169.254.169.254 is the cloud metadata address",
        ),
        (
            "http://10.0.0.1/".to_string(),
            "refused: 10.0.0.1 is a private address",
        ),
        (
            format!("http://[::1]:{}/", v6.port),
            "refused: ::1 is a loopback address",
        ),
        (
            format!("http://[::ffff:127.0.0.1]:{}/", v4.port),
            "refused: 127.0.0.1 is a loopback address",
        ),
        (
            format!("http://127.1:{}/", v4.port),
            "refused: 127.0.0.1 is a loopback address",
        ),
        (
            format!("http://0x7f000001:{}/", v4.port),
            "refused: 127.0.0.1 is a loopback address",
        ),
        (
            "http://[fd00::1]/".to_string(),
            "refused: fd00::1 is a private",
        ),
        (
            "http://100.64.1.1/".to_string(),
            "refused: 100.64.1.1 is a shared",
        ),
        (
            "http://0.0.0.0/".to_string(),
            "refused: 0.0.0.0 is an unspecified",
        ),
    ] {
        let started = Instant::now();
        let message = refusal(fetch(&url, &ctx).await);
        assert!(message.starts_with(expected), "{url}: {message}");
        assert!(message.contains("allow_private"), "{message}");
        // Unroutable addresses would hang for the connect timeout if dialled.
        assert!(started.elapsed() < Duration::from_secs(5), "{url}");
    }
    assert_eq!((v4.hits(), v6.hits()), (0, 0));

    let allowed = ctx_with_private(&["::1", "127.0.0.1"]);
    for url in [
        format!("http://[::1]:{}/", v6.port),
        format!("http://[::ffff:127.0.0.1]:{}/", v4.port),
    ] {
        fetch(&url, &allowed).await.unwrap();
    }
    assert_eq!((v4.hits(), v6.hits()), (1, 1));
}

fn ctx_with_private(entries: &[&str]) -> ToolContext {
    ctx(ToolSettings {
        allow_private: entries.iter().map(|e| e.to_string()).collect(),
        ..Default::default()
    })
}

#[tokio::test]
async fn the_hop_limit_holds_and_cannot_be_raised_by_the_model() {
    let server = Server::start("127.0.0.1:0", |path| {
        let n: u32 = path.trim_start_matches("/loop/").parse().unwrap_or(0);
        redirect(format!("/loop/{}", n + 1))
    });
    let ctx = ctx(ToolSettings {
        allow_private: vec!["127.0.0.1".into()],
        max_redirects: 3,
        ..Default::default()
    });
    let url = format!("{}/loop/0", server.base);
    for (args, requests) in [
        (json!({"url": url}), 4),
        (json!({"url": url, "max_redirects": 100}), 4),
        (json!({"url": url, "max_redirects": 1}), 2),
    ] {
        let before = server.hits();
        let err = call(args.clone(), &ctx).await.unwrap_err();
        assert!(
            err.to_string().contains("too many redirects")
                && err.to_string().contains("max_redirects"),
            "{err}"
        );
        assert_eq!(server.hits() - before, requests, "{args}");
    }
    assert!(
        !tool().parameters()["properties"]
            .as_object()
            .unwrap()
            .contains_key("max_redirects"),
        "the hop budget is not offered to the model"
    );
}

#[tokio::test]
async fn non_http_redirects_are_refused() {
    let server = Server::start("127.0.0.1:0", |_| redirect("file:///etc/passwd".into()));
    let ctx = ctx_with_private(&["127.0.0.1"]);
    let err = fetch(&server.base, &ctx).await.unwrap_err();
    assert!(
        err.to_string().contains("only http and https redirects"),
        "{err}"
    );
}

/// A headless run whose model fetches a page that redirects to another host.
async fn run_redirect(approver: &mut dyn Approver) -> (Value, Vec<EventData>, usize) {
    let other = Server::start("127.0.0.2:0", |_| page("the other host"));
    let other_port = other.port;
    let start = Server::start("127.0.0.1:0", move |_| {
        redirect(format!("http://127.0.0.2:{other_port}/landing"))
    });
    let mut registry = ToolRegistry::new();
    registry.register(tool());
    let base = run_settings(10);
    let settings = Settings {
        tools: Arc::new(ToolSettings {
            allow_hosts: vec!["127.0.0.1".into()],
            // Both addresses pass the address policy: only the approval decides.
            allow_private: vec!["127.0.0.1".into(), "127.0.0.2".into()],
            ..(*base.tools).clone()
        }),
        ..base
    };
    let provider = Scripted::new(vec![
        Ok(calls(&[(
            "c1",
            "web_fetch",
            json!({"url": format!("{}/start", start.base)}),
        )])),
        Ok(text("done")),
    ]);
    let mut orch = Orchestrator::new(provider.clone(), Arc::new(registry), settings);
    let mut events = Vec::new();
    orch.run("fetch it", &mut events, approver, &CancellationToken::new())
        .await;
    let sent = provider.sent();
    let (_, result) = tool_messages(&sent[1].messages).remove(0);
    (
        result,
        events.into_iter().map(|e| e.data).collect(),
        other.hits(),
    )
}

#[tokio::test]
async fn a_cross_host_redirect_needs_approval_in_headless_runs() {
    let (result, events, hits) = run_redirect(&mut FixedApprover::none()).await;
    let error = result["error"].as_str().unwrap_or_default();
    assert!(
        error.contains("needed call 'web_fetch' failed") && error.contains("denied"),
        "{result}"
    );
    assert_eq!(hits, 0, "the other host was never contacted");
    let asked: Vec<&Value> = events
        .iter()
        .filter_map(|e| match e {
            EventData::ApprovalRequested { arguments, .. } => Some(arguments),
            _ => None,
        })
        .collect();
    assert_eq!(asked.len(), 1, "only the hop was asked about");
    assert!(
        asked[0]["url"].as_str().unwrap().contains("127.0.0.2"),
        "{asked:?}"
    );

    // Approved, the hop runs and its page comes back with the redirect noted.
    let (result, _, hits) = run_redirect(&mut FixedApprover::all()).await;
    assert_eq!(hits, 1);
    assert!(
        result["text"].as_str().unwrap().contains("the other host"),
        "{result}"
    );
    assert!(result["url"].as_str().unwrap().ends_with("/landing"));
    assert!(
        result["note"]
            .as_str()
            .unwrap()
            .contains("followed a redirect")
    );
    assert_eq!(result["redirects"].as_array().map(Vec::len), Some(1));
}

/// A page of `count` nested tags (no closing tags), about 500 KB for 100,000 `<div>`s.
fn deep_page(open: &str, count: usize) -> Vec<u8> {
    format!("{}deep", open.repeat(count)).into_bytes()
}

fn deep_server() -> Server {
    let pages: HashMap<&str, Vec<u8>> = [
        ("/div", deep_page("<div>", 100_000)),
        ("/b", deep_page("<b>", 100_000)),
        ("/table", deep_page("<table><tr><td>", 30_000)),
        ("/ul", deep_page("<ul><li>", 60_000)),
    ]
    .into_iter()
    .collect();
    Server::start("127.0.0.1:0", move |path| {
        let body = pages.get(path).cloned().unwrap_or_default();
        (200, vec![("Content-Type", "text/html".into())], body)
    })
}

async fn assert_deep_pages_convert(settings: ToolSettings) {
    let server = deep_server();
    let ctx = ctx(ToolSettings {
        allow_private: vec!["127.0.0.1".into()],
        ..settings
    });
    for path in ["/div", "/b", "/table", "/ul"] {
        let started = Instant::now();
        let result = fetch(&format!("{}{path}", server.base), &ctx)
            .await
            .unwrap();
        let took = started.elapsed();
        // Unbounded, 100,000 nested divs kept a core busy for minutes; now this is well
        // under a second in release builds, a few seconds in debug builds on a busy machine.
        assert!(took < Duration::from_secs(30), "{path} took {took:?}");
        let text = result["text"].as_str().unwrap();
        assert!(text.len() <= ctx.settings.max_output_bytes, "{path}");
        assert!(text.contains("deep"), "{path}: {result}");
        assert_eq!(result.get("note"), None, "{path}: {result}");
    }
}

#[tokio::test]
async fn deep_html_converts_within_bounds_in_process() {
    assert_deep_pages_convert(ToolSettings::default()).await;
}

#[tokio::test]
async fn deep_html_converts_within_bounds_in_the_helper() {
    assert_deep_pages_convert(ToolSettings {
        html_helper: Some(PathBuf::from(env!("CARGO_BIN_EXE_taco"))),
        ..Default::default()
    })
    .await;
}

/// A converter that never finishes; it writes its pid next to itself.
fn hanging_helper(dir: &std::path::Path) -> (PathBuf, PathBuf) {
    use std::os::unix::fs::PermissionsExt;
    let script = dir.join("helper.sh");
    let pid = dir.join("helper.pid");
    std::fs::write(
        &script,
        format!("#!/bin/sh\necho $$ > {}\nexec sleep 60\n", pid.display()),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    (script, pid)
}

/// Whether a process is still running (a zombie waiting to be reaped is not).
fn running(pid: &str) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|stat| {
            let state = stat.rsplit(')').next().unwrap_or("").trim_start();
            !state.starts_with('Z')
        })
        .unwrap_or(false)
}

async fn wait_gone(pid: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while running(pid) {
        assert!(
            Instant::now() < deadline,
            "the converter {pid} is still running"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn a_converter_past_its_time_limit_is_killed() {
    let dir = tempfile::tempdir().unwrap();
    let (script, pid_file) = hanging_helper(dir.path());
    let server = Server::start("127.0.0.1:0", |_| {
        page("<h1>Title</h1><p>Stripped text</p>")
    });
    let ctx = ctx(ToolSettings {
        allow_private: vec!["127.0.0.1".into()],
        html_helper: Some(script),
        // The conversion gets half of the tool timeout.
        timeout: Duration::from_secs(2),
        ..Default::default()
    });
    let started = Instant::now();
    let result = fetch(&server.base, &ctx).await.unwrap();
    assert!(started.elapsed() < Duration::from_secs(10));
    assert!(
        result["note"]
            .as_str()
            .unwrap()
            .contains("could not be rendered"),
        "{result}"
    );
    let text = result["text"].as_str().unwrap();
    assert!(
        text.contains("Stripped text") && !text.contains("<p>"),
        "{text}"
    );
    let pid = std::fs::read_to_string(&pid_file).unwrap();
    assert!(!running(pid.trim()), "killed before the call returned");
}

#[tokio::test]
async fn cancelling_a_fetch_kills_its_converter() {
    let dir = tempfile::tempdir().unwrap();
    let (script, pid_file) = hanging_helper(dir.path());
    let server = Server::start("127.0.0.1:0", |_| page("<p>never shown</p>"));
    let ctx = ctx(ToolSettings {
        allow_private: vec!["127.0.0.1".into()],
        html_helper: Some(script),
        ..Default::default()
    });
    let cancel = ctx.cancel.clone();
    let watcher = tokio::spawn(async move {
        while !pid_file.exists() || std::fs::read_to_string(&pid_file).unwrap().is_empty() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let pid = std::fs::read_to_string(&pid_file).unwrap();
        assert!(running(pid.trim()));
        cancel.cancel();
        pid
    });
    let result = tokio::time::timeout(Duration::from_secs(20), fetch(&server.base, &ctx))
        .await
        .expect("the fetch hung");
    assert_eq!(result, Err(ToolError::Failed("cancelled".into())));
    wait_gone(watcher.await.unwrap().trim()).await;
}

#[tokio::test]
async fn the_helper_converts_ordinary_pages() {
    let server = Server::start("127.0.0.1:0", |_| page("<h1>Hello</h1><p>World wide</p>"));
    // A helper that cannot be started leaves the conversion to this process.
    for helper in [env!("CARGO_BIN_EXE_taco"), "/nonexistent/taco"] {
        let ctx = ctx(ToolSettings {
            allow_private: vec!["127.0.0.1".into()],
            html_helper: Some(PathBuf::from(helper)),
            ..Default::default()
        });
        let result = fetch(&server.base, &ctx).await.unwrap();
        let text = result["text"].as_str().unwrap();
        assert!(
            text.contains("Hello") && text.contains("World wide") && !text.contains("<h1>"),
            "{helper}: {result}"
        );
        assert_eq!(result.get("note"), None, "{helper}");
    }
}
