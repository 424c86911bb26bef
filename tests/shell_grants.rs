//! `p` grants in a real run (issue 26.2): the orchestrator over the OpenAI provider talking to a
//! loopback server, the real `shell` tool in a temp workspace. The grant `p` gives for
//! `timeout 60 ls` lets a later `ls` through without asking, and never the `rm -rf victim`
//! the same wrapper runs; the victim survives.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed unwrap is a failed test

use crate::support;

use std::sync::Arc;
use std::time::Duration;

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use serde_json::{Map, Value, json};
use support::TestServer;
use support::cli::{text_turn, tool_turn};
use support::scripted::{settings, statuses};
use taco::event::{Event, EventData, Grant, ToolStatus};
use taco::orchestrator::Orchestrator;
use taco::orchestrator::approval::{ApprovalAnswer, ApprovalRequest, Approver};
use taco::provider::Secret;
use taco::provider::openai::{OpenAiConfig, OpenAiProvider};
use taco::tools::{ToolRegistry, ToolSettings};
use tokio_util::sync::CancellationToken;

/// Answers as a user would: `p` on the first shell call (the grant the dialog offers for
/// it), then `n` on everything after.
#[derive(Default)]
struct PressP {
    asked: Vec<String>,
}

impl Approver for PressP {
    fn decide<'a>(
        &'a mut self,
        batch: &'a [ApprovalRequest],
    ) -> BoxFuture<'a, Vec<ApprovalAnswer>> {
        let answers = batch
            .iter()
            .map(|request| {
                let command = request.arguments["command"].as_str().unwrap_or_default();
                self.asked.push(command.to_string());
                if self.asked.len() == 1 {
                    let mut answer = ApprovalAnswer::approve(taco::event::Scope::Once);
                    answer.prefix = request.offered_grant();
                    assert!(answer.prefix.is_some(), "p is offered for {command}");
                    answer
                } else {
                    ApprovalAnswer::deny(Some("no".into()))
                }
            })
            .collect();
        async move { answers }.boxed()
    }
}

fn provider(server: &TestServer) -> Arc<OpenAiProvider> {
    Arc::new(
        OpenAiProvider::new(OpenAiConfig {
            name: "local".into(),
            base_url: format!("{}/v1", server.url()),
            model: "m1".into(),
            api_key: Some(Secret::new("sk-FAKE-grants-0123456789")),
            api_key_env: Some("LOCAL_KEY".into()),
            send_reasoning_content: false,
            extra_body: Map::new(),
            connect_timeout: Duration::from_secs(5),
            idle_timeout: Duration::from_secs(10),
        })
        .unwrap(),
    )
}

fn shell(id: &str, command: &str) -> support::Reply {
    tool_turn(id, "shell", &json!({ "command": command }).to_string())
}

