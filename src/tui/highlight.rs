//! Syntax highlighting for the TUI: fenced code in the chat (and `/tool`'s schema), JSON
//! payloads in the timeline's detail view, and the code inside diffs.
//!
//! The grammars are Sublime Text's, run by `syntect` with pure-Rust regexes. Nothing loads
//! before the first block in a known language is drawn, and nothing outside the TUI calls
//! this (`taco exec` never does). Regex-driven highlighting costs about 0.15 ms a line, far
//! more than a frame can spare (a 200-line Rust block takes ~30 ms), so:
//! - results are cached by text (the chat re-lays cells on resize, dialogs redraw each frame),
//!   and a block that grows (a streamed answer) continues from the state after its last
//!   complete line instead of starting over;
//! - only the first [`MAX_BYTES`] of a block are coloured ([`MAX_JSON_BYTES`] of JSON, whose
//!   grammar is ten times cheaper), and a line longer than [`MAX_LINE`] bytes is left plain
//!   (and not parsed): the rest is drawn in the code tone. A block's first highlight thus
//!   stays near 30 ms at worst, plus ~35 ms the first time a language is used (~0.2 s for
//!   Markdown, which embeds many others; diffs of Markdown files are left plain for that).
//!
//! Colours are roles ([`Role`]), resolved against the [`Theme`] when drawn.

use std::sync::Arc;

use ratatui::style::Style;

use super::theme::Theme;

mod cache;
pub mod diff;
mod engine;
mod toml;

/// Most bytes of one block that are highlighted; the rest is drawn plain.
pub const MAX_BYTES: usize = 8 * 1024;
/// The same for JSON (payloads are larger, and its grammar is cheap).
pub const MAX_JSON_BYTES: usize = 64 * 1024;
/// Lines longer than this (in bytes) are drawn plain and not parsed.
pub const MAX_LINE: usize = 512;

/// What a piece of code is, for its colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    /// Identifiers, operators, punctuation: the plain code tone.
    Plain,
    /// Keywords and storage (`fn`, `let`, `if`, `pub`, `u32`).
    Keyword,
    /// String literals.
    String,
    /// Comments.
    Comment,
    /// Numbers, `true`/`false`/`null`, escapes and placeholders.
    Constant,
    /// Type and class names.
    Type,
    /// Function and macro names.
    Function,
    /// Keys of JSON objects, YAML mappings and TOML tables.
    Key,
    /// Headings (Markdown) and TOML table headers.
    Heading,
    /// Added lines of a diff.
    Inserted,
    /// Removed lines of a diff.
    Deleted,
    /// Diff headers and hunk ranges.
    Meta,
}

impl Role {
    /// Every role, in the order [`engine`] encodes them.
    const ALL: [Role; 12] = [
        Role::Plain,
        Role::Keyword,
        Role::String,
        Role::Comment,
        Role::Constant,
        Role::Type,
        Role::Function,
        Role::Key,
        Role::Heading,
        Role::Inserted,
        Role::Deleted,
        Role::Meta,
    ];
}

/// A run's colour where a view keeps roles and resolves them only when drawn (the timeline's
/// detail view outlives theme changes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Paint {
    /// Code, by role.
    Code(Role),
    /// A piece of a diff.
    Diff(diff::DiffPaint),
}

impl Paint {
    /// The style of this paint in `theme`.
    pub fn style(self, theme: &Theme) -> Style {
        match self {
            Self::Code(role) => style(theme, role),
            Self::Diff(paint) => paint.style(theme),
        }
    }
}

/// One line's colouring: `(end byte, role)` runs in order, the last ending at the line's end.
pub type Runs = Vec<(usize, Role)>;

/// The highlighted lines of one block, shared with the cache.
#[derive(Debug, Clone)]
pub struct Highlighted {
    /// Complete lines (each ended by a newline in the source).
    lines: Arc<Vec<Runs>>,
    /// The line after them when the source does not end with a newline.
    tail: Option<Arc<Runs>>,
}

impl Highlighted {
    /// The runs of line `n` (counted as `code.split('\n')` counts), or `None` when that line
    /// is past the cap (drawn plain; a line too long to parse is one plain run).
    pub fn line(&self, n: usize) -> Option<&[(usize, Role)]> {
        match self.lines.get(n) {
            Some(runs) => Some(runs),
            None if n == self.lines.len() => self.tail.as_deref().map(Vec::as_slice),
            None => None,
        }
    }
}

/// Highlights `code` written in `lang` (a fence's first word: `rust`, `py`, `ts`, `toml` …).
/// `None` when the language is unknown or plain text; an empty tag loads nothing unless the
/// code starts with a shebang (`#!/bin/sh`).
pub fn code(lang: &str, code: &str) -> Option<Highlighted> {
    let grammar = match lang {
        "" if code.starts_with("#!") => engine::by_first_line(code.lines().next()?)?,
        "" => return None,
        lang => engine::by_token(lang)?,
    };
    Some(cache::highlight(grammar, code))
}

/// Runs `f` with new highlighting on this thread left to a background thread when `on`:
/// code not yet highlighted is drawn plain and [`take_deferred`] turns true, and a later call
/// finds its colours. The TUI loop lays the chat out so, so that no frame runs the regex work
/// of a stream's new lines or of a long block shown at once.
pub fn in_background<R>(on: bool, f: impl FnOnce() -> R) -> R {
    cache::in_background(on, f)
}

/// Whether some code was drawn plain, its colours on the way, since the last call (and
/// clears it).
pub fn take_deferred() -> bool {
    cache::take_deferred()
}

/// Notes again that code was left plain (after [`take_deferred`] was used to decide).
pub fn defer() {
    cache::defer();
}

/// `lines` highlighted together as `lang`, as paints per line (empty where a line is plain).
pub fn painted(lang: &str, lines: &[String]) -> Vec<Vec<(usize, Paint)>> {
    let Some(painted) = code(lang, &lines.join("\n")) else {
        return Vec::new();
    };
    (0..lines.len())
        .map(|n| {
            let runs = painted.line(n).unwrap_or_default();
            runs.iter().map(|&(end, r)| (end, Paint::Code(r))).collect()
        })
        .collect()
}

/// `[from, to)` cut where `runs` change: `(start, end, paint)`, with `None` past the last run.
pub fn pieces(
    runs: &[(usize, Paint)],
    from: usize,
    to: usize,
) -> Vec<(usize, usize, Option<Paint>)> {
    let mut out = Vec::new();
    let mut start = 0;
    for &(end, paint) in runs {
        if start.max(from) < end.min(to) {
            out.push((start.max(from), end.min(to), Some(paint)));
        }
        start = end;
    }
    if start.max(from) < to {
        out.push((start.max(from), to, None));
    }
    out
}

/// The style of `role`: the code tone for plain code, the theme's syntax colours for the rest.
pub fn style(theme: &Theme, role: Role) -> Style {
    match role {
        Role::Plain => theme.code,
        Role::Keyword => theme.syntax.keyword,
        Role::String => theme.syntax.string,
        Role::Comment => theme.syntax.comment,
        Role::Constant => theme.syntax.constant,
        Role::Type => theme.syntax.kind,
        Role::Function => theme.syntax.function,
        Role::Key => theme.syntax.key,
        Role::Heading => theme.heading,
        Role::Inserted => theme.ok,
        Role::Deleted => theme.error,
        Role::Meta => theme.dim,
    }
}

#[cfg(test)]
mod tests;
