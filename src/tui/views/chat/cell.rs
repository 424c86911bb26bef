//! One chat cell (a user message, an answer, reasoning, a tool call, an error, a notice) and
//! its cached layout: wrapped lines for one width, rebuilt only when the cell or width changes.

use std::time::Instant;

use ratatui::style::Modifier;
use ratatui::text::{Line, Span};

use super::tool::Tool;
use crate::tui::highlight;
use crate::tui::markdown::{self, str_width, wrap_plain};
use crate::tui::theme::{Theme, duration};

/// How a notice looks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum NoteStyle {
    /// Markdown (slash-command output).
    Markdown,
    /// Yellow, `!` marker.
    Warn,
    /// Red, `✗` marker.
    Error,
    /// Dim, no marker (e.g. `■ cancelled`).
    Dim,
}

/// Streamed answer text.
#[derive(Debug, Default)]
pub(super) struct Assistant {
    pub text: String,
}

/// Streamed reasoning; collapses to one line once the answer starts.
#[derive(Debug, Default)]
pub(super) struct Reasoning {
    pub text: String,
    /// Timestamp (unix ms) of the first reasoning delta, when streamed.
    pub started_ms: Option<u64>,
    /// Timestamp of the event that ended it (first answer text, the call's end, …).
    pub ended_ms: Option<u64>,
    pub streaming: bool,
}

/// Most of a long paste laid out when it is expanded (a 10 MB paste would take seconds).
const MAX_EXPANDED_CHARS: usize = 64 * 1024;

/// A message the user sent.
#[derive(Debug)]
pub(super) struct User {
    /// What was sent.
    pub text: String,
    /// How it showed in the composer, big pastes as `[pasted 40 lines]` chips; shown until
    /// details are expanded. `None`: it had no chips.
    pub collapsed: Option<String>,
    /// The chips of the images sent with it (`🖼 shot.png 1024×768 · 210 KB`).
    pub images: Vec<String>,
}

/// What a cell shows.
#[derive(Debug)]
pub(super) enum CellKind {
    User(User),
    Assistant(Assistant),
    Reasoning(Reasoning),
    Tool(Box<Tool>),
    /// One dim line nested under a call: a sub-agent's model call (`◆`) under its
    /// `delegate`, or the answer to a question (`✎`, `⊘`, `↻`) under the call that asked.
    Nested {
        depth: usize,
        mark: &'static str,
        text: String,
    },
    Error {
        kind: String,
        message: String,
    },
    Notice {
        style: NoteStyle,
        text: String,
    },
    /// What a run changed in the workspace (`✎ N files changed`), diffs with details.
    Changes(Box<super::changes::Changes>),
    /// A command the user ran with `!`.
    Shell(Box<crate::event::UserShell>),
}

/// Wrapped lines for one width and details setting.
#[derive(Debug)]
struct Layout {
    width: u16,
    details: bool,
    lines: Vec<Line<'static>>,
    /// Lines before the body (gap, header): the body's blocks are separated from them by nothing.
    body_start: usize,
    /// `lines[..stable_len]` render `text[..stable_end]` and stay as they are while text is appended.
    stable_len: usize,
    stable_end: usize,
    /// Text was appended since the layout was made.
    dirty: bool,
    /// Some code was drawn plain for want of the frame's highlight budget: lay the cell out
    /// again next time, when its colours can go on.
    redo: bool,
}

/// A cell and its cached layout.
#[derive(Debug)]
pub(super) struct Cell {
    pub kind: CellKind,
    /// A blank line before the cell.
    pub gap: bool,
    /// When the UI first saw the cell (spinner phase).
    pub seen: Instant,
    layout: Option<Layout>,
}

impl Cell {
    pub fn new(kind: CellKind, gap: bool, seen: Instant) -> Self {
        Self {
            kind,
            gap,
            seen,
            layout: None,
        }
    }

    /// The cell changed in some way other than appended text: lay it out again.
    pub fn invalidate(&mut self) {
        self.layout = None;
    }

    /// Text was appended: only the unstable tail is laid out again.
    pub fn appended(&mut self) {
        if let Some(layout) = &mut self.layout {
            layout.dirty = true;
        }
    }

    /// Some of the cell's code was drawn plain (the frame's highlight budget ran out): the
    /// next layout starts over and colours more of it.
    pub fn highlight_later(&mut self) {
        let streams = matches!(self.kind, CellKind::Assistant(_) | CellKind::Reasoning(_));
        if let Some(layout) = &mut self.layout {
            // A streamed body keeps plain code in its tail: laying that out again is enough.
            if streams {
                layout.dirty = true;
            } else {
                layout.redo = true;
            }
        }
    }

    /// Whether the cell waits for [`Cell::highlight_later`]'s layout.
    pub fn highlight_pending(&self) -> bool {
        self.layout.as_ref().is_some_and(|l| l.redo || l.dirty)
    }

