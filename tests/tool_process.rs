//! What every process taco starts for a tool inherits (issue 26, items 3 and 7): no file
//! descriptor but 0–2, even one taco's own parent left open for writing, and none of the
//! capabilities that read another process's memory — for shell commands sandboxed and not,
//! and for MCP stdio servers sandboxed and not.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed unwrap is a failed test

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};

use serde_json::json;
use taco::sandbox::{DROPPED, Sandbox, SandboxMode};
use taco::tools::builtin::Shell;
use taco::tools::{Tool, ToolReply};

use crate::support;
use support::TestServer;
use support::cli::*;
use support::sandboxed::context;

struct Dirs {
    _root: tempfile::TempDir,
    home: PathBuf,
    ws: PathBuf,
    outside: PathBuf,
}

fn dirs() -> Dirs {
    let root = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let base = root.path().canonicalize().unwrap();
    let (home, ws, outside) = (base.join("home"), base.join("ws"), base.join("outside"));
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

/// The capability sets of `/proc/self/status` text: (name, mask).
fn cap_sets(status: &str) -> Vec<(String, u64)> {
    status
        .lines()
        .filter_map(|line| {
            let (name, value) = line.split_once(':')?;
            let name = name.trim();
            name.starts_with("Cap").then(|| {
                (
                    name.to_string(),
                    u64::from_str_radix(value.trim(), 16).unwrap(),
                )
            })
        })
        .collect()
}

fn assert_no_dropped_caps(what: &str, status: &str) {
    let sets = cap_sets(status);
    assert!(
        sets.iter().any(|(n, _)| n == "CapBnd"),
        "{what}: no capability lines in {status}"
    );
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    for (name, mask) in sets {
        if name == "CapBnd" && !root {
            // Without CAP_SETPCAP the bounding set cannot shrink (and grants nothing).
            continue;
        }
        for cap in DROPPED {
            assert_eq!(
                mask & (1 << cap),
                0,
                "{what}: {name} {mask:x} still has capability {cap}"
            );
        }
    }
}

#[tokio::test]
async fn shell_commands_hold_no_capability_that_reads_memory_sandboxed_or_not() {
    let d = dirs();
    for mode in [SandboxMode::WorkspaceWrite, SandboxMode::Off] {
        let sandbox = Sandbox::resolve(mode, false, Vec::new(), &d.ws, &|_| None);
        let ctx = context(&d.ws, sandbox);
        // A child of the command too: the bounding set binds everything it starts.
        let command = "grep Cap /proc/self/status; sh -c 'grep CapBnd /proc/self/status'";
        let result = match Shell.call(json!({ "command": command }), &ctx).await {
            Ok(ToolReply::Done(value)) => value,
            other => panic!("{mode:?}: {other:?}"),
        };
        assert_no_dropped_caps(&format!("{mode:?}"), result["stdout"].as_str().unwrap());
    }
}

/// `taco exec --approve all` started with fd 7 open for writing on `target`, whose model
/// runs `commands` in shell calls; the tool results' stdout and stderr, in order.
async fn exec_with_fd7(d: &Dirs, target: &Path, sandbox: &str, commands: &[&str]) -> Vec<String> {
    let list: Vec<(String, String)> = commands
        .iter()
        .enumerate()
        .map(|(i, c)| (format!("f{i}"), json!({ "command": c }).to_string()))
        .collect();
    let turn: Vec<(&str, &str, &str)> = list
        .iter()
        .map(|(id, args)| (id.as_str(), "shell", args.as_str()))
        .collect();
    let server = TestServer::start(vec![tool_turns(&turn), text_turn(&["done"])]).await;
    let config = d.home.join("config.toml");
    std::fs::write(&config, "[providers.openai.options]\nmax_attempts = 1\n").unwrap();
    let file = std::fs::OpenOptions::new()
        .append(true)
        .open(target)
        .unwrap();
    let mut std = std::process::Command::new(env!("CARGO_BIN_EXE_taco"));
    std.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", &d.home)
        .current_dir(&d.ws)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let fd = std::os::fd::AsRawFd::as_raw_fd(&file);
    // SAFETY: dup2 in the child before exec: fd 7 is the target, open and inheritable.
    unsafe {
        std.pre_exec(move || {
            if libc::dup2(fd, 7) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut cmd = tokio::process::Command::from(std);
    openai_args(&mut cmd, &server);
    cmd.arg("-c")
        .arg(&config)
        .args(["--sandbox", sandbox, "--json", "--approve", "all", "go"]);
    let run = finish(&mut cmd).await;
    drop(file);
    assert_eq!(run.code, 0, "{}", run.stderr);
    json_lines(&run.stdout)
        .iter()
        .filter(|e| e["type"] == "tool_result")
        .map(|e| e["data"].to_string())
        .collect()
}

#[tokio::test]
async fn a_descriptor_taco_inherited_is_not_a_way_out_of_the_sandbox() {
    let d = dirs();
    let target = d.outside.join("target.txt");
    for sandbox in ["workspace-write", "off"] {
        std::fs::write(&target, "untouched\n").unwrap();
        let results = exec_with_fd7(
            &d,
            &target,
            sandbox,
            &[
                "echo pwned >&7",
                "echo pwned > /proc/self/fd/7",
                "ls /proc/self/fd | tr '\\n' ' '",
            ],
        )
        .await;
        assert_eq!(results.len(), 3, "{results:?}");
        assert_eq!(
            std::fs::read_to_string(&target).unwrap(),
            "untouched\n",
            "{sandbox}: wrote through the inherited descriptor: {results:?}"
        );
        // ls sees its own stdin, stdout, stderr and the directory it lists: nothing else.
        // A batch's calls end in any order: the `ls` result is found by its id.
        let ls = (results.iter())
            .find(|r| r.contains("\"id\":\"f2\""))
            .unwrap();
        assert!(ls.contains("\"stdout\":\"0 1 2 3 \""), "{sandbox}: {ls}");
    }
}

#[tokio::test]
async fn mcp_servers_inherit_no_descriptor_and_no_memory_reading_capability() {
    let d = dirs();
    let target = d.outside.join("target.txt");
    std::fs::write(&target, "untouched\n").unwrap();
    // Each "server" writes what it holds into the workspace and exits: the handshake fails,
    // which `taco mcp list` reports, but the files say what the process inherited.
    let script = |name: &str| {
        format!(
            "ls /proc/self/fd | tr '\\n' ' ' > {name}.fds; grep Cap /proc/self/status > {name}.caps; echo pwned >&7"
        )
    };
    let config = d.home.join("config.toml");
    std::fs::write(
        &config,
        format!(
            "[mcp.servers.plain]\ncommand = \"sh\"\nargs = [\"-c\", {plain:?}]\n\
             [mcp.servers.boxed]\ncommand = \"sh\"\nargs = [\"-c\", {boxed:?}]\nsandbox = true\n",
            plain = script("plain"),
            boxed = script("boxed"),
        ),
    )
    .unwrap();
    let file = std::fs::OpenOptions::new()
        .append(true)
        .open(&target)
        .unwrap();
    let fd = std::os::fd::AsRawFd::as_raw_fd(&file);
    let mut std = std::process::Command::new(env!("CARGO_BIN_EXE_taco"));
    std.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", &d.home)
        .current_dir(&d.ws)
        .args(["-c", config.to_str().unwrap(), "mcp", "list"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    // SAFETY: dup2 in the child before exec.
    unsafe {
        std.pre_exec(move || {
            if libc::dup2(fd, 7) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let run = finish(&mut tokio::process::Command::from(std)).await;
    drop(file);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "untouched\n");
    for name in ["plain", "boxed"] {
        let fds = std::fs::read_to_string(d.ws.join(format!("{name}.fds")))
            .unwrap_or_else(|e| panic!("{name} did not run: {e}\n{}", run.stdout));
        // ls: 0–2 are the server's pipes, 3 the directory it lists.
        assert_eq!(fds, "0 1 2 3 ", "{name}");
        let caps = std::fs::read_to_string(d.ws.join(format!("{name}.caps"))).unwrap();
        assert_no_dropped_caps(name, &caps);
    }
}
