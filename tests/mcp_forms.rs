//! A server's form (issue 28.2) end to end: the fixture's rich form (every kind of field)
//! and the published everything server's
//! `trigger-elicitation-request`, each filled in through the form's own model (the keys a
//! person presses), the answer checked where it lands: at the server, which echoes it.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed unwrap is a failed test

use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use serde_json::{Value, json};
use taco::event::{EventData, InputKind, InputRequest, Scope};
use taco::orchestrator::approval::{ApprovalAnswer, ApprovalRequest, Approver};
use taco::tools::{AskReply, ToolSource};
use taco::tui::views::form::{FormState, Step};
use tokio_util::sync::CancellationToken;

use crate::support;
use support::cli::*;
use support::mcp::{fixture, require_everything_server};

/// A person at the form: approves every call, and fills each form with `fill` (keys into
/// the form's model; the answer is what the overlay would send).
struct Person {
    fill: Box<dyn FnMut(&mut FormState) -> AskReply + Send>,
    asked: Vec<InputRequest>,
}

impl Person {
    fn new(fill: impl FnMut(&mut FormState) -> AskReply + Send + 'static) -> Self {
        Self {
            fill: Box::new(fill),
            asked: Vec::new(),
        }
    }
}

impl Approver for Person {
    fn decide<'a>(
        &'a mut self,
        batch: &'a [ApprovalRequest],
    ) -> BoxFuture<'a, Vec<ApprovalAnswer>> {
        let yes = ApprovalAnswer::approve(Scope::Once);
        Box::pin(std::future::ready(vec![yes; batch.len()]))
    }

    fn can_ask(&self) -> bool {
        true
    }

    fn fill<'a>(&'a mut self, request: &'a InputRequest) -> BoxFuture<'a, AskReply> {
        self.asked.push(request.clone());
        let mut form = FormState::new(request.clone()).expect("a form question carries its form");
        let answer = (self.fill)(&mut form);
        Box::pin(std::future::ready(answer))
    }
}

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

fn typed(form: &mut FormState, text: &str) {
    for c in text.chars() {
        assert_eq!(form.on_key(key(KeyCode::Char(c))), Step::Used, "{c:?}");
    }
}

fn field(form: &FormState, name: &str) -> usize {
    (form.spec.fields.iter().position(|f| f.name == name)).unwrap_or_else(|| panic!("{name}"))
}

/// Tab to the field `name`, and empty it when it holds text.
fn to(form: &mut FormState, name: &str) {
    let i = field(form, name);
    while form.at() != Some(i) {
        form.on_key(key(KeyCode::Tab));
    }
}

fn clear(form: &mut FormState) {
    form.on_key(KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL));
}

/// Tab to the buttons, pick one by its letter, press Enter.
fn press(form: &mut FormState, letter: char) -> Step {
    while form.at().is_some() {
        form.on_key(key(KeyCode::Tab));
    }
    form.on_key(key(KeyCode::Char(letter)));
    form.on_key(key(KeyCode::Enter))
}

/// What the tool call told the model, as text.
async fn call_with(
    config: &str,
    tool: &str,
    arguments: Value,
    person: &mut Person,
) -> (String, Vec<taco::event::Event>) {
    let work = tempfile::tempdir().unwrap();
    let hub = support::mcp::start_hub(config, work.path(), None);
    tokio::time::timeout(Duration::from_secs(30), hub.settled())
        .await
        .unwrap();
    let provider = support::scripted::Scripted::new(vec![
        Ok(support::scripted::calls(&[("a", tool, arguments)])),
        Ok(support::scripted::text("thanks")),
    ]);
    let mut registry = taco::tools::ToolRegistry::new();
    registry.add_source(Arc::clone(&hub) as Arc<dyn ToolSource>);
    let mut orch = taco::orchestrator::Orchestrator::new(
        provider.clone(),
        Arc::new(registry),
        support::scripted::settings(10),
    );
    let mut events = Vec::new();
    orch.run("go", &mut events, person, &CancellationToken::new())
        .await;
    hub.shutdown();
    let sent = provider.sent();
    assert!(
        sent.len() >= 2,
        "the tool ran and the model heard: {events:#?}"
    );
    let told = support::scripted::tool_messages(&sent[1].messages);
    (told[0].1.to_string(), events)
}

