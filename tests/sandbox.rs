//! The sandbox of shell commands (issue 17) against the real kernel, in temp dirs: writes
//! inside the workspace and the temp dir work, writes elsewhere are sandbox denials, child
//! processes are bound too, TCP is refused without the network (the server sees nothing),
//! `read-only` writes nothing, leaving the sandbox is asked about every time, and a kernel
//! without Landlock (forced by the tests' switch) makes every shell call ask.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed unwrap is a failed test

use std::collections::VecDeque;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use taco::event::{Confinement, Decision, EventData, Scope, ToolStatus};
use taco::orchestrator::approval::{ApprovalAnswer, ApprovalRequest, Approver};
use taco::orchestrator::{Orchestrator, Outcome};
use taco::sandbox::{Sandbox, SandboxMode, Support, TEST_SWITCH};
use taco::tools::builtin::Shell;
use taco::tools::{Tool, ToolContext, ToolError, ToolRegistry, ToolReply, ToolSettings};
use tokio_util::sync::CancellationToken;

use crate::support;
use support::sandboxed::context;
use support::scripted::*;

/// A workspace `<root>/ws` beside `<root>/sibling`, where `<root>` is outside the system
/// temp dir (which sandboxed commands may write), under the build's own temp dir.
struct Dirs {
    _root: tempfile::TempDir,
    ws: PathBuf,
    sibling: PathBuf,
}

fn dirs() -> Dirs {
    let root = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let base = root.path().canonicalize().unwrap();
    assert!(
        !base.starts_with(std::env::temp_dir()),
        "the test dirs must lie outside the temp dir"
    );
    let (ws, sibling) = (base.join("ws"), base.join("sibling"));
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::create_dir_all(&sibling).unwrap();
    Dirs {
        _root: root,
        ws,
        sibling,
    }
}

/// The sandbox in `mode` for `ws`, which this kernel must be able to enforce.
fn enforced(mode: SandboxMode, network: bool, ws: &Path) -> Sandbox {
    let sandbox = Sandbox::resolve(mode, network, Vec::new(), ws, &|_| None);
    assert!(
        matches!(sandbox.support, Support::Available { .. }),
        "this kernel cannot sandbox: {:?}",
        sandbox.support
    );
    sandbox
}

/// How a shell command ended: its result, or the result of a sandbox denial.
enum Ran {
    Done(Value),
    Denied(Value),
}

async fn shell(ctx: &ToolContext, command: &str) -> Ran {
    match Shell.call(json!({ "command": command }), ctx).await {
        Ok(ToolReply::Done(value)) => Ran::Done(value),
        Err(ToolError::SandboxDenied(value)) => Ran::Denied(*value),
        other => panic!("{command}: {other:?}"),
    }
}

fn ok(ran: Ran, command: &str) -> Value {
    match ran {
        Ran::Done(value) if value["exit_code"] == 0 => value,
        Ran::Done(value) => panic!("{command} failed: {value}"),
        Ran::Denied(value) => panic!("{command} was denied: {value}"),
    }
}

fn denied(ran: Ran, command: &str) -> Value {
    match ran {
        Ran::Denied(value) => {
            assert_eq!(value["sandbox_denied"], json!(true), "{value}");
            let note = value["note"].as_str().unwrap();
            assert!(
                note.contains("\"unsandboxed\": true") && note.contains("workspace"),
                "{note}"
            );
            value
        }
        Ran::Done(value) => panic!("{command} was not a sandbox denial: {value}"),
    }
}

