//! The sandbox on screen (issue 17): the approval dialog, the chat's tool cell, the stack and
//! the status line say how a call runs; leaving the sandbox is its own question with `y` and
//! `n` only; a sandbox denial reads as one; `/status` gives the whole state.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed unwrap is a failed test

use std::path::PathBuf;
use std::time::Instant;

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::KeyCode;
use serde_json::{Value, json};
use taco::event::{Confinement, EventData, FrameState, SandboxMode, Scope, StackFrame, ToolStatus};
use taco::orchestrator::task::Op;
use taco::sandbox::{Metadata, Sandbox, Support};
use taco::tui::app::{App, AppInfo, Command};

use crate::support;
use support::app::{Harness, info};

const SANDBOXED: Confinement = Confinement::Sandboxed {
    mode: SandboxMode::WorkspaceWrite,
    network: false,
};

/// The steps of this file's stories, on the shared harness.
trait TuiSandboxSteps {
    fn with_info(info: AppInfo) -> Self;
    fn start(&mut self);
    fn asks(&mut self, id: &str, command: &str, sandbox: Confinement);
    fn frame(&mut self, id: &str, command: &str, state: FrameState);
}

impl TuiSandboxSteps for Harness {
    fn with_info(info: AppInfo) -> Self {
        let t0 = Instant::now();
        Self {
            app: App::new(info, t0),
            t0,
            ms: 0,
        }
    }

    fn start(&mut self) {
        self.type_text("go");
        self.key(KeyCode::Enter);
        self.event(EventData::RunStarted {
            prompt: "go".into(),
            provider: "demo".into(),
            model: "demo".into(),
            max_turns: 10,
            trace_parent: None,
        });
    }

    /// A shell call of `command` that runs so, waiting for approval.
    fn asks(&mut self, id: &str, command: &str, sandbox: Confinement) {
        let arguments = json!({"command": command});
        self.event(EventData::ToolCall {
            turn: 1,
            id: id.into(),
            name: "shell".into(),
            arguments: arguments.clone(),
            parent: None,
            sandbox: Some(sandbox),
        });
        self.frame(id, command, FrameState::AwaitingApproval);
        self.event(EventData::ApprovalRequested {
            id: id.into(),
            name: "shell".into(),
            arguments,
            position: 1,
            of: 1,
            note: None,
            diff: None,
            sandbox: Some(sandbox),
        });
        // Past the type-ahead guard's quiet time.
        self.ms += 500;
    }

    fn frame(&mut self, id: &str, command: &str, state: FrameState) {
        self.event(EventData::StackPush(StackFrame {
            id: id.into(),
            parent: None,
            name: "shell".into(),
            summary: format!("command={command}"),
            state,
        }));
    }
}

fn screen_text(terminal: &Terminal<TestBackend>) -> String {
    let buffer = terminal.backend().buffer();
    let width = usize::from(buffer.area.width);
    let cells: Vec<&str> = buffer.content().iter().map(|c| c.symbol()).collect();
    cells.chunks(width).map(|row| row.concat() + "\n").collect()
}

fn approved(commands: &[Command]) -> Vec<(String, Scope, Option<String>)> {
    commands
        .iter()
        .filter_map(|c| match c {
            Command::Op(Op::Approve { id, answer }) => Some((
                id.clone(),
                answer.scope,
                answer.prefix.as_ref().map(|g| g.name()),
            )),
            _ => None,
        })
        .collect()
}

#[test]
fn snapshot_leaving_the_sandbox_asks_run_shell_unsandboxed_with_y_and_n_only() {
    let mut h = Harness::new();
    h.start();
    h.asks("s1", "cargo fetch", Confinement::Unsandboxed);
    let terminal = h.screen(150, 24);
    let text = screen_text(&terminal);
    assert!(text.contains("Run shell unsandboxed?"), "{text}");
    assert!(text.contains("runs OUTSIDE the sandbox"), "{text}");
    assert!(
        text.contains("shell [UNSANDBOXED"),
        "the stack says so: {text}"
    );
    assert!(text.contains("answer above: y or n, then Enter"), "{text}");
    assert!(
        text.contains("→ shell [UNSANDBOXED]") && text.contains("? run unsandboxed? (1/1)"),
        "the timeline says so: {text}"
    );
    assert!(
        !text.contains("this session") && !text.contains("always '"),
        "no grant is offered: {text}"
    );
    insta::assert_snapshot!(terminal.backend());
    for key in ['t', 'a', 'p'] {
        assert!(approved(&h.key(KeyCode::Char(key))).is_empty(), "{key}");
        // Not an answer here: typing, which goes to the composer; back to the dialog.
        h.key(KeyCode::Backspace);
        h.key(KeyCode::Tab);
    }
    h.key(KeyCode::Char('y'));
    assert_eq!(
        approved(&h.key(KeyCode::Enter)),
        [("s1".to_string(), Scope::Once, None)]
    );
}

