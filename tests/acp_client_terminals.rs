//! The agent's terminals under taco as an ACP client (issue 32): a scripted agent asks for
//! `terminal/create`, `output`, `wait_for_exit`, `kill` and `release`; taco runs each command
//! in its sandbox, in the workspace, with secrets masked and the output bounded, shows it as
//! a frame under the agent's call, and kills whatever still runs when the turn ends or taco
//! is done. A sandbox the machine cannot give, a cwd outside the workspace, too many
//! terminals and bad variables are refused, said, and the connection goes on.

use crate::support;

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::acp_drive::{Drive, dirs, event_kinds, is, session, shows};
use support::app::screen_text;
use support::processes::running_with;
use taco::acp::client;
use taco::engine::Engine;
use taco::event::EventData;
use taco::sandbox::{Sandbox, SandboxMode, TEST_SWITCH};
use taco::secrets::Secrets;
use taco::tools::ToolSettings;

const SECRET: &str = "sk-terminal-secret-4242";

/// taco's shell settings for `root`: the sandbox enforced (this kernel must give it, as
/// `tests/sandbox.rs` requires), one secret known.
fn sandboxed(root: &Path) -> Arc<ToolSettings> {
    let sandbox = Sandbox::resolve(
        SandboxMode::WorkspaceWrite,
        false,
        Vec::new(),
        root,
        &|_| None,
    );
    Arc::new(ToolSettings {
        sandbox,
        secrets: Arc::new(Secrets::new([SECRET.to_string()])),
        ..ToolSettings::default()
    })
}

fn drive(
    steps: Vec<Value>,
    root: &Path,
    sessions: &Path,
    tools: Option<Arc<ToolSettings>>,
) -> Drive {
    let options = client::Options {
        init_wait: Duration::from_secs(5),
        auth: None,
        terminals: tools,
    };
    Drive::with(steps, root, sessions, options)
}

fn opening() -> Vec<Value> {
    vec![
        json!({"expect": "initialize"}),
        json!({"expect": "session/new"}),
        json!({"expect": "session/prompt"}),
    ]
}

fn request(method: &str, params: Value) -> Value {
    json!({"request": method, "params": params})
}

