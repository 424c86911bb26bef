//! The MCP fixture server (`examples/mcp_fixture.rs`) honours its contract (ARCHITECTURE §9),
//! driven by rmcp's own client over stdio and Streamable HTTP; and the published filesystem
//! server that `.ci/run` installs starts and lists its tools.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed unwrap is a failed test

use crate::support;

use std::future::Future;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig,
    ClientRequest, ElicitRequestParams, ElicitResult, ElicitationAction, Implementation,
    ProgressNotificationParam, ProgressToken, ProtocolVersion, ServerResult, Tool,
};
use rmcp::service::{NotificationContext, PeerRequestOptions, RequestContext, RunningService};
use rmcp::transport::common::client_side_sse::ExponentialBackoff;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientHandler, ErrorData, RoleClient, ServiceExt};
use serde_json::{Value, json};
use tokio::io::AsyncReadExt;
use tokio::process::{Child, Command};
use tokio::sync::mpsc;

use support::mcp;

// MCP logging is deprecated by SEP-2577; the fixture still sends it and taco logs it.
#[allow(deprecated)]
use rmcp::model::LoggingMessageNotificationParam;

/// How long any single step may take before the test fails instead of hanging.
const STEP: Duration = Duration::from_secs(20);

/// The fixture's tools, in listing order.
const TOOLS: [&str; 9] = [
    "echo", "add", "fail", "image", "slow", "ask", "crash", "add_tool", "log",
];

async fn within<T>(what: &str, future: impl Future<Output = T>) -> T {
    tokio::time::timeout(STEP, future)
        .await
        .unwrap_or_else(|_| panic!("{what} took longer than {STEP:?}"))
}

/// What the server sent the client, in arrival order.
#[derive(Debug)]
enum Event {
    Progress(ProgressNotificationParam),
    ListChanged,
    Log { level: String, data: Value },
    Elicited { message: String, schema: Value },
}

/// How the test client answers `elicitation/create`.
#[derive(Debug, Clone)]
enum Answer {
    Accept(Value),
    Decline,
    Cancel,
}

/// A client that records notifications and answers elicitations as told.
#[derive(Clone)]
struct Recorder {
    events: mpsc::UnboundedSender<Event>,
    answer: Answer,
}

impl ClientHandler for Recorder {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::builder().enable_elicitation().build(),
            Implementation::new("taco-tests", "0"),
        )
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let ElicitRequestParams::FormElicitationParams {
            message,
            requested_schema,
            ..
        } = request
        else {
            return Ok(ElicitResult::new(ElicitationAction::Decline));
        };
        let schema = serde_json::to_value(&requested_schema).unwrap();
        let _ = self.events.send(Event::Elicited { message, schema });
        Ok(match &self.answer {
            Answer::Accept(content) => {
                ElicitResult::new(ElicitationAction::Accept).with_content(content.clone())
            }
            Answer::Decline => ElicitResult::new(ElicitationAction::Decline),
            Answer::Cancel => ElicitResult::new(ElicitationAction::Cancel),
        })
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let _ = self.events.send(Event::Progress(params));
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self.events.send(Event::ListChanged);
    }

    #[allow(deprecated)]
    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let level = serde_json::to_value(params.level).unwrap();
        let _ = self.events.send(Event::Log {
            level: level.as_str().unwrap_or_default().to_string(),
            data: params.data,
        });
    }
}

type Client = RunningService<RoleClient, Recorder>;

/// A connected client, its events, and (stdio) the server process.
struct Session {
    client: Client,
    events: mpsc::UnboundedReceiver<Event>,
    child: Child,
}

impl Session {
    /// The next event that `pick` accepts (others are dropped).
    async fn next<T>(&mut self, what: &str, mut pick: impl FnMut(Event) -> Option<T>) -> T {
        within(what, async {
            loop {
                let event = self.events.recv().await.expect("the client stopped");
                if let Some(found) = pick(event) {
                    return found;
                }
            }
        })
        .await
    }
}

fn recorder(answer: Answer) -> (Recorder, mpsc::UnboundedReceiver<Event>) {
    let (events, receiver) = mpsc::unbounded_channel();
    (Recorder { events, answer }, receiver)
}

