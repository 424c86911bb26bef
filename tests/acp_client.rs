//! taco as an ACP client (issue 32): a scripted agent (`support::acp_script`, its steps from
//! `tests/fixtures/acp/`) drives the real `AcpEngine` over in-memory pipes, and the engine's
//! events drive the TUI's app: the permission dialog, the stack, the timeline and the
//! checklist are snapshots; the session file is read back. Hostile agents (dying, malformed
//! lines, a line over the bound, silence at initialize, ignoring a cancel, a flood) end
//! bounded and said.

use crate::support;

use std::time::{Duration, Instant};

use ratatui::crossterm::event::KeyCode;
use serde_json::{Value, json};
use support::acp_drive::{Drive, STEP, dirs, event_kinds, is, session, shows};
use support::acp_script;
use support::app::{Harness, screen_text};
use taco::acp::client;
use taco::engine::{Engine, next_event};
use taco::event::{Event, EventData};
use taco::orchestrator::task::Op;
use taco::recorder::Recorder;
use taco::session::SessionKind;
use taco::tui::app::{App, AppInfo, Command};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agents_write_is_approved_in_the_dialog_and_shown_in_every_pane() {
    let (_work, root, sessions) = dirs();
    let steps = acp_script::steps("write_approved.jsonl", &root);
    let mut d = Drive::new(steps, &root, sessions.path(), Duration::from_secs(5));
    d.submit("write a greeting to hello.txt");
    d.until("the approval", is("approval_requested")).await;

    // The dialog: taco's keys, the agent's options listed with the key that picks each, the
    // diff of the write.
    let terminal = d.h.screen(120, 40);
    let text = screen_text(&terminal);
    shows(
        &text,
        &[
            "scripted asks (ACP)",
            "y: Allow",
            "a: Always Allow",
            "n: Reject",
            "+hello",
        ],
    );
    insta::assert_snapshot!("acp_permission_dialog", terminal.backend());
    assert!(!root.join("hello.txt").exists());

    let mut commands = d.h.key(KeyCode::Char('y'));
    commands.extend(d.h.key(KeyCode::Enter));
    d.forward(commands);
    d.until("the answer", is("final")).await;

    // The agent got the option `y` picks, and its write went through taco's workspace.
    let answers = d.script_seen.answers();
    assert_eq!(
        answers[0]["result"]["outcome"],
        json!({"outcome": "selected", "optionId": "allow"}),
        "{answers:#?}"
    );
    assert_eq!(
        std::fs::read_to_string(root.join("hello.txt")).unwrap(),
        "hello\n"
    );

    let terminal = d.h.screen(160, 48);
    let text = screen_text(&terminal);
    shows(
        &text,
        &[
            "Done: hello.txt says hello.",
            "Write hello.txt",
            "2/2 done",
            "$0.04",
        ],
    );
    insta::assert_snapshot!("acp_stack_timeline_after_run", terminal.backend());

    // The session file holds the run; `taco trace` reads it.
    Box::new(d.engine).shutdown(Duration::from_secs(2)).await;
    let loaded = session(sessions.path());
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    assert_eq!(
        loaded.header.as_ref().unwrap().kind,
        Some(SessionKind::Agent)
    );
    let kinds = event_kinds(&loaded);
    for kind in [
        "run_started",
        "llm_call",
        "tool_call",
        "approval_requested",
        "approval_decided",
        "tool_result",
        "usage_reported",
        "final",
    ] {
        assert!(kinds.contains(&kind), "{kind} missing from {kinds:?}");
    }
    assert!(loaded.messages().iter().any(|m| {
        m.content
            .as_deref()
            .is_some_and(|c| c.contains("write a greeting"))
    }));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_that_dies_mid_prompt_fails_the_run_and_the_session_is_whole() {
    let (_work, root, sessions) = dirs();
    let steps = vec![
        json!({"expect": "initialize"}),
        json!({"expect": "session/new"}),
        json!({"expect": "session/prompt"}),
        json!({"update": {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "Working"}}}),
        json!({"update": {"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "Run it", "kind": "execute", "status": "in_progress"}}),
        json!({"exit": true}),
    ];
    let mut d = Drive::new(steps, &root, sessions.path(), Duration::from_secs(5));
    d.submit("go");
    let error = d.until("the run's error", is("error")).await;
    assert!(
        !error.request_id.is_empty(),
        "the run's own error: {error:?}"
    );
    assert!(
        format!("{:?}", error.data).contains("scripted"),
        "{error:?}"
    );
    // The agent is known to be gone (said with the run's error, or after it).
    if !format!("{:?}", error.data).contains("closed the connection") {
        d.until("the connection's end", |e| {
            e.kind() == "error" && format!("{:?}", e.data).contains("closed the connection")
        })
        .await;
    }
    let text = screen_text(&d.h.screen(120, 30));
    assert!(text.contains("Working"), "{text}");
    // A prompt after its death says so, rather than waiting.
    d.submit("again");
    let said = d.until("the next error", is("error")).await;
    assert!(
        format!("{:?}", said.data).contains("restart taco"),
        "{said:?}"
    );
    Box::new(d.engine).shutdown(Duration::from_secs(2)).await;
    let loaded = session(sessions.path());
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    let kinds = event_kinds(&loaded);
    assert!(kinds.contains(&"tool_call"), "{kinds:?}");
    assert_eq!(
        kinds.iter().filter(|k| **k == "run_started").count(),
        1,
        "{kinds:?}"
    );
    assert!(kinds.contains(&"error"), "{kinds:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_and_overlong_lines_are_skipped_and_said() {
    let (_work, root, sessions) = dirs();
    let steps = vec![
        json!({"expect": "initialize"}),
        json!({"expect": "session/new"}),
        json!({"expect": "session/prompt"}),
        json!({"raw": "Loading model weights... {not json"}),
        json!({"long": taco::acp::lines::MAX_LINE + 10}),
        json!({"update": {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "still here"}}}),
        json!({"end": "end_turn"}),
    ];
    let mut d = Drive::new(steps, &root, sessions.path(), Duration::from_secs(5));
    d.submit("go");
    let end = d.until("the answer", is("final")).await;
    let EventData::Final { content, .. } = &end.data else {
        unreachable!()
    };
    assert_eq!(content, "still here");
    let errors = d.errors();
    assert!(
        errors
            .iter()
            .any(|e| e.contains("not JSON") && e.contains("Loading model")),
        "{errors:?}"
    );
    assert!(errors.iter().any(|e| e.contains("16 MiB")), "{errors:?}");
    // Said outside the run (which goes on to its answer), and recorded.
    assert!(
        d.events
            .iter()
            .filter(|e| e.kind() == "error")
            .all(|e| e.request_id.is_empty())
    );
    Box::new(d.engine).shutdown(Duration::from_secs(2)).await;
    let kinds = event_kinds(&session(sessions.path()));
    assert_eq!(
        kinds.iter().filter(|k| **k == "error").count(),
        2,
        "{kinds:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_that_never_answers_initialize_is_given_up_on() {
    let (_work, root, sessions) = dirs();
    let steps = vec![json!({"hang": true})];
    let mut d = Drive::new(steps, &root, sessions.path(), Duration::from_millis(300));
    let started = Instant::now();
    d.submit("hello?");
    let error = d.until("the error", is("error")).await;
    assert!(started.elapsed() < Duration::from_secs(5));
    let EventData::Error { message, .. } = &error.data else {
        unreachable!()
    };
    assert!(message.contains("did not answer initialize"), "{message}");
    // The prompt was never sent, and no run started.
    assert!(
        !d.kinds().contains(&"run_started".to_string()),
        "{:?}",
        d.kinds()
    );
    assert!(
        !d.script_seen
            .all()
            .iter()
            .any(|m| m["method"] == "session/prompt")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_the_agent_ignores_ends_the_run_within_the_bound() {
    let (_work, root, sessions) = dirs();
    let steps = vec![
        json!({"expect": "initialize"}),
        json!({"expect": "session/new"}),
        json!({"expect": "session/prompt"}),
        json!({"update": {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "thinking forever"}}}),
        json!({"hang": true}),
    ];
    let mut d = Drive::new(steps, &root, sessions.path(), Duration::from_secs(5));
    d.submit("go");
    d.until("the text", is("delta")).await;
    let started = Instant::now();
    assert!(d.engine.send(Op::Cancel));
    d.until("the cancel", is("cancelled")).await;
    let took = started.elapsed();
    assert!(
        took >= client::CANCEL_WAIT && took < client::CANCEL_WAIT + Duration::from_secs(3),
        "{took:?}"
    );
    // The agent was told.
    assert!(
        d.script_seen
            .all()
            .iter()
            .any(|m| m["method"] == "session/cancel"),
        "{:?}",
        d.script_seen.all()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_updates_is_held_back_while_nobody_reads_and_arrives_whole() {
    const CHUNKS: usize = 20_000;
    let (_work, root, sessions) = dirs();
    let mut steps = vec![
        json!({"expect": "initialize"}),
        json!({"expect": "session/new"}),
        json!({"expect": "session/prompt"}),
    ];
    for i in 0..CHUNKS {
        steps.push(json!({"update": {"sessionUpdate": "agent_message_chunk",
                                      "content": {"type": "text", "text": format!("{i} ")}}}));
    }
    steps.push(json!({"end": "end_turn"}));
    steps.push(json!({"expect": "never"}));
    let mut d = Drive::new(steps, &root, sessions.path(), Duration::from_secs(5));
    d.submit("flood");
    d.until("the first text", is("delta")).await;
    // Nobody reads: the agent is held back (every queue on the way is bounded), its writes
    // wait; it stalls well before the end of its flood.
    let mut last = d.script_seen.updates_sent();
    loop {
        tokio::time::sleep(Duration::from_millis(500)).await;
        let now = d.script_seen.updates_sent();
        if now == last || now == CHUNKS {
            break;
        }
        last = now;
    }
    let sent = d.script_seen.updates_sent();
    assert!(
        sent < CHUNKS,
        "the agent wrote all {sent} updates while nobody read"
    );
    let end = d.until("the answer", is("final")).await;
    let EventData::Final { content, .. } = &end.data else {
        unreachable!()
    };
    let expected: String = (0..CHUNKS).map(|i| format!("{i} ")).collect();
    assert_eq!(content.len(), expected.len());
    assert_eq!(*content, expected);
}

#[test]
fn slash_agent_lists_the_loops_and_switches_only_to_a_configured_one() {
    let mut h = Harness::new();
    h.app = App::new(
        AppInfo {
            agents: vec!["codex".into(), "claude".into()],
            ..support::app::info()
        },
        h.t0,
    );
    assert!(h.command("/agent").is_empty());
    let text = screen_text(&h.screen(120, 30));
    for needle in [
        "taco: taco's own loop (this screen)",
        "codex: external agent over ACP",
        "claude: external agent over ACP",
    ] {
        assert!(text.contains(needle), "{needle}:\n{text}");
    }
    assert!(h.command("/agent nope").is_empty());
    let text = screen_text(&h.screen(120, 40));
    assert!(text.contains("No agent 'nope'"), "{text}");
    assert!(h.command("/agent taco").is_empty(), "taco drives already");
    let commands = h.command("/agent codex");
    assert!(
        commands.contains(&Command::Agent(Some("codex".into()))),
        "{commands:?}"
    );
    // From an agent's screen, back to taco.
    let mut h = Harness::new();
    h.app = App::new(
        AppInfo {
            agents: vec!["codex".into()],
            driving: Some("codex".into()),
            ..support::app::info()
        },
        h.t0,
    );
    assert!(h.command("/agent codex").is_empty());
    assert_eq!(h.command("/agent taco"), vec![Command::Agent(None)]);
}

fn agent_command(name: &str, script: &str) -> client::process::Command {
    client::process::Command {
        name: name.into(),
        command: "sh".into(),
        args: vec!["-c".into(), script.into()],
        env: Default::default(),
        auth: None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_process_that_exits_says_its_status_and_last_words() {
    let (_work, root, _sessions) = dirs();
    let mut command = agent_command(
        "crashy",
        "echo \"agent boot failed: $GREETING\" >&2; exit 3",
    );
    command.env.insert("GREETING".into(), "no key".into());
    let mut engine = client::launch(
        &command,
        &root,
        &taco::tools::ToolSettings::default(),
        &|_| None,
        Recorder::default(),
        Duration::from_secs(10),
    )
    .unwrap();
    assert!(engine.send(Op::Submit("hello".into())));
    let deadline = Instant::now() + STEP;
    let message = loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, next_event(&mut engine)).await {
            Ok(Some(Event {
                data: EventData::Error { message, .. },
                ..
            })) => break message,
            Ok(Some(_)) => {}
            other => panic!("no error: {other:?}"),
        }
    };
    assert!(message.contains("crashy"), "{message}");
    assert!(message.contains("exit status: 3"), "{message}");
    assert!(message.contains("agent boot failed: no key"), "{message}");
    Box::new(engine).shutdown(Duration::from_secs(2)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_agent_process_and_its_children_end_with_the_engine() {
    let (_work, root, _sessions) = dirs();
    let marker = format!("taco-acp-silent-{}", std::process::id());
    // The agent starts a child of its own and never answers.
    let command = agent_command(
        "silent",
        &format!("sh -c 'sleep 300; : {marker}-child' & sleep 301; : {marker}"),
    );
    let mut engine = client::launch(
        &command,
        &root,
        &taco::tools::ToolSettings::default(),
        &|_| None,
        Recorder::default(),
        Duration::from_millis(300),
    )
    .unwrap();
    let started = Instant::now();
    assert!(engine.send(Op::Submit("hello".into())));
    let event = tokio::time::timeout(STEP, next_event(&mut engine))
        .await
        .unwrap()
        .unwrap();
    assert!(
        format!("{:?}", event.data).contains("did not answer initialize within 0.3 s"),
        "{event:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(
        support::processes::running_with(&marker).len() >= 2,
        "the agent and its child run until the end: {:?}",
        support::processes::running_with(&marker)
    );
    Box::new(engine).shutdown(Duration::from_secs(2)).await;
    let deadline = Instant::now() + Duration::from_secs(5);
    while !support::processes::running_with(&marker).is_empty() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        support::processes::running_with(&marker).is_empty(),
        "{:?}",
        support::processes::running_with(&marker)
    );
}

/// The initialize answer of an agent that wants authentication (as codex-acp's).
fn wants_auth() -> Value {
    json!({"expect": "initialize", "reply": {"protocolVersion": 1, "agentCapabilities": {},
    "authMethods": [
        {"id": "chatgpt", "name": "Login with ChatGPT"},
        {"type": "env_var", "id": "openai-api-key", "name": "Use OPENAI_API_KEY",
         "vars": [{"name": "OPENAI_API_KEY"}]}
    ]}})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_that_needs_authentication_names_its_methods_and_a_configured_one_is_used() {
    // Without `auth`: the agent's refusal says what to set.
    let (_work, root, sessions) = dirs();
    let refused = json!({"code": -32000, "message": "Authentication required"});
    let steps = vec![
        wants_auth(),
        json!({"expect": "session/new", "error": refused}),
    ];
    let mut d = Drive::new(steps, &root, sessions.path(), Duration::from_secs(5));
    d.submit("hello?");
    let error = d.until("the error", is("error")).await;
    let EventData::Error { message, .. } = &error.data else {
        unreachable!()
    };
    assert!(
        message.contains("set auth in its [agents] entry to one of: chatgpt (Login with ChatGPT), openai-api-key (Use OPENAI_API_KEY)"),
        "{message}"
    );
    // With `auth`: taco authenticates with it before the session, then the prompt goes.
    let (_work, root, sessions) = dirs();
    let steps = vec![
        wants_auth(),
        json!({"expect": "authenticate"}),
        json!({"expect": "session/new"}),
        json!({"expect": "session/prompt"}),
        json!({"update": {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "hi"}}}),
        json!({"end": "end_turn"}),
    ];
    let mut d = Drive::authenticating(
        steps,
        &root,
        sessions.path(),
        Duration::from_secs(5),
        Some("openai-api-key"),
    );
    d.submit("hello?");
    d.until("the answer", is("final")).await;
    let methods: Vec<Value> = d
        .script_seen
        .all()
        .iter()
        .map(|m| m["method"].clone())
        .collect();
    assert_eq!(
        methods[..4],
        [
            json!("initialize"),
            json!("authenticate"),
            json!("session/new"),
            json!("session/prompt")
        ]
    );
    let asked = d
        .script_seen
        .all()
        .into_iter()
        .find(|m| m["method"] == "authenticate")
        .unwrap();
    assert_eq!(asked["params"]["methodId"], "openai-api-key");
    // A method the agent does not offer is refused before anything else.
    let (_work, root, sessions) = dirs();
    let mut d = Drive::authenticating(
        vec![wants_auth(), json!({"hang": true})],
        &root,
        sessions.path(),
        Duration::from_secs(5),
        Some("api-key"),
    );
    d.submit("hello?");
    let error = d.until("the error", is("error")).await;
    let EventData::Error { message, .. } = &error.data else {
        unreachable!()
    };
    assert!(
        message.contains("offers no authentication method `api-key`"),
        "{message}"
    );
}
