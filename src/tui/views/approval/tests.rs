//! The approval dialog's keys and how it lays arguments out.

use super::*;
use crate::event::Decision;
use serde_json::json;

fn pending(id: &str, name: &str, position: usize, of: usize) -> Pending {
    Pending {
        id: id.into(),
        name: name.into(),
        arguments: json!({"path": "a"}),
        position,
        of,
        lead: None,
        from: None,
        note: None,
        diff: None,
        sandbox: None,
    }
}

fn key(c: KeyCode) -> KeyEvent {
    KeyEvent::new(c, KeyModifiers::NONE)
}

#[test]
fn p_allows_a_shell_commands_prefix_and_nothing_else() {
    let mut s = ApprovalState::new();
    let mut shell = pending("1", "shell", 1, 1);
    shell.arguments = json!({"command": "cargo test --test mcp"});
    s.push(shell);
    let Outcome::Decided(d) = s.on_key(key(KeyCode::Char('p'))) else {
        panic!("p answers a shell call");
    };
    let grant = d[0].1.prefix.as_ref().map(|g| g.to_string());
    assert_eq!(grant.as_deref(), Some("cargo test …"));
    assert_eq!(
        d[0].1.scope,
        Scope::Once,
        "the prefix is the grant, not the tool"
    );

    let mut s = ApprovalState::new();
    let mut chained = pending("1", "shell", 1, 1);
    chained.arguments = json!({"command": "cargo test; rm -rf x"});
    s.push(chained);
    assert_eq!(
        s.on_key(key(KeyCode::Char('p'))),
        Outcome::Ignored,
        "no prefix for a chain"
    );
    let mut s = ApprovalState::new();
    s.push(pending("1", "write_file", 1, 1));
    assert_eq!(s.on_key(key(KeyCode::Char('p'))), Outcome::Ignored);
}

#[test]
fn each_key_sends_the_right_decision_and_scope() {
    let cases = [
        (KeyCode::Char('y'), Decision::Approved, Scope::Once),
        (KeyCode::Char('t'), Decision::Approved, Scope::Turn),
        (KeyCode::Char('a'), Decision::Approved, Scope::Session),
        (KeyCode::Esc, Decision::Denied, Scope::Once),
    ];
    for (code, decision, scope) in cases {
        let mut s = ApprovalState::new();
        s.push(pending("1", "shell", 1, 1));
        let Outcome::Decided(d) = s.on_key(key(code)) else {
            panic!("{code:?}")
        };
        assert_eq!(d.len(), 1);
        assert_eq!(
            (d[0].1.decision, d[0].1.scope),
            (decision, scope),
            "{code:?}"
        );
        assert!(!s.is_open());
    }
}

#[test]
fn n_asks_for_an_optional_reason() {
    let mut s = ApprovalState::new();
    s.push(pending("1", "shell", 1, 1));
    assert_eq!(s.on_key(key(KeyCode::Char('n'))), Outcome::Used);
    assert!(s.is_typing_reason());
    for c in "no rm".chars() {
        s.on_key(key(KeyCode::Char(c)));
    }
    let Outcome::Decided(d) = s.on_key(key(KeyCode::Enter)) else {
        panic!()
    };
    assert_eq!(d[0].1, ApprovalAnswer::deny(Some("no rm".into())));

    s.push(pending("2", "shell", 1, 1));
    s.on_key(key(KeyCode::Char('n')));
    let Outcome::Decided(d) = s.on_key(key(KeyCode::Esc)) else {
        panic!()
    };
    assert_eq!(d[0].1, ApprovalAnswer::deny(None));
}

#[test]
fn a_grant_covers_the_other_calls_of_that_tool_in_the_batch() {
    let mut s = ApprovalState::new();
    s.push(pending("1", "shell", 1, 3));
    s.push(pending("2", "write_file", 2, 3));
    s.push(pending("3", "shell", 3, 3));
    let Outcome::Decided(d) = s.on_key(key(KeyCode::Char('t'))) else {
        panic!()
    };
    assert_eq!(
        d.iter().map(|(id, _)| id.as_str()).collect::<Vec<_>>(),
        ["1", "3"]
    );
    assert_eq!(s.current().map(|p| p.id.as_str()), Some("2"));
    let Outcome::Decided(d) = s.on_key(key(KeyCode::Char('y'))) else {
        panic!()
    };
    assert_eq!(d.len(), 1);
    assert!(!s.is_open());
}

#[test]
fn arguments_read_as_text() {
    let shown = pretty(&json!({"path": "a.txt", "content": "line 1\nline 2", "n": 3}));
    assert_eq!(shown, "n: 3\npath: a.txt\ncontent:\n  line 1\n  line 2\n");
    assert_eq!(pretty(&json!("raw")), "\"raw\"");
}

#[test]
fn other_keys_are_not_taken() {
    let mut s = ApprovalState::new();
    assert_eq!(
        s.on_key(key(KeyCode::Char('y'))),
        Outcome::Ignored,
        "closed dialog"
    );
    s.push(pending("1", "shell", 1, 1));
    assert_eq!(s.on_key(key(KeyCode::Char('x'))), Outcome::Ignored);
    assert_eq!(
        s.on_key(KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL)),
        Outcome::Ignored
    );
    assert!(s.is_open());
}