/// Spawns `mcp_fixture ARGS` on stdio (stderr piped) and connects rmcp's client to it.
async fn stdio(args: &[&str], answer: Answer) -> Session {
    let mut child = Command::new(mcp::fixture())
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn the fixture");
    let transport = (child.stdout.take().unwrap(), child.stdin.take().unwrap());
    let (handler, events) = recorder(answer);
    let client = within("initialize over stdio", handler.serve(transport))
        .await
        .expect("initialize over stdio");
    Session {
        client,
        events,
        child,
    }
}

/// Starts `mcp_fixture --http` and connects rmcp's Streamable HTTP client to it.
async fn http(answer: Answer) -> Session {
    let (child, url) = mcp::fixture_http().await;
    let (handler, events) = recorder(answer);
    let transport = StreamableHttpClientTransport::from_config(http_config(url));
    let client = within("initialize over HTTP", handler.serve(transport))
        .await
        .expect("initialize over HTTP");
    Session {
        client,
        events,
        child,
    }
}

/// rmcp's default reconnects a broken response stream forever (unbounded exponential backoff),
/// so a call to a server that died never ends; bound it as a real client must.
fn http_config(url: String) -> StreamableHttpClientTransportConfig {
    let mut retry = ExponentialBackoff::default();
    retry.max_times = Some(2);
    retry.base_duration = Duration::from_millis(100);
    let mut config = StreamableHttpClientTransportConfig::with_uri(url);
    config.retry_config = Arc::new(retry);
    config
}

async fn call(client: &Client, name: &'static str, arguments: Value) -> CallToolResult {
    let Value::Object(arguments) = arguments else {
        panic!("arguments must be an object");
    };
    let params = CallToolRequestParams::new(name).with_arguments(arguments);
    within(name, client.call_tool(params))
        .await
        .unwrap_or_else(|e| panic!("{name} failed: {e}"))
}

fn texts(result: &CallToolResult) -> Vec<String> {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect()
}

fn tool<'a>(tools: &'a [Tool], name: &str) -> &'a Tool {
    tools
        .iter()
        .find(|t| t.name == name)
        .unwrap_or_else(|| panic!("no tool {name}"))
}

// ---- checks shared by both transports ----

async fn check_handshake(session: &Session) {
    let info = session
        .client
        .peer_info()
        .expect("server info after initialize");
    assert_eq!(
        info.server_info.as_ref().map(|i| i.name.as_str()),
        Some("fixture")
    );
    // A classic server: the newest revision that still has an `initialize` handshake, so
    // server-to-client requests (elicitation) are allowed.
    assert_eq!(info.protocol_version, ProtocolVersion::V_2025_11_25);
    let tools = info.capabilities.tools.as_ref().expect("tools capability");
    assert_eq!(tools.list_changed, Some(true));
    #[allow(deprecated)]
    let logging = info.capabilities.logging.is_some();
    assert!(logging, "logging capability");
}

async fn check_listing(session: &Session) {
    let client = &session.client;
    // Page by page: 3 per page, with a cursor while more remain.
    let mut names = Vec::new();
    let mut cursor = None;
    let mut pages = 0;
    loop {
        let params = rmcp::model::PaginatedRequestParams::default().with_cursor(cursor);
        let page = within("tools/list", client.list_tools(Some(params)))
            .await
            .unwrap();
        pages += 1;
        assert!(
            page.tools.len() <= 3,
            "page {pages} has {}",
            page.tools.len()
        );
        names.extend(page.tools.iter().map(|t| t.name.to_string()));
        cursor = page.next_cursor;
        if cursor.is_none() {
            break;
        }
    }
    assert_eq!(pages, 3);
    assert_eq!(names, TOOLS);

    let tools = within("list all tools", client.list_all_tools())
        .await
        .unwrap();
    assert_eq!(tools.len(), 9);
    let echo = tool(&tools, "echo");
    assert_eq!(echo.input_schema["required"], json!(["text"]));
    assert_eq!(
        echo.annotations.as_ref().and_then(|a| a.read_only_hint),
        Some(true)
    );
    let slow = tool(&tools, "slow");
    assert_eq!(
        slow.annotations.as_ref().and_then(|a| a.destructive_hint),
        Some(true)
    );
    let add = tool(&tools, "add");
    let output = add.output_schema.as_ref().expect("add has an outputSchema");
    assert_eq!(output["properties"]["sum"]["type"], "number");
}

