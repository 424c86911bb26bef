//! Rewind (issue 29) end to end with the binary: `taco exec` against a loopback model takes
//! checkpoints before a write, an edit and a shell command, reports what the run changed, and
//! `taco rewind` takes real temporary workspaces (with and without a git repository of their
//! own) back to each point, byte for byte and mode bits too.

use crate::support;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde_json::Value;
use support::TestServer;
use support::cli::*;

/// The workspace before the run: a text file, an executable script, a binary file, a file
/// the shell command deletes.
fn seed(work: &Path) {
    std::fs::write(work.join("hello.txt"), "hi there\n").unwrap();
    std::fs::write(work.join("script.sh"), "#!/bin/sh\necho a\n").unwrap();
    std::fs::set_permissions(
        work.join("script.sh"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    std::fs::write(work.join("data.bin"), [0u8, 159, 146, 150, 0, 1, 2]).unwrap();
    std::fs::write(work.join("doomed.txt"), "soon gone\n").unwrap();
}

/// Every file under `dir` (not `.git`) with its bytes and mode.
fn files(dir: &Path) -> Vec<(PathBuf, Vec<u8>, u32)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let entry = entry.unwrap();
            let path = entry.path();
            if entry.file_name() == ".git" {
                continue;
            }
            let meta = std::fs::symlink_metadata(&path).unwrap();
            if meta.is_dir() {
                stack.push(path);
            } else {
                let rel = path.strip_prefix(dir).unwrap().to_path_buf();
                out.push((
                    rel,
                    std::fs::read(&path).unwrap(),
                    meta.permissions().mode(),
                ));
            }
        }
    }
    out.sort();
    out
}

fn git(work: &Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .args(args)
        .current_dir(work)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@t")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@t")
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The user's repository as bytes: its refs, its index and every object file.
fn git_state(work: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let root = work.join(".git");
    let mut out = Vec::new();
    let mut stack = vec![root.clone()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                out.push((
                    path.strip_prefix(&root).unwrap().to_path_buf(),
                    std::fs::read(&path).unwrap(),
                ));
            }
        }
    }
    out.sort();
    out
}

/// The run: a write, an edit, and a shell command that creates, modifies, deletes and
/// changes a mode; each approved.
async fn run_changes(home: &Path, work: &Path) -> (TestServer, Vec<Value>) {
    let server = TestServer::start(vec![
        tool_turn(
            "w1",
            "write_file",
            r#"{"path": "new.txt", "content": "brand new\n"}"#,
        ),
        tool_turn(
            "e1",
            "edit_file",
            r#"{"path": "hello.txt", "edits": [{"old_string": "hi there", "new_string": "hello world"}]}"#,
        ),
        tool_turn(
            "s1",
            "shell",
            r#"{"command": "printf 'made\\n' > made.txt && rm doomed.txt && chmod 644 script.sh && printf 'x' >> data.bin && mkdir -p sub && echo deep > sub/deep.txt"}"#,
        ),
        text_turn(&["done"]),
    ])
    .await;
    let mut cmd = taco(home, work);
    openai_args(&mut cmd, &server);
    cmd.args(["--approve", "all", "--json", "change things"]);
    let run = finish(&mut cmd).await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    (server, json_lines(&run.stdout))
}

async fn rewind(home: &Path, work: &Path, args: &[&str]) -> Run {
    let mut cmd = taco(home, work);
    cmd.arg("rewind").args(args);
    finish(&mut cmd).await
}

fn events<'a>(lines: &'a [Value], kind: &str) -> Vec<&'a Value> {
    lines.iter().filter(|e| e["type"] == kind).collect()
}

