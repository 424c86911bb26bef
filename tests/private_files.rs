//! taco's private files against a symlink planted where one goes (issue 26): the prompt
//! history and its lock, session files and the index journal, the audit log and the whole
//! state directory. Each is refused (never followed, never chmodded); the target's content
//! and mode stay as they were; nothing fails a launch.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed unwrap is a failed test

use crate::support;

use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use support::TestServer;
use support::cli::*;
use taco::audit::AuditLog;
use taco::history::PromptLog;
use taco::secrets::Secrets;
use taco::session::SessionWriter;

/// A file elsewhere, with content and a mode a chmod would change.
fn victim(dir: &Path, name: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, "precious\n").unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    path
}

fn unchanged(path: &Path) {
    assert_eq!(
        std::fs::read_to_string(path).unwrap(),
        "precious\n",
        "{path:?}"
    );
    let mode = std::fs::metadata(path).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o644, "{path:?} was chmodded");
}

#[test]
fn a_symlinked_history_or_lock_is_refused() {
    let temp = tempfile::tempdir().unwrap();
    let state = temp.path().join("state");
    std::fs::create_dir(&state).unwrap();
    let target = victim(temp.path(), "bashrc");
    let log = PromptLog::in_dir(&state, Arc::new(Secrets::default()));
    symlink(&target, log.path()).unwrap();
    assert!(log.problem().unwrap().contains("is a symlink"));
    log.append("rm -rf ~ # appended through the link?");
    assert!(
        log.load().is_empty(),
        "another file's lines are not history"
    );
    unchanged(&target);
    // The lock file too: the history is written, the lock's target untouched.
    std::fs::remove_file(log.path()).unwrap();
    let lock_target = victim(temp.path(), "profile");
    let _ = std::fs::remove_file(state.join("prompt-history.lock"));
    symlink(&lock_target, state.join("prompt-history.lock")).unwrap();
    log.append("kept");
    assert_eq!(log.load(), ["kept"]);
    unchanged(&lock_target);
    std::fs::remove_file(state.join("prompt-history.lock")).unwrap();
    assert_eq!(log.problem(), None);
}

#[test]
fn a_symlinked_session_file_journal_or_directory_is_refused() {
    let temp = tempfile::tempdir().unwrap();
    let sessions = temp.path().join("sessions");
    std::fs::create_dir(&sessions).unwrap();
    let target = victim(temp.path(), "notes.txt");
    let planted = sessions.join("20260101-000000-abcdef.jsonl");
    symlink(&target, &planted).unwrap();
    let error = SessionWriter::append_to(&planted).unwrap_err();
    assert!(error.to_string().contains("is a symlink"), "{error}");
    unchanged(&target);
    // The index journal: appended to and rewritten by listing, never through a link.
    let journal_target = victim(temp.path(), "journal-target");
    symlink(&journal_target, sessions.join(taco::session::INDEX_FILE)).unwrap();
    let mut writer = SessionWriter::create(&sessions, "p", "m", temp.path()).unwrap();
    writer
        .message(&taco::conversation::Message::user("hi"))
        .unwrap();
    drop(writer);
    let _ = taco::session::list_with_problems(&sessions);
    unchanged(&journal_target);
    // A symlink in place of the sessions directory.
    let elsewhere = temp.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    symlink(&elsewhere, temp.path().join("linked")).unwrap();
    let Err(error) = SessionWriter::create(&temp.path().join("linked"), "p", "m", temp.path())
    else {
        panic!("a symlinked sessions directory was written through");
    };
    assert!(error.to_string().contains("is a symlink"), "{error}");
    assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
}

#[test]
fn a_symlinked_audit_file_is_refused() {
    let temp = tempfile::tempdir().unwrap();
    // The day's file name, as the log makes it.
    let probe = temp.path().join("probe");
    drop(AuditLog::open(&probe).unwrap());
    let name = std::fs::read_dir(&probe)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .file_name();
    let dir = temp.path().join("taco");
    std::fs::create_dir(&dir).unwrap();
    let target = victim(temp.path(), "victim");
    symlink(&target, dir.join(&name)).unwrap();
    let error = AuditLog::open(&dir).unwrap_err();
    assert!(error.to_string().contains("is a symlink"), "{error}");
    unchanged(&target);
}

#[tokio::test]
async fn exec_with_its_state_and_data_directories_symlinked_runs_and_says_so() {
    let (home, work) = setup();
    let elsewhere = home.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    let target = victim(&elsewhere, "keep.txt");
    // ~/.local/state/taco and ~/.local/share/taco/sessions are links to elsewhere.
    let state = home.path().join(".local/state");
    std::fs::create_dir_all(&state).unwrap();
    symlink(&elsewhere, state.join("taco")).unwrap();
    let share = home.path().join(".local/share/taco");
    std::fs::create_dir_all(&share).unwrap();
    symlink(&elsewhere, share.join("sessions")).unwrap();
    let server = TestServer::start(vec![text_turn(&["fine"])]).await;
    let mut cmd = taco(home.path(), work.path());
    openai_args(&mut cmd, &server);
    cmd.arg("hi");
    let run = finish(&mut cmd).await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("fine"));
    assert!(
        run.stderr.contains("the audit log is off"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("is a symlink"), "{}", run.stderr);
    let names: Vec<_> = std::fs::read_dir(&elsewhere)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["keep.txt"], "nothing was written through the links");
    unchanged(&target);
    let mode = std::fs::metadata(&elsewhere).unwrap().permissions().mode();
    assert_ne!(
        mode & 0o777,
        0o700,
        "the linked directory was not chmodded either"
    );
}
