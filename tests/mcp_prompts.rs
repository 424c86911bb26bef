//! MCP prompts and resources (issue 28.5) through the real fixture server on stdio: a prompt
//! run as `/server:prompt args` is the user's message to the model (`taco exec`, the TUI's
//! app, the binary in tmux); a resource mentioned as `@server:uri` is attached like a file;
//! listings and reads are bounded; `/mcp` lists them.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed unwrap is a failed test

use std::sync::Arc;
use std::time::{Duration, Instant};

use ratatui::crossterm::event::{KeyCode, KeyModifiers};
use serde_json::{Value, json};
use taco::mcp::config::McpConfig;
use taco::mcp::resources::Part;
use taco::mcp::{McpHub, StartContext};
use taco::orchestrator::task::Op;
use taco::tools::{ToolContext, ToolSettings, ToolSource};
use taco::tui::app::{App, Command, McpFetch};
use tokio_util::sync::CancellationToken;

use crate::support;
use support::TestServer;
use support::app::{Harness, info, screen_text};
use support::cli::*;
use support::mcp::fixture;

/// The fixture started in-process with `args`, its catalog listed.
async fn hub_with(args: &[&str]) -> (Arc<McpHub>, tempfile::TempDir) {
    let config: McpConfig = toml::from_str(&format!(
        "[servers.fixture]\ncommand = {:?}\nargs = {:?}\ntool_policies = {{ add_tool = \"allow\" }}",
        fixture().display().to_string(),
        args
    ))
    .unwrap();
    let work = tempfile::tempdir().unwrap();
    let hub = McpHub::start(
        taco::mcp::config::servers(&config).unwrap(),
        StartContext {
            workdir: work.path().to_path_buf(),
            settings: Arc::new(ToolSettings::default()),
            notices: None,
            max_tools: taco::mcp::config::DEFAULT_MAX_TOOLS,
        },
    );
    tokio::time::timeout(Duration::from_secs(20), async {
        hub.settled().await;
        hub.catalog_settled().await;
    })
    .await
    .unwrap();
    (hub, work)
}

/// The TUI's app talking to `hub`, in the workspace `work` (none: the harness's
/// `/work/project`, which need not exist: the screen is the same on every machine).
fn harness(hub: &Arc<McpHub>, work: Option<&tempfile::TempDir>) -> Harness {
    let mut h = Harness::new();
    let mut info = info();
    info.mcp = Some(Arc::clone(hub));
    if let Some(work) = work {
        info.workdir = work.path().display().to_string();
    }
    h.app = App::new(info, h.t0);
    h
}

/// The one MCP fetch among `commands`.
fn fetch_of(commands: Vec<Command>) -> McpFetch {
    let mut fetches = commands.into_iter().filter_map(|c| match c {
        Command::Mcp(fetch) => Some(fetch),
        _ => None,
    });
    let fetch = fetches.next().expect("an MCP fetch");
    assert!(fetches.next().is_none());
    fetch
}

/// The text submitted among `commands`, if any.
fn submitted(commands: &[Command]) -> Option<String> {
    commands.iter().find_map(|c| match c {
        Command::Op(Op::Submit(text)) => Some(text.clone()),
        _ => None,
    })
}

/// Sends `line` from the composer, runs the fetch it asks for against `hub`, and gives the
/// app what came back; what the app then asked for.
async fn send(h: &mut Harness, hub: &McpHub, line: &str) -> Vec<Command> {
    let fetch = fetch_of(h.command(line));
    let fetched = fetch.run(hub).await;
    let now = h.now();
    h.app.on_mcp_fetched(fetched, now)
}

/// The last user message of a request body.
fn last_user(request: &Value) -> String {
    (request["messages"].as_array().unwrap().iter())
        .rev()
        .find(|m| m["role"] == "user")
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_string()
}

/// `taco exec PROMPT` with the fixture configured, against a model that answers `ok`.
async fn exec_prompt(prompt: &str) -> (Run, TestServer) {
    let (home, work) = setup();
    let server = TestServer::start(vec![text_turn(&["ok"])]).await;
    let config = home.path().join("mcp.toml");
    std::fs::write(
        &config,
        format!(
            "[providers.openai.options]\nmax_attempts = 1\n\n[mcp.servers.fixture]\ncommand = {:?}\n",
            fixture().display().to_string()
        ),
    )
    .unwrap();
    let mut cmd = taco(home.path(), work.path());
    cmd.arg("-c").arg(&config);
    openai_args(&mut cmd, &server);
    cmd.arg(prompt);
    (finish(&mut cmd).await, server)
}