async fn rewinds_each_point(with_git: bool) {
    let (home, work) = setup();
    let work = work.path();
    seed(work);
    if with_git {
        git(work, &["init", "-q"]);
        git(work, &["add", "-A"]);
        git(work, &["commit", "-qm", "mine"]);
    }
    let before_git = with_git.then(|| git_state(work));
    let before = files(work);
    let (_server, lines) = run_changes(home.path(), work).await;

    // One checkpoint before each changing call, one at the end; what the run changed.
    let checkpoints = events(&lines, "checkpoint");
    let named: Vec<&Value> = checkpoints.iter().map(|c| &c["data"]["calls"]).collect();
    assert!(named.iter().any(|c| c[0] == "w1"), "{checkpoints:?}");
    assert!(named.iter().any(|c| c[0] == "e1"), "{checkpoints:?}");
    assert!(named.iter().any(|c| c[0] == "s1"), "{checkpoints:?}");
    assert!(
        checkpoints.iter().all(|c| c["data"]["id"].is_string()),
        "{checkpoints:?}"
    );
    let changed = events(&lines, "files_changed");
    assert_eq!(changed.len(), 1, "{changed:?}");
    let changed = &changed[0]["data"];
    let by_path = |p: &str| {
        changed["files"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["path"] == p)
            .unwrap_or_else(|| panic!("{p} not in {changed}"))
            .clone()
    };
    assert_eq!(by_path("new.txt")["change"], "added");
    assert_eq!(by_path("hello.txt")["change"], "modified");
    assert_eq!(by_path("made.txt")["change"], "added");
    assert_eq!(by_path("sub/deep.txt")["change"], "added");
    assert_eq!(by_path("doomed.txt")["change"], "deleted");
    assert_eq!(by_path("script.sh")["change"], "modified");
    assert_eq!(by_path("data.bin")["binary"], true);
    assert_eq!(changed["files"].as_array().unwrap().len(), 7, "{changed}");
    let after_run = files(work);

    // --list names the run and each call with the checkpoint before it.
    let list = rewind(home.path(), work, &["--list"]).await;
    assert_eq!(list.code, 0, "{}", list.stderr);
    for needle in [
        "change things",
        "w1",
        "e1",
        "s1",
        "write_file",
        "◇",
        "7 files changed",
    ] {
        assert!(list.stdout.contains(needle), "{needle}: {}", list.stdout);
    }

    // Before the shell command: its creations gone, its deletion and mode back; the write and
    // the edit stay.
    let back = rewind(home.path(), work, &["s1", "--files"]).await;
    assert_eq!(back.code, 0, "{}\n{}", back.stdout, back.stderr);
    let now = files(work);
    assert!(!work.join("made.txt").exists() && !work.join("sub/deep.txt").exists());
    let original = |p: &str| before.iter().find(|f| f.0 == Path::new(p)).cloned();
    let current = |p: &str| now.iter().find(|f| f.0 == Path::new(p)).cloned();
    for p in ["doomed.txt", "script.sh", "data.bin"] {
        assert_eq!(current(p), original(p), "{p}");
    }
    assert_eq!(
        std::fs::read_to_string(work.join("hello.txt")).unwrap(),
        "hello world\n"
    );
    assert!(work.join("new.txt").exists());
    let undo = back
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("undo: taco rewind "))
        .expect("the undo is said")
        .to_string();

    // Before the edit, then before the write: the workspace as it was, byte for byte.
    let back = rewind(home.path(), work, &["e1", "--files"]).await;
    assert_eq!(back.code, 0, "{}", back.stderr);
    assert_eq!(
        std::fs::read_to_string(work.join("hello.txt")).unwrap(),
        "hi there\n"
    );
    let back = rewind(home.path(), work, &["w1", "--files"]).await;
    assert_eq!(back.code, 0, "{}", back.stderr);
    assert_eq!(files(work), before);

    // The first undo puts back the state before it: everything the run did.
    let again = rewind(home.path(), work, &[&undo]).await;
    assert_eq!(again.code, 0, "{}\n{}", again.stdout, again.stderr);
    assert_eq!(files(work), after_run);

    if let Some(before_git) = before_git {
        assert_eq!(git_state(work), before_git, "the user's .git is untouched");
        assert_eq!(git(work, &["rev-list", "--count", "HEAD"]).trim(), "1");
    }
}

#[tokio::test]
async fn a_write_an_edit_and_a_shell_command_rewind_to_each_point_without_a_repo() {
    rewinds_each_point(false).await;
}

#[tokio::test]
async fn a_write_an_edit_and_a_shell_command_rewind_to_each_point_in_a_repo_left_untouched() {
    rewinds_each_point(true).await;
}

#[tokio::test]
async fn a_hand_edit_after_the_call_is_named_and_kept_unless_forced() {
    let (home, work) = setup();
    let work = work.path();
    seed(work);
    let before = files(work);
    run_changes(home.path(), work).await;
    std::fs::write(work.join("new.txt"), "my own words\n").unwrap();
    let back = rewind(home.path(), work, &["w1", "--files"]).await;
    assert_eq!(back.code, 0, "{}", back.stderr);
    assert!(back.stdout.contains("kept as they are"), "{}", back.stdout);
    assert!(back.stdout.contains("new.txt"), "{}", back.stdout);
    assert_eq!(
        std::fs::read_to_string(work.join("new.txt")).unwrap(),
        "my own words\n"
    );
    // Everything else went back.
    assert_eq!(
        std::fs::read_to_string(work.join("hello.txt")).unwrap(),
        "hi there\n"
    );
    let forced = rewind(home.path(), work, &["w1", "--files", "--force"]).await;
    assert_eq!(forced.code, 0, "{}", forced.stderr);
    assert_eq!(files(work), before);
}

