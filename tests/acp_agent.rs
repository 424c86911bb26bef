//! `taco acp` driven by the official ACP client types over a pipe, against a loopback model
//! server: prompts and their streamed updates, a permission round trip, cancel, list and
//! load, and a client that misbehaves.

use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    CancelNotification, ClientCapabilities, ContentBlock, FileSystemCapabilities,
    InitializeRequest, ListSessionsRequest, LoadSessionRequest, McpServer, McpServerStdio,
    NewSessionRequest, PermissionOptionKind, PlanEntryStatus, PromptRequest, ReadTextFileRequest,
    ReadTextFileResponse, RequestPermissionOutcome, RequestPermissionRequest,
    RequestPermissionResponse, SelectedPermissionOutcome, SessionId, SessionNotification,
    SessionUpdate, SetSessionModeRequest, StopReason, TextContent, ToolCallContent, ToolCallStatus,
};
use agent_client_protocol::{Agent, Client, Lines};
use serde_json::{Value, json};
use taco::acp::lines;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, Command};

use crate::support::cli::{setup, text_turn, tool_turn, tool_turns};
use crate::support::{Reply, TestServer};

/// What the client saw.
#[derive(Default)]
struct Seen {
    updates: Vec<(String, SessionUpdate)>,
    asked: Vec<RequestPermissionRequest>,
    /// What the editor holds (`fs/read_text_file` answers from it; a path not in it fails).
    editor: std::collections::HashMap<std::path::PathBuf, String>,
    /// The paths taco asked the editor for.
    read: Vec<std::path::PathBuf>,
}

type Shared = Arc<Mutex<Seen>>;

/// How the test's client answers permission requests: by the option's id, or cancelled.
type Pick = fn(&RequestPermissionRequest) -> RequestPermissionOutcome;

fn pick_id(request: &RequestPermissionRequest, id: &str) -> RequestPermissionOutcome {
    let option = request
        .options
        .iter()
        .find(|o| &*o.option_id.0 == id)
        .unwrap_or_else(|| panic!("no option {id}: {:?}", request.options));
    RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new(option.option_id.clone()))
}

fn acp(home: &Path, work: &Path, server: &TestServer) -> Child {
    let mut cmd: Command = crate::support::cli::taco(home, work);
    cmd.args([
        "--provider",
        "openai",
        "--base-url",
        &format!("{}/v1", server.url()),
        "--model",
        "m1",
        "acp",
    ])
    .stdin(Stdio::piped());
    cmd.spawn().unwrap()
}