#[tokio::test]
async fn the_workspace_and_temp_are_writable_and_nothing_else_is() {
    let d = dirs();
    let ctx = context(&d.ws, enforced(SandboxMode::WorkspaceWrite, false, &d.ws));
    ok(
        shell(
            &ctx,
            "echo ok > inside.txt && mkdir -p sub && echo deep > sub/f",
        )
        .await,
        "inside",
    );
    assert_eq!(
        std::fs::read_to_string(d.ws.join("inside.txt")).unwrap(),
        "ok\n"
    );
    let temp = tempfile::tempdir().unwrap();
    let in_temp = temp.path().join("t.txt");
    let command = format!("echo t > '{}'", in_temp.display());
    ok(shell(&ctx, &command).await, &command);
    assert!(in_temp.exists(), "the temp dir is writable");
    // Reading outside is allowed.
    std::fs::write(d.sibling.join("keep.txt"), "kept\n").unwrap();
    let command = format!("cat '{}'", d.sibling.join("keep.txt").display());
    assert_eq!(
        ok(shell(&ctx, &command).await, &command)["stdout"],
        "kept\n"
    );

    let outside = d.sibling.join("out.txt");
    let keep = d.sibling.join("keep.txt");
    for command in [
        format!("echo x > '{}'", outside.display()),
        format!("rm '{}'", keep.display()),
        format!(": > '{}'", keep.display()),
        format!("mkdir '{}'", d.sibling.join("made").display()),
        format!("mv inside.txt '{}'", outside.display()),
    ] {
        let result = denied(shell(&ctx, &command).await, &command);
        assert_ne!(result["exit_code"], json!(0), "{command}: {result}");
    }
    assert!(!outside.exists() && !d.sibling.join("made").exists());
    assert_eq!(
        std::fs::read_to_string(&keep).unwrap(),
        "kept\n",
        "not removed or emptied"
    );
    assert!(d.ws.join("inside.txt").exists(), "not moved out");

    // A symlink in the workspace that leads out does not lead the write out.
    std::os::unix::fs::symlink(&d.sibling, d.ws.join("link")).unwrap();
    denied(shell(&ctx, "echo x > link/via-link.txt").await, "via link");
    assert!(!d.sibling.join("via-link.txt").exists());

    // $HOME, unless the home directory is itself writable (inside the temp dir).
    let home = std::env::var("HOME").map(PathBuf::from).unwrap();
    if !home.starts_with(std::env::temp_dir()) && !home.starts_with(&d.ws) {
        let probe = home.join(format!(".taco-sandbox-probe-{}", std::process::id()));
        let command = format!("echo x > '{}'", probe.display());
        let ran = shell(&ctx, &command).await;
        let escaped = probe.exists();
        let _ = std::fs::remove_file(&probe);
        assert!(!escaped, "wrote into $HOME");
        denied(ran, &command);
    }
}

#[tokio::test]
async fn child_processes_of_the_command_are_bound_too() {
    let d = dirs();
    let ctx = context(&d.ws, enforced(SandboxMode::WorkspaceWrite, false, &d.ws));
    let nested = d.sibling.join("nested.txt");
    let command = format!("sh -c 'sh -c \"echo x > {}\"'", nested.display());
    denied(shell(&ctx, &command).await, &command);
    assert!(!nested.exists());
    // A new session (setsid) does not leave the sandbox either.
    let detached = d.sibling.join("detached.txt");
    let command = format!("setsid sh -c 'echo x > {}'", detached.display());
    denied(shell(&ctx, &command).await, &command);
    assert!(!detached.exists());
    ok(
        shell(&ctx, "sh -c 'sh -c \"echo y > nested-inside.txt\"'").await,
        "nested inside",
    );
    assert!(d.ws.join("nested-inside.txt").exists());
}

/// `bash` opening a TCP connection to `port` on loopback.
fn connect(port: u16) -> String {
    format!("bash -c 'exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected'")
}