#[tokio::test]
async fn exec_sends_a_servers_prompt_as_the_users_message() {
    let (run, server) = exec_prompt(r#"/fixture:greet "Ann Lee" style=formal"#).await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert_eq!(
        last_user(&server.requests()[0].json()),
        "Please greet Ann Lee in a formal way."
    );
    // A prompt with an embedded resource, an image and an assistant turn.
    let (run, server) = exec_prompt("/fixture:review").await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let sent = last_user(&server.requests()[0].json());
    assert_eq!(
        sent,
        "Review the note below.\n\nResource fixture://notes/readme.txt:\nThe fixture's notes: the secret word is mango.\n\n[image from the prompt: image/png, 70 B; not attached]\n\n[assistant]\nI will review it."
    );
    assert!(
        run.stderr
            .contains("the prompt's image (image/png) was not sent"),
        "{}",
        run.stderr
    );
}

#[tokio::test]
async fn exec_names_the_missing_arguments_and_sends_nothing() {
    let (run, server) = exec_prompt("/fixture:greet style=formal").await;
    assert_eq!(run.code, 2, "stderr: {}", run.stderr);
    assert!(
        run.stderr.contains(
            "/fixture:greet needs name: give it as name=value or in order (/fixture:greet <name> [style])"
        ),
        "{}",
        run.stderr
    );
    assert!(server.requests().is_empty());
    let (run, server) = exec_prompt("/fixture:nope").await;
    assert_eq!(run.code, 2, "stderr: {}", run.stderr);
    assert!(
        run.stderr
            .contains("has no prompt named nope (its prompts: greet, review, long)"),
        "{}",
        run.stderr
    );
    assert!(server.requests().is_empty());
}

#[tokio::test]
async fn a_prompt_typed_in_the_tui_is_sent_as_the_users_message() {
    let (hub, work) = hub_with(&[]).await;
    let mut h = harness(&hub, Some(&work));
    let commands = send(&mut h, &hub, "/fixture:greet Ann").await;
    assert_eq!(
        submitted(&commands).as_deref(),
        Some("Please greet Ann in a friendly way.")
    );
    let screen = screen_text(&h.screen(100, 30));
    assert!(
        screen.contains("Please greet Ann in a friendly way."),
        "{screen}"
    );
    hub.shutdown();
}

/// Missing arguments are asked in the form dialog a server's elicitation uses (issue 28.5):
/// filled in, the prompt goes with them; cancelled, the line comes back into the editor.
#[tokio::test]
async fn missing_arguments_are_asked_in_the_form_and_cancel_puts_the_line_back() {
    let (hub, work) = hub_with(&[]).await;
    let mut h = harness(&hub, Some(&work));
    let commands = send(&mut h, &hub, "/fixture:greet style=formal").await;
    assert!(submitted(&commands).is_none(), "{commands:?}");
    let screen = screen_text(&h.screen(120, 30));
    assert!(screen.contains("/fixture:greet needs name"), "{screen}");
    // The form takes keys once the user moves to it (Tab), as every dialog that takes text.
    h.key(KeyCode::Tab);
    h.type_text("Ann \"Lee\"");
    h.key(KeyCode::Enter);
    let commands = h.key(KeyCode::Enter);
    let fetch = fetch_of(commands);
    let fetched = fetch.run(&hub).await;
    let now = h.now();
    let commands = h.app.on_mcp_fetched(fetched, now);
    assert_eq!(
        submitted(&commands).as_deref(),
        Some("Please greet Ann \"Lee\" in a formal way.")
    );

    // Cancelled: nothing goes, and the line is back to finish by hand.
    let mut h = harness(&hub, Some(&work));
    send(&mut h, &hub, "/fixture:greet style=formal").await;
    h.key(KeyCode::Tab);
    h.key(KeyCode::Esc);
    let screen = screen_text(&h.screen(120, 30));
    assert!(
        screen.contains("was not sent: its arguments were not"),
        "{screen}"
    );
    let commands = send(&mut h, &hub, " Bo").await;
    assert_eq!(
        submitted(&commands).as_deref(),
        Some("Please greet Bo in a formal way.")
    );
    hub.shutdown();
}