/// Runs `body` as an ACP client of `child`, answering permissions with `pick`.
async fn client<R: Send + 'static>(
    child: &mut Child,
    pick: Pick,
    seen: Shared,
    body: impl AsyncFnOnce(ConnectionTo<Agent>) -> Result<R, agent_client_protocol::Error>,
) -> R {
    let problems: lines::Problems = Arc::new(|p| panic!("taco acp sent a bad line: {p}"));
    let transport = Lines::new(
        lines::outgoing(child.stdin.take().unwrap(), lines::WRITE_WAIT),
        lines::incoming(child.stdout.take().unwrap(), lines::MAX_LINE, problems),
    );
    let (notes, asks, reads) = (Arc::clone(&seen), Arc::clone(&seen), Arc::clone(&seen));
    let run = Client
        .v1()
        .on_receive_notification(
            async move |n: SessionNotification, _cx| {
                let mut seen = notes.lock().unwrap();
                seen.updates.push((n.session_id.0.to_string(), n.update));
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .on_receive_request(
            async move |request: RequestPermissionRequest, responder, _cx| {
                let outcome = pick(&request);
                asks.lock().unwrap().asked.push(request);
                responder.respond(RequestPermissionResponse::new(outcome))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: ReadTextFileRequest, responder, _cx| {
                let mut seen = reads.lock().unwrap();
                seen.read.push(request.path.clone());
                match seen.editor.get(&request.path) {
                    Some(text) => responder.respond(ReadTextFileResponse::new(text.clone())),
                    None => responder.respond_with_error(agent_client_protocol::Error::new(
                        -32002,
                        "not open here",
                    )),
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .connect_with(transport, body);
    tokio::time::timeout(Duration::from_secs(60), run)
        .await
        .expect("the ACP conversation hung")
        .expect("the ACP connection failed")
}

async fn initialize(cx: &ConnectionTo<Agent>) -> Result<(), agent_client_protocol::Error> {
    initialize_as(cx, ClientCapabilities::new()).await
}

async fn initialize_as(
    cx: &ConnectionTo<Agent>,
    capabilities: ClientCapabilities,
) -> Result<(), agent_client_protocol::Error> {
    let init = cx
        .send_request(InitializeRequest::new(ProtocolVersion::V1).client_capabilities(capabilities))
        .block_task()
        .await?;
    assert!(init.agent_capabilities.load_session);
    assert!(init.agent_capabilities.session_capabilities.list.is_some());
    assert_eq!(init.agent_info.map(|i| i.name).as_deref(), Some("taco"));
    Ok(())
}

/// A new session in `workdir`.
async fn open(
    cx: &ConnectionTo<Agent>,
    workdir: std::path::PathBuf,
) -> Result<agent_client_protocol::v1::schema::NewSessionResponse, agent_client_protocol::Error> {
    cx.send_request(NewSessionRequest::new(workdir))
        .block_task()
        .await
}

/// A prompt of text, to its end.
async fn ask(
    cx: &ConnectionTo<Agent>,
    session: SessionId,
    prompt: &str,
) -> Result<agent_client_protocol::v1::schema::PromptResponse, agent_client_protocol::Error> {
    cx.send_request(PromptRequest::new(session, text(prompt)))
        .block_task()
        .await
}

fn text(prompt: &str) -> Vec<ContentBlock> {
    vec![ContentBlock::Text(TextContent::new(prompt))]
}

fn message_text(updates: &[(String, SessionUpdate)]) -> String {
    updates
        .iter()
        .filter_map(|(_, u)| match u {
            SessionUpdate::AgentMessageChunk(chunk) => match &chunk.content {
                ContentBlock::Text(t) => Some(t.text.clone()),
                _ => None,
            },
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn a_prompt_streams_its_answer_and_a_permission_round_trip_writes_the_file() {
    let (home, work) = setup();
    let server = TestServer::start(vec![
        tool_turn(
            "c1",
            "write_file",
            r#"{"path": "notes.md", "content": "hello from acp\n"}"#,
        ),
        text_turn(&["Wrote ", "notes.md."]),
    ])
    .await;
    let mut child = acp(home.path(), work.path(), &server);
    let seen: Shared = Arc::default();
    let pick: Pick = |r| pick_id(r, "once");
    let workdir = work.path().to_path_buf();
    let (id, reason) = client(&mut child, pick, Arc::clone(&seen), async move |cx| {
        initialize(&cx).await?;
        let session = open(&cx, workdir).await?;
        let done = ask(&cx, session.session_id.clone(), "write the notes").await?;
        Ok((session.session_id, done.stop_reason))
    })
    .await;
    assert_eq!(reason, StopReason::EndTurn);
    assert_eq!(
        std::fs::read_to_string(work.path().join("notes.md")).unwrap(),
        "hello from acp\n"
    );
    // Taken out, so no lock is held past here.
    let seen = std::mem::take(&mut *seen.lock().unwrap());
    // The permission: the call with its diff, and the dialog's answers as options.
    assert_eq!(seen.asked.len(), 1);
    let asked = &seen.asked[0];
    assert_eq!(asked.session_id, id);
    assert_eq!(&*asked.tool_call.tool_call_id.0, "c1");
    let ids: Vec<&str> = asked.options.iter().map(|o| &*o.option_id.0).collect();
    assert_eq!(ids, ["once", "turn", "session", "deny"]);
    assert_eq!(asked.options[0].kind, PermissionOptionKind::AllowOnce);
    assert_eq!(asked.options[3].kind, PermissionOptionKind::RejectOnce);
    let diff = match asked.tool_call.fields.content.as_deref() {
        Some([ToolCallContent::Diff(diff)]) => diff,
        other => panic!("no diff: {other:?}"),
    };
    assert_eq!(diff.path, work.path().join("notes.md"));
    assert_eq!(diff.new_text, "hello from acp\n");
    // The updates: the call, running, completed; the answer streamed in its pieces.
    let updates = &seen.updates;
    assert!(updates.iter().all(|(s, _)| *s == *id.0));
    let call = updates
        .iter()
        .find_map(|(_, u)| match u {
            SessionUpdate::ToolCall(call) => Some(call),
            _ => None,
        })
        .expect("a tool_call update");
    assert_eq!(call.title, "Write notes.md");
    assert_eq!(call.status, ToolCallStatus::Pending);
    let statuses: Vec<ToolCallStatus> = updates
        .iter()
        .filter_map(|(_, u)| match u {
            SessionUpdate::ToolCallUpdate(update) => update.fields.status,
            _ => None,
        })
        .collect();
    assert_eq!(
        statuses,
        [ToolCallStatus::InProgress, ToolCallStatus::Completed]
    );
    assert_eq!(message_text(updates), "Wrote notes.md.");
    // Recorded as the TUI records: the session file under the id the client got.
    let file = crate::support::cli::sessions_dir(home.path()).join(format!("{}.jsonl", id.0));
    let recorded = std::fs::read_to_string(&file).unwrap();
    assert!(recorded.contains(r#""kind":"acp""#), "{recorded}");
    assert!(
        recorded.contains(r#""type":"approval_decided""#),
        "{recorded}"
    );
    assert!(recorded.contains("Wrote notes.md."), "{recorded}");
    // The client is gone: taco ends, and the audit log has the approved call.
    let status = tokio::time::timeout(Duration::from_secs(10), child.wait())
        .await
        .expect("taco acp outlived its client")
        .unwrap();
    assert!(status.success(), "{status:?}");
    let audit: String = std::fs::read_dir(home.path().join(".local/state/taco"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("audit")
        })
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    assert!(
        audit.contains(r#""event":"tool_executed""#) && audit.contains(r#""tool":"write_file""#),
        "{audit}"
    );
}

#[tokio::test]
async fn a_denied_or_cancelled_permission_runs_nothing() {
    for (pick, word) in [
        (
            (|r| pick_id(r, "deny")) as Pick,
            "denied by the client's pick",
        ),
        (
            (|_| RequestPermissionOutcome::Cancelled) as Pick,
            "cancelled by the client",
        ),
    ] {
        let (home, work) = setup();
        let server = TestServer::start(vec![
            tool_turn("c1", "shell", r#"{"command": "touch made-it"}"#),
            text_turn(&["ok"]),
        ])
        .await;
        let mut child = acp(home.path(), work.path(), &server);
        let seen: Shared = Arc::default();
        let workdir = work.path().to_path_buf();
        let reason = client(&mut child, pick, Arc::clone(&seen), async move |cx| {
            initialize(&cx).await?;
            let session = open(&cx, workdir).await?;
            let done = ask(&cx, session.session_id, "touch it").await?;
            Ok(done.stop_reason)
        })
        .await;
        assert_eq!(reason, StopReason::EndTurn, "{word}");
        assert!(!work.path().join("made-it").exists(), "{word}");
        let seen = seen.lock().unwrap();
        let failed = seen.updates.iter().any(|(_, u)| {
            matches!(u, SessionUpdate::ToolCallUpdate(c) if c.fields.status == Some(ToolCallStatus::Failed))
        });
        assert!(failed, "{word}: the call is reported failed");
        // The model was told it was denied.
        let told = server.requests()[1].json().to_string();
        assert!(told.contains("denied"), "{word}: {told}");
    }
}

#[tokio::test]
async fn cancel_ends_the_prompt_as_cancelled() {
    let (home, work) = setup();
    // The model starts answering, then never finishes.
    let server = TestServer::start(vec![
        Reply::sse(vec![
            "data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"thinking…\"}}]}\n\n"
                .to_string(),
        ])
        .forever(),
    ])
    .await;
    let mut child = acp(home.path(), work.path(), &server);
    let seen: Shared = Arc::default();
    let pick: Pick = |_| RequestPermissionOutcome::Cancelled;
    let workdir = work.path().to_path_buf();
    let watched = Arc::clone(&seen);
    let reason = client(&mut child, pick, Arc::clone(&seen), async move |cx| {
        initialize(&cx).await?;
        let session = open(&cx, workdir).await?;
        let id = session.session_id.clone();
        let canceller = cx.clone();
        let prompt = cx.send_request(PromptRequest::new(session.session_id, text("go")));
        // Cancel once the answer has begun.
        tokio::spawn(async move {
            for _ in 0..600 {
                if !message_text(&watched.lock().unwrap().updates).is_empty() {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            canceller
                .send_notification(CancelNotification::new(id))
                .unwrap();
        });
        Ok(prompt.block_task().await?.stop_reason)
    })
    .await;
    assert_eq!(reason, StopReason::Cancelled);
    // The held stream repeats its chunk until the cancel.
    assert!(message_text(&seen.lock().unwrap().updates).starts_with("thinking…"));
}

#[tokio::test]
async fn sessions_list_and_a_loaded_session_replays_its_conversation() {
    let (home, work) = setup();
    let server = TestServer::start(vec![
        tool_turn("c1", "read_file", r#"{"path": "hello.txt"}"#),
        text_turn(&["It says hi."]),
        text_turn(&["Still here."]),
    ])
    .await;
    let workdir = work.path().to_path_buf();
    // First connection: one prompt, then the client goes.
    let mut first = acp(home.path(), work.path(), &server);
    let pick: Pick = |r| pick_id(r, "once");
    let id = client(&mut first, pick, Arc::default(), {
        let workdir = workdir.clone();
        async move |cx| {
            initialize(&cx).await?;
            let session = open(&cx, workdir).await?;
            ask(&cx, session.session_id.clone(), "what does hello.txt say?").await?;
            Ok(session.session_id)
        }
    })
    .await;
    let _ = first.wait().await;
    // Second connection: the session is listed and loads with its history.
    let mut second = acp(home.path(), work.path(), &server);
    let seen: Shared = Arc::default();
    let loaded_id = id.clone();
    let (listed, reason) = client(&mut second, pick, Arc::clone(&seen), async move |cx| {
        initialize(&cx).await?;
        let listed = cx
            .send_request(ListSessionsRequest::new().cwd(workdir.clone()))
            .block_task()
            .await?;
        cx.send_request(LoadSessionRequest::new(loaded_id.clone(), workdir))
            .block_task()
            .await?;
        let done = ask(&cx, loaded_id, "still there?").await?;
        Ok((listed.sessions, done.stop_reason))
    })
    .await;
    assert_eq!(reason, StopReason::EndTurn);
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].session_id, id);
    assert_eq!(listed[0].cwd, work.path());
    assert_eq!(listed[0].title.as_deref(), Some("what does hello.txt say?"));
    let seen = seen.lock().unwrap();
    let kinds: Vec<&str> = seen
        .updates
        .iter()
        .map(|(_, u)| match u {
            SessionUpdate::UserMessageChunk(_) => "user",
            SessionUpdate::AgentMessageChunk(_) => "agent",
            SessionUpdate::ToolCall(_) => "call",
            SessionUpdate::ToolCallUpdate(_) => "update",
            SessionUpdate::UsageUpdate(_) => "usage",
            _ => "other",
        })
        .filter(|k| *k != "usage")
        .collect();
    // The replay (user, the call and its result, the answer), then the new prompt's answer.
    assert_eq!(
        kinds,
        ["user", "call", "update", "update", "agent", "agent"],
        "{:?}",
        seen.updates
    );
    assert_eq!(message_text(&seen.updates), "It says hi.Still here.");
    // The model got the whole conversation back.
    let last = server.requests()[2].json();
    assert!(last.to_string().contains("It says hi."), "{last}");
}

#[tokio::test]
async fn bad_requests_get_errors_and_the_connection_goes_on() {
    let (home, work) = setup();
    let server = TestServer::start(vec![text_turn(&["fine"])]).await;
    let mut child = acp(home.path(), work.path(), &server);
    let pick: Pick = |_| RequestPermissionOutcome::Cancelled;
    let workdir = work.path().to_path_buf();
    let reason = client(&mut child, pick, Arc::default(), async move |cx| {
        initialize(&cx).await?;
        // A session that does not exist, a relative cwd, a session that cannot be loaded.
        let unknown = cx
            .send_request(PromptRequest::new(SessionId::new("nope"), text("hi")))
            .block_task()
            .await;
        assert!(unknown.is_err());
        let relative = cx
            .send_request(NewSessionRequest::new("relative/dir"))
            .block_task()
            .await
            .unwrap_err();
        assert!(relative.to_string().contains("absolute"), "{relative}");
        let missing = cx
            .send_request(LoadSessionRequest::new(
                "20990101-000000-000000",
                workdir.clone(),
            ))
            .block_task()
            .await;
        assert!(missing.is_err());
        // The connection still works.
        let session = open(&cx, workdir).await?;
        let done = ask(&cx, session.session_id, "hi").await?;
        Ok(done.stop_reason)
    })
    .await;
    assert_eq!(reason, StopReason::EndTurn);
}

#[tokio::test]
async fn garbage_and_a_huge_line_are_dropped_and_the_next_request_is_answered() {
    let (home, work) = setup();
    let server = TestServer::start(vec![]).await;
    let mut child = acp(home.path(), work.path(), &server);
    let mut stdin = child.stdin.take().unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap()).lines();
    stdin.write_all(b"not json at all\n").await.unwrap();
    // 17 MiB without a newline until its end: over the bound, read and dropped.
    let chunk = vec![b'x'; 1 << 20];
    for _ in 0..17 {
        stdin.write_all(&chunk).await.unwrap();
    }
    stdin.write_all(b"\n").await.unwrap();
    let init = r#"{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}"#;
    stdin
        .write_all(format!("{init}\n").as_bytes())
        .await
        .unwrap();
    let mut answered = Vec::new();
    let found = tokio::time::timeout(Duration::from_secs(30), async {
        while let Some(line) = out.next_line().await.unwrap() {
            let value: Value = serde_json::from_str(&line).unwrap();
            let done = value["id"] == 7;
            answered.push(value);
            if done {
                return true;
            }
        }
        false
    })
    .await
    .expect("no answer to initialize");
    assert!(found, "{answered:?}");
    // The garbage got a parse error; the huge line nothing (it was never read whole).
    assert_eq!(answered[0]["error"]["code"], -32700, "{answered:?}");
    assert_eq!(answered.len(), 2, "{answered:?}");
    assert_eq!(answered[1]["result"]["agentInfo"]["name"], "taco");
    // The client closing its end ends taco.
    drop(stdin);
    let status = tokio::time::timeout(Duration::from_secs(10), child.wait())
        .await
        .expect("taco acp outlived its client")
        .unwrap();
    assert!(status.success(), "{status:?}");
    let mut err = String::new();
    tokio::io::AsyncReadExt::read_to_string(child.stderr.as_mut().unwrap(), &mut err)
        .await
        .unwrap();
    assert!(err.contains("a line of more than 16 MiB"), "{err}");
}

#[tokio::test]
async fn the_clients_mcp_server_serves_the_session_and_the_checklist_is_the_plan() {
    let (home, work) = setup();
    let server = TestServer::start(vec![
        tool_turn("e", "mcp__mine__echo", r#"{"text": "hi"}"#),
        tool_turn(
            "t",
            "todo_write",
            r#"{"todos": [{"content": "Echo", "status": "completed", "activeForm": "Echoing"}, {"content": "Report", "status": "in_progress", "activeForm": "Reporting"}]}"#,
        ),
        text_turn(&["done"]),
    ])
    .await;
    let mut child = acp(home.path(), work.path(), &server);
    let seen: Shared = Arc::default();
    let pick: Pick = |r| pick_id(r, "once");
    let workdir = work.path().to_path_buf();
    let fixture = crate::support::mcp::fixture();
    let reason = client(&mut child, pick, Arc::clone(&seen), async move |cx| {
        initialize(&cx).await?;
        let mine = McpServer::Stdio(McpServerStdio::new("mine", fixture));
        let session = cx
            .send_request(NewSessionRequest::new(workdir).mcp_servers(vec![mine]))
            .block_task()
            .await?;
        let done = ask(&cx, session.session_id, "echo and plan").await?;
        Ok(done.stop_reason)
    })
    .await;
    assert_eq!(reason, StopReason::EndTurn);
    let seen = seen.lock().unwrap();
    // The server's tool asked first (MCP tools ask by default) and ran.
    assert_eq!(seen.asked.len(), 1, "{:?}", seen.updates);
    assert_eq!(&*seen.asked[0].tool_call.tool_call_id.0, "e");
    let echoed = seen.updates.iter().any(|(_, u)| match u {
        SessionUpdate::ToolCallUpdate(c) if &*c.tool_call_id.0 == "e" => {
            c.fields.status == Some(ToolCallStatus::Completed)
                && format!("{:?}", c.fields.content).contains("hi")
        }
        _ => false,
    });
    assert!(echoed, "{:?}", seen.updates);
    // The checklist reached the client as its plan.
    let plan = seen
        .updates
        .iter()
        .find_map(|(_, u)| match u {
            SessionUpdate::Plan(plan) => Some(plan),
            _ => None,
        })
        .expect("a plan");
    let entries: Vec<(&str, PlanEntryStatus)> = plan
        .entries
        .iter()
        .map(|e| (e.content.as_str(), e.status.clone()))
        .collect();
    assert_eq!(
        entries,
        [
            ("Echo", PlanEntryStatus::Completed),
            ("Report", PlanEntryStatus::InProgress)
        ]
    );
}

#[tokio::test]
async fn a_client_that_goes_mid_run_ends_taco_and_leaves_a_loadable_session() {
    let (home, work) = setup();
    let server = TestServer::start(vec![
        Reply::sse(vec![
            "data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"…\"}}]}\n\n"
                .to_string(),
        ])
        .forever(),
    ])
    .await;
    let mut child = acp(home.path(), work.path(), &server);
    let mut stdin = child.stdin.take().unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut say = async |line: String| {
        stdin
            .write_all(format!("{line}\n").as_bytes())
            .await
            .unwrap();
    };
    let mut next = async || -> Value {
        let line = tokio::time::timeout(Duration::from_secs(30), out.next_line())
            .await
            .expect("taco acp said nothing")
            .unwrap()
            .expect("taco acp closed its output");
        serde_json::from_str(&line).unwrap()
    };
    say(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}"#.into()).await;
    assert_eq!(next().await["id"], 1);
    let new = json!({"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd": work.path(), "mcpServers": []}});
    say(new.to_string()).await;
    let created = next().await;
    let id = created["result"]["sessionId"].as_str().unwrap().to_string();
    let prompt = json!({"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId": id, "prompt": [{"type": "text", "text": "go"}]}});
    say(prompt.to_string()).await;
    // The answer streams; then the client is gone.
    assert_eq!(next().await["method"], "session/update");
    drop(stdin);
    drop(out);
    let status = tokio::time::timeout(Duration::from_secs(15), child.wait())
        .await
        .expect("taco acp outlived its client")
        .unwrap();
    assert!(status.code().is_some(), "{status:?}");
    // Every line of the session is whole and it loads.
    let file = crate::support::cli::sessions_dir(home.path()).join(format!("{id}.jsonl"));
    let loaded = taco::session::load(&file).expect("the session loads");
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.contains(r#""type":"run_started""#), "{text}");
    assert!(text.contains(r#""type":"cancelled""#), "{text}");
}

#[tokio::test]
async fn a_client_that_offers_its_buffers_is_read_inside_the_workspace_only() {
    for editor_has_it in [true, false] {
        let (home, work) = setup();
        std::fs::write(home.path().join("outside.txt"), "secret\n").unwrap();
        let server = TestServer::start(vec![
            tool_turns(&[
                ("r1", "read_file", r#"{"path": "hello.txt"}"#),
                ("r2", "read_file", r#"{"path": "../outside.txt"}"#),
            ]),
            text_turn(&["read"]),
        ])
        .await;
        let mut child = acp(home.path(), work.path(), &server);
        let root = work.path().canonicalize().unwrap();
        let seen: Shared = Arc::default();
        if editor_has_it {
            let mut seen = seen.lock().unwrap();
            seen.editor
                .insert(root.join("hello.txt"), "an unsaved edit\n".into());
        }
        let pick: Pick = |r| pick_id(r, "once");
        let workdir = work.path().to_path_buf();
        client(&mut child, pick, Arc::clone(&seen), async move |cx| {
            let reads = FileSystemCapabilities::new().read_text_file(true);
            initialize_as(&cx, ClientCapabilities::new().fs(reads)).await?;
            let session = open(&cx, workdir).await?;
            ask(&cx, session.session_id, "read").await?;
            Ok(())
        })
        .await;
        let seen = seen.lock().unwrap();
        // Only the file inside the workspace was asked for, by its real path.
        assert_eq!(seen.read, [root.join("hello.txt")]);
        let sent = server.requests()[1].json().to_string();
        if editor_has_it {
            assert!(sent.contains("an unsaved edit"), "{sent}");
        } else {
            // The editor could not say: the disk did.
            assert!(sent.contains("hi there"), "{sent}");
        }
        assert!(!sent.contains("secret"), "{sent}");
    }
}

#[tokio::test]
async fn a_client_opening_sessions_without_end_is_refused_past_the_bound() {
    let (home, work) = setup();
    let server = TestServer::start(vec![]).await;
    let mut child = acp(home.path(), work.path(), &server);
    let pick: Pick = |_| RequestPermissionOutcome::Cancelled;
    let workdir = work.path().to_path_buf();
    let (opened, refused) = client(&mut child, pick, Arc::default(), async move |cx| {
        initialize(&cx).await?;
        let mut opened = 0;
        for _ in 0..taco::acp::agent::MAX_SESSIONS {
            open(&cx, workdir.clone()).await?;
            opened += 1;
        }
        let refused = cx
            .send_request(NewSessionRequest::new(workdir))
            .block_task()
            .await
            .unwrap_err();
        Ok((opened, refused.to_string()))
    })
    .await;
    assert_eq!(opened, taco::acp::agent::MAX_SESSIONS);
    assert!(refused.contains("sessions open"), "{refused}");
}

#[tokio::test]
async fn modes_switch_and_plan_mode_asks_the_client_to_approve_the_plan() {
    let (home, work) = setup();
    let server = TestServer::start(vec![
        text_turn(&["1. Write notes.md"]),
        text_turn(&["Done as planned."]),
    ])
    .await;
    let mut child = acp(home.path(), work.path(), &server);
    let seen: Shared = Arc::default();
    let pick: Pick = |r| pick_id(r, "approve");
    let workdir = work.path().to_path_buf();
    let (offered, reason) = client(&mut child, pick, Arc::clone(&seen), async move |cx| {
        initialize(&cx).await?;
        let session = open(&cx, workdir).await?;
        let modes = session.modes.clone().expect("modes offered");
        cx.send_request(SetSessionModeRequest::new(
            session.session_id.clone(),
            "plan",
        ))
        .block_task()
        .await?;
        let bad = cx
            .send_request(SetSessionModeRequest::new(
                session.session_id.clone(),
                "yolo",
            ))
            .block_task()
            .await;
        assert!(bad.is_err());
        let done = ask(&cx, session.session_id, "plan the notes").await?;
        Ok((modes, done.stop_reason))
    })
    .await;
    assert_eq!(reason, StopReason::EndTurn);
    assert_eq!(&*offered.current_mode_id.0, "ask");
    let seen = seen.lock().unwrap();
    // The plan was put to the client as a permission, and approving it carried it out.
    assert_eq!(seen.asked.len(), 1);
    let review = &seen.asked[0];
    assert!(
        review.tool_call.tool_call_id.0.starts_with("plan/"),
        "{review:?}"
    );
    let options: Vec<&str> = review.options.iter().map(|o| &*o.option_id.0).collect();
    assert_eq!(options, ["approve", "approve-auto-edit", "keep-planning"]);
    let modes: Vec<&str> = seen
        .updates
        .iter()
        .filter_map(|(_, u)| match u {
            SessionUpdate::CurrentModeUpdate(m) => Some(&*m.current_mode_id.0),
            _ => None,
        })
        .collect();
    assert_eq!(modes, ["plan", "ask"]);
    let carried = server.requests()[1].json().to_string();
    assert!(carried.contains("approved the plan"), "{carried}");
    assert_eq!(
        message_text(&seen.updates),
        "1. Write notes.mdDone as planned."
    );
}
