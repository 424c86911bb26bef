//! The `/tools` view: its rows, the selection and what `r` takes back.

use super::*;
use ratatui::buffer::Buffer;

fn record(scope: Scope, since_ms: u64, used: u64) -> GrantRecord {
    GrantRecord {
        scope,
        since_ms,
        used,
    }
}

fn view() -> ToolsView {
    ToolsView::new(
        vec![
            (
                Grant::Tool("write_file".into()),
                record(Scope::Session, 0, 3),
            ),
            (
                Grant::Tool("edit_file".into()),
                record(Scope::Turn, 60_000, 1),
            ),
            (
                Grant::ShellPrefix(crate::tools::builtin::suggested_grant("cargo test").unwrap()),
                record(Scope::Session, 0, 0),
            ),
        ],
        5 * 60_000,
        vec!["[tools.shell] allow: git status".into()],
        vec![("read_file".into(), "allow".into())],
    )
}

fn text(view: &ToolsView, width: u16) -> String {
    let theme = Theme::default();
    (view.lines(&theme, width).iter())
        .map(|l| {
            l.spans
                .iter()
                .map(|s| s.content.as_ref())
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn each_grant_says_how_far_since_when_and_how_many_calls() {
    let shown = text(&view(), 120);
    assert!(
        shown.contains("▸ write_file            session       since 5 min ago  3 calls allowed"),
        "{shown}"
    );
    assert!(
        shown.contains("edit_file             this request  since 4 min ago  1 call allowed"),
        "{shown}"
    );
    assert!(shown.contains("shell 'cargo test …'"), "{shown}");
    assert!(shown.contains("[tools.shell] allow: git status"), "{shown}");
    assert!(shown.contains("read_file"), "{shown}");
}

#[test]
fn r_takes_the_selected_grant_and_the_selection_follows_it() {
    let mut v = view();
    v.move_by(1);
    assert_eq!(v.revoke_selected(), Some(Grant::Tool("edit_file".into())));
    assert!(
        text(&v, 120).contains("revoked at the next call"),
        "marked until the event"
    );
    v.move_by(5);
    assert_eq!(
        v.selected(),
        Some(&Grant::ShellPrefix(
            crate::tools::builtin::suggested_grant("cargo test").unwrap()
        ))
    );
    // The edit_file grant is reported gone: the selection stays on the prefix.
    let mut left = view().grants;
    left.remove(1);
    v.refresh(left, 0);
    assert_eq!(
        v.selected(),
        Some(&Grant::ShellPrefix(
            crate::tools::builtin::suggested_grant("cargo test").unwrap()
        ))
    );
    assert!(!text(&v, 120).contains("revoked at the next call"));
    v.refresh(Vec::new(), 0);
    assert_eq!(v.revoke_selected(), None);
    assert!(text(&v, 120).contains("None: every call that asks is asked about"));
}

#[test]
fn a_cut_page_keeps_its_keys_and_says_what_is_below() {
    let v = view();
    let mut buf = Buffer::empty(Rect::new(0, 0, 60, 8));
    v.draw(buf.area, &mut buf, &Theme::default());
    let rows: Vec<String> = (0..8)
        .map(|y| (0..60).map(|x| buf[(x, y)].symbol()).collect())
        .collect();
    assert!(rows[7].contains("more"), "{rows:#?}");
    assert!(rows[6].contains("r revoke"), "{rows:#?}");
}
