//! The approval dialog's keys and how it lays arguments out.

use super::*;
use crate::event::Decision;
use serde_json::json;

fn pending(id: &str, name: &str, position: usize, of: usize) -> Pending {
    Pending {
        call: ApprovalRequest {
            id: id.into(),
            name: name.into(),
            arguments: json!({"path": "a"}),
            sandbox: None,
        },
        position,
        of,
        lead: None,
        from: None,
        note: None,
        diff: None,
    }
}

fn key(c: KeyCode) -> KeyEvent {
    KeyEvent::new(c, KeyModifiers::NONE)
}

/// A letter picks, Enter carries it out: what the two keys did.
fn answer(s: &mut ApprovalState, letter: char) -> Outcome {
    match s.on_key(key(KeyCode::Char(letter))) {
        Outcome::Used => s.on_key(key(KeyCode::Enter)),
        other => other,
    }
}

#[test]
fn p_allows_a_shell_commands_prefix_and_nothing_else() {
    let mut s = ApprovalState::new();
    let mut shell = pending("1", "shell", 1, 1);
    shell.call.arguments = json!({"command": "cargo test --test mcp"});
    s.push(shell);
    let Outcome::Decided(d) = answer(&mut s, 'p') else {
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
    chained.call.arguments = json!({"command": "cargo test; rm -rf x"});
    s.push(chained);
    assert_eq!(
        s.on_key(key(KeyCode::Char('p'))),
        Outcome::Typed(vec!['p']),
        "no prefix for a chain: p is only typing"
    );
    let mut s = ApprovalState::new();
    s.push(pending("1", "write_file", 1, 1));
    assert_eq!(s.on_key(key(KeyCode::Char('p'))), Outcome::Typed(vec!['p']));
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
        let outcome = match code {
            KeyCode::Char(c) => {
                assert_eq!(s.on_key(key(code)), Outcome::Used, "a letter only picks");
                assert!(s.is_open() && s.armed().is_some());
                let _ = c;
                s.on_key(key(KeyCode::Enter))
            }
            _ => s.on_key(key(code)),
        };
        let Outcome::Decided(d) = outcome else {
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
    assert!(!s.is_typing_reason(), "n only picks");
    assert_eq!(s.on_key(key(KeyCode::Enter)), Outcome::Used);
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
    s.on_key(key(KeyCode::Enter));
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
    let Outcome::Decided(d) = answer(&mut s, 't') else {
        panic!()
    };
    assert_eq!(
        d.iter().map(|(id, _)| id.as_str()).collect::<Vec<_>>(),
        ["1", "3"]
    );
    assert_eq!(s.current().map(|p| p.id.as_str()), Some("2"));
    let Outcome::Decided(d) = answer(&mut s, 'y') else {
        panic!()
    };
    assert_eq!(d.len(), 1);
    assert!(!s.is_open());
}

#[test]
fn arguments_read_as_text() {
    let shown = pretty(&json!({"path": "a.txt", "content": "line 1\nline 2", "n": 3}));
    // Short values first, each in the model's order; long text after.
    assert_eq!(shown, "path: a.txt\nn: 3\ncontent:\n  line 1\n  line 2\n");
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
    assert_eq!(
        s.on_key(key(KeyCode::Enter)),
        Outcome::Used,
        "Enter alone decides nothing"
    );
    assert_eq!(s.on_key(key(KeyCode::F(2))), Outcome::Ignored);
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
    shell.call.arguments = json!({"command": "cargo fetch"});
    shell.call.sandbox = Some(Confinement::Unsandboxed);
    let mut other = pending("2", "shell", 2, 2);
    other.call.arguments = json!({"command": "cargo test"});
    s.push(shell);
    s.push(other);
    for c in ['t', 'a', 'p'] {
        assert_eq!(
            s.on_key(key(KeyCode::Char(c))),
            Outcome::Typed(vec![c]),
            "{c}"
        );
    }
    let (_, hints) = s.hints(Gate::Open);
    let keys: Vec<&str> = hints.iter().map(|h| h.key.as_ref()).collect();
    // For this call y and n; for the batch Y (the other call) and N; and scrolling.
    assert_eq!(keys, ["y", "n", "Y", "N", "↑↓"]);
    assert_eq!(
        answer(&mut s, 'Y'),
        Outcome::Batch(vec!["2".into()], BatchDecision::ApproveAll),
        "Y leaves the escalation to its own answer"
    );
    assert_eq!(s.current().map(|p| p.id.as_str()), Some("1"));
    assert_eq!(s.on_key(key(KeyCode::Char('Y'))), Outcome::Typed(vec!['Y']));
    s.push(other_call());
    let Outcome::Decided(d) = answer(&mut s, 'y') else {
        panic!("y approves it");
    };
    assert_eq!(d.len(), 1, "it answers that call alone");
    assert_eq!((d[0].0.as_str(), d[0].1.scope), ("1", Scope::Once));
    // The next call is an ordinary one: its grants are offered again.
    assert_eq!(s.hints(Gate::Open).1.len(), 6);
}

fn other_call() -> Pending {
    let mut other = pending("2", "shell", 2, 2);
    other.call.arguments = json!({"command": "cargo test"});
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
        answer(&mut s, 'Y'),
        Outcome::Batch(ids, BatchDecision::ApproveAll)
    );
    assert!(!s.is_open(), "nothing is left to ask");
}

#[test]
fn shift_n_denies_the_whole_batch_with_one_reason() {
    let mut s = batch_of_three();
    assert_eq!(answer(&mut s, 'N'), Outcome::Used);
    assert!(s.is_typing_reason());
    assert_eq!(
        s.hints(Gate::Open).0,
        "Reason for the model (denies all 3):"
    );
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
    let Outcome::Decided(d) = answer(&mut s, 'y') else {
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
        answer(&mut s, 'Y'),
        Outcome::Batch(vec!["2".into(), "3".into()], BatchDecision::ApproveAll)
    );
}

#[test]
fn a_lone_call_or_a_sub_agents_batch_has_no_batch_keys() {
    let mut s = ApprovalState::new();
    s.push(pending("1", "write_file", 1, 1));
    assert!(!s.offers_batch());
    assert_eq!(s.on_key(key(KeyCode::Char('Y'))), Outcome::Typed(vec!['Y']));
    assert_eq!(s.on_key(key(KeyCode::Char('N'))), Outcome::Typed(vec!['N']));
    assert!(s.batch_lines(60, &Theme::default()).is_empty());

    let mut s = ApprovalState::new();
    for i in 1..=2 {
        let mut call = pending(&format!("d1/{i}"), "write_file", i, 2);
        call.from = Some("delegate: tidy up".into());
        s.push(call);
    }
    assert!(!s.offers_batch(), "a sub-agent's calls go one by one");
    assert_eq!(s.on_key(key(KeyCode::Char('Y'))), Outcome::Typed(vec!['Y']));
    let keys: Vec<String> = (s.hints(Gate::Open).1.iter())
        .map(|h| h.key.to_string())
        .collect();
    assert!(!keys.contains(&"Y".to_string()), "{keys:?}");
}

#[test]
fn a_letter_then_more_typing_is_typing_and_decides_nothing() {
    for word in [
        "yes",
        "yy",
        "a new idea",
        "then",
        "no way",
        "please",
        "Yes",
        "N/A",
    ] {
        let mut s = batch_of_three();
        let mut typed = Vec::new();
        for c in word.chars() {
            match s.on_key(key(KeyCode::Char(c))) {
                Outcome::Typed(keys) => typed.extend(keys),
                Outcome::Used => {}
                other => panic!("{word:?}: {c} gave {other:?}"),
            }
            if !typed.is_empty() {
                break;
            }
        }
        let first_two: String = word.chars().take(typed.len()).collect();
        assert_eq!(typed.iter().collect::<String>(), first_two, "{word:?}");
        assert!(s.is_open() && s.armed().is_none(), "{word:?}");
    }
}

#[test]
fn esc_or_backspace_unpicks_and_the_picked_answer_says_what_enter_does() {
    let mut s = ApprovalState::new();
    let mut shell = pending("1", "shell", 1, 1);
    shell.call.arguments = json!({"command": "cargo test"});
    s.push(shell);
    s.on_key(key(KeyCode::Char('a')));
    assert_eq!(
        s.armed_line(Choice::Session),
        "a › allow every shell call for the rest of the session"
    );
    assert_eq!(s.hints(Gate::Open).1[0].key, "Enter");
    // A waiting dialog shows why it waits, not the picked answer.
    assert!(s.hints(Gate::Draft).0.contains("Tab"));
    assert_eq!(s.on_key(key(KeyCode::Esc)), Outcome::Used);
    assert!(s.is_open() && s.armed().is_none(), "Esc only unpicks");
    s.on_key(key(KeyCode::Char('y')));
    assert_eq!(s.on_key(key(KeyCode::Backspace)), Outcome::Used);
    assert!(s.armed().is_none());
    s.on_key(key(KeyCode::Char('p')));
    assert!(s.armed_line(Choice::Prefix).contains("cargo test"));
}

#[test]
fn leaving_the_sandbox_says_so_before_enter() {
    use crate::event::Confinement;
    let mut s = ApprovalState::new();
    let mut shell = pending("1", "shell", 1, 1);
    shell.call.sandbox = Some(Confinement::Unsandboxed);
    s.push(shell);
    s.on_key(key(KeyCode::Char('y')));
    assert_eq!(
        s.armed_line(Choice::Once),
        "y › run it OUTSIDE the sandbox, this once"
    );
}

/// A call asked about again while it still waits (its file changed while the dialog was
/// open): the dialog shows the fresh diff and the note, and it stays one call.
#[test]
fn a_call_asked_again_shows_the_fresh_diff_and_note() {
    let mut s = ApprovalState::new();
    let mut first = pending("1", "write_file", 1, 2);
    first.diff = Some("+1 −1 in a\n-old\n+new\n".into());
    s.push(first.clone());
    s.push(pending("2", "write_file", 2, 2));
    let mut again = first;
    again.diff = Some("+1 −1 in a\n-changed by you\n+new\n".into());
    again.note = Some("the file changed while this dialog was open".into());
    s.push(again.clone());
    assert_eq!(s.current(), Some(&again));
    assert_eq!(s.pending.len(), 2);
    // The dialog says why it asks again, and shows what would change now.
    let area = ratatui::layout::Rect::new(0, 0, 80, 20);
    let mut buf = ratatui::buffer::Buffer::empty(area);
    s.render(area, &mut buf, &Theme::default(), Gate::Open);
    let screen: String = buf.content().iter().map(|c| c.symbol()).collect();
    assert!(
        screen.contains("⚑ the file changed while this dialog was open"),
        "{screen}"
    );
    assert!(screen.contains("-changed by you"), "{screen}");
}
