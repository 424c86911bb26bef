//! MCP servers as tools (issue 12), end to end: `taco exec` against a loopback
//! OpenAI-compatible server that asks for MCP tools, with the fixture server
//! (`examples/mcp_fixture.rs`, rmcp's server side) and the published filesystem server.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed unwrap is a failed test

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use taco::mcp::{McpHub, Status};
use taco::tools::{ToolContext, ToolSettings, ToolSource};
use tokio_util::sync::CancellationToken;

use crate::support;
use support::TestServer;
use support::cli::*;
use support::mcp::{fixture, require_filesystem_server};

/// A config file naming the fixture (with extra lines for its table) and more tables.
fn write_config(home: &Path, fixture_extra: &str, more: &str) -> std::path::PathBuf {
    let path = home.join("mcp.toml");
    let text = format!(
        "[providers.openai.options]\nmax_attempts = 1\n\n[mcp.servers.fixture]\ncommand = {:?}\n{fixture_extra}\n{more}",
        fixture().display().to_string()
    );
    std::fs::write(&path, text).unwrap();
    path
}

/// The fixture server started in-process (with `extra` lines for its table), ready.
async fn fixture_hub(extra: &str) -> (Arc<McpHub>, tempfile::TempDir) {
    let work = tempfile::tempdir().unwrap();
    let hub = support::mcp::start_hub(
        &format!(
            "[servers.fixture]\ncommand = {:?}{extra}",
            fixture().display().to_string()
        ),
        work.path(),
        None,
    );
    tokio::time::timeout(Duration::from_secs(10), hub.settled())
        .await
        .unwrap();
    (hub, work)
}

/// `taco exec --json` with `config`, against `server`; returns the run and its events.
async fn exec(
    home: &Path,
    work: &Path,
    config: &Path,
    server: &TestServer,
    extra: &[&str],
) -> (Run, Vec<Value>) {
    let mut cmd = taco(home, work);
    cmd.arg("-c").arg(config);
    openai_args(&mut cmd, server);
    cmd.args(["--json"]).args(extra).arg("go");
    let run = finish(&mut cmd).await;
    let events = run
        .stdout
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    (run, events)
}

/// What one `taco exec --json` run with the fixture left: the run, its events, the model
/// server (its requests), and the directories it ran in.
struct Ran {
    run: Run,
    events: Vec<Value>,
    server: TestServer,
    _dirs: (tempfile::TempDir, tempfile::TempDir),
}

/// The model calls `calls` of the fixture in one turn, then answers; `extra` goes into the
/// fixture's table and `approve` is exec's `--approve`.
async fn with_fixture(calls: &[(&str, &str, &str)], extra: &str, approve: &str) -> Ran {
    let (home, work) = setup();
    let server = TestServer::start(vec![tool_turns(calls), text_turn(&["done"])]).await;
    let config = write_config(home.path(), extra, "");
    let (run, events) = exec(
        home.path(),
        work.path(),
        &config,
        &server,
        &["--approve", approve],
    )
    .await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    Ran {
        run,
        events,
        server,
        _dirs: (home, work),
    }
}