/// The run ids of a session file, in order.
fn run_ids(session: &Path) -> Vec<String> {
    std::fs::read_to_string(session)
        .unwrap()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["type"] == "run_started")
        .map(|e| e["request_id"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn the_conversation_forks_before_a_run_and_the_fork_resumes_into_a_valid_request() {
    let (home, work) = setup();
    let work = work.path();
    let server = TestServer::start(vec![
        text_turn(&["first answer"]),
        tool_turn(
            "w2",
            "write_file",
            r#"{"path": "second.txt", "content": "2\n"}"#,
        ),
        text_turn(&["second answer"]),
        text_turn(&["third answer"]),
    ])
    .await;
    for (prompt, resume) in [("first request", false), ("second request", true)] {
        let mut cmd = taco(home.path(), work);
        if resume {
            cmd.arg("--resume=");
        }
        openai_args(&mut cmd, &server);
        cmd.args(["--approve", "all", prompt]);
        let run = finish(&mut cmd).await;
        assert_eq!(run.code, 0, "{}", run.stderr);
    }
    let old = only_session(home.path());
    let ids = run_ids(&old);
    assert_eq!(ids.len(), 2, "{ids:?}");
    let back = rewind(home.path(), work, &[&ids[1]]).await;
    assert_eq!(back.code, 0, "{}\n{}", back.stdout, back.stderr);
    assert!(
        back.stdout.contains("conversation: back to before"),
        "{}",
        back.stdout
    );
    // Both: the second run's file is gone too.
    assert!(!work.join("second.txt").exists());
    let sessions = session_files(home.path());
    assert_eq!(sessions.len(), 2, "a fork is a new session file");
    let fork = sessions.iter().find(|p| **p != old).unwrap().clone();
    let old_text = std::fs::read_to_string(&old).unwrap();
    assert!(old_text.contains("second request"), "the later part stays");
    assert!(old_text.contains("\"type\":\"rewound\""), "and is marked");
    let fork_text = std::fs::read_to_string(&fork).unwrap();
    // Only the marker names the run it went back before.
    let later = fork_text
        .lines()
        .filter(|l| !l.contains("\"type\":\"rewound\"") && l.contains("second request"));
    assert_eq!(later.count(), 0, "{fork_text}");
    assert!(fork_text.contains("\"type\":\"rewound\""));

    // Resuming goes on from the fork: the request holds the first exchange, not the second.
    let mut cmd = taco(home.path(), work);
    cmd.arg("--resume=");
    openai_args(&mut cmd, &server);
    cmd.arg("third request");
    let run = finish(&mut cmd).await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("third answer"));
    let last = server.requests().last().unwrap().json();
    let messages = last["messages"].as_array().unwrap();
    let texts: Vec<String> = messages.iter().map(|m| m["content"].to_string()).collect();
    let all = texts.join("\n");
    assert!(
        all.contains("first request") && all.contains("first answer"),
        "{all}"
    );
    assert!(!all.contains("second"), "{all}");
    let roles: Vec<&str> = messages
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["system", "user", "assistant", "user"], "{all}");
}

