//! A unified diff (as `tools::diff::render` makes it) painted for a person: the summary
//! bold, headers dim, removed lines red, added lines green, and the code on added and
//! context lines coloured by the file's language. The approval dialog, the chat's tool cells
//! and the timeline's detail view all draw diffs with this.

use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use super::Role;
use crate::tui::safe::escape;
use crate::tui::theme::Theme;

/// How a piece of a diff line is drawn (resolved against the theme when drawn).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiffPaint {
    /// The summary line (`+2 −1 in src/x.rs`).
    Summary,
    /// `---` / `+++` file headers and `@@` hunk ranges.
    Header,
    /// The `+` of an added line.
    AddedMark,
    /// Code on an added line: plain code in the added colour, the rest by its role.
    Added(Role),
    /// A whole removed line, in one colour: it is going away.
    Removed,
    /// Code on a context line, by its role.
    Context(Role),
    /// A note (`\ No newline at end of file`, the truncation note).
    Note,
}

impl DiffPaint {
    /// The style of this paint in `theme`.
    pub fn style(self, theme: &Theme) -> Style {
        match self {
            Self::Summary => theme.text.add_modifier(Modifier::BOLD),
            Self::Header | Self::Note => theme.dim,
            Self::AddedMark => theme.ok.add_modifier(Modifier::BOLD),
            Self::Added(Role::Plain) => theme.ok,
            Self::Removed => theme.error,
            Self::Added(role) | Self::Context(role) => super::style(theme, role),
        }
    }
}

/// One line of a diff: its text (controls shown as placeholders) and painted byte runs.
#[derive(Debug, Clone, PartialEq)]
pub struct DiffLine {
    /// The text as shown.
    pub text: String,
    /// `(end byte, paint)` in order; the last ends at the text's end.
    pub runs: Vec<(usize, DiffPaint)>,
}

impl DiffLine {
    /// The line as styled spans.
    pub fn to_line(&self, theme: &Theme) -> Line<'static> {
        let mut spans: Vec<Span<'static>> = Vec::new();
        let mut start = 0;
        for &(end, paint) in &self.runs {
            let Some(piece) = self.text.get(start..end).filter(|p| !p.is_empty()) else {
                continue;
            };
            spans.push(Span::styled(piece.to_string(), paint.style(theme)));
            start = end;
        }
        Line::from(spans)
    }
}

/// The diff's lines, painted. Only `---`/`+++` lines before the first hunk are headers, so a
/// removed `-- comment` line stays a removed line.
pub fn lines(diff: &str) -> Vec<DiffLine> {
    let texts: Vec<String> = diff.lines().map(|l| escape(l).into_owned()).collect();
    let code = new_side(&texts);
    let painted = language(&texts).and_then(|lang| super::code(lang, &code));
    let mut in_hunk = false;
    let mut new_line = 0;
    texts
        .into_iter()
        .enumerate()
        .map(|(i, text)| {
            let whole = |paint| vec![(text.len(), paint)];
            let runs = if i == 0 {
                whole(DiffPaint::Summary)
            } else if text.starts_with("@@") {
                in_hunk = true;
                whole(DiffPaint::Header)
            } else if !in_hunk {
                let header = text.starts_with("---") || text.starts_with("+++");
                whole(if header {
                    DiffPaint::Header
                } else {
                    DiffPaint::Note
                })
            } else if text.starts_with('-') {
                whole(DiffPaint::Removed)
            } else if text.starts_with(['+', ' ']) {
                let runs = painted.as_ref().and_then(|p| p.line(new_line));
                new_line += 1;
                code_runs(&text, runs, text.starts_with('+'))
            } else {
                whole(DiffPaint::Note)
            };
            DiffLine { text, runs }
        })
        .collect()
}

/// The code of the lines the new file keeps (context and added), one per line: highlighted
/// as one text, so a string or comment spanning lines is coloured right.
fn new_side(texts: &[String]) -> String {
    let mut in_hunk = false;
    let mut code = String::new();
    for text in texts.iter().skip(1) {
        if text.starts_with("@@") {
            in_hunk = true;
        } else if in_hunk && text.starts_with(['+', ' ']) {
            code.push_str(&text[1..]);
            code.push('\n');
        }
    }
    code
}

/// The language of the file the diff changes, by its extension (from `+++ b/path`).
/// Markdown is left plain: its grammar takes ~0.2 s to get ready (it embeds a score of
/// others), too long a stall for a dialog that has just opened, for little gain in prose.
fn language(texts: &[String]) -> Option<&str> {
    let path = texts
        .iter()
        .find_map(|t| t.strip_prefix("+++ "))
        .map(|p| p.strip_prefix("b/").unwrap_or(p))?;
    let name = path.rsplit('/').next()?;
    let (_, ext) = name.rsplit_once('.')?;
    let prose = ["md", "markdown", "mdown", "markdn"];
    (!prose.contains(&ext.to_ascii_lowercase().as_str())).then_some(ext)
}

/// The runs of an added or context line: its marker, then its code by role.
fn code_runs(text: &str, runs: Option<&[(usize, Role)]>, added: bool) -> Vec<(usize, DiffPaint)> {
    let paint = |role| {
        if added {
            DiffPaint::Added(role)
        } else {
            DiffPaint::Context(role)
        }
    };
    let mark = if added {
        DiffPaint::AddedMark
    } else {
        paint(Role::Plain)
    };
    let mut out = vec![(1, mark)];
    for &(end, role) in runs.unwrap_or_default() {
        let end = (end + 1).min(text.len());
        if end > out.last().map_or(0, |r| r.0) {
            out.push((end, paint(role)));
        }
    }
    if out.last().map_or(0, |r| r.0) < text.len() {
        out.push((text.len(), paint(Role::Plain)));
    }
    out
}

/// A diff as styled lines (see [`lines`]).
pub fn styled(diff: &str, theme: &Theme) -> Vec<Line<'static>> {
    lines(diff).iter().map(|l| l.to_line(theme)).collect()
}
