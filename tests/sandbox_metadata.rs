//! The sandbox covers what it claims (issue 26, item 7), against the real kernel on real
//! temp dirs: a sandboxed command cannot chmod, chown, utime or setxattr a file outside the
//! writable paths (Landlock alone does not cover metadata), while inside the workspace it
//! still can in namespace mode; the seccomp fallback refuses them everywhere. As root through
//! the shell tool, and as a normal user through the binary.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed unwrap is a failed test

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use taco::sandbox::{Metadata, NAMESPACE_SWITCH, Sandbox, SandboxMode, Support};
use taco::tools::builtin::Shell;
use taco::tools::{Tool, ToolContext, ToolError, ToolReply};

use crate::support;
use support::TestServer;
use support::cli::*;
use support::sandboxed::context;

/// A workspace and a victim file beside it, outside the temp dir (which is writable), under
/// the build's own temp dir; both owned by `owner` when given.
struct Dirs {
    _root: tempfile::TempDir,
    home: PathBuf,
    ws: PathBuf,
    victim: PathBuf,
}

fn dirs(owner: Option<u32>) -> Dirs {
    let root = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let base = root.path().canonicalize().unwrap();
    assert!(!base.starts_with(std::env::temp_dir()));
    let (home, ws, outside) = (base.join("home"), base.join("ws"), base.join("outside"));
    for dir in [&home, &ws, &outside] {
        std::fs::create_dir_all(dir).unwrap();
    }
    let victim = outside.join("victim");
    std::fs::write(&victim, "v\n").unwrap();
    std::fs::write(ws.join("mine"), "m\n").unwrap();
    std::fs::set_permissions(&victim, std::fs::Permissions::from_mode(0o644)).unwrap();
    if let Some(uid) = owner {
        std::fs::set_permissions(&base, std::fs::Permissions::from_mode(0o755)).unwrap();
        for path in [&home, &ws, &outside, &victim, &ws.join("mine")] {
            std::os::unix::fs::chown(path, Some(uid), Some(uid)).unwrap();
        }
    }
    Dirs {
        _root: root,
        home,
        ws,
        victim,
    }
}

/// Whether `setfattr` is here; under CI it must be (`.ci/run` installs `attr`).
fn have_setfattr() -> bool {
    let found = std::process::Command::new("setfattr")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        assert!(
            !crate::support::needs::under_ci(),
            "setfattr is missing under CI: .ci/run installs attr"
        );
        crate::support::needs::skipped(
            "setfattr (their xattr cases)",
            "install attr (apt install attr)",
        );
    }
    found
}

/// The metadata changes a command might make to `target`: what each is called.
fn changes(target: &str, xattr: bool) -> Vec<(&'static str, String)> {
    let mut list = vec![
        ("chmod", format!("chmod 600 '{target}'")),
        ("chown", format!("chown 4242:4242 '{target}'")),
        ("utime", format!("touch -d 2001-02-03 '{target}'")),
    ];
    if xattr {
        list.push(("setxattr", format!("setfattr -n user.taco -v x '{target}'")));
    }
    list
}

/// Everything a change could alter: mode, owner, mtime, the user.taco xattr.
fn stamp(path: &Path) -> (u32, u32, u32, i64, Option<Vec<u8>>) {
    let meta = std::fs::metadata(path).unwrap();
    let xattr = std::process::Command::new("getfattr")
        .args(["--only-values", "-n", "user.taco"])
        .arg(path)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| o.stdout);
    (meta.mode(), meta.uid(), meta.gid(), meta.mtime(), xattr)
}

/// The command's result and whether it succeeded.
async fn shell(ctx: &ToolContext, command: &str) -> (bool, Value) {
    match Shell.call(json!({ "command": command }), ctx).await {
        Ok(ToolReply::Done(value)) => (value["exit_code"] == 0, value),
        Err(ToolError::SandboxDenied(value)) => (false, *value),
        other => panic!("{command}: {other:?}"),
    }
}

fn resolve(ws: &Path, env: &[(&str, &str)]) -> Sandbox {
    let env: Vec<(String, String)> = env
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let lookup = move |name: &str| env.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
    let sandbox = Sandbox::resolve(SandboxMode::WorkspaceWrite, false, Vec::new(), ws, &lookup);
    assert!(
        matches!(sandbox.support, Support::Available { .. }),
        "this kernel cannot sandbox: {:?}",
        sandbox.support
    );
    sandbox
}