#[test]
fn an_ordinary_shell_approval_still_offers_its_grants_and_says_it_runs_sandboxed() {
    let mut h = Harness::new();
    h.start();
    h.asks("s1", "cargo test", SANDBOXED);
    let text = screen_text(&h.screen(150, 24));
    assert!(text.contains("Approve shell?"), "{text}");
    assert!(
        text.contains("sandboxed: workspace-write, no network"),
        "{text}"
    );
    assert!(text.contains("this session"), "{text}");
    h.key(KeyCode::Char('a'));
    assert_eq!(
        approved(&h.key(KeyCode::Enter)),
        [("s1".to_string(), Scope::Session, None)]
    );
}

#[test]
fn without_landlock_each_shell_call_is_asked_once_with_a_warning() {
    let mut h = Harness::new();
    h.start();
    h.asks("s1", "ls", Confinement::Unavailable);
    let text = screen_text(&h.screen(150, 24));
    assert!(
        text.contains("not sandboxed: this kernel cannot") && text.contains("asked each time"),
        "{text}"
    );
    assert!(approved(&h.key(KeyCode::Char('a'))).is_empty());
    h.key(KeyCode::Backspace);
    h.key(KeyCode::Tab);
    h.key(KeyCode::Char('y'));
    assert_eq!(
        approved(&h.key(KeyCode::Enter)),
        [("s1".to_string(), Scope::Once, None)]
    );
}

#[test]
fn snapshot_a_sandbox_denial_reads_as_one_in_the_chat() {
    let mut h = Harness::new();
    h.start();
    h.asks("s1", "touch ~/x", SANDBOXED);
    h.key(KeyCode::Char('y'));
    h.key(KeyCode::Enter);
    h.event(EventData::ApprovalDecided {
        id: "s1".into(),
        name: "shell".into(),
        decision: taco::event::Decision::Approved,
        scope: Scope::Once,
        reason: None,
        prefix: None,
    });
    h.frame("s1", "touch ~/x", FrameState::Running);
    h.ms += 12;
    let result: Value = json!({
        "exit_code": 1,
        "stdout": "",
        "stderr": "touch: cannot touch '/root/x': Permission denied\n",
        "sandbox_denied": true,
        "note": "the sandbox probably refused it",
    });
    h.event(EventData::ToolResult {
        id: "s1".into(),
        name: "shell".into(),
        ok: false,
        status: Some(ToolStatus::SandboxDenied),
        denied_by: None,
        result: Some(result),
        error: Some("the sandbox refused what the command tried".into()),
        duration_ms: 12,
    });
    h.event(EventData::StackPop(StackFrame {
        id: "s1".into(),
        parent: None,
        name: "shell".into(),
        summary: "command=touch ~/x".into(),
        state: FrameState::Failed,
    }));
    let terminal = h.screen(150, 24);
    let text = screen_text(&terminal);
    assert!(
        text.contains("⊘ shell command=touch ~/x · refused by the sandbox · sandboxed"),
        "{text}"
    );
    assert!(
        text.contains("└ the sandbox refused it; the model may ask"),
        "{text}"
    );
    insta::assert_snapshot!(terminal.backend());
}

fn info_with(sandbox: Sandbox) -> AppInfo {
    AppInfo {
        sandbox: Some(sandbox),
        ..info()
    }
}

fn sandbox(mode: SandboxMode, support: Support) -> Sandbox {
    Sandbox {
        mode,
        network: false,
        writable: vec![PathBuf::from("/opt/cache")],
        support,
        metadata: Metadata::Namespace { user: false },
    }
}

#[test]
fn the_status_line_says_when_commands_run_unconfined_and_status_says_everything() {
    let available = Support::Available { abi: 7 };
    let cases = [
        (
            sandbox(SandboxMode::WorkspaceWrite, available.clone()),
            None,
        ),
        (
            sandbox(SandboxMode::Off, available.clone()),
            Some("sandbox off"),
        ),
        (
            sandbox(
                SandboxMode::WorkspaceWrite,
                Support::Unavailable("no Landlock here".into()),
            ),
            Some("no sandbox"),
        ),
    ];
    for (sandbox, word) in cases {
        let mut h = Harness::with_info(info_with(sandbox.clone()));
        let text = screen_text(&h.screen(150, 24));
        let status = text.lines().last().unwrap().to_string();
        match word {
            Some(word) => assert!(status.contains(word), "{sandbox:?}: {status}"),
            None => assert!(!status.contains("sandbox"), "{status}"),
        }
    }

    let mut h = Harness::with_info(info_with(sandbox(SandboxMode::WorkspaceWrite, available)));
    h.type_text("/status");
    h.key(KeyCode::Enter);
    h.ms += 100;
    let text = screen_text(&h.screen(200, 40));
    assert!(
        text.contains("Sandbox: workspace-write (Landlock ABI 7)")
            && text.contains("/work/project")
            && text.contains("/opt/cache"),
        "{text}"
    );
}