fn fixture_config() -> String {
    format!(
        "[servers.fixture]\ncommand = {:?}\n",
        fixture().display().to_string()
    )
}

async fn rich(person: &mut Person) -> (String, Vec<taco::event::Event>) {
    call_with(
        &fixture_config(),
        "mcp__fixture__ask",
        json!({"form": "rich"}),
        person,
    )
    .await
}

/// The content the fixture echoed back (`accepted: {...}`).
fn accepted(told: &str) -> Value {
    let told: Value = serde_json::from_str(told).unwrap();
    let text = told["text"].as_str().unwrap();
    let content = text
        .strip_prefix("accepted: ")
        .unwrap_or_else(|| panic!("not accepted: {text}"));
    serde_json::from_str(content).unwrap()
}

#[tokio::test]
async fn the_fixtures_form_is_one_question_filled_whole() {
    let mut person = Person::new(|form| {
        // Every field shows, the defaults filled in. (The fixture's fields come in the order
        // it wrote them: serde_json keeps insertion order in this build, as the ACP crate
        // asks; the everything server's test below checks the order.)
        assert_eq!(form.spec.fields.len(), 13);
        assert_eq!(form.value(field(form, "count")), Ok(Some(json!(42))));
        assert_eq!(form.value(field(form, "friend")), Ok(Some(json!("Ross"))));
        // Invalid values are refused with their reasons.
        to(form, "count");
        clear(form);
        typed(form, "500");
        to(form, "site");
        typed(form, "not a url");
        to(form, "email");
        typed(form, "superman");
        assert_eq!(press(form, 'a'), Step::Refused);
        let reason = |name: &str| form.shown_error(field(form, name));
        assert_eq!(reason("name").as_deref(), Some("required"));
        assert_eq!(
            reason("email").as_deref(),
            Some("not a valid email (name@example.com)")
        );
        assert_eq!(
            reason("site").as_deref(),
            Some("not a valid uri (https://example.com/page)")
        );
        assert_eq!(reason("count").as_deref(), Some("must be 1 to 100"));
        assert_eq!((0..13).filter_map(|i| form.shown_error(i)).count(), 4);
        // Then filled in right, every kind of field.
        to(form, "name");
        typed(form, "Ann");
        to(form, "agree");
        form.on_key(key(KeyCode::Char(' ')));
        to(form, "email");
        clear(form);
        typed(form, "ann@example.com");
        to(form, "site");
        clear(form);
        typed(form, "https://ann.example");
        to(form, "born");
        typed(form, "1990-05-01");
        to(form, "count");
        clear(form);
        typed(form, "7");
        to(form, "ratio");
        typed(form, "0.25");
        to(form, "hero");
        form.on_key(key(KeyCode::Right));
        to(form, "pet");
        form.on_key(key(KeyCode::Left));
        to(form, "tools");
        form.on_key(key(KeyCode::Char(' ')));
        to(form, "fish");
        form.on_key(key(KeyCode::Right));
        form.on_key(key(KeyCode::Char(' ')));
        let Step::Done(answer) = press(form, 'a') else {
            panic!("accepted");
        };
        answer
    });
    let (told, events) = rich(&mut person).await;
    assert_eq!(
        accepted(&told),
        json!({
            "name": "Ann", "agree": true, "email": "ann@example.com",
            "site": "https://ann.example", "born": "1990-05-01", "count": 7, "ratio": 0.25,
            "friend": "Ross", "hero": "h1", "pet": "p2", "tools": ["Guitar", "Piano"],
            "fish": ["f2"]
        }),
        "every value reached the server; the empty date-time was left out"
    );
    // One question of kind form, under the call's elicitation frame; its answer recorded.
    assert_eq!(person.asked.len(), 1);
    let asked = &person.asked[0];
    assert_eq!(asked.kind, InputKind::Form);
    assert!(
        asked
            .prompt
            .contains("MCP server fixture asks: Tell us about you.")
    );
    let answered = (events.iter())
        .find_map(|e| match &e.data {
            EventData::InputAnswered { id, form, .. } if *id == asked.id => form.clone(),
            _ => None,
        })
        .expect("the answer is recorded");
    assert!(matches!(answered, AskReply::Accept(content) if content["name"] == "Ann"));
    let frame = (events.iter())
        .find_map(|e| match &e.data {
            EventData::StackPop(f) if f.name == "elicitation" => Some(f.clone()),
            _ => None,
        })
        .expect("an elicitation frame");
    assert_eq!(frame.parent.as_deref(), Some("a"));
    assert_eq!(frame.state, taco::event::FrameState::Done);
}