#[tokio::test]
async fn esc_while_a_prompt_is_fetched_sends_nothing() {
    let (hub, work) = hub_with(&[]).await;
    let mut h = harness(&hub, Some(&work));
    let fetch = fetch_of(h.command("/fixture:greet Ann"));
    h.key(KeyCode::Esc);
    let fetched = fetch.run(&hub).await;
    let now = h.now();
    assert!(h.app.on_mcp_fetched(fetched, now).is_empty());
    let screen = screen_text(&h.screen(100, 30));
    assert!(
        screen.contains("Cancelled: /fixture:greet is not sent."),
        "{screen}"
    );
    assert!(!screen.contains("Please greet"), "{screen}");
    // Free again: the next prompt goes.
    let commands = send(&mut h, &hub, "/fixture:greet Bo").await;
    assert_eq!(
        submitted(&commands).as_deref(),
        Some("Please greet Bo in a friendly way.")
    );
    hub.shutdown();
}

#[tokio::test]
async fn a_mentioned_resource_is_attached_like_a_file_and_bounded() {
    let (hub, work) = hub_with(&[]).await;
    let mut h = harness(&hub, Some(&work));
    let commands = send(
        &mut h,
        &hub,
        "what is the word in @fixture:fixture://notes/readme.txt? also @fixture:fixture://logo.png @fixture:fixture://huge.txt",
    )
    .await;
    let text = submitted(&commands).expect("sent");
    assert!(
        text.starts_with("what is the word in @fixture:fixture://notes/readme.txt? also"),
        "{text}"
    );
    assert!(
        text.contains("<file path=\"fixture:fixture://notes/readme.txt\" size=\"46 B\">\n```txt\nThe fixture's notes: the secret word is mango.\n```\n</file>"),
        "{text}"
    );
    assert!(
        text.contains("[binary content: image/png, 70 B; not attached]") && !text.contains("iVBOR"),
        "no base64 is sent: {text}"
    );
    assert!(
        text.contains("<file path=\"fixture:fixture://huge.txt\" size=\"1.0 MB\" cut=\"64.0 KB\">"),
        "{}",
        &text[..text.len().min(2000)]
    );
    assert!(text.len() < 70 * 1024, "{} bytes sent", text.len());
    let screen = screen_text(&h.screen(160, 40));
    assert!(
        screen.contains("[@fixture:fixture://notes/readme.txt · 46 B]"),
        "the chat shows a chip:\n{screen}"
    );
    assert!(screen.contains("only its first 64.0 KB are"), "{screen}");
    assert!(
        screen.contains("binary content (image/png, 70 B)"),
        "{screen}"
    );
    hub.shutdown();
}

#[tokio::test]
async fn the_popups_offer_prompts_and_resources() {
    let (hub, _work) = hub_with(&[]).await;
    let mut h = harness(&hub, None);
    h.type_text("/fixture:");
    insta::assert_snapshot!("mcp_prompt_popup_100", h.screen(100, 24).backend());
    // Tab takes the prompt (it needs an argument: a space follows it).
    h.key(KeyCode::Tab);
    let screen = screen_text(&h.screen(100, 24));
    assert!(screen.contains("/fixture:greet "), "{screen}");
    h.key_with(KeyCode::Char('u'), KeyModifiers::CONTROL);
    h.type_text("see @readme");
    let screen = screen_text(&h.screen(100, 24));
    assert!(
        screen.contains("files and resources · 1 of 4")
            && screen.contains("›fixture:fixture://notes/readme.txt  readme · text/pl"),
        "{screen}"
    );
    hub.shutdown();
}

#[tokio::test]
async fn slash_mcp_lists_prompts_and_resources() {
    let (hub, work) = hub_with(&[]).await;
    let mut h = harness(&hub, Some(&work));
    h.command("/mcp");
    let screen = screen_text(&h.screen(160, 60));
    for wanted in [
        "Prompts and resources",
        "fixture: 3 prompts, 4 resources",
        "/fixture:greet <name> [style]: Asks the model to greet someone.",
        "@fixture:fixture://notes/readme.txt: readme",
        "@fixture:fixture://echo/{word} (template): echo",
    ] {
        assert!(screen.contains(wanted), "{wanted} missing:\n{screen}");
    }
    hub.shutdown();
}