#[test]
fn leaving_the_sandbox_takes_only_y_and_n_and_says_so() {
    use crate::event::Confinement;
    let mut s = ApprovalState::new();
    let mut shell = pending("1", "shell", 1, 2);
    shell.arguments = json!({"command": "cargo fetch"});
    shell.sandbox = Some(Confinement::Unsandboxed);
    let mut other = pending("2", "shell", 2, 2);
    other.arguments = json!({"command": "cargo test"});
    s.push(shell);
    s.push(other);
    for c in ['t', 'a', 'p'] {
        assert_eq!(s.on_key(key(KeyCode::Char(c))), Outcome::Ignored, "{c}");
    }
    let (_, hints) = s.hints(None);
    let keys: Vec<&str> = hints.iter().map(|h| h.key.as_ref()).collect();
    // For this call y and n; for the batch Y (the other call) and N; and scrolling.
    assert_eq!(keys, ["y", "n", "Y", "N", "↑↓"]);
    assert_eq!(
        s.on_key(key(KeyCode::Char('Y'))),
        Outcome::Batch(vec!["2".into()], BatchDecision::ApproveAll),
        "Y leaves the escalation to its own answer"
    );
    assert_eq!(s.current().map(|p| p.id.as_str()), Some("1"));
    assert_eq!(s.on_key(key(KeyCode::Char('Y'))), Outcome::Ignored);
    s.push(other_call());
    let Outcome::Decided(d) = s.on_key(key(KeyCode::Char('y'))) else {
        panic!("y approves it");
    };
    assert_eq!(d.len(), 1, "it answers that call alone");
    assert_eq!((d[0].0.as_str(), d[0].1.scope), ("1", Scope::Once));
    // The next call is an ordinary one: its grants are offered again.
    assert_eq!(s.hints(None).1.len(), 6);
}

fn other_call() -> Pending {
    let mut other = pending("2", "shell", 2, 2);
    other.arguments = json!({"command": "cargo test"});
    other
}

fn batch_of_three() -> ApprovalState {
    let mut s = ApprovalState::new();
    for i in 1..=3 {
        s.push(pending(&i.to_string(), "write_file", i, 3));
    }
    s
}

#[test]
fn shift_y_approves_the_whole_batch_once() {
    let mut s = batch_of_three();
    assert!(s.offers_batch());
    let ids = vec!["1".to_string(), "2".into(), "3".into()];
    assert_eq!(
        s.on_key(key(KeyCode::Char('Y'))),
        Outcome::Batch(ids, BatchDecision::ApproveAll)
    );
    assert!(!s.is_open(), "nothing is left to ask");
}

#[test]
fn shift_n_denies_the_whole_batch_with_one_reason() {
    let mut s = batch_of_three();
    assert_eq!(s.on_key(key(KeyCode::Char('N'))), Outcome::Used);
    assert!(s.is_typing_reason());
    assert_eq!(s.hints(None).0, "Reason for the model (denies all 3):");
    for c in "not now".chars() {
        s.on_key(key(KeyCode::Char(c)));
    }
    let ids = vec!["1".to_string(), "2".into(), "3".into()];
    assert_eq!(
        s.on_key(key(KeyCode::Enter)),
        Outcome::Batch(ids, BatchDecision::DenyAll(Some("not now".into())))
    );
    assert!(!s.is_open());
}

#[test]
fn y_goes_call_by_call_and_the_list_marks_what_was_answered() {
    let mut s = batch_of_three();
    let Outcome::Decided(d) = s.on_key(key(KeyCode::Char('y'))) else {
        panic!("y answers the current call");
    };
    assert_eq!(d.len(), 1);
    let lines: Vec<String> = (s.batch_lines(60, &Theme::default()).iter())
        .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
        .collect();
    assert_eq!(lines[0], "3 calls in this batch, 2 waiting:");
    assert!(lines[1].starts_with("✓ write_file path=a"), "{lines:?}");
    assert!(lines[2].starts_with("▸ write_file"), "{lines:?}");
    // Y now decides the two still waiting.
    assert_eq!(
        s.on_key(key(KeyCode::Char('Y'))),
        Outcome::Batch(vec!["2".into(), "3".into()], BatchDecision::ApproveAll)
    );
}

#[test]
fn a_lone_call_or_a_sub_agents_batch_has_no_batch_keys() {
    let mut s = ApprovalState::new();
    s.push(pending("1", "write_file", 1, 1));
    assert!(!s.offers_batch());
    assert_eq!(s.on_key(key(KeyCode::Char('Y'))), Outcome::Ignored);
    assert_eq!(s.on_key(key(KeyCode::Char('N'))), Outcome::Ignored);
    assert!(s.batch_lines(60, &Theme::default()).is_empty());

    let mut s = ApprovalState::new();
    for i in 1..=2 {
        let mut call = pending(&format!("d1/{i}"), "write_file", i, 2);
        call.from = Some("delegate: tidy up".into());
        s.push(call);
    }
    assert!(!s.offers_batch(), "a sub-agent's calls go one by one");
    assert_eq!(s.on_key(key(KeyCode::Char('Y'))), Outcome::Ignored);
    let keys: Vec<String> = (s.hints(None).1.iter())
        .map(|h| h.key.to_string())
        .collect();
    assert!(!keys.contains(&"Y".to_string()), "{keys:?}");
}
