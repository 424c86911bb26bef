//! The app with keys (issue 16.4, 16.5): `Y` / `N` over a batch of three, the batch dialog
//! and its key hints, `Y` leaving an escalation to its own answer; `/tools` listing the
//! grants with their scope, age and uses, `r` and `/revoke` taking one back, and snapshots
//! of the batch dialog and the grants list at 200×50 and 80×24.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed unwrap is a failed test

use ratatui::crossterm::event::KeyCode;
use serde_json::json;
use taco::event::{
    Confinement, Decision, DeltaKind, EventData, FrameState, Grant, Scope, StackFrame,
};
use taco::orchestrator::approval::BatchDecision;
use taco::orchestrator::task::Op;
use taco::tui::app::{App, AppInfo, Command};
use taco::tui::commands::ToolInfo;

use crate::support;
use support::app::{Harness, screen_text};

/// A call of a batch: id, tool, arguments, diff, how it would run.
type AskedCall<'a> = (
    &'a str,
    &'a str,
    serde_json::Value,
    Option<&'a str>,
    Option<Confinement>,
);

/// The sizes the batch dialog and the grants list are drawn at.
const SIZES: [(u16, u16); 2] = [(200, 50), (80, 24)];

/// The steps of this file's stories, on the shared harness.
trait TuiBatchSteps {
    fn answer(&mut self, letter: char) -> Vec<Command>;
    fn start(&mut self);
    fn ask_batch(&mut self, calls: &[AskedCall]);
    fn ask_three(&mut self);
    fn text(&mut self, width: u16, height: u16) -> String;
}

impl TuiBatchSteps for Harness {
    /// A letter, then Enter: a deliberate answer.
    fn answer(&mut self, letter: char) -> Vec<Command> {
        assert_eq!(self.key(KeyCode::Char(letter)), [], "{letter} only picks");
        self.key(KeyCode::Enter)
    }

    fn start(&mut self) {
        self.command("tidy the project");
        self.event(EventData::RunStarted {
            prompt: "tidy the project".into(),
            provider: "demo".into(),
            model: "demo".into(),
            max_turns: 10,
            trace_parent: None,
        });
        self.event(EventData::Delta {
            kind: DeltaKind::Text,
            text: "I'll update the notes, fix the typo and run the tests.".into(),
        });
    }

    /// Calls `(id, tool, arguments, diff, sandbox)` of one batch, each waiting for approval.
    fn ask_batch(&mut self, calls: &[AskedCall]) {
        for (id, name, arguments, _, sandbox) in calls {
            self.event(EventData::ToolCall {
                turn: 1,
                id: (*id).into(),
                name: (*name).into(),
                arguments: arguments.clone(),
                parent: None,
                sandbox: *sandbox,
            });
        }
        for (k, (id, name, arguments, diff, sandbox)) in calls.iter().enumerate() {
            self.event(EventData::StackPush(StackFrame {
                id: (*id).into(),
                parent: None,
                name: (*name).into(),
                summary: "x".into(),
                state: FrameState::AwaitingApproval,
            }));
            self.event(EventData::ApprovalRequested {
                id: (*id).into(),
                name: (*name).into(),
                arguments: arguments.clone(),
                position: k + 1,
                of: calls.len(),
                note: None,
                diff: diff.map(String::from),
                sandbox: *sandbox,
            });
        }
    }

    fn ask_three(&mut self) {
        let diff = "+2 −1 in src/main.rs\n--- a/src/main.rs\n+++ b/src/main.rs\n@@ -1,2 +1,3 @@\n-fn mian() {}\n+fn main() {}\n+// fixed\n";
        self.ask_batch(&[
            (
                "c1",
                "write_file",
                json!({"path": "NOTES.md", "content": "# Notes\n- tidy\n"}),
                Some("new file NOTES.md: 2 lines, 16 bytes\n--- /dev/null\n+++ b/NOTES.md\n@@ -0,0 +1,2 @@\n+# Notes\n+- tidy\n"),
                None,
            ),
            (
                "c2",
                "edit_file",
                json!({"path": "src/main.rs", "edits": [{"old_string": "mian", "new_string": "main"}]}),
                Some(diff),
                None,
            ),
            ("c3", "shell", json!({"command": "cargo test"}), None, None),
        ]);
    }

    fn text(&mut self, width: u16, height: u16) -> String {
        screen_text(&self.screen(width, height))
    }
}

