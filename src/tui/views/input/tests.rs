use ratatui::Terminal;
use ratatui::backend::TestBackend;

use super::*;
use crate::event::{FrameState, StackFrame};
use crate::tui::theme::Theme;

fn parameter(id: &str) -> InputRequest {
    InputRequest {
        id: id.into(),
        kind: InputKind::Parameter,
        frame: "call_1/collect".into(),
        tool: "write_file".into(),
        prompt: "write_file needs a value for `path`.".into(),
        parameter: Some("path".into()),
        description: Some("The file to write, relative to the workspace.".into()),
        value_type: Some("string".into()),
        depth: None,
        form: None,
    }
}

fn depth_limit(id: &str) -> InputRequest {
    InputRequest {
        id: id.into(),
        kind: InputKind::DepthLimit,
        frame: "f".into(),
        tool: "delegate".into(),
        prompt: "The tool stack is 20 levels deep. Continue?".into(),
        parameter: None,
        description: None,
        value_type: None,
        depth: Some(20),
        form: None,
    }
}

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

fn typed(state: &mut InputState, text: &str) {
    for c in text.chars() {
        assert_eq!(state.on_key(key(KeyCode::Char(c))), Outcome::Used);
    }
}

fn frame(id: &str, parent: Option<&str>, name: &str, state: FrameState) -> StackFrame {
    StackFrame {
        id: id.into(),
        parent: parent.map(Into::into),
        name: name.into(),
        summary: format!("of {id}"),
        state,
    }
}

fn draw(state: &mut InputState, stack: &[(usize, &StackFrame)], w: u16, h: u16) -> String {
    let mut terminal = Terminal::new(TestBackend::new(w, h)).unwrap();
    terminal
        .draw(|f| {
            state.render(
                f.area(),
                f.buffer_mut(),
                &Theme::default(),
                stack,
                crate::tui::views::gate::Gate::Open,
            )
        })
        .unwrap();
    // TestBackend cannot print a zero-width buffer.
    if w == 0 {
        return String::new();
    }
    terminal.backend().to_string()
}

#[test]
fn typing_and_enter_answers_with_the_trimmed_text() {
    let mut s = InputState::new();
    s.push(parameter("q1"));
    typed(&mut s, " src/a.rs ");
    assert_eq!(
        s.on_key(key(KeyCode::Enter)),
        Outcome::Answered("q1".into(), Some("src/a.rs".into()))
    );
    assert!(!s.is_open());
}

#[test]
fn editing_keys_move_the_cursor_and_delete() {
    let mut s = InputState::new();
    s.push(parameter("q1"));
    typed(&mut s, "héllo");
    s.on_key(key(KeyCode::Backspace));
    assert_eq!(s.line(), "héll");
    s.on_key(key(KeyCode::Home));
    s.on_key(key(KeyCode::Delete));
    assert_eq!(s.line(), "éll");
    s.on_key(key(KeyCode::Right));
    typed(&mut s, "X");
    assert_eq!(s.line(), "éXll");
    s.on_key(key(KeyCode::End));
    typed(&mut s, "!");
    assert_eq!(s.line(), "éXll!");
    s.on_key(KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL));
    assert_eq!(s.line(), "");
    // Nothing to delete, nothing breaks.
    s.on_key(key(KeyCode::Backspace));
    s.on_key(key(KeyCode::Delete));
    s.on_key(key(KeyCode::Left));
    assert_eq!(s.line(), "");
}

#[test]
fn esc_abandons() {
    let mut s = InputState::new();
    s.push(parameter("q1"));
    typed(&mut s, "half");
    assert_eq!(
        s.on_key(key(KeyCode::Esc)),
        Outcome::Answered("q1".into(), None)
    );
    assert!(!s.is_open());
}

#[test]
fn an_empty_enter_asks_whether_to_continue() {
    let mut s = InputState::new();
    s.push(parameter("q1"));
    typed(&mut s, "  ");
    assert_eq!(s.on_key(key(KeyCode::Enter)), Outcome::Used);
    assert!(s.is_confirming());
    assert_eq!(
        s.on_key(key(KeyCode::Char('x'))),
        Outcome::Typed(vec!['x']),
        "not an answer: typing"
    );
    assert_eq!(s.on_key(key(KeyCode::Char('y'))), Outcome::Used);
    assert!(s.is_confirming(), "y only picks");
    assert_eq!(s.on_key(key(KeyCode::Enter)), Outcome::Used);
    assert!(!s.is_confirming(), "back to the question");
    assert!(s.is_open());
    s.on_key(key(KeyCode::Enter));
    assert_eq!(s.on_key(key(KeyCode::Char('n'))), Outcome::Used);
    assert_eq!(
        s.on_key(key(KeyCode::Enter)),
        Outcome::Answered("q1".into(), None)
    );
}

#[test]
fn paste_goes_into_the_line_on_one_row() {
    let mut s = InputState::new();
    assert!(!s.on_paste("x"), "no question");
    s.push(parameter("q1"));
    s.on_key(key(KeyCode::Enter));
    assert!(s.is_confirming());
    assert!(s.on_paste("a\r\nb\tc\u{7}"));
    assert!(!s.is_confirming());
    assert_eq!(s.line(), "a b c");
    s.push(depth_limit("q2"));
    s.remove("q1");
    assert!(!s.on_paste("y"), "the depth question takes no text");
}

