//! Programs some tests need beyond Rust's toolchain (tmux, the npm MCP servers, attr): here,
//! or the test is skipped with one note naming what to install; under CI (`CI` set and not
//! `false`) a missing one fails the test instead (`.ci/run` installs them all).

use std::io::Write;
use std::sync::{Mutex, OnceLock, PoisonError};

/// The variable that names another tmux binary (a missing one shows the skip).
pub const TMUX_ENV: &str = "TACO_TEST_TMUX";

/// Whether this run is CI's, where nothing may be skipped.
pub fn under_ci() -> bool {
    std::env::var_os("CI").is_some_and(|v| !v.is_empty() && v != "false")
}

/// Says once per run, on the terminal (past the harness's capture of test output), that the
/// tests needing `what` are skipped and how to get it.
pub fn skipped(what: &str, install: &str) {
    static SAID: Mutex<Vec<String>> = Mutex::new(Vec::new());
    let mut said = SAID.lock().unwrap_or_else(PoisonError::into_inner);
    if said.iter().any(|s| s == what) {
        return;
    }
    said.push(what.to_string());
    let _ = writeln!(
        std::io::stderr(),
        "note: the tests that need {what} are skipped: {install} (`.ci/run` installs it; with CI=true they fail instead)"
    );
}

/// The tmux binary the tests drive.
pub fn tmux_program() -> String {
    std::env::var(TMUX_ENV)
        .ok()
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| "tmux".to_string())
}

/// Whether tmux is here for a test that needs it: a missing one skips the test (with the
/// note) or, under CI, fails it.
pub fn tmux() -> bool {
    static HERE: OnceLock<bool> = OnceLock::new();
    let here = *HERE.get_or_init(|| {
        std::process::Command::new(tmux_program())
            .arg("-V")
            .output()
            .is_ok_and(|out| out.status.success())
    });
    if !here {
        assert!(
            !under_ci(),
            "tmux ({}) is missing under CI: .ci/run installs it",
            tmux_program()
        );
        skipped("tmux", "install tmux (apt install tmux, brew install tmux)");
    }
    here
}