fn each_size(name: &str, h: &mut Harness, needles: &[&str]) {
    for (width, height) in SIZES {
        let terminal = h.screen(width, height);
        let text = screen_text(&terminal);
        for needle in needles {
            assert!(
                text.contains(needle),
                "{name} at {width}×{height}: {needle:?} missing from\n{text}"
            );
        }
        insta::assert_snapshot!(format!("{name}_{width}x{height}"), terminal.backend());
    }
}

fn ids(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

#[test]
fn shift_y_approves_the_batch_of_three_in_one_op() {
    let mut h = Harness::new();
    h.start();
    h.ask_three();
    assert_eq!(
        h.answer('Y'),
        [Command::Op(Op::DecideBatch {
            ids: ids(&["c1", "c2", "c3"]),
            decision: BatchDecision::ApproveAll,
        })]
    );
    assert!(!h.app.approval_open(), "every call is answered");
}

#[test]
fn shift_n_denies_the_batch_of_three_with_one_reason() {
    let mut h = Harness::new();
    h.start();
    h.ask_three();
    assert!(h.answer('N').is_empty(), "it asks for a reason first");
    h.type_text("not on a Friday");
    assert_eq!(
        h.key(KeyCode::Enter),
        [Command::Op(Op::DecideBatch {
            ids: ids(&["c1", "c2", "c3"]),
            decision: BatchDecision::DenyAll(Some("not on a Friday".into())),
        })]
    );
    assert!(!h.app.approval_open());
}

#[test]
fn y_and_n_still_go_call_by_call() {
    let mut h = Harness::new();
    h.start();
    h.ask_three();
    let sent = h.answer('y');
    let [Command::Op(Op::Approve { id, answer })] = sent.as_slice() else {
        panic!("{sent:?}");
    };
    assert_eq!((id.as_str(), answer.scope), ("c1", Scope::Once));
    h.answer('n');
    let sent = h.key(KeyCode::Enter);
    let [Command::Op(Op::Approve { id, answer })] = sent.as_slice() else {
        panic!("{sent:?}");
    };
    assert_eq!((id.as_str(), answer.decision), ("c2", Decision::Denied));
    let text = h.text(200, 50);
    assert!(text.contains("✓ write_file · new file NOTES.md"), "{text}");
    assert!(
        text.contains("✗ edit_file · +2 −1 in src/main.rs · path=src/main.rs"),
        "{text}"
    );
    assert!(!text.contains("Y/N all"), "one call left: {text}");
}

#[test]
fn shift_y_leaves_an_escalation_to_its_own_answer() {
    let mut h = Harness::new();
    h.start();
    h.ask_batch(&[
        ("c1", "shell", json!({"command": "cargo build"}), None, None),
        (
            "c2",
            "shell",
            json!({"command": "cargo fetch", "unsandboxed": true}),
            None,
            Some(Confinement::Unsandboxed),
        ),
    ]);
    assert_eq!(
        h.answer('Y'),
        [Command::Op(Op::DecideBatch {
            ids: ids(&["c1"]),
            decision: BatchDecision::ApproveAll,
        })]
    );
    assert!(h.app.approval_open(), "the escalation still asks");
    assert!(h.key(KeyCode::Char('Y')).is_empty(), "Y never approves it");
    assert_eq!(h.app.composer_text(), "Y", "it is only typing there");
    let text = h.text(200, 50);
    assert!(text.contains("Run shell unsandboxed?"), "{text}");
    assert!(text.contains("y run it once"), "{text}");
}

#[test]
fn the_key_hints_and_help_show_y_and_n_for_a_batch() {
    let mut h = Harness::new();
    h.start();
    h.ask_batch(&[("c1", "shell", json!({"command": "ls"}), None, None)]);
    let text = h.text(200, 50);
    assert!(!text.contains("Y/N all"), "one call: {text}");
    assert!(!text.contains("Y approve all"), "{text}");
    let mut h = Harness::new();
    h.start();
    h.ask_three();
    let text = h.text(200, 50);
    let status = text.lines().last().unwrap();
    assert!(status.contains("Y/N all"), "{status}");
    assert!(text.contains("Y approve all"), "{text}");
    assert!(text.contains("N deny all"), "{text}");
    let mut h = Harness::new();
    h.command("/help");
    let text = h.text(200, 80);
    assert!(
        text.contains("several calls wait: approve every one once"),
        "{text}"
    );
    assert!(
        text.contains("several calls wait: deny every one"),
        "{text}"
    );
}

#[test]
fn snapshot_the_batch_dialog() {
    let mut h = Harness::new();
    h.start();
    h.ask_three();
    h.answer('y');
    each_size(
        "batch_dialog",
        &mut h,
        &["3 calls in this batch, 2 waiting", "✓ write_file", "Y", "N"],
    );
}

/// An app whose tools and rules come from the config.
fn configured() -> Harness {
    let mut h = Harness::new();
    let info = AppInfo {
        tools: vec![
            tool("read_file", "allow"),
            tool("write_file", "ask"),
            tool("edit_file", "ask"),
            tool("shell", "ask; allow for [tools.shell] allow prefixes"),
        ],
        rules: vec![
            "[tools.policy] edit_file = ask".into(),
            "[tools.shell] allow: git status, git diff".into(),
            "[tools.shell] ask: git push".into(),
        ],
        ..support::app::info()
    };
    h.app = App::new(info, h.now());
    h
}

fn tool(name: &str, policy: &str) -> ToolInfo {
    ToolInfo {
        name: name.into(),
        description: format!("The {name} tool."),
        schema: json!({"type": "object"}),
        policy: policy.into(),
        usage: None,
    }
}

/// A run in which the user allowed write_file for the session, edit_file for the request
/// and `cargo test` as a shell prefix, and the grants let calls through.
fn granted() -> Harness {
    let mut h = configured();
    h.start();
    let decided =
        |id: &str, name: &str, scope: Scope, prefix: Option<&str>| EventData::ApprovalDecided {
            id: id.into(),
            name: name.into(),
            decision: Decision::Approved,
            scope,
            reason: None,
            prefix: prefix.and_then(taco::tools::builtin::suggested_grant),
        };
    h.event(decided("c1", "write_file", Scope::Session, None));
    h.event(decided("c2", "edit_file", Scope::Turn, None));
    h.event(decided("c3", "shell", Scope::Once, Some("cargo test")));
    for (id, grant) in [
        ("c4", Grant::Tool("write_file".into())),
        ("c5", Grant::Tool("write_file".into())),
        (
            "c6",
            Grant::ShellPrefix(taco::tools::builtin::suggested_grant("cargo test").unwrap()),
        ),
    ] {
        let name = match &grant {
            Grant::Tool(name) => name.clone(),
            Grant::ShellPrefix(_) => "shell".into(),
        };
        h.event(EventData::GrantUsed {
            id: id.into(),
            name,
            grant,
        });
    }
    // Three minutes pass.
    h.ms += 180_000;
    h
}

#[test]
fn snapshot_the_grants_list() {
    let mut h = granted();
    h.command("/tools");
    each_size(
        "grants_list",
        &mut h,
        &[
            "write_file",
            "session",
            "since 3 min ago",
            "2 calls allowed",
            "this request",
            "shell 'cargo test …'",
            "[tools.shell] ask: git push",
            "r revoke",
        ],
    );
}

/// `/tools` left open while time passes (no event comes) ages its grants: a grant four
/// minutes old never reads "just now" because the view opened then.
#[test]
fn tools_left_open_ages_its_grants_with_the_clock() {
    let mut h = configured();
    h.start();
    h.event(EventData::ApprovalDecided {
        id: "c1".into(),
        name: "write_file".into(),
        decision: Decision::Approved,
        scope: Scope::Session,
        reason: None,
        prefix: None,
    });
    h.command("/tools");
    let fresh = h.text(120, 30);
    assert!(fresh.contains("since just now"), "{fresh}");
    assert!(h.app.needs_tick(h.now()), "an open /tools keeps time");
    h.ms += 4 * 60_000;
    let later = h.text(120, 30);
    assert!(later.contains("since 4 min ago"), "{later}");
    assert!(!later.contains("just now"), "{later}");
}

#[test]
fn r_in_tools_revokes_the_selected_grant_and_the_list_follows_the_event() {
    let mut h = granted();
    h.command("/tools");
    h.key(KeyCode::Down);
    let grant = Grant::Tool("write_file".into());
    assert_eq!(
        h.key(KeyCode::Char('r')),
        [Command::Op(Op::Revoke(grant.clone()))],
        "edit_file sorts first, then write_file"
    );
    let text = h.text(200, 50);
    assert!(
        text.contains("2 calls allowed · revoked at the next call"),
        "{text}"
    );
    h.event(EventData::ApprovalRevoked { grant });
    let text = h.text(200, 50);
    assert!(!text.contains("revoked at the next"), "{text}");
    assert!(
        !text.contains("2 calls allowed"),
        "write_file is gone: {text}"
    );
    assert!(text.contains("shell 'cargo test …'"), "{text}");
    h.key(KeyCode::Esc);
    assert!(
        h.text(200, 50)
            .contains("`write_file` is asked about again")
            || h.text(200, 50).contains("write_file is asked about again"),
        "the chat says so"
    );
}

#[test]
fn revoke_by_name_all_or_an_unknown_name() {
    let mut h = granted();
    assert_eq!(
        h.command("/revoke cargo test"),
        [Command::Op(Op::Revoke(Grant::ShellPrefix(
            taco::tools::builtin::suggested_grant("cargo test").unwrap()
        )))]
    );
    assert!(h.command("/revoke read_file").is_empty());
    let text = h.text(400, 50);
    assert!(
        text.contains(
            "No grant named 'read_file'. Granted: 'edit_file', 'write_file', 'cargo test'."
        ),
        "{text}"
    );
    assert_eq!(
        h.command("/revoke all"),
        [
            Command::Op(Op::Revoke(Grant::Tool("edit_file".into()))),
            Command::Op(Op::Revoke(Grant::Tool("write_file".into()))),
            Command::Op(Op::Revoke(Grant::ShellPrefix(
                taco::tools::builtin::suggested_grant("cargo test").unwrap()
            ))),
        ]
    );
    // The run ends: the turn grant goes with it, the session's stay.
    h.event(EventData::Final {
        content: "done".into(),
        turns: 1,
        usage: Default::default(),
    });
    h.command("/tools");
    let text = h.text(200, 50);
    assert!(
        !text.contains("this request"),
        "the turn grant ended: {text}"
    );
    assert!(text.contains("write_file"), "{text}");
}

/// The app wired to the real orchestrator task (a scripted model, a tool that asks): `a`
/// grants it for the session, the next request's call runs without asking, `/revoke guarded`
/// takes the grant back, and the request after that asks again.
#[tokio::test]
async fn revoke_through_the_app_makes_the_next_call_ask_again() {
    use std::sync::Arc;
    use support::scripted::{Scripted, calls, registry, settings, text};
    use taco::orchestrator::Orchestrator;
    use taco::orchestrator::task;

    let (r, _) = registry();
    let provider = Scripted::new(vec![
        Ok(calls(&[("g1", "guarded", json!({}))])),
        Ok(text("first")),
        Ok(calls(&[("g2", "guarded", json!({}))])),
        Ok(text("second")),
        Ok(calls(&[("g3", "guarded", json!({}))])),
        Ok(text("third")),
    ]);
    let mut t = task::spawn(Orchestrator::new(provider, Arc::new(r), settings(10)));
    let mut h = Harness::new();
    let mut asked = Vec::new();
    // Sends what the app asks for, and feeds it the task's events until the run ends.
    async fn pump(
        h: &mut Harness,
        t: &mut task::OrchestratorTask,
        sent: Vec<Command>,
        answer: Option<KeyCode>,
        asked: &mut Vec<String>,
    ) {
        for command in sent {
            if let Command::Op(op) = command {
                t.ops.send(op).unwrap();
            }
        }
        loop {
            let event = tokio::time::timeout(std::time::Duration::from_secs(30), t.events.recv())
                .await
                .unwrap()
                .unwrap();
            h.ms += 10;
            let now = h.now();
            let mut sent = h.app.on_event(&event, now);
            if let EventData::ApprovalRequested { id, .. } = &event.data {
                asked.push(id.clone());
                if let Some(key) = answer {
                    sent.extend(h.key(key));
                    sent.extend(h.key(KeyCode::Enter));
                }
            }
            for command in sent {
                if let Command::Op(op) = command {
                    t.ops.send(op).unwrap();
                }
            }
            if matches!(
                event.data,
                EventData::Final { .. } | EventData::ApprovalRevoked { .. }
            ) {
                return;
            }
        }
    }
    let sent = h.command("one");
    pump(&mut h, &mut t, sent, Some(KeyCode::Char('a')), &mut asked).await;
    let sent = h.command("two");
    pump(&mut h, &mut t, sent, None, &mut asked).await;
    assert_eq!(asked, ["g1"], "the session grant let g2 through");
    let sent = h.command("/revoke guarded");
    assert_eq!(
        sent,
        [Command::Op(Op::Revoke(Grant::Tool("guarded".into())))]
    );
    pump(&mut h, &mut t, sent, None, &mut asked).await;
    h.command("/tools");
    let text = h.text(200, 50);
    assert!(
        text.contains("None: every call that asks is asked about"),
        "{text}"
    );
    h.key(KeyCode::Esc);
    let sent = h.command("three");
    pump(&mut h, &mut t, sent, Some(KeyCode::Char('y')), &mut asked).await;
    assert_eq!(asked, ["g1", "g3"], "asked again after /revoke");
    t.ops.send(Op::Shutdown).unwrap();
}