/// The `tool` messages of the n-th request the model server received.
fn told(server: &TestServer, request: usize) -> Vec<Value> {
    server.requests()[request].json()["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| serde_json::from_str(m["content"].as_str().unwrap()).unwrap())
        .collect()
}

fn results(events: &[Value]) -> Vec<&Value> {
    events
        .iter()
        .filter(|e| e["type"] == "tool_result")
        .map(|e| &e["data"])
        .collect()
}

#[tokio::test]
async fn the_model_calls_mcp_tools_and_gets_their_results() {
    let (home, work) = setup();
    let server = TestServer::start(vec![
        tool_turns(&[
            ("e", "mcp__fixture__echo", r#"{"text": "hi"}"#),
            ("a", "mcp__fixture__add", r#"{"a": 2, "b": 3}"#),
            ("i", "mcp__fixture__image", "{}"),
            ("f", "mcp__fixture__fail", "{}"),
            ("bad", "mcp__fixture__echo", r#"{"text": 5}"#),
        ]),
        text_turn(&["done"]),
    ])
    .await;
    let config = write_config(home.path(), "", "");
    let (run, events) = exec(
        home.path(),
        work.path(),
        &config,
        &server,
        &["--approve", "all"],
    )
    .await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let offered: Vec<String> = server.requests()[0].json()["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_string())
        .collect();
    assert!(
        offered.contains(&"mcp__fixture__echo".to_string())
            && offered.contains(&"read_file".to_string()),
        "{offered:?}"
    );
    let told = told(&server, 1);
    assert_eq!(told[0], json!({"text": "echo: hi"}));
    assert_eq!(told[1]["structured"], json!({"sum": 5}));
    let image = &told[2]["attachments"][0];
    assert_eq!(
        (image["type"].as_str(), image["mime_type"].as_str()),
        (Some("image"), Some("image/png"))
    );
    assert!(
        !told[2].to_string().contains("iVBOR"),
        "no base64 reaches the model"
    );
    assert_eq!(told[3], json!({"error": "it failed on purpose"}));
    let invalid = told[4]["error"].as_str().unwrap();
    assert!(
        invalid.contains("invalid arguments") && invalid.contains("JSON Schema"),
        "{invalid}"
    );
    let status: Vec<&str> = results(&events)
        .iter()
        .map(|r| r["status"].as_str().unwrap())
        .collect();
    let mut sorted = status.clone();
    sorted.sort_unstable();
    assert_eq!(
        sorted,
        ["failed", "invalid", "ok", "ok", "ok"],
        "{status:?}"
    );
}

#[tokio::test]
async fn mcp_tools_ask_by_default_and_exec_denies_them() {
    let (home, work) = setup();
    let server = TestServer::start(vec![
        tool_turns(&[("e", "mcp__fixture__echo", r#"{"text": "hi"}"#)]),
        text_turn(&["ok"]),
    ])
    .await;
    let config = write_config(home.path(), "", "");
    let (run, events) = exec(home.path(), work.path(), &config, &server, &[]).await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let requested = events
        .iter()
        .find(|e| e["type"] == "approval_requested")
        .expect("an approval was asked");
    let note = requested["data"]["note"].as_str().unwrap();
    assert!(
        note.contains("MCP server fixture")
            && note.contains("read-only")
            && note.contains("not checked"),
        "{note}"
    );
    let result = results(&events)[0];
    assert_eq!(
        (result["status"].as_str(), result["denied_by"].as_str()),
        (Some("denied"), Some("headless"))
    );

    // A per-tool policy in the config allows it; hints alone never do.
    let server = TestServer::start(vec![
        tool_turns(&[("e", "mcp__fixture__echo", r#"{"text": "hi"}"#)]),
        text_turn(&["ok"]),
    ])
    .await;
    let config = write_config(home.path(), "tool_policies = { echo = \"allow\" }", "");
    let (run, events) = exec(home.path(), work.path(), &config, &server, &[]).await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert_eq!(results(&events)[0]["status"], "ok");
}

#[tokio::test]
async fn broken_servers_are_reported_once_and_the_run_goes_on() {
    let (home, work) = setup();
    let server = TestServer::start(vec![text_turn(&["fine without them"])]).await;
    let more = format!(
        "[mcp.servers.missing]\ncommand = \"no-such-mcp-server-here\"\n\n[mcp.servers.hang]\ncommand = {:?}\nargs = [\"--hang-init\"]\nstartup_timeout_secs = 1\n",
        fixture().display().to_string()
    );
    let config = write_config(home.path(), "enabled = false", &more);
    let started = std::time::Instant::now();
    let (run, _) = exec(home.path(), work.path(), &config, &server, &[]).await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert!(started.elapsed() < Duration::from_secs(20));
    assert_eq!(
        run.stderr.matches("MCP server missing").count(),
        1,
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("was not found"), "{}", run.stderr);
    assert_eq!(
        run.stderr.matches("MCP server hang").count(),
        1,
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("did not start within 1 s"),
        "{}",
        run.stderr
    );
    assert!(run.stdout.contains("fine without them"));
}

#[tokio::test]
async fn a_server_that_crashes_mid_call_fails_the_call_and_is_withdrawn() {
    let Ran {
        run,
        events,
        server,
        ..
    } = with_fixture(&[("c", "mcp__fixture__crash", "{}")], "", "all").await;
    assert_eq!(results(&events)[0]["status"], "failed");
    assert!(run.stderr.contains("MCP server fixture"), "{}", run.stderr);
    assert!(
        run.stderr.contains("fixture: crashing"),
        "its last stderr lines: {}",
        run.stderr
    );
    assert!(
        run.stderr.contains("exit code 3"),
        "its exit code: {}",
        run.stderr
    );
    let offered = server.requests()[1].json()["tools"].to_string();
    assert!(
        !offered.contains("mcp__fixture__"),
        "its tools are withdrawn: {offered}"
    );
}

#[tokio::test]
async fn taco_mcp_list_shows_every_page_and_failures() {
    let (home, work) = setup();
    let more = "[mcp.servers.missing]\ncommand = \"no-such-mcp-server-here\"\n";
    let config = write_config(home.path(), "args = [\"--page-size\", \"2\"]", more);
    let mut cmd = taco(home.path(), work.path());
    cmd.arg("-c").arg(&config).args(["mcp", "list"]);
    let run = finish(&mut cmd).await;
    assert_eq!(
        run.code, 0,
        "exit 0 even when a server failed: {}",
        run.stderr
    );
    assert!(
        run.stdout.contains("**fixture**") && run.stdout.contains("ready, 9 tools"),
        "{}",
        run.stdout
    );
    for tool in [
        "echo", "add", "fail", "image", "slow", "ask", "crash", "add_tool", "log",
    ] {
        assert!(
            run.stdout.contains(&format!("'mcp__fixture__{tool}'")),
            "{tool}: {}",
            run.stdout
        );
    }
    assert!(
        run.stdout.contains("**missing**") && run.stdout.contains("failed"),
        "{}",
        run.stdout
    );
}

#[tokio::test]
async fn a_changed_tool_list_is_listed_again() {
    let (hub, work) = fixture_hub("\ntool_policies = { add_tool = \"allow\" }").await;
    assert_eq!(hub.view()[0].status, Status::Ready);
    let names = |hub: &McpHub| -> Vec<String> {
        hub.tools().iter().map(|t| t.name().to_string()).collect()
    };
    assert!(!names(&hub).contains(&"mcp__fixture__late".to_string()));
    let add = hub
        .tools()
        .into_iter()
        .find(|t| t.name() == "mcp__fixture__add_tool")
        .unwrap();
    let ctx = ToolContext {
        workdir: work.path().to_path_buf(),
        settings: Arc::new(ToolSettings::default()),
        cancel: CancellationToken::new(),
        call: String::new(),
        progress: None,
        seen: None,
        trace: None,
    };
    add.call(json!({}), &ctx).await.unwrap();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while !names(&hub).contains(&"mcp__fixture__late".to_string()) {
        assert!(
            tokio::time::Instant::now() < deadline,
            "late never listed: {:?}",
            names(&hub)
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    hub.shutdown();
}

#[tokio::test]
async fn the_published_filesystem_server_serves_the_model() {
    let Some(fs) = require_filesystem_server() else {
        return;
    };
    let (home, work) = setup();
    let server = TestServer::start(vec![
        tool_turns(&[(
            "r",
            "mcp__fs__read_text_file",
            &json!({"path": work.path().join("hello.txt")}).to_string(),
        )]),
        text_turn(&["it says hi there"]),
    ])
    .await;
    let path = home.path().join("fs.toml");
    std::fs::write(
        &path,
        format!(
            "[providers.openai.options]\nmax_attempts = 1\n[mcp.servers.fs]\ncommand = {:?}\nargs = [{:?}]\nstartup_timeout_secs = 30\n",
            fs.display().to_string(),
            work.path().display().to_string()
        ),
    )
    .unwrap();
    let (run, events) = exec(
        home.path(),
        work.path(),
        &path,
        &server,
        &["--approve", "all"],
    )
    .await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert_eq!(
        results(&events)[0]["status"],
        "ok",
        "{:?}",
        results(&events)
    );
    let told = told(&server, 1);
    assert!(
        told[0]["text"].as_str().unwrap().contains("hi there"),
        "{:?}",
        told[0]
    );
}

#[tokio::test]
async fn progress_reaches_the_events_before_the_result() {
    let slow = ("s", "mcp__fixture__slow", r#"{"steps": 3, "delay_ms": 30}"#);
    let Ran { events, .. } = with_fixture(&[slow], "", "all").await;
    let kinds: Vec<&str> = events
        .iter()
        .map(|e| e["type"].as_str().unwrap())
        .filter(|k| *k == "tool_progress" || *k == "tool_result")
        .collect();
    assert_eq!(
        kinds,
        [
            "tool_progress",
            "tool_progress",
            "tool_progress",
            "tool_result"
        ]
    );
    let last = events
        .iter()
        .rfind(|e| e["type"] == "tool_progress")
        .unwrap();
    assert_eq!(
        last["data"],
        json!({"id": "s", "progress": 3.0, "total": 3.0, "message": "step 3"})
    );
}

/// Records events and cancels the run at the first progress report.
struct CancelAtProgress {
    events: Vec<taco::event::Event>,
    cancel: CancellationToken,
}

impl taco::orchestrator::EventSink for CancelAtProgress {
    fn emit(&mut self, event: taco::event::Event) {
        if event.kind() == "tool_progress" {
            self.cancel.cancel();
        }
        self.events.push(event);
    }
}

#[tokio::test]
async fn cancelling_a_run_cancels_the_call_on_the_server() {
    let (hub, _work) = fixture_hub("\npolicy = \"allow\"").await;
    let provider = support::scripted::Scripted::new(vec![Ok(support::scripted::calls(&[(
        "s",
        "mcp__fixture__slow",
        json!({"steps": 50, "delay_ms": 100}),
    )]))]);
    let mut registry = taco::tools::ToolRegistry::new();
    registry.add_source(Arc::clone(&hub) as Arc<dyn ToolSource>);
    let mut orch = taco::orchestrator::Orchestrator::new(
        provider,
        Arc::new(registry),
        support::scripted::settings(10),
    );
    let cancel = CancellationToken::new();
    let mut sink = CancelAtProgress {
        events: Vec::new(),
        cancel: cancel.clone(),
    };
    let outcome = orch
        .run(
            "go",
            &mut sink,
            // `slow` is marked destructive: it asks even under `policy = "allow"`.
            &mut taco::orchestrator::approval::FixedApprover::all(),
            &cancel,
        )
        .await;
    assert_eq!(outcome, taco::orchestrator::Outcome::Cancelled);
    let result = sink
        .events
        .iter()
        .find_map(|e| match &e.data {
            taco::event::EventData::ToolResult { status, .. } => *status,
            _ => None,
        })
        .unwrap();
    assert_eq!(result, taco::event::ToolStatus::Cancelled);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    loop {
        let stderr = hub.view()[0].stderr.join("\n");
        if stderr.contains("fixture: slow cancelled at step") {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the server never heard: {stderr}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    hub.shutdown();
}

#[tokio::test]
async fn headless_a_servers_form_is_declined_with_a_line_on_stderr() {
    let Ran { run, server, .. } =
        with_fixture(&[("a", "mcp__fixture__ask", "{}")], "", "all").await;
    assert!(
        run.stderr
            .contains("MCP server fixture asks: Who are you?; declined"),
        "{}",
        run.stderr
    );
    assert_eq!(told(&server, 1)[0], json!({"text": "declined"}));
}

#[tokio::test]
async fn a_streamable_http_server_serves_tools_with_its_headers() {
    let (home, work) = setup();
    let (_child, url) = support::mcp::fixture_http().await;
    let server = TestServer::start(vec![
        tool_turns(&[("e", "mcp__web__echo", r#"{"text": "over http"}"#)]),
        text_turn(&["ok"]),
    ])
    .await;
    let path = home.path().join("http.toml");
    std::fs::write(
        &path,
        format!(
            "[providers.openai.options]\nmax_attempts = 1\n[mcp.servers.web]\nurl = {url:?}\nheaders = {{ \"X-Team\" = \"${{TEAM}}\" }}\ntool_policies = {{ echo = \"allow\" }}\n"
        ),
    )
    .unwrap();
    let mut cmd = taco(home.path(), work.path());
    cmd.env("TEAM", "tools").arg("-c").arg(&path);
    openai_args(&mut cmd, &server);
    cmd.args(["--json", "go"]);
    let run = finish(&mut cmd).await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert_eq!(told(&server, 1)[0], json!({"text": "echo: over http"}));

    // A header naming a variable that is not set is refused with its name, never a value.
    let mut cmd = taco(home.path(), work.path());
    cmd.arg("-c").arg(&path).args(["mcp", "list"]);
    let run = finish(&mut cmd).await;
    assert!(
        run.stdout
            .contains("the environment variable TEAM is not set"),
        "{}",
        run.stdout
    );
}

#[tokio::test]
async fn trusted_hints_let_a_read_only_tool_run_and_never_a_destructive_one() {
    let (home, work) = setup();
    let server = TestServer::start(vec![
        tool_turns(&[
            ("e", "mcp__fixture__echo", r#"{"text": "hi"}"#),
            ("s", "mcp__fixture__slow", r#"{"steps": 1, "delay_ms": 1}"#),
        ]),
        text_turn(&["ok"]),
    ])
    .await;
    let config = write_config(home.path(), "trust_annotations = true", "");
    let (run, events) = exec(home.path(), work.path(), &config, &server, &[]).await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let status: Vec<(&str, &str)> = results(&events)
        .iter()
        .map(|r| (r["id"].as_str().unwrap(), r["status"].as_str().unwrap()))
        .collect();
    assert!(
        status.contains(&("e", "ok")),
        "echo says it is read-only: {status:?}"
    );
    assert!(
        status.contains(&("s", "denied")),
        "slow is destructive: {status:?}"
    );
}

/// `[mcp] trust_read_only` trusts every server's read-only hint; a destructive hint asks
/// even where the server's policy allows everything (exec denies what asks).
#[tokio::test]
async fn trust_read_only_for_all_servers_and_a_destructive_tool_always_asks() {
    let (home, work) = setup();
    let server = TestServer::start(vec![
        tool_turns(&[
            ("e", "mcp__fixture__echo", r#"{"text": "hi"}"#),
            ("s", "mcp__fixture__slow", r#"{"steps": 1, "delay_ms": 1}"#),
            ("f", "mcp__fixture__fail", "{}"),
        ]),
        text_turn(&["ok"]),
    ])
    .await;
    let config = write_config(
        home.path(),
        "",
        "[mcp]\ntrust_read_only = true\n\n[mcp.servers.second]\ncommand = \"true\"\npolicy = \"allow\"\nenabled = false\n",
    );
    let (run, events) = exec(home.path(), work.path(), &config, &server, &[]).await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let status: Vec<(&str, &str)> = results(&events)
        .iter()
        .map(|r| (r["id"].as_str().unwrap(), r["status"].as_str().unwrap()))
        .collect();
    assert!(status.contains(&("e", "ok")), "read-only: {status:?}");
    assert!(status.contains(&("f", "denied")), "no hint: {status:?}");
    assert!(status.contains(&("s", "denied")), "destructive: {status:?}");

    // The server allows everything: still, the destructive tool asks.
    let server = TestServer::start(vec![
        tool_turns(&[
            ("s", "mcp__fixture__slow", r#"{"steps": 1, "delay_ms": 1}"#),
            ("f", "mcp__fixture__fail", "{}"),
        ]),
        text_turn(&["ok"]),
    ])
    .await;
    let config = write_config(home.path(), "policy = \"allow\"", "");
    let (run, events) = exec(home.path(), work.path(), &config, &server, &[]).await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let status: Vec<(&str, &str)> = results(&events)
        .iter()
        .map(|r| (r["id"].as_str().unwrap(), r["status"].as_str().unwrap()))
        .collect();
    assert!(
        status.contains(&("f", "failed")),
        "allowed, ran: {status:?}"
    );
    assert!(status.contains(&("s", "denied")), "destructive: {status:?}");
}

#[tokio::test]
async fn a_key_a_server_prints_never_reaches_the_report() {
    let (home, work) = setup();
    let key = "sk-proj-mcpLEAKtest0123456789abcdefXYZ";
    let path = home.path().join("leak.toml");
    std::fs::write(
        &path,
        "[mcp.servers.leaky]\ncommand = \"sh\"\nargs = [\"-c\", \"echo the key is $K >&2; exit 1\"]\nenv = { K = \"${OPENAI_API_KEY}\" }\n",
    )
    .unwrap();
    let mut cmd = taco(home.path(), work.path());
    cmd.env("OPENAI_API_KEY", key)
        .arg("-c")
        .arg(&path)
        .args(["mcp", "list"]);
    let run = finish(&mut cmd).await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout.contains("the key is"),
        "the stderr tail is shown: {}",
        run.stdout
    );
    assert!(
        !run.stdout.contains(key) && !run.stderr.contains(key),
        "{}",
        run.stdout
    );
}

/// Answers every request on a loopback port with `response`, and keeps what each request's
/// head said (bounded).
async fn raw_http(response: String) -> (String, Arc<std::sync::Mutex<Vec<String>>>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = format!("http://{}", listener.local_addr().unwrap());
    let heads = Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = Arc::clone(&heads);
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let mut buf = vec![0u8; 16 * 1024];
            let n = socket.read(&mut buf).await.unwrap_or(0);
            seen.lock()
                .unwrap()
                .push(String::from_utf8_lossy(&buf[..n]).to_string());
            let _ = socket.write_all(response.as_bytes()).await;
            let _ = socket.shutdown().await;
        }
    });
    (address, heads)
}

/// A Streamable HTTP server that redirects taco to another origin never gets the configured
/// key carried there: the redirect is refused and said, and the other origin sees nothing.
#[tokio::test]
async fn a_redirect_to_another_origin_is_refused_and_carries_no_header() {
    let (home, work) = setup();
    let key = "mcp-header-secret-0123456789";
    let (elsewhere, landed) =
        raw_http("HTTP/1.1 500 Nope\r\ncontent-length: 0\r\nconnection: close\r\n\r\n".into())
            .await;
    let (origin, asked) = raw_http(format!(
        "HTTP/1.1 307 Temporary Redirect\r\nlocation: {elsewhere}/mcp\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
    ))
    .await;
    let path = home.path().join("redirect.toml");
    std::fs::write(
        &path,
        format!(
            "[mcp.servers.web]\nurl = \"{origin}/mcp\"\nheaders = {{ \"X-Api-Key\" = \"${{MCP_KEY}}\" }}\nstartup_timeout_secs = 5\n"
        ),
    )
    .unwrap();
    let mut cmd = taco(home.path(), work.path());
    cmd.env("MCP_KEY", key)
        .arg("-c")
        .arg(&path)
        .args(["mcp", "list"]);
    let run = finish(&mut cmd).await;
    let asked = asked.lock().unwrap().clone();
    assert!(
        asked.iter().any(|head| head.contains(key)),
        "the server's own origin gets its header: {asked:?}"
    );
    assert!(
        landed.lock().unwrap().is_empty(),
        "nothing reaches the other origin: {:?}",
        landed.lock().unwrap()
    );
    let said = format!("{}{}", run.stdout, run.stderr);
    assert!(said.contains("only within its own origin"), "{said}");
    assert!(!said.contains(key), "{said}");
}
