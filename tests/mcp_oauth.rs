//! OAuth for Streamable HTTP MCP servers (issue 28.7), end to end against a loopback
//! authorization server and the MCP server it guards (`support::oauth`): discovery, dynamic
//! registration, the authorization code with PKCE through taco's loopback redirect (the test
//! plays the browser by fetching the URL taco shows), the tools listed and called with the
//! token, the token file (0600, not in any file taco writes), refresh after expiry, a forged
//! redirect refused, a hostile token endpoint bounded, and `exec` that never waits for a login.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed unwrap is a failed test

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;
use taco::mcp::config::McpConfig;
use taco::mcp::{McpHub, StartContext, Status};
use taco::tools::{ToolContext, ToolSettings, ToolSource};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};
use tokio_util::sync::CancellationToken;

use crate::support;
use support::TestServer;
use support::cli::*;
use support::oauth::{AuthServer, TokenMode, play_browser, redirect_uri};

/// A config naming the guarded server (with `extra` lines for its table).
fn write_config(home: &Path, auth: &AuthServer, extra: &str) -> PathBuf {
    let path = home.join("oauth.toml");
    let text = format!(
        "[providers.openai.options]\nmax_attempts = 1\n\n[mcp.servers.guarded]\nurl = {:?}\ntool_policies = {{ whoami = \"allow\" }}\nstartup_timeout_secs = 3\n{extra}\n",
        auth.mcp_url()
    );
    std::fs::write(&path, text).unwrap();
    path
}

/// Where taco keeps the guarded server's tokens under a test's HOME.
fn token_file(home: &Path) -> PathBuf {
    home.join(".local/state/taco/mcp-oauth/guarded.json")
}

/// `taco mcp login guarded`, started; returns the child and the URL it printed.
async fn start_login(
    home: &Path,
    work: &Path,
    config: &Path,
) -> (
    tokio::process::Child,
    String,
    BufReader<tokio::process::ChildStdout>,
) {
    let mut cmd = taco(home, work);
    cmd.arg("-c").arg(config).args(["mcp", "login", "guarded"]);
    cmd.stdout(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut seen = String::new();
    let url = tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            let mut line = String::new();
            if out.read_line(&mut line).await.unwrap() == 0 {
                return None;
            }
            seen.push_str(&line);
            if line.starts_with("http") {
                return Some(line.trim().to_string());
            }
        }
    })
    .await
    .ok()
    .flatten();
    let Some(url) = url else {
        let mut err = String::new();
        let _ = child.stderr.take().unwrap().read_to_string(&mut err).await;
        panic!("no URL printed; stdout: {seen}; stderr: {err}");
    };
    (child, url, out)
}

/// Waits for a started login to end; its exit code, the rest of its stdout, its stderr.
async fn end_login(
    mut child: tokio::process::Child,
    mut out: BufReader<tokio::process::ChildStdout>,
) -> (i32, String, String) {
    let mut rest = String::new();
    let mut err = String::new();
    let mut stderr = child.stderr.take().unwrap();
    let ended = tokio::time::timeout(Duration::from_secs(30), async {
        let _ = out.read_to_string(&mut rest).await;
        let _ = stderr.read_to_string(&mut err).await;
        child.wait().await.unwrap()
    })
    .await
    .expect("taco mcp login did not end");
    (ended.code().unwrap_or(-1), rest, err)
}

/// A full login by the command line; the token file's text.
async fn login(home: &Path, work: &Path, config: &Path) -> String {
    let (child, url, out) = start_login(home, work, config).await;
    assert_eq!(play_browser(&url).await, 200, "{url}");
    let (code, rest, err) = end_login(child, out).await;
    assert_eq!(code, 0, "stdout: {rest}\nstderr: {err}");
    std::fs::read_to_string(token_file(home)).unwrap()
}

/// `taco exec --json` whose model calls `whoami`, then answers.
async fn exec_whoami(home: &Path, work: &Path, config: &Path) -> (Run, TestServer) {
    let server = TestServer::start(vec![
        tool_turns(&[("w", "mcp__guarded__whoami", "{}")]),
        text_turn(&["done"]),
    ])
    .await;
    let mut cmd = taco(home, work);
    cmd.arg("-c").arg(config);
    openai_args(&mut cmd, &server);
    cmd.args(["--json", "go"]);
    let run = finish(&mut cmd).await;
    (run, server)
}

/// The `tool` message of the model's second request.
fn told(server: &TestServer) -> String {
    let requests = server.requests();
    let messages = requests[1].json()["messages"].as_array().unwrap().clone();
    let tool: Vec<&Value> = messages.iter().filter(|m| m["role"] == "tool").collect();
    tool[0]["content"].as_str().unwrap().to_string()
}

