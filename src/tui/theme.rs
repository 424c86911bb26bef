//! Colours and styles, in one place so the panes look like one product. Two palettes, dark
//! and light (`[ui] theme`); `auto` picks one from the terminal's background (`detect.rs`).
//!
//! Colours are 256-colour indexes rather than the 16 named ANSI ones: the named ones are
//! whatever the terminal's palette makes them, and in common palettes pure blue on black
//! (tool names, once) or yellow on white is hard to read. Each index here has a contrast of
//! at least 4.5:1 against its theme's background (a test checks it); ordinary text stays in
//! the terminal's own foreground colour.

use ratatui::style::{Color, Modifier, Style};

use crate::event::ToolStatus;
use crate::run_model::CallState;

pub mod detect;

pub use detect::Background;

/// The palette.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Theme {
    /// Ordinary text.
    pub text: Style,
    /// Secondary text (hints, timestamps, reasoning).
    pub dim: Style,
    /// Titles of panes.
    pub title: Style,
    /// Border of the focused pane.
    pub border_focused: Style,
    /// Border of other panes.
    pub border: Style,
    /// The user's messages.
    pub user: Style,
    /// Inline and fenced code.
    pub code: Style,
    /// Headings in Markdown.
    pub heading: Style,
    /// Tool names and tool rows.
    pub tool: Style,
    /// LLM call rows.
    pub llm: Style,
    /// Success marks.
    pub ok: Style,
    /// Errors.
    pub error: Style,
    /// Warnings, retries, limits, approvals waiting.
    pub warn: Style,
    /// The selected row (and the chat message selected for copying).
    pub selected: Style,
    /// Key names in hints.
    pub key: Style,
    /// Highlighted code (plain code keeps `code`).
    pub syntax: Syntax,
}

/// The colours of highlighted code, by what the code is (see `tui::highlight::Role`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Syntax {
    /// Keywords and storage (`fn`, `let`, `if`, `pub`).
    pub keyword: Style,
    /// String literals.
    pub string: Style,
    /// Comments.
    pub comment: Style,
    /// Numbers, `true`/`false`/`null`, escapes.
    pub constant: Style,
    /// Type names.
    pub kind: Style,
    /// Function and macro names.
    pub function: Style,
    /// Keys of JSON objects, YAML mappings and TOML tables.
    pub key: Style,
}

/// One palette's colours, as 256-colour indexes.
struct Palette {
    dim: u8,
    border: u8,
    focus: u8,
    user: u8,
    code: u8,
    heading: u8,
    tool: u8,
    llm: u8,
    ok: u8,
    error: u8,
    warn: u8,
    keyword: u8,
    string: u8,
    constant: u8,
    kind: u8,
    function: u8,
    key: u8,
}

/// Light colours for a dark background.
const DARK: Palette = Palette {
    dim: 245,
    border: 240,
    focus: 74,
    user: 81,
    code: 179,
    heading: 176,
    tool: 75,
    llm: 141,
    ok: 114,
    error: 203,
    warn: 214,
    keyword: 176,
    string: 114,
    constant: 81,
    kind: 117,
    function: 75,
    key: 111,
};

/// Dark colours for a light background.
const LIGHT: Palette = Palette {
    dim: 242,
    border: 249,
    focus: 24,
    user: 25,
    code: 94,
    heading: 90,
    tool: 26,
    llm: 91,
    ok: 22,
    error: 160,
    warn: 130,
    keyword: 90,
    string: 22,
    constant: 23,
    kind: 24,
    function: 26,
    key: 25,
};

impl Theme {
    /// The palette for a dark background.
    pub fn dark() -> Self {
        Self::from_palette(&DARK)
    }

    /// The palette for a light background.
    pub fn light() -> Self {
        Self::from_palette(&LIGHT)
    }

    /// The palette for `background`.
    pub fn for_background(background: Background) -> Self {
        match background {
            Background::Dark => Self::dark(),
            Background::Light => Self::light(),
        }
    }