/// Waits until no process has `marker` in its command line; the ones left, if any.
async fn gone(marker: &str) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(5);
    while !running_with(marker).is_empty() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    running_with(marker)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_terminal_runs_in_the_sandbox_in_the_workspace_and_shows_under_its_call() {
    // Outside the temp dir, which the sandbox lets commands write.
    let base = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let base_path = base.path().canonicalize().unwrap();
    let (root, escaped) = (base_path.join("ws"), base_path.join("escaped"));
    std::fs::create_dir_all(root.join("sub")).unwrap();
    let sessions = tempfile::tempdir().unwrap();
    // The command is a shell line; the arguments follow it verbatim.
    let line = format!(
        "echo made > made.txt; pwd; echo {SECRET}; touch {} 2>&1; printf 'arg=%s\\n'",
        escaped.display()
    );
    let mut steps = opening();
    steps.extend([
        json!({"update": {"sessionUpdate": "tool_call", "toolCallId": "call-1",
            "title": "Run the checks", "kind": "execute", "status": "in_progress"}}),
        request(
            "terminal/create",
            json!({"command": line, "args": ["one two"], "cwd": root.join("sub")}),
        ),
        request("terminal/wait_for_exit", json!({"terminalId": "$last"})),
        request("terminal/output", json!({"terminalId": "$last"})),
        json!({"update": {"sessionUpdate": "tool_call_update", "toolCallId": "call-1",
            "status": "completed", "content": [{"type": "terminal", "terminalId": "term-1"}]}}),
        request("terminal/release", json!({"terminalId": "$last"})),
        request("terminal/output", json!({"terminalId": "$last"})),
        json!({"update": {"sessionUpdate": "agent_message_chunk",
            "content": {"type": "text", "text": "Checked."}}}),
        json!({"end": "end_turn"}),
    ]);
    let mut d = drive(steps, &root, sessions.path(), Some(sandboxed(&root)));
    d.submit("run the checks");
    d.until("the answer", is("final")).await;

    let seen = d.script_seen.all();
    assert_eq!(
        seen[0]["params"]["clientCapabilities"]["terminal"],
        json!(true),
        "{:#}",
        seen[0]
    );
    let answers = d.script_seen.answers();
    assert_eq!(
        answers[0]["result"]["terminalId"],
        json!("term-1"),
        "{answers:#?}"
    );
    assert_eq!(answers[1]["result"]["exitCode"], json!(0), "{answers:#?}");
    let output = answers[2]["result"]["output"].as_str().unwrap();
    // It ran in `sub`, its argument verbatim, the secret masked, the write outside refused.
    assert!(
        output.contains(&format!("{}\n", root.join("sub").display())),
        "{output}"
    );
    assert!(output.contains("arg=one two\n"), "{output}");
    assert!(!output.contains(SECRET), "{output}");
    assert!(output.contains("touch: "), "{output}");
    assert_eq!(answers[2]["result"]["truncated"], json!(false));
    assert!(root.join("sub/made.txt").exists());
    assert!(
        output.contains(&format!("{}'", escaped.display())),
        "{output}"
    );
    assert!(
        !escaped.exists(),
        "the sandbox let the terminal write outside"
    );
    // Released: gone for the agent.
    assert!(
        answers[4]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("no terminal term-1")
    );

    // A frame under the agent's call, its output in the payload.
    let call = d
        .events
        .iter()
        .find_map(|e| match &e.data {
            EventData::ToolCall {
                name, parent, id, ..
            } if name == "terminal" => Some((id.clone(), parent.clone())),
            _ => None,
        })
        .expect("a terminal call");
    assert_eq!(call.1.as_deref(), Some("call-1"));
    let result = d
        .events
        .iter()
        .find_map(|e| match &e.data {
            EventData::ToolResult { id, ok, result, .. } if *id == call.0 => {
                Some((*ok, result.clone().unwrap()))
            }
            _ => None,
        })
        .expect("the terminal's result");
    assert!(result.0);
    assert!(result.1["output"].as_str().unwrap().contains("arg=one two"));
    assert!(!result.1.to_string().contains(SECRET));

    let terminal = d.h.screen(160, 40);
    shows(
        &screen_text(&terminal),
        &["Run the checks", "terminal", "Checked."],
    );
    insta::assert_snapshot!("acp_terminal_under_its_call", terminal.backend());

    Box::new(d.engine).shutdown(Duration::from_secs(2)).await;
    let loaded = session(sessions.path());
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    let kinds = event_kinds(&loaded);
    assert_eq!(
        kinds.iter().filter(|k| **k == "tool_call").count(),
        2,
        "{kinds:?}"
    );
    let text = std::fs::read_to_string(
        std::fs::read_dir(sessions.path())
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path(),
    )
    .unwrap();
    assert!(!text.contains(SECRET));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn endless_output_is_kept_within_the_bound_and_the_command_dies_with_the_turn() {
    let (_work, root, sessions) = dirs();
    let marker = format!("taco-terminal-endless-{}", std::process::id());
    let mut steps = opening();
    steps.extend([
        request(
            "terminal/create",
            json!({"command": format!("yes {marker}"), "outputByteLimit": 1000}),
        ),
        json!({"sleep_ms": 400}),
        request("terminal/output", json!({"terminalId": "$last"})),
        json!({"end": "end_turn"}),
    ]);
    let mut d = drive(steps, &root, sessions.path(), Some(sandboxed(&root)));
    d.submit("print forever");
    d.until("the answer", is("final")).await;
    let answers = d.script_seen.answers();
    let output = answers[1]["result"]["output"].as_str().unwrap();
    assert!(
        output.len() <= 1000 && output.len() > 900,
        "{}",
        output.len()
    );
    assert!(output.ends_with('\n') || output.contains(&marker));
    assert_eq!(answers[1]["result"]["truncated"], json!(true));
    assert_eq!(answers[1]["result"]["exitStatus"], Value::Null);
    // The turn ended with it running: its call ends cancelled, the command is killed.
    let ended = d.events.iter().any(|e| {
        matches!(&e.data, EventData::ToolResult { name, error: Some(error), .. }
            if name == "terminal" && error.contains("the turn ended"))
    });
    assert!(ended, "{:#?}", d.events);
    assert_eq!(gone(&marker).await, Vec::<String>::new());
    Box::new(d.engine).shutdown(Duration::from_secs(2)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_terminal_keeps_its_output_and_taco_leaves_none_running() {
    let (_work, root, sessions) = dirs();
    let marker = format!("taco-terminal-kill-{}", std::process::id());
    let mut steps = opening();
    steps.extend([
        request(
            "terminal/create",
            json!({"command": format!("echo started; sleep 100; : {marker}-a")}),
        ),
        json!({"sleep_ms": 200}),
        request("terminal/kill", json!({"terminalId": "$last"})),
        request("terminal/wait_for_exit", json!({"terminalId": "$last"})),
        request("terminal/output", json!({"terminalId": "$last"})),
        request(
            "terminal/create",
            json!({"command": format!("sleep 200; : {marker}-b")}),
        ),
        json!({"hang": true}),
    ]);
    let mut d = drive(steps, &root, sessions.path(), Some(sandboxed(&root)));
    d.submit("start and stop");
    d.until("the second terminal", |e| {
        matches!(&e.data, EventData::ToolCall { name, id, .. } if name == "terminal" && id.ends_with("term-2"))
    })
    .await;
    let answers = d.script_seen.answers();
    assert_eq!(
        answers[2]["result"]["signal"],
        json!("SIGKILL"),
        "{answers:#?}"
    );
    assert_eq!(answers[3]["result"]["output"], json!("started\n"));
    assert_eq!(gone(&format!("{marker}-a")).await, Vec::<String>::new());
    // Running (its shell, and for an instant a child it forked before the child's exec).
    assert!(!running_with(&format!("{marker}-b")).is_empty());
    // taco is done mid-turn: the second one dies with it.
    Box::new(d.engine).shutdown(Duration::from_secs(2)).await;
    assert_eq!(gone(&marker).await, Vec::<String>::new());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn terminals_past_the_rules_are_refused_and_the_session_goes_on() {
    let (_work, root, sessions) = dirs();
    let marker = format!("taco-terminal-many-{}", std::process::id());
    let mut steps = opening();
    steps.extend([
        request("terminal/create", json!({"command": "ls", "cwd": "/"})),
        request("terminal/create", json!({"command": "ls", "cwd": "sub"})),
        request(
            "terminal/create",
            json!({"command": "ls", "env": [{"name": "A=B", "value": "x"}]}),
        ),
        request("terminal/output", json!({"terminalId": "term-99"})),
    ]);
    for _ in 0..client::terminals::MAX_TERMINALS {
        steps.push(request(
            "terminal/create",
            json!({"command": format!("sleep 100; : {marker}")}),
        ));
    }
    steps.push(request("terminal/create", json!({"command": "ls"})));
    steps.push(json!({"update": {"sessionUpdate": "agent_message_chunk",
        "content": {"type": "text", "text": "Still here."}}}));
    steps.push(json!({"end": "end_turn"}));
    let mut d = drive(steps, &root, sessions.path(), Some(sandboxed(&root)));
    d.submit("try everything");
    d.until("the answer", is("final")).await;
    let answers = d.script_seen.answers();
    let error = |i: usize| {
        answers[i]["error"]["message"]
            .as_str()
            .unwrap_or_else(|| panic!("no error: {:#}", answers[i]))
            .to_string()
    };
    assert!(error(0).contains("outside"), "{}", error(0));
    assert!(error(1).contains("must be absolute"), "{}", error(1));
    assert!(error(2).contains("is not a variable"), "{}", error(2));
    assert!(error(3).contains("no terminal term-99"), "{}", error(3));
    let last = 4 + client::terminals::MAX_TERMINALS;
    assert!(
        error(last).contains("terminals are open"),
        "{}",
        error(last)
    );
    // Said in the chat too.
    let text = screen_text(&d.h.screen(120, 40));
    assert!(text.contains("terminal was refused"), "{text}");
    assert!(text.contains("Still here."), "{text}");
    assert_eq!(gone(&marker).await, Vec::<String>::new());
    Box::new(d.engine).shutdown(Duration::from_secs(2)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_sandbox_or_an_offer_no_terminal_runs() {
    let (_work, root, sessions) = dirs();
    let marker = root.join("ran");
    let line = format!("touch {}", marker.display());
    let steps = |_: ()| {
        let mut steps = opening();
        steps.extend([
            request("terminal/create", json!({"command": line})),
            json!({"end": "end_turn"}),
        ]);
        steps
    };
    // The kernel cannot sandbox (the test switch): refused, saying how to opt out.
    let switch = |name: &str| (name == TEST_SWITCH).then(|| "1".to_string());
    let absent = Sandbox::resolve(
        SandboxMode::WorkspaceWrite,
        false,
        Vec::new(),
        &root,
        &switch,
    );
    let tools = Arc::new(ToolSettings {
        sandbox: absent,
        ..ToolSettings::default()
    });
    let mut d = drive(steps(()), &root, sessions.path(), Some(tools));
    d.submit("run it");
    d.until("the answer", is("final")).await;
    let answers = d.script_seen.answers();
    let message = answers[0]["error"]["message"].as_str().unwrap();
    assert!(message.contains("only in its sandbox"), "{message}");
    assert!(message.contains("mode = \\\"off\\\"") || message.contains("mode = \"off\""));
    Box::new(d.engine).shutdown(Duration::from_secs(2)).await;

    // Not offered: the capability says so and a request is refused.
    let sessions = tempfile::tempdir().unwrap();
    let mut d = drive(steps(()), &root, sessions.path(), None);
    d.submit("run it");
    d.until("the answer", is("final")).await;
    let seen = d.script_seen.all();
    assert_eq!(
        seen[0]["params"]["clientCapabilities"]["terminal"],
        json!(false)
    );
    let answers = d.script_seen.answers();
    assert!(
        answers[0]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("did not offer terminals")
    );
    Box::new(d.engine).shutdown(Duration::from_secs(2)).await;
    assert!(!marker.exists());
}
