//! Hooks (issue 30.1) with the binary: real `sh` hooks from the user's config and a project's
//! `.taco/config.toml`, against a loopback model. Allow, deny with a reason, exit 2, ask, a
//! timeout, huge output, a hook that hangs, an untrusted project hook, context, a stop hook,
//! no secrets; each run a span in `--json`.

use crate::support;

use std::path::Path;

use serde_json::Value;
use support::TestServer;
use support::cli::*;

fn config(home: &Path, text: &str) {
    std::fs::create_dir_all(home.join("config/taco")).unwrap();
    std::fs::write(home.join("config/taco/config.toml"), text).unwrap();
}

fn hooks_of(lines: &[Value]) -> Vec<&Value> {
    lines
        .iter()
        .filter(|e| e["type"] == "hook")
        .map(|e| &e["data"])
        .collect()
}

fn result_of<'a>(lines: &'a [Value], id: &str) -> &'a Value {
    &lines
        .iter()
        .find(|e| e["type"] == "tool_result" && e["data"]["id"] == id)
        .unwrap_or_else(|| panic!("no result for {id}"))["data"]
}

/// Every message text the model was sent, in the last request.
fn last_request_text(server: &TestServer) -> String {
    let last = server.requests().last().unwrap().json();
    last["messages"].to_string()
}

async fn exec(
    home: &Path,
    work: &Path,
    server: &TestServer,
    extra: &[&str],
    prompt: &str,
) -> (Run, Vec<Value>) {
    let mut cmd = taco(home, work);
    openai_args(&mut cmd, server);
    cmd.args(["--json"]).args(extra).arg(prompt);
    let run = finish(&mut cmd).await;
    let lines = run
        .stdout
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    (run, lines)
}

#[tokio::test]
async fn exit_2_denies_with_stderr_as_the_reason_the_model_sees() {
    let (home, work) = setup();
    config(
        home.path(),
        "[[hooks.pre_tool_use]]\nmatcher = \"shell\"\ncommand = \"echo 'no shell on fridays' >&2; exit 2\"\n",
    );
    let server = TestServer::start(vec![
        tool_turn("s1", "shell", r#"{"command": "touch made.txt"}"#),
        text_turn(&["ok"]),
    ])
    .await;
    let (run, lines) = exec(
        home.path(),
        work.path(),
        &server,
        &["--approve", "all"],
        "go",
    )
    .await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        !work.path().join("made.txt").exists(),
        "the call did not run"
    );
    let result = result_of(&lines, "s1");
    assert_eq!(result["status"], "denied");
    assert_eq!(result["denied_by"], "hook");
    assert!(last_request_text(&server).contains("no shell on fridays"));
    let hooks = hooks_of(&lines);
    assert_eq!(hooks.len(), 1);
    assert_eq!(hooks[0]["event"], "pre_tool_use");
    assert_eq!(hooks[0]["decision"], "deny");
    assert_eq!(hooks[0]["call"], "s1");
    assert_eq!(hooks[0]["exit_code"], 2);
    // A span: on the stack while it ran, under the call it guarded.
    let pushed = lines
        .iter()
        .find(|e| e["type"] == "stack_push" && e["data"]["name"] == "hook pre_tool_use")
        .expect("the hook was a frame");
    assert_eq!(pushed["data"]["parent"], "s1");
}