    /// The cached lines (empty before the first layout).
    pub fn lines(&self) -> &[Line<'static>] {
        match &self.layout {
            // An answer with nothing to show takes no room, not even its gap.
            Some(l)
                if l.lines.len() == l.body_start && matches!(self.kind, CellKind::Assistant(_)) =>
            {
                &[]
            }
            Some(l) => &l.lines,
            None => &[],
        }
    }

    /// The line and span whose first character is a spinner placeholder, while something
    /// is in progress (a nested tool's mark follows its indentation span).
    pub fn spinner_line(&self) -> Option<(usize, usize)> {
        let (active, span) = match &self.kind {
            CellKind::Tool(tool) => (tool.is_running(), tool.mark_span()),
            CellKind::Reasoning(r) => (r.streaming, 0),
            _ => (false, 0),
        };
        active.then_some((usize::from(self.gap), span))
    }

    /// How deep the cell nests under tool calls (0: the top-level conversation).
    pub fn nesting(&self) -> usize {
        match &self.kind {
            CellKind::Tool(tool) => tool.depth,
            CellKind::Nested { depth, .. } => *depth,
            _ => 0,
        }
    }

    /// Whether the cell belongs to a block of tool lines (no blank line between them).
    pub fn is_tool_like(kind: &CellKind) -> bool {
        matches!(kind, CellKind::Tool(_) | CellKind::Nested { .. })
    }

    /// Makes the layout current for `width`; returns whether any work was done.
    pub fn ensure(&mut self, width: u16, details: bool, theme: &Theme) -> bool {
        let uses_details = match &self.kind {
            CellKind::Tool(_) | CellKind::Reasoning(_) | CellKind::Changes(_) => true,
            CellKind::User(user) => user.collapsed.is_some(),
            CellKind::Shell(_) => true,
            _ => false,
        };
        if let Some(layout) = &mut self.layout
            && layout.width == width
            && (!uses_details || layout.details == details)
            && !layout.redo
        {
            if !layout.dirty {
                return false;
            }
            extend(layout, &self.kind, theme);
            return true;
        }
        let mut lines = Vec::new();
        if self.gap {
            lines.push(Line::default());
        }
        let streams = self.head(&mut lines, width, details, theme);
        let mut layout = Layout {
            width,
            details,
            body_start: lines.len(),
            stable_len: lines.len(),
            lines,
            stable_end: 0,
            dirty: false,
            redo: false,
        };
        if streams {
            extend(&mut layout, &self.kind, theme);
        }
        self.layout = Some(layout);
        true
    }

    /// Lays out everything but a streamed body; returns whether there is one to add.
    fn head(&self, lines: &mut Vec<Line<'static>>, width: u16, details: bool, t: &Theme) -> bool {
        let indent = [Span::raw("  ")];
        match &self.kind {
            CellKind::User(user) => {
                let first = [Span::styled("› ", t.user)];
                match &user.collapsed {
                    Some(shown) if !details => {
                        lines.extend(wrap_plain(shown, t.user, width, &first, &indent));
                        let hint = "▸ Ctrl-O shows the whole message";
                        lines.extend(wrap_plain(hint, t.dim, width, &indent, &indent));
                    }
                    _ => user_text(lines, &user.text, width, t),
                }
                for chip in &user.images {
                    lines.extend(wrap_plain(chip, t.dim, width, &indent, &indent));
                }
                false
            }
            CellKind::Assistant(_) => true,
            CellKind::Reasoning(r) => {
                let dim = t.dim;
                if r.streaming {
                    lines.push(Line::from(vec![
                        Span::styled("⠋ ", dim),
                        Span::styled("thinking…", dim),
                    ]));
                    return true;
                }
                let mut summary = "thought".to_string();
                if let (Some(start), Some(end)) = (r.started_ms, r.ended_ms) {
                    summary.push_str(" for ");
                    summary.push_str(&duration(end.saturating_sub(start)));
                }
                let words = r.text.split_whitespace().count();
                let plural = if words == 1 { "" } else { "s" };
                summary.push_str(&format!(" · {words} word{plural}"));
                let mark = if details { "▾ " } else { "▸ " };
                lines.push(Line::from(vec![
                    Span::styled(mark, dim),
                    Span::styled(summary, dim),
                ]));
                details
            }
            CellKind::Tool(tool) => {
                tool.layout(lines, width, details, t);
                false
            }
            CellKind::Changes(changes) => {
                changes.layout(lines, width, details, t);
                false
            }
            CellKind::Nested { depth, mark, text } => {
                let pad = super::tool::nest_prefix(*depth, width);
                let room = usize::from(width).saturating_sub(str_width(&pad) + 2);
                lines.push(Line::from(vec![
                    Span::styled(pad, t.dim),
                    Span::styled(format!("{mark} "), t.dim),
                    Span::styled(super::tool::truncate(text, room), t.dim),
                ]));
                false
            }
            CellKind::Error { kind, message } => {
                let first = [Span::styled(
                    "✗ error: ",
                    t.error.add_modifier(Modifier::BOLD),
                )];
                // Plain text: a code span from a provider or a server is only quoted.
                let shown = crate::text::plain(message);
                lines.extend(wrap_plain(&shown, t.text, width, &first, &indent));
                let hint = error_hint(kind, message);
                if !hint.is_empty() {
                    lines.extend(wrap_plain(hint, t.dim, width, &indent, &indent));
                }
                false
            }
            CellKind::Shell(shell) => {
                super::shell::layout(shell, lines, width, details, t);
                false
            }
            CellKind::Notice { style, text } => {
                match style {
                    NoteStyle::Markdown => lines.extend(markdown::render(text, width, t)),
                    NoteStyle::Warn => {
                        let first = [Span::styled("! ", t.warn)];
                        let text = crate::text::plain(text);
                        lines.extend(wrap_plain(&text, t.warn, width, &first, &indent));
                    }
                    NoteStyle::Error => {
                        let first = [Span::styled("✗ ", t.error)];
                        let text = crate::text::plain(text);
                        lines.extend(wrap_plain(&text, t.error, width, &first, &indent));
                    }
                    NoteStyle::Dim => lines.extend(wrap_plain(text, t.dim, width, &[], &[])),
                }
                false
            }
        }
    }
}