async fn check_calls(session: &Session) {
    let client = &session.client;

    let echo = call(client, "echo", json!({"text": "hi there"})).await;
    assert_eq!(texts(&echo), ["echo: hi there"]);
    assert_ne!(echo.is_error, Some(true));

    let add = call(client, "add", json!({"a": 1, "b": 2})).await;
    assert_eq!(texts(&add), ["3"]);
    assert_eq!(add.structured_content, Some(json!({"sum": 3})));
    let add = call(client, "add", json!({"a": 1.5, "b": 2})).await;
    assert_eq!(texts(&add), ["3.5"]);
    assert_eq!(add.structured_content, Some(json!({"sum": 3.5})));

    let fail = call(client, "fail", json!({})).await;
    assert_eq!(fail.is_error, Some(true));
    assert_eq!(texts(&fail), ["it failed on purpose"]);

    let image = call(client, "image", json!({})).await;
    assert_eq!(image.content.len(), 2);
    let png = image.content[0]
        .as_image()
        .expect("first content is an image");
    assert_eq!(png.mime_type, "image/png");
    use base64::Engine as _;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(&png.data)
        .expect("image data is base64");
    assert!(bytes.starts_with(b"\x89PNG\r\n\x1a\n"), "a PNG signature");
    assert_eq!(image.content[1].as_text().unwrap().text, "an image");
}

/// `slow` with the progress token rmcp put on the request: one notification per step.
async fn check_progress(session: &mut Session) {
    let arguments = json!({"steps": 3, "delay_ms": 20});
    let Value::Object(arguments) = arguments else {
        unreachable!()
    };
    let request = ClientRequest::CallToolRequest(CallToolRequest::new(
        CallToolRequestParams::new("slow").with_arguments(arguments),
    ));
    let handle = session
        .client
        .send_cancellable_request(request, PeerRequestOptions::no_options())
        .await
        .unwrap();
    let token = handle.progress_token.clone();
    let response = within("slow", handle.await_response()).await.unwrap();
    let ServerResult::CallToolResult(result) = response else {
        panic!("slow answered {response:?}");
    };
    assert_eq!(texts(&result), ["done"]);
    for step in 1..=3u32 {
        let progress = session
            .next("progress", |e| match e {
                Event::Progress(p) if p.progress_token == token => Some(p),
                _ => None,
            })
            .await;
        assert_eq!(progress.progress, f64::from(step));
        assert_eq!(progress.total, Some(3.0));
        assert_eq!(
            progress.message.as_deref(),
            Some(format!("step {step}").as_str())
        );
    }
}

/// `ask` sends the contract's elicitation; the result reports the client's answer.
async fn check_elicitation(session: &mut Session, expected: &str) {
    let result = call(&session.client, "ask", json!({})).await;
    let (message, schema) = session
        .next("elicitation", |e| match e {
            Event::Elicited { message, schema } => Some((message, schema)),
            _ => None,
        })
        .await;
    assert_eq!(message, "Who are you?");
    assert_eq!(
        schema,
        json!({
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "age": {"type": "integer"},
                "color": {"type": "string", "enum": ["red", "green"]},
                "ok": {"type": "boolean"}
            },
            "required": ["name"]
        })
    );
    let text = texts(&result).join("");
    match expected.strip_prefix("accepted: ") {
        Some(content) => {
            let got = text
                .strip_prefix("accepted: ")
                .unwrap_or_else(|| panic!("ask returned {text:?}"));
            let got: Value = serde_json::from_str(got).unwrap();
            let want: Value = serde_json::from_str(content).unwrap();
            assert_eq!(got, want);
        }
        None => assert_eq!(text, expected),
    }
}

async fn check_list_changed(session: &mut Session) {
    let added = call(&session.client, "add_tool", json!({})).await;
    assert_eq!(texts(&added), ["added"]);
    session
        .next("list_changed", |e| {
            matches!(e, Event::ListChanged).then_some(())
        })
        .await;
    let tools = within("list after add_tool", session.client.list_all_tools())
        .await
        .unwrap();
    let names: Vec<_> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names.len(), 10);
    assert_eq!(names.last(), Some(&"late"));
    let late = call(&session.client, "late", json!({})).await;
    assert_eq!(texts(&late), ["late"]);
}

async fn check_log(session: &mut Session) {
    let logged = call(&session.client, "log", json!({})).await;
    assert_eq!(texts(&logged), ["logged"]);
    let (level, data) = session
        .next("log notification", |e| match e {
            Event::Log { level, data } => Some((level, data)),
            _ => None,
        })
        .await;
    assert_eq!(level, "info");
    assert_eq!(data, json!("hello from fixture"));
}