    fn from_palette(p: &Palette) -> Self {
        let fg = |index: u8| Style::default().fg(Color::Indexed(index));
        let bold = Modifier::BOLD;
        Self {
            text: Style::default(),
            dim: fg(p.dim),
            title: Style::default().add_modifier(bold),
            border_focused: fg(p.focus),
            border: fg(p.border),
            user: fg(p.user).add_modifier(bold),
            code: fg(p.code),
            heading: fg(p.heading).add_modifier(bold),
            tool: fg(p.tool),
            llm: fg(p.llm),
            ok: fg(p.ok),
            error: fg(p.error),
            warn: fg(p.warn),
            selected: Style::default().add_modifier(Modifier::REVERSED),
            key: fg(p.user).add_modifier(bold),
            syntax: Syntax {
                keyword: fg(p.keyword),
                string: fg(p.string),
                comment: fg(p.dim),
                constant: fg(p.constant),
                kind: fg(p.kind),
                function: fg(p.function),
                key: fg(p.key),
            },
        }
    }
}

impl Default for Theme {
    /// Dark: what a terminal that says nothing about its background most likely has.
    fn default() -> Self {
        Self::dark()
    }
}

/// Spinner frames for things in progress (chosen by elapsed time, so no state is needed).
pub const SPINNER: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

/// The spinner frame for `elapsed_ms`.
pub fn spinner(elapsed_ms: u128) -> &'static str {
    SPINNER[(elapsed_ms / 100) as usize % SPINNER.len()]
}

pub use crate::text::duration;

/// The mark of a call's state alone, for views that style it their own way (the timeline's
/// result rows): the glyph [`call_mark`] gives.
pub fn call_glyph(state: CallState) -> &'static str {
    call_mark(state, &Theme::default()).0
}

/// The mark of a call's state and its style, the same in the chat and the stack (issue 27:
/// panes agree). A call at work gets the spinner's first frame: the pane draws the frame of
/// the moment over it.
pub fn call_mark(state: CallState, theme: &Theme) -> (&'static str, Style) {
    match state {
        CallState::Running | CallState::Proposed => (SPINNER[0], theme.tool),
        CallState::Queued => ("◌", theme.dim),
        CallState::AwaitingApproval => ("?", theme.warn),
        CallState::AwaitingInput => ("…", theme.warn),
        CallState::Ended(ToolStatus::Ok) => ("✓", theme.ok),
        CallState::Ended(ToolStatus::Denied) => ("⊘", theme.warn),
        CallState::Ended(ToolStatus::Cancelled | ToolStatus::Abandoned) => ("■", theme.dim),
        CallState::Ended(ToolStatus::SandboxDenied) => ("⊘", theme.error),
        CallState::Ended(_) => ("✗", theme.error),
    }
}

/// A progress report as the stack, its detail and the chat show it: a bar and `n/total`
/// when the total is known, then the message, then ` · ` (the stack's separator).
pub fn progress_text(progress: f64, total: Option<f64>, message: Option<&str>) -> String {
    const CELLS: usize = 8;
    let mut text = match total.filter(|t| t.is_finite() && *t > 0.0) {
        Some(total) => {
            let share = (progress / total).clamp(0.0, 1.0);
            let full = (share * CELLS as f64).round() as usize;
            format!(
                "{}{} {progress}/{total}",
                "▰".repeat(full),
                "▱".repeat(CELLS - full)
            )
        }
        None => format!("{progress}"),
    };
    if let Some(message) = message.filter(|m| !m.is_empty()) {
        text.push_str(" · ");
        text.push_str(message);
    }
    text.push_str(" · ");
    text
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod duration_tests {
    use super::*;

    #[test]
    fn durations_read_naturally() {
        assert_eq!(duration(850), "850 ms");
        assert_eq!(duration(1234), "1.2 s");
        assert_eq!(duration(125_000), "2 m 05 s");
        assert_eq!(spinner(0), "⠋");
        assert_eq!(spinner(150), "⠙");
        assert_eq!(spinner(1050), "⠋", "wraps around");
    }
}