#[tokio::test]
async fn login_discovers_registers_and_the_tools_are_listed_and_called_with_the_token() {
    let auth = AuthServer::start().await;
    let (home, work) = setup();
    let config = write_config(home.path(), &auth, "auth = \"oauth\"");
    let (child, url, out) = start_login(home.path(), work.path(), &config).await;
    // The URL is the authorization server's, with PKCE (S256), the resource and taco's
    // loopback redirect.
    assert!(
        url.starts_with(&format!("{}/authorize?", auth.origin)),
        "{url}"
    );
    for part in [
        "code_challenge_method=S256",
        "code_challenge=",
        "state=",
        "resource=",
    ] {
        assert!(url.contains(part), "{part} in {url}");
    }
    let redirect = redirect_uri(&url);
    assert!(redirect.starts_with("http://127.0.0.1:") && redirect.ends_with("/callback"));
    // A redirect with a forged state is refused, and the login goes on waiting.
    let forged = reqwest::get(format!("{redirect}?code=stolen&state=forged"))
        .await
        .unwrap();
    assert_eq!(forged.status(), 400);
    assert_eq!(play_browser(&url).await, 200);
    let (code, rest, err) = end_login(child, out).await;
    assert_eq!(code, 0, "stdout: {rest}\nstderr: {err}");
    assert!(rest.contains("Logged in to MCP server guarded"), "{rest}");
    assert!(
        rest.contains("whoami"),
        "the tools are listed after the login: {rest}"
    );
    {
        let state = auth.state.lock().unwrap();
        assert_eq!(state.clients.len(), 1, "taco registered itself once");
        assert_eq!(state.grants, ["authorization_code"]);
        assert_eq!(state.pkce_failures, 0);
        let resource = auth.mcp_url();
        assert!(
            !state.resources.is_empty() && state.resources.iter().all(|r| *r == resource),
            "{:?}",
            state.resources
        );
    }

    // The token file: private, and what the authorization server issued.
    let path = token_file(home.path());
    let mode = std::fs::metadata(&path).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    let saved = std::fs::read_to_string(&path).unwrap();
    let (access, refresh) = {
        let state = auth.state.lock().unwrap();
        (state.issued[0].clone(), state.issued_refresh[0].clone())
    };
    assert!(
        saved.contains(&access) && saved.contains(&refresh),
        "{saved}"
    );

    // exec uses the saved token: the tool is offered, called, and its result (which echoes
    // the token) reaches the model and the session file redacted.
    let (run, server) = exec_whoami(home.path(), work.path(), &config).await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let result = told(&server);
    assert!(result.contains("guarded ok"), "{result}");
    assert!(
        !result.contains(&access),
        "the token reached the model: {result}"
    );
    assert!(auth.state.lock().unwrap().calls >= 1);
    assert!(auth.state.lock().unwrap().accepted.contains(&access));
    let session = std::fs::read_to_string(only_session(home.path())).unwrap();
    assert!(
        session.contains("guarded ok"),
        "the result is in the session"
    );
    for (what, text) in [
        ("session", &session),
        ("stdout", &run.stdout),
        ("stderr", &run.stderr),
    ] {
        assert!(
            !text.contains(&access) && !text.contains(&refresh),
            "a token in the {what}"
        );
    }
}

#[tokio::test]
async fn a_configured_client_id_is_used_without_registering() {
    let auth = AuthServer::start().await;
    auth.state.lock().unwrap().preset = Some("preset-client".into());
    let (home, work) = setup();
    let config = write_config(
        home.path(),
        &auth,
        "auth = \"oauth\"\nclient_id = \"preset-client\"\nscopes = [\"mcp\"]",
    );
    let saved = login(home.path(), work.path(), &config).await;
    assert!(saved.contains("preset-client"), "{saved}");
    let state = auth.state.lock().unwrap();
    assert!(state.clients.is_empty(), "no dynamic registration");
    assert_eq!(state.grants, ["authorization_code"]);
}

#[tokio::test]
async fn an_expired_token_is_refreshed_and_saved() {
    let auth = AuthServer::start().await;
    auth.set_token_life(1);
    let (home, work) = setup();
    let config = write_config(home.path(), &auth, "auth = \"oauth\"");
    login(home.path(), work.path(), &config).await;
    let first = auth.state.lock().unwrap().issued[0].clone();
    tokio::time::sleep(Duration::from_millis(1500)).await;
    auth.set_token_life(3600);
    // The login's own check of the tools used the first token; from here on, only fresh ones.
    let before = auth.state.lock().unwrap().accepted.len();
    let (run, server) = exec_whoami(home.path(), work.path(), &config).await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert!(told(&server).contains("guarded ok"), "{}", told(&server));
    let state = auth.state.lock().unwrap();
    assert!(
        state.grants.iter().any(|g| g == "refresh_token"),
        "{:?}",
        state.grants
    );
    let fresh = state.issued.last().unwrap().clone();
    assert_ne!(fresh, first);
    assert!(state.accepted.contains(&fresh));
    assert!(
        !state.accepted[before..].contains(&first),
        "the expired token was never accepted"
    );
    let saved = std::fs::read_to_string(token_file(home.path())).unwrap();
    assert!(
        saved.contains(&fresh) && !saved.contains(&first),
        "the new token is saved"
    );
    let mode = std::fs::metadata(token_file(home.path()))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
}