/// A sent message in full; past `MAX_EXPANDED_CHARS`, its start and how much more there is.
fn user_text(lines: &mut Vec<Line<'static>>, text: &str, width: u16, t: &Theme) {
    let first = [Span::styled("› ", t.user)];
    let indent = [Span::raw("  ")];
    let cut = text.char_indices().nth(MAX_EXPANDED_CHARS).map(|(i, _)| i);
    let shown = cut.map_or(text, |cut| &text[..cut]);
    lines.extend(wrap_plain(shown, t.user, width, &first, &indent));
    if let Some(cut) = cut {
        let more = format!("… {} more bytes not shown", text.len() - cut);
        lines.extend(wrap_plain(&more, t.dim, width, &indent, &indent));
    }
}

/// What to do about an error, by kind (the message itself already says what happened).
fn error_hint(kind: &str, message: &str) -> &'static str {
    match kind {
        "connect" => {
            "Check that the server is running and that base_url in the config points to it."
        }
        "http" if message.contains("401") => {
            "Set the API key environment variable named above, then send the request again."
        }
        "config" => "Fix the configuration as described, then send the request again.",
        // The message says what to do; no request failed.
        "mcp" | "rewind" => "",
        _ => "You can send the request again.",
    }
}

/// Lays out the streamed body of `kind` from the last stable point on. Blocks before the stable
/// point never change when text is appended, so a long answer costs only its tail per frame.
fn extend(layout: &mut Layout, kind: &CellKind, theme: &Theme) {
    layout.dirty = false;
    let width = layout.width;
    match kind {
        CellKind::Assistant(a) => extend_with(layout, &a.text, markdown::stable_prefix_len, |s| {
            markdown::render(s, width, theme)
        }),
        CellKind::Reasoning(r) => extend_with(layout, &r.text, paragraph_prefix_len, |s| {
            let style = theme.dim.add_modifier(Modifier::ITALIC);
            let indent = [Span::raw("  ")];
            wrap_plain(s.trim_matches('\n'), style, width, &indent, &indent)
        }),
        _ => {}
    }
}

/// Drops the unstable tail, renders newly stable text once, then the new tail.
fn extend_with(
    layout: &mut Layout,
    text: &str,
    stable: fn(&str) -> usize,
    render: impl Fn(&str) -> Vec<Line<'static>>,
) {
    layout.lines.truncate(layout.stable_len);
    let rest = text.get(layout.stable_end..).unwrap_or("");
    let mut cut = stable(rest);
    let mut lines = std::mem::take(&mut layout.lines);
    if cut > 0 {
        let block = render(&rest[..cut]);
        if highlight::take_deferred() {
            // Code in it is still plain: it stays in the tail, laid out again until coloured.
            highlight::defer();
            cut = 0;
        } else {
            append_block(&mut lines, layout.body_start, block);
            layout.stable_end += cut;
            layout.stable_len = lines.len();
        }
    }
    append_block(&mut lines, layout.body_start, render(&rest[cut..]));
    layout.lines = lines;
}

/// Appends a rendered block, one blank line after the previous one.
fn append_block(lines: &mut Vec<Line<'static>>, body_start: usize, block: Vec<Line<'static>>) {
    if block.is_empty() {
        return;
    }
    if lines.len() > body_start {
        lines.push(Line::default());
    }
    lines.extend(block);
}

/// Plain text is stable up to its last paragraph break.
fn paragraph_prefix_len(text: &str) -> usize {
    text.rfind("\n\n").map_or(0, |i| i + 2)
}
