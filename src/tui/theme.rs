//! Colours and styles, in one place so the panes look like one product.

use ratatui::style::{Color, Modifier, Style};

/// The palette. Plain ANSI colours, so the terminal's own theme applies.
#[derive(Debug, Clone, Copy)]
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
    /// The selected row.
    pub selected: Style,
    /// Key names in hints.
    pub key: Style,
    /// Highlighted code (plain code keeps `code`).
    pub syntax: Syntax,
}

/// The colours of highlighted code, by what the code is (see `tui::highlight::Role`).
#[derive(Debug, Clone, Copy)]
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

impl Default for Theme {
    fn default() -> Self {
        Self {
            text: Style::default(),
            dim: Style::default().fg(Color::DarkGray),
            title: Style::default().add_modifier(Modifier::BOLD),
            border_focused: Style::default().fg(Color::Cyan),
            border: Style::default().fg(Color::DarkGray),
            user: Style::default()
                .fg(Color::Cyan)
                .add_modifier(Modifier::BOLD),
            code: Style::default().fg(Color::Yellow),
            heading: Style::default()
                .fg(Color::Magenta)
                .add_modifier(Modifier::BOLD),
            tool: Style::default().fg(Color::Blue),
            llm: Style::default().fg(Color::Magenta),
            ok: Style::default().fg(Color::Green),
            error: Style::default().fg(Color::Red),
            warn: Style::default().fg(Color::Yellow),
            selected: Style::default().add_modifier(Modifier::REVERSED),
            key: Style::default()
                .fg(Color::Cyan)
                .add_modifier(Modifier::BOLD),
            syntax: Syntax {
                keyword: Style::default().fg(Color::Magenta),
                string: Style::default().fg(Color::Green),
                comment: Style::default().fg(Color::DarkGray),
                constant: Style::default().fg(Color::Cyan),
                kind: Style::default().fg(Color::LightBlue),
                function: Style::default().fg(Color::Blue),
                key: Style::default().fg(Color::Blue),
            },
        }
    }
}

/// Spinner frames for things in progress (chosen by elapsed time, so no state is needed).
pub const SPINNER: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

/// The spinner frame for `elapsed_ms`.
pub fn spinner(elapsed_ms: u128) -> &'static str {
    SPINNER[(elapsed_ms / 100) as usize % SPINNER.len()]
}

/// `1.2 s`, `850 ms`, `2 m 05 s`: short durations for cells and rows.
pub fn duration(ms: u64) -> String {
    if ms < 1000 {
        format!("{ms} ms")
    } else if ms < 60_000 {
        format!("{:.1} s", ms as f64 / 1000.0)
    } else {
        format!("{} m {:02} s", ms / 60_000, (ms % 60_000) / 1000)
    }
}

#[cfg(test)]
mod tests {
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