#[tokio::test]
async fn exec_without_a_login_says_so_and_goes_on_without_the_tools() {
    let auth = AuthServer::start().await;
    let (home, work) = setup();
    // No `auth`: the server's 401 with an OAuth challenge is what tells taco.
    let config = write_config(home.path(), &auth, "");
    let server = TestServer::start(vec![text_turn(&["fine without it"])]).await;
    let mut cmd = taco(home.path(), work.path());
    cmd.arg("-c").arg(&config);
    openai_args(&mut cmd, &server);
    cmd.args(["--json", "go"]);
    let started = Instant::now();
    let run = finish(&mut cmd).await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert!(started.elapsed() < Duration::from_secs(20));
    assert!(
        run.stderr.contains("MCP server guarded") && run.stderr.contains("taco mcp login guarded"),
        "{}",
        run.stderr
    );
    let offered = server.requests()[0].json()["tools"].to_string();
    assert!(!offered.contains("mcp__guarded"), "{offered}");
    assert!(run.stdout.contains("fine without it"));
    assert!(auth.state.lock().unwrap().refused >= 1);
    assert!(!token_file(home.path()).exists());
}

#[tokio::test]
async fn a_hostile_token_endpoint_costs_a_bounded_wait_and_a_clear_error() {
    for (mode, says) in [
        (TokenMode::Hang, "did not answer within 3 s"),
        (TokenMode::Huge, "more than 262144 bytes"),
        (TokenMode::Garbage, "could not be exchanged for tokens"),
    ] {
        let auth = AuthServer::start().await;
        auth.set_token_mode(mode);
        let (home, work) = setup();
        let config = write_config(home.path(), &auth, "auth = \"oauth\"");
        let (child, url, out) = start_login(home.path(), work.path(), &config).await;
        let started = Instant::now();
        // The browser's page comes back at once: the exchange happens after it.
        assert_eq!(play_browser(&url).await, 200);
        let (code, rest, err) = end_login(child, out).await;
        assert!(
            started.elapsed() < Duration::from_secs(15),
            "{mode:?}: {:?}",
            started.elapsed()
        );
        assert_eq!(code, 1, "{mode:?}: {rest} {err}");
        assert!(
            err.contains("the login to MCP server guarded failed"),
            "{mode:?}: {err}"
        );
        assert!(err.contains(says), "{mode:?}: {err}");
        assert!(
            err.lines().count() <= 3 && err.len() < 2000,
            "{mode:?}: {err}"
        );
        assert!(!token_file(home.path()).exists(), "{mode:?}");
    }
}