#[tokio::test]
async fn files_over_the_cap_are_skipped_and_listed_and_never_touched() {
    let (home, work) = setup();
    let work = work.path();
    std::fs::create_dir_all(home.path().join("config/taco")).unwrap();
    std::fs::write(
        home.path().join("config/taco/config.toml"),
        "[checkpoints]\nmax_file_mb = 1\n",
    )
    .unwrap();
    let big: Vec<u8> = (0..(2 << 20)).map(|i| (i % 251) as u8).collect();
    std::fs::write(work.join("big.bin"), &big).unwrap();
    let server = TestServer::start(vec![
        tool_turn(
            "w3",
            "shell",
            r#"{"command": "printf 'tail' >> big.bin && echo small > small.txt"}"#,
        ),
        text_turn(&["ok"]),
    ])
    .await;
    let mut cmd = taco(home.path(), work);
    openai_args(&mut cmd, &server);
    cmd.args(["--approve", "all", "--json", "go"]);
    let run = finish(&mut cmd).await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    let lines = json_lines(&run.stdout);
    let cp = events(&lines, "checkpoint")[0]["data"].clone();
    assert_eq!(cp["skipped"][0], "big.bin", "{cp}");
    assert_eq!(cp["skipped_count"], 1, "{cp}");
    let changed = &events(&lines, "files_changed")[0]["data"];
    assert_eq!(changed["files"].as_array().unwrap().len(), 1, "{changed}");
    let grown = std::fs::read(work.join("big.bin")).unwrap();
    let back = rewind(home.path(), work, &["w3", "--files"]).await;
    assert_eq!(back.code, 0, "{}", back.stderr);
    assert!(!work.join("small.txt").exists());
    assert_eq!(
        std::fs::read(work.join("big.bin")).unwrap(),
        grown,
        "not in any checkpoint, not touched"
    );
}

#[tokio::test]
async fn a_run_that_only_reads_takes_no_checkpoint_and_checkpoints_can_be_off() {
    let (home, work) = setup();
    let server = TestServer::start(vec![
        tool_turn("r1", "read_file", r#"{"path": "hello.txt"}"#),
        text_turn(&["read"]),
        tool_turn("w4", "write_file", r#"{"path": "x.txt", "content": "x"}"#),
        text_turn(&["wrote"]),
    ])
    .await;
    let mut cmd = taco(home.path(), work.path());
    openai_args(&mut cmd, &server);
    cmd.args(["--approve", "all", "--json", "read"]);
    let run = finish(&mut cmd).await;
    let lines = json_lines(&run.stdout);
    assert!(events(&lines, "checkpoint").is_empty(), "{}", run.stdout);
    assert!(events(&lines, "files_changed").is_empty());

    std::fs::create_dir_all(home.path().join("config/taco")).unwrap();
    std::fs::write(
        home.path().join("config/taco/config.toml"),
        "[checkpoints]\nenabled = false\n",
    )
    .unwrap();
    let mut cmd = taco(home.path(), work.path());
    openai_args(&mut cmd, &server);
    cmd.args(["--approve", "all", "--json", "write"]);
    let run = finish(&mut cmd).await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(events(&json_lines(&run.stdout), "checkpoint").is_empty());
    let back = rewind(home.path(), work.path(), &["w4"]).await;
    assert_eq!(back.code, 1, "{}", back.stdout);
    assert!(
        back.stderr.contains("checkpoints are off"),
        "{}",
        back.stderr
    );
    assert!(work.path().join("x.txt").exists());
}

#[tokio::test]
async fn without_git_a_run_goes_on_and_says_checkpoints_are_off() {
    let (home, work) = setup();
    let server = TestServer::start(vec![
        tool_turn("w5", "write_file", r#"{"path": "x.txt", "content": "x"}"#),
        text_turn(&["wrote"]),
    ])
    .await;
    let mut cmd = taco(home.path(), work.path());
    cmd.env("PATH", "/nonexistent");
    openai_args(&mut cmd, &server);
    cmd.args(["--approve", "all", "write"]);
    let run = finish(&mut cmd).await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stderr.contains("checkpoints are off"), "{}", run.stderr);
    assert!(run.stderr.contains("git"), "{}", run.stderr);
    assert!(work.path().join("x.txt").exists());
}

#[tokio::test]
async fn bad_ids_and_missing_sessions_get_a_clear_error_and_change_nothing() {
    let (home, work) = setup();
    let nothing = rewind(home.path(), work.path(), &["--list"]).await;
    assert_eq!(nothing.code, 2);
    assert!(
        nothing.stderr.contains("no saved session"),
        "{}",
        nothing.stderr
    );
    seed(work.path());
    run_changes(home.path(), work.path()).await;
    let snapshot = files(work.path());
    for bad in ["nope", "0123", "../../etc/passwd", "deadbeefdeadbeef"] {
        let run = rewind(home.path(), work.path(), &[bad]).await;
        assert_eq!(run.code, 2, "{bad}: {}", run.stderr);
        assert!(run.stderr.contains("taco rewind --list"), "{}", run.stderr);
    }
    let run = rewind(home.path(), work.path(), &["--session", "zzz", "--list"]).await;
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert_eq!(files(work.path()), snapshot);
}
