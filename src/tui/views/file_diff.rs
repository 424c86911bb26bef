//! A changed file as rewind's views show it (the chat's `✎ N files changed` cell and the
//! rewind overlay): its mark, its line counts, and its diff painted like an edit's.

use ratatui::style::Style;
use ratatui::text::Line;

use crate::event::{Change, ChangedFile, FileDiffView};
use crate::tui::theme::Theme;

/// `+` created, `~` changed, `−` deleted.
pub fn mark(change: Change) -> &'static str {
    match change {
        Change::Added => "+",
        Change::Modified => "~",
        Change::Deleted => "−",
    }
}

/// The colour of a change's mark.
pub fn mark_style(change: Change, theme: &Theme) -> Style {
    match change {
        Change::Added => theme.ok,
        Change::Modified => theme.warn,
        Change::Deleted => theme.error,
    }
}

/// `+3 −1`, or `binary`.
pub fn counts(file: &ChangedFile) -> String {
    if file.binary {
        "binary".to_string()
    } else {
        format!("+{} −{}", file.added, file.removed)
    }
}

/// Lines of git's header that say nothing a person needs here (the summary line does).
const GIT_HEADER: &[&str] = &[
    "diff --git ",
    "index ",
    "new file mode ",
    "deleted file mode ",
    "old mode ",
    "new mode ",
];

/// The diff as the painter takes it: a summary line (`+3 −1 path`), then git's unified diff
/// without its header lines, and a note when it was cut or not loaded.
pub fn text(view: &FileDiffView) -> String {
    let file = &view.file;
    let mut out = format!("{} {}", counts(file), file.path);
    if view.diff.is_empty() {
        out.push_str(if file.binary {
            "\n(a binary file: no diff)"
        } else {
            "\n(diff not loaded: too many files)"
        });
        return out;
    }
    for line in view.diff.lines() {
        if GIT_HEADER.iter().any(|h| line.starts_with(h)) {
            continue;
        }
        out.push('\n');
        out.push_str(line);
    }
    if view.truncated {
        out.push_str("\n… (the diff was cut here)");
    }
    out
}

/// The diff painted (see [`text`]).
pub fn styled(view: &FileDiffView, theme: &Theme) -> Vec<Line<'static>> {
    crate::tui::highlight::diff::styled(&text(view), theme)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(diff: &str, truncated: bool) -> FileDiffView {
        FileDiffView {
            file: ChangedFile {
                path: "notes.txt".into(),
                change: Change::Modified,
                added: 1,
                removed: 1,
                binary: false,
            },
            diff: diff.into(),
            truncated,
        }
    }

    #[test]
    fn git_headers_give_way_to_a_summary_line() {
        let diff = "diff --git a/notes.txt b/notes.txt\nindex 1..2 100644\n--- a/notes.txt\n+++ b/notes.txt\n@@ -1 +1 @@\n-old\n+new\n";
        assert_eq!(
            text(&view(diff, false)),
            "+1 −1 notes.txt\n--- a/notes.txt\n+++ b/notes.txt\n@@ -1 +1 @@\n-old\n+new"
        );
        assert!(text(&view(diff, true)).ends_with("cut here)"));
        assert!(text(&view("", false)).contains("not loaded"));
        assert_eq!(mark(Change::Deleted), "−");
    }
}