fn accept() -> Answer {
    Answer::Accept(json!({"name": "Ada", "age": 36, "color": "green", "ok": true}))
}

const ACCEPTED: &str = r#"accepted: {"name": "Ada", "age": 36, "color": "green", "ok": true}"#;

// ---- stdio ----

#[tokio::test]
async fn stdio_handshake_and_paginated_listing() {
    let session = stdio(&[], accept()).await;
    check_handshake(&session).await;
    check_listing(&session).await;
}

#[tokio::test]
async fn stdio_page_size_is_configurable() {
    let session = stdio(&["--page-size", "4"], accept()).await;
    let first = session.client.list_tools(None).await.unwrap();
    assert_eq!(first.tools.len(), 4);
    assert_eq!(first.next_cursor.as_deref(), Some("4"));
    let tools = session.client.list_all_tools().await.unwrap();
    assert_eq!(tools.len(), 9);
}

#[tokio::test]
async fn stdio_tool_results() {
    let session = stdio(&[], accept()).await;
    check_calls(&session).await;
}

#[tokio::test]
async fn stdio_progress() {
    let mut session = stdio(&[], accept()).await;
    check_progress(&mut session).await;
}

#[tokio::test]
async fn stdio_cancel_stops_slow() {
    let mut session = stdio(&[], accept()).await;
    let Value::Object(arguments) = json!({"steps": 100, "delay_ms": 20}) else {
        unreachable!()
    };
    let request = ClientRequest::CallToolRequest(CallToolRequest::new(
        CallToolRequestParams::new("slow").with_arguments(arguments),
    ));
    let handle = session
        .client
        .send_cancellable_request(request, PeerRequestOptions::no_options())
        .await
        .unwrap();
    let token: ProgressToken = handle.progress_token.clone();
    session
        .next("first progress", |e| match e {
            Event::Progress(p) if p.progress_token == token => Some(()),
            _ => None,
        })
        .await;
    handle.cancel(Some("test".into())).await.unwrap();
    // Notifications already in flight may still arrive; then the stream must go quiet long
    // before all 100 steps (2 s) could have been sent.
    let mut highest = 0.0_f64;
    within("progress to stop", async {
        while let Ok(Some(event)) =
            tokio::time::timeout(Duration::from_millis(500), session.events.recv()).await
        {
            if let Event::Progress(p) = event
                && p.progress_token == token
            {
                highest = highest.max(p.progress);
            }
        }
    })
    .await;
    assert!(
        highest < 100.0,
        "slow ran to step {highest} after notifications/cancelled"
    );
    // The server still serves.
    let echo = call(&session.client, "echo", json!({"text": "after"})).await;
    assert_eq!(texts(&echo), ["echo: after"]);
}

#[tokio::test]
async fn stdio_elicitation_accepted() {
    let mut session = stdio(&[], accept()).await;
    check_elicitation(&mut session, ACCEPTED).await;
}

#[tokio::test]
async fn stdio_elicitation_declined_and_cancelled() {
    let mut session = stdio(&[], Answer::Decline).await;
    check_elicitation(&mut session, "declined").await;
    let mut session = stdio(&[], Answer::Cancel).await;
    check_elicitation(&mut session, "cancelled").await;
}

#[tokio::test]
async fn stdio_list_changed_and_late_tool() {
    let mut session = stdio(&[], accept()).await;
    check_list_changed(&mut session).await;
}

#[tokio::test]
async fn stdio_logging_notification() {
    let mut session = stdio(&[], accept()).await;
    check_log(&mut session).await;
}

#[tokio::test]
async fn stdio_crash_mid_call_exits_3() {
    let mut session = stdio(&[], accept()).await;
    let params = CallToolRequestParams::new("crash");
    let outcome = within("crash", session.client.call_tool(params)).await;
    assert!(
        outcome.is_err(),
        "a crashed server's call must fail: {outcome:?}"
    );
    let status = within("fixture exit", session.child.wait()).await.unwrap();
    assert_eq!(status.code(), Some(3));
    let mut stderr = String::new();
    session
        .child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .await
        .unwrap();
    assert!(
        stderr.starts_with("fixture: started\n"),
        "stderr: {stderr:?}"
    );
    assert!(stderr.contains("fixture: crashing\n"), "stderr: {stderr:?}");
}