#[tokio::test]
async fn json_allow_spares_the_question_and_ask_asks() {
    let (home, work) = setup();
    config(
        home.path(),
        r#"
[[hooks.pre_tool_use]]
matcher = "write_file"
command = "echo '{\"decision\": \"allow\", \"reason\": \"fine\"}'"
[[hooks.pre_tool_use]]
matcher = "read_file"
command = "echo '{\"hookSpecificOutput\": {\"permissionDecision\": \"ask\"}}'"
"#,
    );
    let server = TestServer::start(vec![
        tool_turn("w1", "write_file", r#"{"path": "a.txt", "content": "a"}"#),
        tool_turn("r1", "read_file", r#"{"path": "hello.txt"}"#),
        text_turn(&["ok"]),
    ])
    .await;
    // Nobody can be asked: a call that asks is denied.
    let (run, lines) = exec(home.path(), work.path(), &server, &[], "go").await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        result_of(&lines, "w1")["status"],
        "ok",
        "allowed by the hook"
    );
    assert!(work.path().join("a.txt").exists());
    assert_eq!(
        result_of(&lines, "r1")["status"],
        "denied",
        "asked, so denied"
    );
    assert_eq!(result_of(&lines, "r1")["denied_by"], "headless");
}

#[tokio::test]
async fn a_failing_slow_hanging_or_flooding_hook_is_reported_and_changes_nothing() {
    let (home, work) = setup();
    config(
        home.path(),
        r#"
[[hooks.pre_tool_use]]
command = "exit 1"
[[hooks.pre_tool_use]]
command = "sleep 30"
timeout_secs = 1
[[hooks.pre_tool_use]]
command = "sleep 30 & echo started"
timeout_secs = 1
[[hooks.pre_tool_use]]
command = "head -c 20000000 /dev/zero | tr '\\0' x"
[[hooks.pre_tool_use]]
command = "echo '{not json'"
"#,
    );
    let server = TestServer::start(vec![
        tool_turn("r1", "read_file", r#"{"path": "hello.txt"}"#),
        text_turn(&["ok"]),
    ])
    .await;
    let started = std::time::Instant::now();
    let (run, lines) = exec(home.path(), work.path(), &server, &[], "go").await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        result_of(&lines, "r1")["status"],
        "ok",
        "the hooks decided nothing"
    );
    let hooks = hooks_of(&lines);
    assert_eq!(hooks.len(), 5, "{hooks:?}");
    assert!(hooks[0]["error"].as_str().unwrap().contains("exited 1"));
    assert!(
        hooks[1]["error"]
            .as_str()
            .unwrap()
            .contains("longer than 1 s")
    );
    assert!(
        hooks[2]["error"]
            .as_str()
            .unwrap()
            .contains("longer than 1 s"),
        "a child holding the pipe: {}",
        hooks[2]
    );
    assert!(hooks[3]["error"].is_null(), "{}", hooks[3]);
    assert!(
        hooks[4]["error"]
            .as_str()
            .unwrap()
            .contains("not valid JSON")
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
}

#[tokio::test]
async fn prompt_hooks_block_or_add_context_and_get_no_secrets() {
    let (home, work) = setup();
    config(
        home.path(),
        r#"
[[hooks.user_prompt_submit]]
command = "read input; case \"$input\" in *forbidden*) echo 'not that' >&2; exit 2;; esac; echo \"key=${OPENAI_API_KEY:-none}\""
[[hooks.session_start]]
command = "echo started-here"
"#,
    );
    let server = TestServer::start(vec![text_turn(&["ok"])]).await;
    let mut cmd = taco(home.path(), work.path());
    cmd.env("OPENAI_API_KEY", "sk-secret-value-123456");
    openai_args(&mut cmd, &server);
    cmd.args(["--json", "do the forbidden thing"]);
    let run = finish(&mut cmd).await;
    assert_ne!(run.code, 0);
    assert!(run.stderr.contains("not that"), "{}", run.stderr);
    assert!(server.requests().is_empty(), "nothing reached the model");

    let mut cmd = taco(home.path(), work.path());
    cmd.env("OPENAI_API_KEY", "sk-secret-value-123456");
    openai_args(&mut cmd, &server);
    cmd.args(["--json", "a fine request"]);
    let run = finish(&mut cmd).await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    let sent = last_request_text(&server);
    assert!(sent.contains("started-here"), "{sent}");
    assert!(sent.contains("key=none"), "the hook had no key: {sent}");
    assert!(!sent.contains("sk-secret"));
    assert!(!run.stdout.contains("sk-secret"));
}

#[tokio::test]
async fn a_stop_hook_sends_the_model_back_once_then_lets_it_end() {
    let (home, work) = setup();
    config(
        home.path(),
        "[[hooks.stop]]\ncommand = \"if [ -e checked ]; then exit 0; fi; touch checked; echo 'run the tests first' >&2; exit 2\"\n",
    );
    let server =
        TestServer::start(vec![text_turn(&["done"]), text_turn(&["tests pass, done"])]).await;
    let (run, lines) = exec(home.path(), work.path(), &server, &[], "go").await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(server.requests().len(), 2);
    assert!(last_request_text(&server).contains("run the tests first"));
    let last = lines.iter().rfind(|e| e["type"] == "final").unwrap();
    assert_eq!(last["data"]["content"], "tests pass, done");
    assert_eq!(hooks_of(&lines).len(), 2);
}

#[tokio::test]
async fn post_tool_use_context_reaches_the_model_with_the_results() {
    let (home, work) = setup();
    config(
        home.path(),
        "[[hooks.post_tool_use]]\nmatcher = \"read_file\"\ncommand = \"echo '{\\\"additional_context\\\": \\\"remember: hello.txt is generated\\\"}'\"\n",
    );
    let server = TestServer::start(vec![
        tool_turn("r1", "read_file", r#"{"path": "hello.txt"}"#),
        text_turn(&["ok"]),
    ])
    .await;
    let (run, lines) = exec(home.path(), work.path(), &server, &[], "go").await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(last_request_text(&server).contains("remember: hello.txt is generated"));
    let hooks = hooks_of(&lines);
    assert_eq!(hooks[0]["event"], "post_tool_use");
    assert_eq!(hooks[0]["context"], true);
}

#[tokio::test]
async fn a_project_hook_runs_only_once_trusted_and_again_after_a_change_needs_trust() {
    let (home, work) = setup();
    std::fs::create_dir(work.path().join(".taco")).unwrap();
    let project = work.path().join(".taco/config.toml");
    std::fs::write(
        &project,
        "[[hooks.pre_tool_use]]\ncommand = \"touch project-hook-ran; exit 2\"\n",
    )
    .unwrap();
    let server = TestServer::start(vec![
        tool_turn("r1", "read_file", r#"{"path": "hello.txt"}"#),
        text_turn(&["ok"]),
        tool_turn("r2", "read_file", r#"{"path": "hello.txt"}"#),
        text_turn(&["ok"]),
    ])
    .await;
    let (run, lines) = exec(home.path(), work.path(), &server, &[], "go").await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stderr.contains("trust"), "{}", run.stderr);
    assert!(hooks_of(&lines).is_empty());
    assert!(!work.path().join("project-hook-ran").exists());
    assert_eq!(result_of(&lines, "r1")["status"], "ok");

    let mut trust = taco(home.path(), work.path());
    trust.arg("trust");
    let trusted = finish(&mut trust).await;
    assert_eq!(trusted.code, 0, "{}", trusted.stderr);
    assert!(trusted.stdout.contains("1 hook"), "{}", trusted.stdout);
    let (run, lines) = exec(home.path(), work.path(), &server, &[], "go").await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(work.path().join("project-hook-ran").exists());
    assert_eq!(hooks_of(&lines)[0]["source"], "project");
    assert_eq!(result_of(&lines, "r2")["status"], "denied");

    // Changed: not trusted any more.
    std::fs::write(&project, "[[hooks.pre_tool_use]]\ncommand = \"exit 2\"\n").unwrap();
    let server = TestServer::start(vec![
        tool_turn("r3", "read_file", r#"{"path": "hello.txt"}"#),
        text_turn(&["ok"]),
    ])
    .await;
    let (_, lines) = exec(home.path(), work.path(), &server, &[], "go").await;
    assert_eq!(result_of(&lines, "r3")["status"], "ok");
}

#[tokio::test]
async fn a_bad_hook_config_is_a_clear_error() {
    let (home, work) = setup();
    config(
        home.path(),
        "[[hooks.pre_tool_use]]\nmatcher = \"(\"\ncommand = \"x\"\n",
    );
    let server = TestServer::start(vec![text_turn(&["ok"])]).await;
    let (run, _) = exec(home.path(), work.path(), &server, &[], "go").await;
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("matcher is not a valid pattern"),
        "{}",
        run.stderr
    );
}
