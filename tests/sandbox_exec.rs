//! The sandbox through `taco exec` (issue 17): with the default config an approved shell
//! command cannot write outside the workspace and the temp dir or open a TCP connection,
//! `--approve all` never approves leaving the sandbox, and a kernel without Landlock (forced by
//! the tests' switch) is said once on stderr and makes every shell call ask.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed unwrap is a failed test

use std::net::TcpListener;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use taco::sandbox::TEST_SWITCH;

use crate::support;
use support::TestServer;
use support::cli::*;

/// A home, a workspace and a directory beside it, outside the system temp dir.
struct Dirs {
    _root: tempfile::TempDir,
    home: PathBuf,
    ws: PathBuf,
    outside: PathBuf,
}

fn dirs() -> Dirs {
    let root = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let base = root.path().canonicalize().unwrap();
    let [home, ws, outside] = ["home", "ws", "outside"].map(|d| base.join(d));
    for dir in [&home, &ws, &outside] {
        std::fs::create_dir_all(dir).unwrap();
    }
    Dirs {
        _root: root,
        home,
        ws,
        outside,
    }
}

/// `taco exec --json` in `d.ws` with `more` in its config, against a model that makes each
/// shell call in turn, then answers; `args` go before the prompt.
async fn exec(
    d: &Dirs,
    more: &str,
    calls: &[Value],
    args: &[&str],
    env: &[(&str, &str)],
) -> (Run, Vec<Value>, TestServer) {
    let mut replies: Vec<_> = calls
        .iter()
        .enumerate()
        .map(|(i, call)| tool_turn(&format!("s{i}"), "shell", &call.to_string()))
        .collect();
    replies.push(text_turn(&["done"]));
    let server = TestServer::start(replies).await;
    let mut cmd = taco(&d.home, &d.ws);
    cmd.arg("-c").arg(config(&d.home, more));
    for (name, value) in env {
        cmd.env(name, value);
    }
    openai_args(&mut cmd, &server);
    cmd.arg("--json").args(args).arg("go");
    let run = finish(&mut cmd).await;
    let events = json_lines(&run.stdout);
    (run, events, server)
}

fn config(home: &Path, more: &str) -> PathBuf {
    let path = home.join("config.toml");
    let text = format!("[providers.openai.options]\nmax_attempts = 1\n{more}");
    std::fs::write(&path, text).unwrap();
    path
}

/// Each `tool_result`'s status and data, in order.
fn results(events: &[Value]) -> Vec<(&str, &Value)> {
    events
        .iter()
        .filter(|e| e["type"] == "tool_result")
        .map(|e| (e["data"]["status"].as_str().unwrap(), &e["data"]))
        .collect()
}

#[tokio::test]
async fn with_the_default_config_an_approved_command_cannot_write_outside_or_connect() {
    let d = dirs();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let outside = d.outside.join("f.txt");
    let write_out = format!("echo x > '{}'", outside.display());
    let connect = format!("bash -c 'exec 3<>/dev/tcp/127.0.0.1/{port}'");
    let (run, events, server) = exec(
        &d,
        "",
        &[
            json!({"command": write_out}),
            json!({"command": connect}),
            json!({"command": "echo in > in.txt"}),
            json!({"command": write_out, "unsandboxed": true}),
        ],
        &["--approve", "all"],
        &[],
    )
    .await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    let sandboxed = json!({"run": "sandboxed", "mode": "workspace-write", "network": false});
    let calls: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "tool_call")
        .map(|e| &e["data"]["sandbox"])
        .collect();
    assert_eq!(
        calls,
        [
            &sandboxed,
            &sandboxed,
            &sandboxed,
            &json!({"run": "unsandboxed"})
        ]
    );
    let results = results(&events);
    let statuses: Vec<&str> = results.iter().map(|(s, _)| *s).collect();
    assert_eq!(
        statuses,
        ["sandbox_denied", "sandbox_denied", "ok", "denied"]
    );
    assert_eq!(results[0].1["result"]["sandbox_denied"], json!(true));
    let refused = results[3].1["error"].as_str().unwrap();
    assert!(
        results[3].1["denied_by"] == "headless" && refused.contains("--sandbox off"),
        "{refused}"
    );
    assert!(!outside.exists(), "nothing was written outside");
    assert!(d.ws.join("in.txt").exists());
    assert!(
        listener.accept().is_err(),
        "the loopback server saw no connection"
    );
    // The model was told it was the sandbox, and how to ask.
    let told = server.requests()[1].json()["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap().to_string())
        .collect::<Vec<_>>();
    assert!(
        told[0].contains("sandbox_denied") && told[0].contains("unsandboxed"),
        "{told:?}"
    );
}

#[tokio::test]
async fn without_landlock_exec_says_so_once_and_asks_about_every_shell_call() {
    let d = dirs();
    let allow = "[tools.shell]\nallow = [\"echo\"]\n";
    let calls = [json!({"command": "echo hi"})];
    let switch = [(TEST_SWITCH, "1")];
    let (run, events, _) = exec(&d, allow, &calls, &[], &switch).await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.stderr.matches("the sandbox is unavailable").count(),
        1,
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains(TEST_SWITCH), "{}", run.stderr);
    let asked = results(&events);
    assert_eq!(asked[0].0, "denied", "an allow rule does not cover it");
    assert_eq!(asked[0].1["denied_by"], "headless");

    // With the sandbox off, the user's own choice, nothing is said and the rule applies.
    let (run, events, _) = exec(&d, allow, &calls, &["--sandbox", "off"], &switch).await;
    assert!(!run.stderr.contains("sandbox"), "{}", run.stderr);
    let ran = results(&events);
    assert_eq!(ran[0].0, "ok");
    assert_eq!(ran[0].1["result"]["stdout"], "hi\n");
}