#[tokio::test]
async fn tcp_to_loopback_is_refused_without_the_network_and_works_with_it() {
    let d = dirs();
    let server = TcpListener::bind("127.0.0.1:0").unwrap();
    server.set_nonblocking(true).unwrap();
    let port = server.local_addr().unwrap().port();

    let ctx = context(&d.ws, enforced(SandboxMode::WorkspaceWrite, false, &d.ws));
    let result = denied(shell(&ctx, &connect(port)).await, "connect");
    assert!(
        result["stderr"]
            .as_str()
            .unwrap()
            .contains("Permission denied"),
        "{result}"
    );
    match server.accept() {
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
        other => panic!("the server saw a connection: {other:?}"),
    }

    let ctx = context(&d.ws, enforced(SandboxMode::WorkspaceWrite, true, &d.ws));
    let result = ok(shell(&ctx, &connect(port)).await, "connect with network");
    assert_eq!(result["stdout"], "connected\n");
    server.set_nonblocking(false).unwrap();
    assert!(server.accept().is_ok(), "the server saw the connection");
}

#[tokio::test]
async fn read_only_refuses_writes_in_the_workspace_too() {
    let d = dirs();
    std::fs::write(d.ws.join("existing.txt"), "there\n").unwrap();
    let ctx = context(&d.ws, enforced(SandboxMode::ReadOnly, false, &d.ws));
    denied(shell(&ctx, "echo x > new.txt").await, "write");
    denied(shell(&ctx, "rm existing.txt").await, "rm");
    assert!(!d.ws.join("new.txt").exists() && d.ws.join("existing.txt").exists());
    let read = ok(
        shell(&ctx, "cat existing.txt > /dev/null && cat existing.txt").await,
        "read",
    );
    assert_eq!(read["stdout"], "there\n");
}

#[tokio::test]
async fn with_the_sandbox_off_or_escalated_a_command_writes_anywhere() {
    let d = dirs();
    let off = Sandbox {
        mode: SandboxMode::Off,
        ..enforced(SandboxMode::WorkspaceWrite, false, &d.ws)
    };
    let ctx = context(&d.ws, off);
    let target = d.sibling.join("off.txt");
    ok(
        shell(&ctx, &format!("echo x > '{}'", target.display())).await,
        "off",
    );
    assert!(target.exists());

    let ctx = context(&d.ws, enforced(SandboxMode::WorkspaceWrite, false, &d.ws));
    let target = d.sibling.join("escalated.txt");
    let command = format!("echo x > '{}'", target.display());
    let args = json!({"command": command, "unsandboxed": true});
    let Ok(ToolReply::Done(result)) = Shell.call(args, &ctx).await else {
        panic!("the escalated call ran");
    };
    assert_eq!(result["exit_code"], 0, "{result}");
    assert!(target.exists());
}

/// Answers every approval for the session (the widest grant there is) and keeps what it
/// was asked.
#[derive(Default)]
struct Everything {
    asked: Vec<ApprovalRequest>,
}

impl Approver for Everything {
    fn decide<'a>(
        &'a mut self,
        batch: &'a [ApprovalRequest],
    ) -> BoxFuture<'a, Vec<ApprovalAnswer>> {
        self.asked.extend(batch.iter().cloned());
        let answers = vec![ApprovalAnswer::approve(Scope::Session); batch.len()];
        async move { answers }.boxed()
    }
}

/// Runs one request whose model makes each of `commands` (with `unsandboxed` where said)
/// in a turn of its own, with only `shell` offered.
async fn run_shell_turns(
    ws: &Path,
    sandbox: Sandbox,
    allow: &[&str],
    commands: &[(&str, bool)],
    approver: &mut dyn Approver,
) -> Vec<taco::event::Event> {
    let mut replies: VecDeque<Reply> = commands
        .iter()
        .enumerate()
        .map(|(i, (command, unsandboxed))| {
            let mut args = json!({ "command": command });
            if *unsandboxed {
                args["unsandboxed"] = json!(true);
            }
            Ok(calls(&[(&format!("s{i}"), "shell", args)]))
        })
        .collect();
    replies.push_back(Ok(text("done")));
    let mut registry = ToolRegistry::new();
    registry.register(Arc::new(Shell));
    let mut config = settings(20);
    config.workdir = ws.to_path_buf();
    config.tools = Arc::new(ToolSettings {
        sandbox,
        shell_allow: allow.iter().map(|s| s.to_string()).collect(),
        timeout: Duration::from_secs(20),
        ..ToolSettings::default()
    });
    let provider = Scripted::new(replies.into());
    let mut orch = Orchestrator::new(provider, Arc::new(registry), config);
    let mut events = Vec::new();
    let outcome = orch
        .run("go", &mut events, approver, &CancellationToken::new())
        .await;
    assert!(matches!(outcome, Outcome::Final { .. }), "{outcome:?}");
    events
}