#[tokio::test]
async fn outside_the_writable_paths_metadata_is_refused_inside_it_still_changes() {
    let d = dirs(None);
    let sandbox = resolve(&d.ws, &[]);
    assert!(
        matches!(sandbox.metadata, Metadata::Namespace { .. }),
        "{:?}",
        sandbox.metadata
    );
    let ctx = context(&d.ws, sandbox);
    let xattr = have_setfattr();
    let before = stamp(&d.victim);
    for (what, command) in changes(&d.victim.display().to_string(), xattr) {
        let (ok, result) = shell(&ctx, &command).await;
        assert!(!ok, "{what} outside the workspace succeeded: {result}");
        assert_eq!(result["sandbox_denied"], json!(true), "{what}: {result}");
        assert_eq!(stamp(&d.victim), before, "{what} changed the victim");
    }
    // Through a symlink in the workspace, and through a hard link attempt: the same file.
    let link = d.ws.join("link");
    std::os::unix::fs::symlink(&d.victim, &link).unwrap();
    let (ok, result) = shell(&ctx, "chmod 600 link").await;
    assert!(!ok, "chmod through a symlink succeeded: {result}");
    assert_eq!(stamp(&d.victim), before);
    let mine = d.ws.join("mine");
    let mine_before = stamp(&mine);
    for (what, command) in changes("mine", xattr) {
        let (ok, result) = shell(&ctx, &command).await;
        assert!(ok, "{what} inside the workspace failed: {result}");
    }
    let after = stamp(&mine);
    assert_eq!(after.0 & 0o777, 0o600);
    assert_eq!((after.1, after.2), (4242, 4242));
    assert_ne!(after.3, mine_before.3);
    if xattr {
        assert_eq!(after.4.as_deref(), Some(&b"x"[..]));
    }
    // And the command still writes where it may: its working directory is the writable one.
    let (ok, result) = shell(&ctx, "echo w > new && cat new").await;
    assert!(ok, "{result}");
}

#[tokio::test]
async fn where_no_namespace_can_be_had_seccomp_refuses_metadata_everywhere() {
    let d = dirs(None);
    let sandbox = resolve(&d.ws, &[(NAMESPACE_SWITCH, "1")]);
    assert!(
        matches!(&sandbox.metadata, Metadata::Seccomp(why) if why.contains(NAMESPACE_SWITCH)),
        "{:?}",
        sandbox.metadata
    );
    assert!(
        sandbox.describe(&d.ws).contains("the workspace too"),
        "{}",
        sandbox.describe(&d.ws)
    );
    let ctx = context(&d.ws, sandbox);
    let xattr = have_setfattr();
    let before = stamp(&d.victim);
    let mine = d.ws.join("mine");
    let mine_before = stamp(&mine);
    for target in [d.victim.display().to_string(), "mine".to_string()] {
        for (what, command) in changes(&target, xattr) {
            let (ok, result) = shell(&ctx, &command).await;
            assert!(!ok, "{what} of {target} succeeded: {result}");
        }
    }
    assert_eq!(stamp(&d.victim), before);
    assert_eq!(stamp(&mine), mine_before, "the cost: the workspace too");
    // Writing contents is Landlock's business and still works.
    let (ok, result) = shell(&ctx, "echo w > new && cat new").await;
    assert!(ok, "{result}");
}

/// `taco exec --approve all` as `uid` (through setpriv) with one shell call per change, on
/// the victim outside and on `mine` inside; the run's tool results in order.
async fn exec_changes(d: &Dirs, uid: Option<u32>, xattr: bool) -> Vec<Value> {
    let mut calls = changes(&d.victim.display().to_string(), xattr);
    calls.extend(
        changes("mine", xattr)
            .into_iter()
            .filter(|(what, _)| *what != "chown"),
    );
    let list: Vec<(String, String)> = calls
        .iter()
        .enumerate()
        .map(|(i, (_, c))| (format!("m{i}"), json!({ "command": c }).to_string()))
        .collect();
    let turn: Vec<(&str, &str, &str)> = list
        .iter()
        .map(|(id, args)| (id.as_str(), "shell", args.as_str()))
        .collect();
    let server = TestServer::start(vec![tool_turns(&turn), text_turn(&["done"])]).await;
    let config = d.home.join("config.toml");
    std::fs::write(&config, "[providers.openai.options]\nmax_attempts = 1\n").unwrap();
    let mut std = support::sandboxed::taco_as(uid);
    std.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", &d.home)
        .env("TMPDIR", &d.ws)
        .current_dir(&d.ws)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut cmd = tokio::process::Command::from(std);
    openai_args(&mut cmd, &server);
    cmd.arg("-c")
        .arg(&config)
        .args(["--json", "--approve", "all", "change them"]);
    let run = finish(&mut cmd).await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    let events = json_lines(&run.stdout);
    let results: Vec<Value> = events
        .iter()
        .filter(|e| e["type"] == "tool_result")
        .map(|e| e["data"].clone())
        .collect();
    assert_eq!(results.len(), calls.len(), "{}", run.stdout);
    results
}

#[tokio::test]
async fn a_normal_user_in_the_sandbox_cannot_change_metadata_outside_either() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("note: not root, so this runs as the caller");
    }
    let uid = (unsafe { libc::geteuid() } == 0).then_some(65534);
    let d = dirs(uid);
    let xattr = have_setfattr();
    let before = stamp(&d.victim);
    let results = exec_changes(&d, uid, xattr).await;
    let outside = changes("", xattr).len();
    // Calls of one batch run at once and end in any order: each is judged by its id (`m<i>`).
    for result in &results {
        let i: usize = result["id"].as_str().unwrap()[1..].parse().unwrap();
        let status = result["status"].as_str().unwrap();
        if i < outside {
            assert_eq!(status, "sandbox_denied", "outside, call {i}: {result}");
        } else {
            assert_eq!(status, "ok", "inside, call {i}: {result}");
        }
    }
    assert_eq!(stamp(&d.victim), before, "the victim changed");
    let mine = stamp(&d.ws.join("mine"));
    assert_eq!(mine.0 & 0o777, 0o600, "chmod inside the workspace");
}