#[tokio::test]
async fn ten_thousand_prompts_are_bounded() {
    let started = Instant::now();
    let (hub, _work) = hub_with(&["--prompts", "10000", "--page-size", "500"]).await;
    let listed = started.elapsed();
    let prompts = hub.prompts();
    assert_eq!(prompts.len(), taco::mcp::catalog_pages::MAX_ITEMS);
    let described = hub.describe_catalog();
    assert!(described.contains("… and 180 more"), "{described}");
    assert!(
        described
            .contains("note: prompts: it offers more than 200 prompts; the first 200 are listed"),
        "{described}"
    );
    eprintln!("10,000 prompts: ready and listed in {listed:?}");
    hub.shutdown();
}

#[tokio::test]
async fn a_changed_prompt_list_is_listed_again_and_reads_are_bounded() {
    let (hub, work) = hub_with(&[]).await;
    let names =
        |hub: &McpHub| -> Vec<String> { hub.prompts().into_iter().map(|p| p.name).collect() };
    assert_eq!(names(&hub), ["greet", "review", "long"]);
    let add = (hub.tools().into_iter())
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
    let deadline = Instant::now() + Duration::from_secs(5);
    while !names(&hub).contains(&"late_prompt".to_string()) {
        assert!(
            Instant::now() < deadline,
            "never listed again: {:?}",
            names(&hub)
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // A 1 MiB resource keeps the budget; a template's URI is read as filled in.
    let parts = hub
        .read_resource("fixture", "fixture://huge.txt", 1000)
        .await
        .unwrap();
    let [
        Part::Text {
            text, size, cut, ..
        },
    ] = parts.as_slice()
    else {
        panic!("{parts:?}");
    };
    assert_eq!((text.len(), *size, *cut), (1000, 1 << 20, true));
    let parts = hub
        .read_resource("fixture", "fixture://echo/kiwi", 1000)
        .await
        .unwrap();
    assert!(matches!(parts.as_slice(), [Part::Text { text, .. }] if text == "echo kiwi"));
    let missing = hub
        .read_resource("fixture", "fixture://none", 1000)
        .await
        .unwrap_err();
    assert!(
        missing
            .to_string()
            .contains("the MCP server fixture failed"),
        "{missing}"
    );
    let long = hub.run_prompt("/fixture:long").await.unwrap();
    assert!(long.text.len() < taco::mcp::prompts::MAX_PROMPT_BYTES + 200);
    assert!(
        long.notes[0].contains("only its first 256.0 KB are sent"),
        "{:?}",
        long.notes
    );
    hub.shutdown();
}

/// End to end in the real binary (tmux): a prompt run from the composer and a resource
/// mentioned in a message reach the model as the user's messages. Needs tmux (CI has it).
#[test]
fn e2e_a_prompt_and_a_resource_from_the_tui_reach_the_model() {
    if !crate::support::needs::tmux() {
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let server = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(TestServer::start(vec![
            text_turn(&["ok one"]),
            text_turn(&["ok two"]),
        ]));
    let dir = home.path().join("config/taco");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("config.toml"),
        format!(
            "provider = \"local\"\n\n[providers.local]\nkind = \"openai\"\nbase_url = \"{}/v1\"\nmodel = \"m\"\n\n[providers.local.options]\nmax_attempts = 1\n\n[mcp.servers.fixture]\ncommand = {:?}\n",
            server.url(),
            fixture().display().to_string()
        ),
    )
    .unwrap();
    let tmux = support::tmux::launch_taco(home.path(), work.path(), "", "", (160, 45));
    tmux.wait_for("Welcome to taco");
    // `/mcp` lists the prompts once the server's catalog is there.
    tmux.wait_for_mcp("/fixture:greet");
    tmux.text("/fixture:greet Ann");
    tmux.keys(&["Enter"]);
    tmux.wait_for("ok one");
    // Enter on a whole resource mention sends (the popup does not take it).
    tmux.text("what is the word? @fixture:fixture://notes/readme.txt");
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_for("ok two");
    assert!(
        screen.contains("[@fixture:fixture://notes/readme.txt · 46 B]"),
        "{screen}"
    );
    let requests = server.requests();
    assert_eq!(
        last_user(&requests[0].json()),
        "Please greet Ann in a friendly way."
    );
    let second = last_user(&requests[1].json());
    assert!(
        second.starts_with("what is the word? @fixture:fixture://notes/readme.txt\n\n<file path=\"fixture:fixture://notes/readme.txt\"")
            && second.contains("the secret word is mango"),
        "{second}"
    );
    tmux.text("/quit");
    tmux.keys(&["Enter"]);
    tmux.wait_for("EXITED");
}
