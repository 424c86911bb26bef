use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::{RewindView, Step};
use crate::event::{
    Change, ChangedFile, ConversationPreview, FileDiffView, FilesPreview, RewindPoint,
    RewindPreview, RewindScope,
};

fn point() -> RewindPoint {
    RewindPoint::Run {
        request_id: "r1".into(),
    }
}

fn preview(hand_edits: &[&str], conversation: bool) -> RewindPreview {
    let file = |path: &str| FileDiffView {
        file: ChangedFile {
            path: path.into(),
            change: Change::Modified,
            added: 1,
            removed: 1,
            binary: false,
        },
        diff: String::new(),
        truncated: false,
    };
    RewindPreview {
        point: point(),
        files: Ok(FilesPreview {
            checkpoint: "abc".into(),
            files: vec![file("a"), file("b")],
            omitted: 0,
            hand_edits: hand_edits.iter().map(|h| h.to_string()).collect(),
        }),
        conversation: if conversation {
            Ok(ConversationPreview {
                prompt: "p".into(),
                runs_dropped: 2,
            })
        } else {
            Err("no session".into())
        },
    }
}

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

fn view(hand_edits: &[&str], conversation: bool) -> RewindView {
    let mut view = RewindView::new(point(), "before p");
    assert!(view.loaded(&preview(hand_edits, conversation)));
    view
}

#[test]
fn a_preview_for_another_point_is_not_taken() {
    let mut view = RewindView::new(point(), "before p");
    let mut other = preview(&[], true);
    other.point = RewindPoint::Checkpoint { id: "x".into() };
    assert!(!view.loaded(&other));
    assert!(view.is_loading());
}

#[test]
fn a_letter_picks_and_enter_confirms() {
    let mut view = view(&[], true);
    assert_eq!(view.on_key(key(KeyCode::Enter)), Step::Used);
    assert_eq!(view.on_key(key(KeyCode::Char('b'))), Step::Used);
    assert_eq!(view.armed(), Some(RewindScope::Both));
    assert_eq!(
        view.on_key(key(KeyCode::Enter)),
        Step::Confirm {
            point: point(),
            scope: RewindScope::Both,
            overwrite: false
        }
    );
    assert!(view.is_closed());
}

#[test]
fn a_word_typed_at_it_goes_back_whole_and_undoes_the_toggle() {
    let mut view = view(&["a"], true);
    // "ok": `o` toggles, `k` answers nothing: both are typing, the toggle is undone.
    assert_eq!(view.on_key(key(KeyCode::Char('o'))), Step::Used);
    assert!(view.overwrites());
    assert_eq!(
        view.on_key(key(KeyCode::Char('k'))),
        Step::Typed(vec!['o', 'k'])
    );
    assert!(!view.overwrites());
    // "fix": a pick, then a letter after it.
    assert_eq!(view.on_key(key(KeyCode::Char('f'))), Step::Used);
    assert_eq!(
        view.on_key(key(KeyCode::Char('i'))),
        Step::Typed(vec!['f', 'i'])
    );
    assert_eq!(view.armed(), None);
}

#[test]
fn a_side_that_cannot_go_back_cannot_be_picked() {
    let mut view = view(&[], false);
    assert!(view.can(RewindScope::Files));
    assert!(!view.can(RewindScope::Conversation) && !view.can(RewindScope::Both));
    assert_eq!(view.on_key(key(KeyCode::Char('c'))), Step::Typed(vec!['c']));
    assert_eq!(view.on_key(key(KeyCode::Char('b'))), Step::Typed(vec!['b']));
    // Without hand edits, `o` is no key either.
    assert_eq!(view.on_key(key(KeyCode::Char('o'))), Step::Typed(vec!['o']));
}

#[test]
fn while_waiting_only_scrolling_and_closing_work() {
    let mut view = view(&[], true);
    assert_eq!(
        view.on_held_key(key(KeyCode::Char('f'))),
        Step::Typed(vec!['f'])
    );
    assert_eq!(view.on_held_key(key(KeyCode::Enter)), Step::Ignored);
    assert_eq!(view.armed(), None);
    assert_eq!(view.on_held_key(key(KeyCode::Down)), Step::Used);
    assert_eq!(view.on_held_key(key(KeyCode::Esc)), Step::Close);
}

#[test]
fn arrows_move_between_files_within_the_list() {
    let mut view = view(&[], true);
    view.on_key(key(KeyCode::Left));
    assert_eq!(view.file, 0);
    view.on_key(key(KeyCode::Right));
    view.on_key(key(KeyCode::Right));
    assert_eq!(view.file, 1);
}