/// `(call id, scope)` of each approval decided.
fn decisions(events: &[taco::event::Event]) -> Vec<(String, Scope)> {
    events
        .iter()
        .filter_map(|e| match &e.data {
            EventData::ApprovalDecided {
                id,
                decision: Decision::Approved,
                scope,
                ..
            } => Some((id.clone(), *scope)),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn leaving_the_sandbox_is_asked_every_time_even_under_a_session_grant() {
    let d = dirs();
    let sandbox = enforced(SandboxMode::WorkspaceWrite, false, &d.ws);
    let outside = d.sibling.join("x.txt");
    let write_out = format!("echo x > '{}'", outside.display());
    let mut approver = Everything::default();
    let events = run_shell_turns(
        &d.ws,
        sandbox,
        &[],
        &[
            ("echo a > a.txt", false), // asked, approved for the session
            (&write_out, false),       // runs under the grant, refused by the sandbox
            (&write_out, true),        // asked again: run unsandboxed?
            ("echo b > b.txt", false), // the session grant still holds
            (&write_out, true),        // asked again: the escalation granted nothing
        ],
        &mut approver,
    )
    .await;
    let asked: Vec<(&str, Option<Confinement>)> = approver
        .asked
        .iter()
        .map(|r| (r.id.as_str(), r.sandbox))
        .collect();
    let sandboxed = Confinement::Sandboxed {
        mode: SandboxMode::WorkspaceWrite,
        network: false,
    };
    assert_eq!(
        asked,
        [
            ("s0", Some(sandboxed)),
            ("s2", Some(Confinement::Unsandboxed)),
            ("s4", Some(Confinement::Unsandboxed)),
        ]
    );
    assert_eq!(
        decisions(&events),
        [
            ("s0".to_string(), Scope::Session),
            ("s2".to_string(), Scope::Once),
            ("s4".to_string(), Scope::Once),
        ],
        "an escalation's answer is for that call alone"
    );
    let statuses: Vec<ToolStatus> = statuses(&events).into_iter().map(|(_, s, _)| s).collect();
    assert_eq!(
        statuses,
        [
            ToolStatus::Ok,
            ToolStatus::SandboxDenied,
            ToolStatus::Ok,
            ToolStatus::Ok,
            ToolStatus::Ok
        ]
    );
    assert!(
        outside.exists(),
        "the approved escalation ran outside the sandbox"
    );
    // The trace says so: the call and its approval carry how it runs.
    let escalated = events.iter().any(|e| {
        matches!(&e.data, EventData::ApprovalRequested { id, sandbox: Some(Confinement::Unsandboxed), .. } if id == "s2")
    });
    assert!(escalated);
    let denial = events.iter().find_map(|e| match &e.data {
        EventData::ToolResult { id, result, .. } if id == "s1" => result.clone(),
        _ => None,
    });
    assert_eq!(denial.unwrap()["sandbox_denied"], json!(true));
}

#[tokio::test]
async fn without_landlock_every_shell_call_is_asked_and_no_grant_covers_it() {
    let d = dirs();
    let switch = |name: &str| (name == TEST_SWITCH).then(|| "1".to_string());
    let sandbox = Sandbox::resolve(
        SandboxMode::WorkspaceWrite,
        false,
        Vec::new(),
        &d.ws,
        &switch,
    );
    assert!(sandbox.asks_every_call());
    assert!(sandbox.fallback_notice().unwrap().contains(TEST_SWITCH));
    let mut approver = Everything::default();
    let events = run_shell_turns(
        &d.ws,
        sandbox,
        &["echo"], // an allow rule does not cover it either
        &[("echo a > a.txt", false), ("echo b > b.txt", false)],
        &mut approver,
    )
    .await;
    let asked: Vec<(&str, Option<Confinement>)> = approver
        .asked
        .iter()
        .map(|r| (r.id.as_str(), r.sandbox))
        .collect();
    assert_eq!(
        asked,
        [
            ("s0", Some(Confinement::Unavailable)),
            ("s1", Some(Confinement::Unavailable))
        ]
    );
    assert!(approver.asked.iter().all(ApprovalRequest::once_only));
    assert_eq!(
        decisions(&events),
        [
            ("s0".to_string(), Scope::Once),
            ("s1".to_string(), Scope::Once)
        ]
    );
}

#[tokio::test]
async fn a_sandboxed_mcp_server_runs_confined_and_one_the_kernel_cannot_confine_is_not_started() {
    use taco::mcp::config::McpConfig;
    use taco::mcp::{McpHub, StartContext, Status};
    let d = dirs();
    // The server's own command writes outside the workspace before it becomes the server.
    let start = |sandbox: bool, marker: &Path| {
        let script = format!(
            "echo x > '{}'; exec '{}'",
            marker.display(),
            support::mcp::fixture().display()
        );
        let text = format!(
            "[servers.fixture]\ncommand = \"sh\"\nargs = [\"-c\", {script:?}]\nsandbox = {sandbox}\n"
        );
        let config: McpConfig = toml::from_str(&text).unwrap();
        taco::mcp::config::servers(&config).unwrap()
    };
    let hub_with = |specs, sandbox: Sandbox| {
        McpHub::start(
            specs,
            StartContext {
                workdir: d.ws.clone(),
                settings: Arc::new(ToolSettings {
                    sandbox,
                    ..ToolSettings::default()
                }),
                notices: None,
                max_tools: taco::mcp::config::DEFAULT_MAX_TOOLS,
            },
        )
    };
    let confined = d.sibling.join("confined.txt");
    let hub = hub_with(
        start(true, &confined),
        enforced(SandboxMode::WorkspaceWrite, false, &d.ws),
    );
    tokio::time::timeout(Duration::from_secs(20), hub.settled())
        .await
        .unwrap();
    let view = hub.view();
    assert_eq!(view[0].status, Status::Ready, "{:?}", view[0].stderr);
    assert!(
        view[0].transport.ends_with(", sandboxed"),
        "{}",
        view[0].transport
    );
    assert!(
        !confined.exists(),
        "the server's process could write outside"
    );
    hub.shutdown();

    let free = d.sibling.join("free.txt");
    let hub = hub_with(
        start(false, &free),
        enforced(SandboxMode::WorkspaceWrite, false, &d.ws),
    );
    tokio::time::timeout(Duration::from_secs(20), hub.settled())
        .await
        .unwrap();
    assert!(
        free.exists(),
        "a server without sandbox = true is not confined"
    );
    hub.shutdown();

    let switch = |name: &str| (name == TEST_SWITCH).then(|| "1".to_string());
    let absent = Sandbox::resolve(
        SandboxMode::WorkspaceWrite,
        false,
        Vec::new(),
        &d.ws,
        &switch,
    );
    let never = d.sibling.join("never.txt");
    let hub = hub_with(start(true, &never), absent);
    tokio::time::timeout(Duration::from_secs(20), hub.settled())
        .await
        .unwrap();
    let view = hub.view();
    let Status::Failed(why) = &view[0].status else {
        panic!("started without its sandbox: {:?}", view[0].status);
    };
    assert!(why.contains("sandbox is unavailable"), "{why}");
    assert!(!never.exists(), "it never ran");
    hub.shutdown();
}