#[tokio::test]
async fn decline_and_cancel_reach_the_fixture_as_themselves() {
    let mut person = Person::new(|form| match press(form, 'd') {
        Step::Done(answer) => answer,
        other => panic!("{other:?}"),
    });
    let (told, _) = rich(&mut person).await;
    assert_eq!(told, json!({"text": "declined"}).to_string());
    let mut person = Person::new(|form| match form.on_key(key(KeyCode::Esc)) {
        Step::Done(answer) => answer,
        other => panic!("{other:?}"),
    });
    let (told, events) = rich(&mut person).await;
    assert_eq!(told, json!({"text": "cancelled"}).to_string());
    let frame = (events.iter())
        .find_map(|e| match &e.data {
            EventData::StackPop(f) if f.name == "elicitation" => Some(f.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(frame.state, taco::event::FrameState::Cancelled);
}

#[tokio::test]
async fn headless_the_rich_form_is_declined_and_said_so() {
    let (home, work) = setup();
    let server = support::TestServer::start(vec![
        tool_turns(&[("a", "mcp__fixture__ask", r#"{"form": "rich"}"#)]),
        text_turn(&["done"]),
    ])
    .await;
    let path = home.path().join("forms.toml");
    std::fs::write(
        &path,
        format!(
            "[providers.openai.options]\nmax_attempts = 1\n[mcp.servers.fixture]\ncommand = {:?}\ntool_policies = {{ ask = \"allow\" }}\n",
            fixture().display().to_string()
        ),
    )
    .unwrap();
    let mut cmd = taco(home.path(), work.path());
    cmd.arg("-c").arg(&path);
    openai_args(&mut cmd, &server);
    cmd.args(["--json", "go"]);
    let run = finish(&mut cmd).await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert!(
        run.stderr.contains(
            "taco: MCP server fixture asks: Tell us about you.; declined (taco exec cannot ask, so the form goes back declined)"
        ),
        "{}",
        run.stderr
    );
    let events: Vec<Value> = (run.stdout.lines())
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let asked = events
        .iter()
        .find(|e| e["type"] == "input_requested")
        .expect("the form is in the --json stream");
    assert_eq!(asked["data"]["kind"], "form");
    assert_eq!(
        asked["data"]["form"]["fields"].as_array().unwrap().len(),
        13
    );
    let answered = events
        .iter()
        .find(|e| e["type"] == "input_answered")
        .unwrap();
    assert_eq!(answered["data"]["form"], json!({"action": "decline"}));
    let told = server.requests()[1].json()["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap()["content"]
        .clone();
    assert!(told.as_str().unwrap().contains("declined"), "{told}");
}

// ── The published everything server ─────────────────────────────────────────────────

const EVERYTHING_TOOL: &str = "mcp__everything__trigger-elicitation-request";

fn everything_config(path: &std::path::Path) -> String {
    format!(
        "[servers.everything]\ncommand = {:?}\n",
        path.display().to_string()
    )
}

#[tokio::test]
async fn the_everything_servers_form_is_filled_with_every_kind_of_field() {
    let Some(path) = require_everything_server() else {
        return;
    };
    let mut person = Person::new(|form| {
        let names: Vec<&str> = form.spec.fields.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "name",
                "check",
                "firstLine",
                "email",
                "homepage",
                "birthdate",
                "integer",
                "number",
                "untitledSingleSelectEnum",
                "untitledMultipleSelectEnum",
                "titledSingleSelectEnum",
                "titledMultipleSelectEnum",
                "legacyTitledEnum"
            ],
            "the server's order"
        );
        // Defaults show, titled options by their titles, legacy enumNames too.
        assert_eq!(
            form.value(field(form, "firstLine")),
            Ok(Some(json!("It was a dark and stormy night.")))
        );
        assert_eq!(form.value(field(form, "integer")), Ok(Some(json!(42))));
        let labels = |name: &str| match &form.spec.fields[field(form, name)].kind {
            taco::form::FieldKind::Choice { options }
            | taco::form::FieldKind::Multi { options, .. } => {
                options.iter().map(|o| o.label.clone()).collect::<Vec<_>>()
            }
            other => panic!("{other:?}"),
        };
        assert_eq!(labels("titledSingleSelectEnum")[0], "Superman");
        assert_eq!(
            labels("titledMultipleSelectEnum"),
            ["Tuna", "Salmon", "Trout"]
        );
        assert_eq!(labels("legacyTitledEnum")[1], "Dogs");
        assert_eq!(labels("untitledMultipleSelectEnum").len(), 5);
        // The issue's values are refused, each with its reason.
        to(form, "integer");
        clear(form);
        typed(form, "500");
        to(form, "homepage");
        typed(form, "not a url");
        to(form, "email");
        typed(form, "superman");
        assert_eq!(press(form, 'a'), Step::Refused);
        let reasons: Vec<String> = (0..13).filter_map(|i| form.shown_error(i)).collect();
        assert_eq!(
            reasons,
            [
                "required",
                "not a valid email (name@example.com)",
                "not a valid uri (https://example.com/page)",
                "must be 1 to 100"
            ]
        );
        to(form, "name");
        typed(form, "Ann Lee");
        to(form, "check");
        form.on_key(key(KeyCode::Char(' ')));
        to(form, "email");
        clear(form);
        typed(form, "ann@example.com");
        to(form, "homepage");
        clear(form);
        typed(form, "https://ann.example");
        to(form, "birthdate");
        typed(form, "1990-05-01");
        to(form, "integer");
        clear(form);
        typed(form, "7");
        to(form, "titledSingleSelectEnum");
        form.on_key(key(KeyCode::Right));
        to(form, "titledMultipleSelectEnum");
        form.on_key(key(KeyCode::Right));
        form.on_key(key(KeyCode::Char(' ')));
        to(form, "legacyTitledEnum");
        form.on_key(key(KeyCode::Right));
        let Step::Done(answer) = press(form, 'a') else {
            panic!("accepted");
        };
        answer
    });
    let (told, _) = call_with(
        &everything_config(&path),
        EVERYTHING_TOOL,
        json!({}),
        &mut person,
    )
    .await;
    assert!(
        told.contains("User provided the requested information"),
        "{told}"
    );
    for shown in [
        "Name: Ann Lee",
        "Agreed to terms: true",
        "Email: ann@example.com",
        "Homepage: https://ann.example",
        "Birthdate: 1990-05-01",
        "Favorite Integer: 7",
        "Favorite Number: 3.14",
    ] {
        assert!(told.contains(shown), "{shown}: {told}");
    }
    // The raw result it echoes: every choice as its value, defaults included.
    for raw in [
        r#"\"titledSingleSelectEnum\": \"hero-2\""#,
        r#"\"legacyTitledEnum\": \"pet-2\""#,
        r#"\"untitledSingleSelectEnum\": \"Monica\""#,
        r#"\"firstLine\": \"It was a dark and stormy night.\""#,
    ] {
        assert!(told.contains(raw), "{raw}: {told}");
    }
    assert!(
        told.contains(
            r#"\"titledMultipleSelectEnum\": [\n      \"fish-1\",\n      \"fish-2\"\n    ]"#
        ),
        "{told}"
    );
}

#[tokio::test]
async fn the_everything_server_hears_decline_and_cancel_apart() {
    let Some(path) = require_everything_server() else {
        return;
    };
    let config = everything_config(&path);
    let mut person = Person::new(|form| match press(form, 'd') {
        Step::Done(answer) => answer,
        other => panic!("{other:?}"),
    });
    let (told, _) = call_with(&config, EVERYTHING_TOOL, json!({}), &mut person).await;
    assert!(told.contains("User declined"), "{told}");
    assert!(told.contains(r#"\"action\": \"decline\""#), "{told}");
    let mut person = Person::new(|form| match form.on_key(key(KeyCode::Esc)) {
        Step::Done(answer) => answer,
        other => panic!("{other:?}"),
    });
    let (told, _) = call_with(&config, EVERYTHING_TOOL, json!({}), &mut person).await;
    assert!(told.contains("User cancelled"), "{told}");
    assert!(told.contains(r#"\"action\": \"cancel\""#), "{told}");
}