#[tokio::test]
async fn a_grant_from_timeout_60_ls_never_runs_timeout_60_rm() {
    let work = tempfile::tempdir().unwrap();
    let victim = work.path().join("victim");
    std::fs::create_dir(&victim).unwrap();
    std::fs::write(victim.join("keep.txt"), "precious").unwrap();
    let server = TestServer::start(vec![
        shell("s1", "timeout 60 ls"),
        shell("s2", "timeout 5 ls -la"),
        shell("s3", "timeout 60 rm -rf victim"),
        shell("s4", "nice rm -rf victim"),
        shell("s5", "sh -c 'ls; rm -rf victim'"),
        shell("s6", "ls victim"),
        text_turn(&["done"]),
    ])
    .await;
    let mut registry = ToolRegistry::new();
    registry.register(Arc::new(taco::tools::builtin::Shell));
    let mut settings = settings(20);
    settings.workdir = work.path().canonicalize().unwrap();
    settings.tools = Arc::new(ToolSettings {
        timeout: Duration::from_secs(20),
        ..ToolSettings::default()
    });
    let mut orch = Orchestrator::new(provider(&server), Arc::new(registry), settings);
    let mut events: Vec<Event> = Vec::new();
    let mut approver = PressP::default();
    tokio::time::timeout(
        Duration::from_secs(60),
        orch.run(
            "look around",
            &mut events,
            &mut approver,
            &CancellationToken::new(),
        ),
    )
    .await
    .expect("the run hung");

    assert!(
        victim.join("keep.txt").exists(),
        "the victim was deleted; asked: {:?}",
        approver.asked
    );
    assert_eq!(
        approver.asked,
        [
            "timeout 60 ls",
            "timeout 60 rm -rf victim",
            "nice rm -rf victim",
            "sh -c 'ls; rm -rf victim'",
        ],
        "ls ran under the grant; every rm was asked about"
    );
    let status: Vec<(String, ToolStatus)> = statuses(&events)
        .into_iter()
        .map(|(id, s, _)| (id, s))
        .collect();
    let want = [
        ("s1", ToolStatus::Ok),
        ("s2", ToolStatus::Ok),
        ("s3", ToolStatus::Denied),
        ("s4", ToolStatus::Denied),
        ("s5", ToolStatus::Denied),
        ("s6", ToolStatus::Ok),
    ];
    let want: Vec<(String, ToolStatus)> = want.iter().map(|(i, s)| (i.to_string(), *s)).collect();
    assert_eq!(status, want);

    // The grant is typed: the program `ls` with literal arguments, recorded so.
    let grant = taco::tools::builtin::suggested_grant("ls").unwrap();
    assert_eq!(
        orch.policies().shell_prefixes(),
        std::slice::from_ref(&grant)
    );
    let decided: Vec<Value> = events
        .iter()
        .filter(|e| matches!(e.data, EventData::ApprovalDecided { .. }))
        .map(|e| serde_json::to_value(e).unwrap())
        .collect();
    assert_eq!(
        decided[0]["data"]["prefix"],
        json!({"program": "ls", "args": "literal"})
    );
    let used: Vec<(&str, &Grant)> = events
        .iter()
        .filter_map(|e| match &e.data {
            EventData::GrantUsed { id, grant, .. } => Some((id.as_str(), grant)),
            _ => None,
        })
        .collect();
    let by_grant = Grant::ShellPrefix(grant);
    assert_eq!(used, [("s2", &by_grant), ("s6", &by_grant)]);
}

/// Answers the first call with `p` and a grant other than the one offered for it.
struct Forged(Option<taco::event::ShellGrant>);

impl Approver for Forged {
    fn decide<'a>(
        &'a mut self,
        batch: &'a [ApprovalRequest],
    ) -> BoxFuture<'a, Vec<ApprovalAnswer>> {
        let answers = batch
            .iter()
            .map(|_| match self.0.take() {
                Some(grant) => {
                    let mut answer = ApprovalAnswer::approve(taco::event::Scope::Once);
                    answer.prefix = Some(grant);
                    answer
                }
                None => ApprovalAnswer::deny(None),
            })
            .collect();
        async move { answers }.boxed()
    }
}

#[tokio::test]
async fn an_answer_cannot_grant_more_than_the_command_it_answers() {
    let work = tempfile::tempdir().unwrap();
    std::fs::create_dir(work.path().join("victim")).unwrap();
    let server = TestServer::start(vec![
        shell("s1", "timeout 60 ls"),
        shell("s2", "timeout 60 rm -rf victim"),
        text_turn(&["done"]),
    ])
    .await;
    let mut registry = ToolRegistry::new();
    registry.register(Arc::new(taco::tools::builtin::Shell));
    let mut settings = settings(20);
    settings.workdir = work.path().canonicalize().unwrap();
    let mut orch = Orchestrator::new(provider(&server), Arc::new(registry), settings);
    // What the old word splitter granted: `timeout 60`, any command after it.
    let forged = taco::event::ShellGrant {
        program: "timeout".into(),
        subcommand: vec!["60".into()],
        args: taco::event::ArgShape::Literal,
    };
    let mut approver = Forged(Some(forged));
    let mut events: Vec<Event> = Vec::new();
    orch.run("go", &mut events, &mut approver, &CancellationToken::new())
        .await;
    assert!(work.path().join("victim").exists());
    assert!(orch.policies().shell_prefixes().is_empty());
    let prefixes: Vec<bool> = events
        .iter()
        .filter_map(|e| match &e.data {
            EventData::ApprovalDecided { prefix, .. } => Some(prefix.is_some()),
            _ => None,
        })
        .collect();
    assert_eq!(prefixes, [false, false], "no grant was recorded");
}
