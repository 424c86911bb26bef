//! The published everything server (`@modelcontextprotocol/server-everything`, installed by
//! `.ci/run`) for what issue 28 promises beyond forms (`mcp_forms.rs` has those): its
//! progress reaches `exec --json` before the result, its prompts run as `/everything:…`, and
//! killed mid-session it is restarted with its tools.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed unwrap is a failed test

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use taco::mcp::{McpHub, Status};
use taco::tools::ToolSource;

use crate::support;
use support::TestServer;
use support::cli::*;
use support::mcp::require_everything_server;

/// The hub with the everything server started as `command` (`args`), ready.
async fn hub(command: &str, args: &[String]) -> Arc<McpHub> {
    let hub = support::mcp::start_hub(
        &format!(
            "[servers.everything]\ncommand = {command:?}\nargs = {args:?}\nstartup_timeout_secs = 30\n"
        ),
        &std::env::temp_dir(),
        None,
    );
    tokio::time::timeout(Duration::from_secs(30), hub.settled())
        .await
        .unwrap();
    assert_eq!(
        hub.view()[0].status,
        Status::Ready,
        "{:?}",
        hub.view()[0].stderr
    );
    hub
}

#[tokio::test]
async fn its_long_running_operation_reports_progress_before_its_result() {
    let Some(path) = require_everything_server() else {
        return;
    };
    let (home, work) = setup();
    let server = TestServer::start(vec![
        tool_turn(
            "op",
            "mcp__everything__trigger-long-running-operation",
            r#"{"duration": 1, "steps": 4}"#,
        ),
        text_turn(&["done"]),
    ])
    .await;
    let config = home.path().join("everything.toml");
    std::fs::write(
        &config,
        format!(
            "[providers.openai.options]\nmax_attempts = 1\n\n[mcp.servers.everything]\ncommand = {:?}\nstartup_timeout_secs = 30\n",
            path.display().to_string()
        ),
    )
    .unwrap();
    let mut cmd = taco(home.path(), work.path());
    cmd.arg("-c").arg(&config);
    openai_args(&mut cmd, &server);
    cmd.args(["--json", "--approve", "all", "go"]);
    let run = finish(&mut cmd).await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    let events: Vec<Value> = run
        .stdout
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let progress: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "tool_progress")
        .collect();
    assert!(!progress.is_empty(), "{}", run.stdout);
    assert!(
        progress.iter().all(|p| p["data"]["total"] == 4.0),
        "{progress:?}"
    );
    let at = |kind: &str| events.iter().position(|e| e["type"] == kind).unwrap();
    assert!(at("tool_progress") < at("tool_result"));
    let result = &events[at("tool_result")]["data"];
    assert_eq!(result["status"], "ok", "{result}");
}

#[tokio::test]
async fn its_prompts_run_as_slash_commands() {
    let Some(path) = require_everything_server() else {
        return;
    };
    let hub = hub(&path.display().to_string(), &[]).await;
    tokio::time::timeout(Duration::from_secs(10), hub.catalog_settled())
        .await
        .unwrap();
    let names: Vec<String> = hub.prompts().into_iter().map(|p| p.name).collect();
    assert!(names.contains(&"simple-prompt".to_string()), "{names:?}");
    assert!(names.contains(&"args-prompt".to_string()), "{names:?}");
    let simple = hub.run_prompt("/everything:simple-prompt").await.unwrap();
    assert!(
        simple
            .text
            .contains("This is a simple prompt without arguments."),
        "{}",
        simple.text
    );
    let args = hub
        .run_prompt("/everything:args-prompt city=Paris state=\"Île-de-France\"")
        .await
        .unwrap();
    assert!(args.text.contains("Paris, Île-de-France"), "{}", args.text);
    let missing = hub.run_prompt("/everything:args-prompt").await.unwrap_err();
    assert!(missing.to_string().contains("needs city"), "{missing}");
    hub.shutdown();
}

#[tokio::test]
async fn killed_it_is_restarted_and_its_tools_come_back() {
    let Some(path) = require_everything_server() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("pid");
    // The shell records its pid and becomes the server (exec): that pid is the server's.
    let script = format!(
        "echo $$ > '{}'; exec '{}'",
        pidfile.display(),
        path.display()
    );
    let hub = hub("sh", &["-c".to_string(), script]).await;
    let offered = |hub: &McpHub| {
        hub.tools()
            .iter()
            .filter(|t| t.name().starts_with("mcp__everything__"))
            .count()
    };
    let before = offered(&hub);
    assert!(before > 5, "{before}");
    let pid: i32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    std::fs::remove_file(&pidfile).unwrap();
    // SAFETY: kill takes plain integers.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGKILL) }, 0);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let view = hub.view().remove(0);
        if view.status == Status::Ready && view.restarts == 1 && offered(&hub) == before {
            assert!(
                view.last_error
                    .as_deref()
                    .unwrap_or("")
                    .contains("killed by signal 9"),
                "{:?}",
                view.last_error
            );
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "never back: {view:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(pidfile.exists(), "a new process started");
    hub.shutdown();
}