#[tokio::test]
async fn stdio_hang_init_never_answers() {
    let mut child = Command::new(mcp::fixture())
        .arg("--hang-init")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let transport = (child.stdout.take().unwrap(), child.stdin.take().unwrap());
    let (handler, _events) = recorder(Answer::Decline);
    // The client keeps its end open while we look: dropping it would close the fixture's
    // stdin, and a server ends on EOF (so looking after the drop raced that exit).
    let serving = tokio::spawn(async move { handler.serve(transport).await.is_ok() });
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert!(
        !serving.is_finished(),
        "initialize completed against --hang-init"
    );
    assert!(
        child.try_wait().unwrap().is_none(),
        "--hang-init must keep running"
    );
    serving.abort();
}

#[tokio::test]
async fn stdio_eof_ends_the_server() {
    let mut session = stdio(&[], accept()).await;
    within("close", session.client.close()).await.unwrap();
    let status = within("fixture exit on EOF", session.child.wait())
        .await
        .unwrap();
    assert!(status.success(), "{status:?}");
}

// ---- Streamable HTTP ----

#[tokio::test]
async fn http_handshake_listing_and_results() {
    let session = http(accept()).await;
    check_handshake(&session).await;
    check_listing(&session).await;
    check_calls(&session).await;
}

#[tokio::test]
async fn http_progress_list_changed_and_log() {
    let mut session = http(accept()).await;
    check_progress(&mut session).await;
    check_list_changed(&mut session).await;
    check_log(&mut session).await;
}

#[tokio::test]
async fn http_elicitation_accepted_and_declined() {
    let mut session = http(accept()).await;
    check_elicitation(&mut session, ACCEPTED).await;
    let mut session = http(Answer::Decline).await;
    check_elicitation(&mut session, "declined").await;
}

#[tokio::test]
async fn http_crash_fails_the_call() {
    let mut session = http(accept()).await;
    let outcome = within(
        "crash",
        session
            .client
            .call_tool(CallToolRequestParams::new("crash")),
    )
    .await;
    assert!(
        outcome.is_err(),
        "a crashed server's call must fail: {outcome:?}"
    );
    let status = within("fixture exit", session.child.wait()).await.unwrap();
    assert_eq!(status.code(), Some(3));
}

#[tokio::test]
async fn http_hang_init_never_answers() {
    let (_child, url) = mcp::fixture_http_with(&["--hang-init"]).await;
    let (handler, _events) = recorder(Answer::Decline);
    let transport = StreamableHttpClientTransport::from_config(http_config(url));
    let started = tokio::time::timeout(Duration::from_secs(1), handler.serve(transport)).await;
    assert!(started.is_err(), "initialize completed against --hang-init");
}

#[tokio::test]
async fn http_server_stops_on_stdin_eof() {
    let (mut child, _url) = mcp::fixture_http().await;
    drop(child.stdin.take());
    let status = within("fixture exit on EOF", child.wait()).await.unwrap();
    assert!(status.success(), "{status:?}");
}

// ---- the published filesystem server ----

#[tokio::test]
async fn filesystem_server_lists_its_tools() {
    let Some(server) = mcp::require_filesystem_server() else {
        return;
    };
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("hello.txt"), "hi from taco").unwrap();
    let root_path = root.path().canonicalize().unwrap();
    let mut command = Command::new(&server);
    command.arg(&root_path);
    let (transport, _stderr) = TokioChildProcess::builder(command)
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let client = within("filesystem server initialize", ().serve(transport))
        .await
        .unwrap();
    let tools = within("filesystem tools/list", client.list_all_tools())
        .await
        .unwrap();
    let names: Vec<_> = tools.iter().map(|t| t.name.as_ref()).collect();
    for wanted in ["read_text_file", "list_directory", "write_file"] {
        assert!(names.contains(&wanted), "{wanted} missing from {names:?}");
    }
    let Value::Object(arguments) = json!({"path": root_path.join("hello.txt")}) else {
        unreachable!()
    };
    let read = within(
        "read_text_file",
        client.call_tool(CallToolRequestParams::new("read_text_file").with_arguments(arguments)),
    )
    .await
    .unwrap();
    assert_ne!(read.is_error, Some(true), "{read:?}");
    assert!(texts(&read).join("").contains("hi from taco"), "{read:?}");
    within("close", async { client.cancel().await })
        .await
        .unwrap();
}