#[tokio::test]
async fn the_hub_logs_in_shows_the_url_and_starts_the_server_again() {
    // The TUI's `/mcp login NAME`: the hub's login, its URL as the server's status.
    let auth = AuthServer::start().await;
    let state = tempfile::tempdir().unwrap();
    let config: McpConfig = toml::from_str(&format!(
        "[servers.guarded]\nurl = {:?}\nstartup_timeout_secs = 3\n",
        auth.mcp_url()
    ))
    .unwrap();
    let mut specs = taco::mcp::config::servers(&config).unwrap();
    specs[0].oauth.tokens = Some(state.path().join("mcp-oauth/guarded.json"));
    let work = tempfile::tempdir().unwrap();
    let (sender, mut notices) = tokio::sync::mpsc::unbounded_channel();
    let hub = McpHub::start(
        specs,
        StartContext {
            workdir: work.path().to_path_buf(),
            settings: Arc::new(ToolSettings::default()),
            notices: Some(sender),
            max_tools: 100,
        },
    );
    tokio::time::timeout(Duration::from_secs(10), hub.settled())
        .await
        .unwrap();
    let view = hub.view();
    assert!(
        matches!(&view[0].status, Status::NeedsLogin(why) if why.contains("/mcp login guarded")),
        "{:?}",
        view[0].status
    );
    assert!(hub.can_login("nope").is_err());
    hub.login("guarded").unwrap();
    assert!(hub.can_login("guarded").is_err(), "one login at a time");
    let url = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            let notice = notices.recv().await.unwrap();
            if let Status::Authorizing(url) = notice.status {
                return url;
            }
        }
    })
    .await
    .unwrap();
    let listed = taco::mcp::describe_servers(&hub.view());
    assert!(listed.contains(&url), "/mcp shows the URL: {listed}");
    assert_eq!(play_browser(&url).await, 200);
    tokio::time::timeout(Duration::from_secs(10), async {
        while !hub
            .tools()
            .iter()
            .any(|t| t.name() == "mcp__guarded__whoami")
        {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the server came back with its tools");
    assert_eq!(hub.view()[0].status, Status::Ready);
    let tool = hub
        .tools()
        .into_iter()
        .find(|t| t.name() == "mcp__guarded__whoami")
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
    let Ok(taco::tools::ToolReply::Done(result)) = tool.call(serde_json::json!({}), &ctx).await
    else {
        panic!("the call failed");
    };
    assert!(result.to_string().contains("guarded ok"), "{result}");
    let mode = std::fs::metadata(state.path().join("mcp-oauth/guarded.json"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    hub.shutdown();
}

/// The TUI, end to end in tmux (with `set-clipboard on`, so a copy lands in a paste buffer):
/// the server's need for a login is said in the chat, `/mcp login guarded` shows the URL as a
/// message of its own, Alt-↑ and `y` copy exactly the URL, the browser (the test) comes back,
/// the server starts again with its tools; the token is in no file taco writes but its own.
#[test]
fn the_tui_shows_a_copyable_url_and_the_server_comes_back_after_the_login() {
    if !crate::support::needs::tmux() {
        return;
    }
    use support::tmux::Tmux;
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let auth = runtime.block_on(AuthServer::start());
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let config = write_config(home.path(), &auth, "");
    let taco = env!("CARGO_BIN_EXE_taco");
    let path = std::env::var("PATH").unwrap_or_default();
    let command = format!(
        "while [ ! -e '{home}/go' ]; do sleep 0.05; done; cd '{work}' && env -i PATH='{path}' HOME='{home}' XDG_CONFIG_HOME='{home}/config' XDG_STATE_HOME='{home}/state' TACO_LOG=debug TERM=xterm-256color '{taco}' -p demo -c '{config}'; echo EXITED; sleep 60",
        work = work.path().display(),
        home = home.path().display(),
        config = config.display(),
    );
    let tmux = Tmux::start(&command, 160, 45);
    assert!(
        tmux.run(&["set", "-g", "set-clipboard", "on"])
            .status
            .success()
    );
    std::fs::write(home.path().join("go"), "").unwrap();
    tmux.wait_for("OAuth login: run");
    tmux.text("/mcp login guarded");
    tmux.keys(&["Enter"]);
    tmux.wait_for("MCP server guarded: to log in");
    tmux.keys(&["M-Up"]);
    tmux.keys(&["y"]);
    tmux.wait_for("copied");
    let deadline = Instant::now() + Duration::from_secs(15);
    let url = loop {
        let out = tmux.run(&["show-buffer"]);
        if out.status.success() && !out.stdout.is_empty() {
            break String::from_utf8_lossy(&out.stdout).into_owned();
        }
        assert!(
            Instant::now() < deadline,
            "nothing copied:\n{}",
            tmux.screen()
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(
        url.starts_with(&format!("{}/authorize?", auth.origin)),
        "the copy is the URL alone: {url:?}"
    );
    assert_eq!(runtime.block_on(play_browser(&url)), 200);
    tmux.wait_for_mcp("mcp__guarded__whoami");
    tmux.keys(&["C-c"]);
    tmux.keys(&["C-c"]);
    tmux.wait_for("EXITED");

    let state = home.path().join("state/taco");
    let tokens = state.join("mcp-oauth/guarded.json");
    let mode = std::fs::metadata(&tokens).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    let (access, refresh) = {
        let s = auth.state.lock().unwrap();
        (s.issued[0].clone(), s.issued_refresh[0].clone())
    };
    assert!(std::fs::read_to_string(&tokens).unwrap().contains(&access));
    let log = std::fs::read_to_string(state.join("taco.log")).unwrap();
    assert!(
        log.contains("mcp oauth login done"),
        "the log is the one taco wrote"
    );
    let mut written = vec![("taco.log", log)];
    for file in support::cli::session_files(home.path()) {
        written.push(("session", std::fs::read_to_string(file).unwrap()));
    }
    for (what, text) in &written {
        assert!(
            !text.contains(&access) && !text.contains(&refresh),
            "a token in the {what}"
        );
        assert!(
            !text.contains("code-"),
            "an authorization code in the {what}"
        );
    }
}