#[test]
fn depth_limit_y_continues_and_n_or_esc_stop() {
    for (keys, answer) in [
        (
            &[KeyCode::Char('y'), KeyCode::Enter][..],
            Some("y".to_string()),
        ),
        (&[KeyCode::Char('n'), KeyCode::Enter][..], None),
        (&[KeyCode::Esc][..], None),
    ] {
        let mut s = InputState::new();
        s.push(depth_limit("d"));
        assert_eq!(
            s.on_key(key(KeyCode::Enter)),
            Outcome::Used,
            "Enter alone: nothing"
        );
        let mut last = Outcome::Ignored;
        for &code in keys {
            last = s.on_key(key(code));
        }
        assert_eq!(last, Outcome::Answered("d".into(), answer));
        assert!(!s.is_open());
    }
}

#[test]
fn a_yes_no_question_gives_typing_back() {
    for word in ["queue it", "yes", "no way", "Yes please", "nn"] {
        let mut s = InputState::new();
        s.push(depth_limit("d"));
        let mut typed = Vec::new();
        for c in word.chars() {
            match s.on_key(key(KeyCode::Char(c))) {
                Outcome::Typed(keys) => {
                    typed = keys;
                    break;
                }
                Outcome::Used => {}
                other => panic!("{word:?}: {other:?}"),
            }
        }
        let start: String = word.chars().take(typed.len()).collect();
        assert_eq!(typed.into_iter().collect::<String>(), start, "{word:?}");
        assert!(s.is_open() && s.armed().is_none());
    }
}

#[test]
fn questions_queue_and_repeats_are_ignored() {
    let mut s = InputState::new();
    s.push(parameter("q1"));
    s.push(parameter("q1"));
    s.push(depth_limit("q2"));
    assert_eq!(s.current().map(|r| r.id.as_str()), Some("q1"));
    s.remove("q1");
    assert_eq!(s.current().map(|r| r.id.as_str()), Some("q2"));
    s.clear();
    assert!(!s.is_open());
    assert_eq!(s.on_key(key(KeyCode::Char('y'))), Outcome::Ignored);
}

#[test]
fn the_parameter_dialog_shows_name_type_description_and_cursor() {
    let mut s = InputState::new();
    s.push(parameter("q1"));
    typed(&mut s, "src/main.rs");
    s.on_key(key(KeyCode::Left));
    let screen = draw(&mut s, &[], 60, 7);
    assert!(
        screen.contains("collect_tool_parameters · write_file"),
        "{screen}"
    );
    assert!(
        screen.contains("path (string) — The file to write"),
        "{screen}"
    );
    assert!(screen.contains("› src/main.r▏s"), "{screen}");
    s.on_key(key(KeyCode::End));
    s.on_key(KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL));
    s.on_key(key(KeyCode::Enter));
    let screen = draw(&mut s, &[], 60, 7);
    assert!(
        screen.contains("Continue with current task? (y/n)"),
        "{screen}"
    );
}

#[test]
fn a_long_line_keeps_the_cursor_in_view() {
    let mut s = InputState::new();
    s.push(parameter("q1"));
    typed(&mut s, &"abcdefghij".repeat(10));
    let screen = draw(&mut s, &[], 30, 8);
    assert!(screen.contains("› …"), "{screen}");
    assert!(screen.contains("hij▏"), "{screen}");
    s.on_key(key(KeyCode::Home));
    let screen = draw(&mut s, &[], 30, 8);
    assert!(screen.contains("› ▏abcdefghij"), "{screen}");
}

#[test]
fn the_depth_dialog_shows_the_innermost_frames_and_scrolls() {
    let frames: Vec<StackFrame> = (0..30)
        .map(|i| {
            let parent = (i > 0).then(|| format!("f{}", i - 1));
            frame(
                &format!("f{i}"),
                parent.as_deref(),
                "delegate",
                FrameState::Running,
            )
        })
        .collect();
    let stack: Vec<(usize, &StackFrame)> = frames.iter().enumerate().collect();
    let mut s = InputState::new();
    s.push(depth_limit("d"));
    let screen = draw(&mut s, &stack, 70, 10);
    assert!(screen.contains("depth 20"), "{screen}");
    assert!(screen.contains("of f29 · running"), "{screen}");
    assert!(!screen.contains("of f0 "), "{screen}");
    assert!(screen.contains("↑ 25 more"), "{screen}");
    s.on_key(key(KeyCode::Home));
    let screen = draw(&mut s, &stack, 70, 10);
    assert!(screen.contains("▸ delegate of f0 ·"), "{screen}");
    assert!(screen.contains("↓ 25 more"), "{screen}");
}

#[test]
fn never_panics_on_any_size() {
    let frames = [frame("a", None, "delegate", FrameState::AwaitingInput)];
    let stack = [(0, &frames[0])];
    for request in [parameter("q"), depth_limit("d")] {
        let mut s = InputState::new();
        let takes_text = request.kind == InputKind::Parameter;
        s.push(request);
        if takes_text {
            typed(&mut s, "界界界界界界界界界界界界");
        } else {
            // A yes/no question gives typing back; y waits for Enter.
            assert_eq!(
                s.on_key(key(KeyCode::Char('界'))),
                Outcome::Typed(vec!['界'])
            );
            s.on_key(key(KeyCode::Char('y')));
        }
        for w in [0, 1, 3, 4, 5, 8, 20, 80] {
            for h in [0, 1, 2, 3, 4, 6, 20] {
                draw(&mut s, &stack, w, h);
            }
            assert!(s.wanted_rows(w, 1) >= 4);
        }
    }
}
