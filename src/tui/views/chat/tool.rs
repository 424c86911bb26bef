//! Tool-call cells: one compact line (status, name, key arguments, duration) and, expanded,
//! the arguments and the result or error.

use ratatui::style::Style;
use ratatui::text::{Line, Span};
use serde_json::Value;
use unicode_width::UnicodeWidthChar;

use crate::event::ToolStatus;
use crate::run_model::{CallNode, CallState};
use crate::sandbox::Confinement;
use crate::tools::builtin::delegate::is_delegate;
use crate::tui::markdown::{str_width, wrap_plain};
use crate::tui::theme::{Theme, duration};

/// Lines of a running command's output shown under its cell.
const LIVE_LINES: usize = 3;
/// Lines of a diff shown when expanded.
const DIFF_LINES: usize = 40;
/// Lines shown per section (arguments, result) when expanded.
const SECTION_LINES: usize = 20;

/// A tool call and what became of it.
#[derive(Debug)]
pub(super) struct Tool {
    pub name: String,
    pub arguments: Value,
    /// Where it stands: the run model's state, copied when an event touches the call.
    pub state: CallState,
    pub duration_ms: Option<u64>,
    /// How it ended in a few words when that is more than a mark says (`exit 3`).
    pub end: Option<String>,
    pub result: Option<Value>,
    pub error: Option<String>,
    /// Why it was denied, when a reason was given.
    pub reason: Option<String>,
    /// How deep the call nests under other calls (0: the model's own call).
    pub depth: usize,
    /// The change it makes, when it changes a file (summary line, then a unified diff).
    pub diff: Option<String>,
    /// The last lines it printed while running (`tool_output`).
    pub live: Option<String>,
    /// The stack's ⚠ flag while it runs slow or quiet (`⚠ slow`, `⚠ quiet 45 s`).
    pub flag: Option<String>,
    /// How it runs, for tools the sandbox covers.
    pub sandbox: Option<Confinement>,
    /// Its latest progress report while it runs (bar, `n/total`, message).
    pub progress: Option<String>,
}

impl Tool {
    pub fn new(name: &str, arguments: &Value) -> Self {
        Self {
            name: name.to_string(),
            arguments: arguments.clone(),
            state: CallState::Running,
            duration_ms: None,
            end: None,
            result: None,
            error: None,
            reason: None,
            depth: 0,
            diff: None,
            live: None,
            flag: None,
            sandbox: None,
            progress: None,
        }
    }

    /// The span of the first line that holds the state mark (after a nested call's indent).
    pub fn mark_span(&self) -> usize {
        usize::from(self.depth > 0)
    }

    pub fn is_running(&self) -> bool {
        matches!(self.state, CallState::Running | CallState::Proposed)
    }

    /// Whether the call has not finished yet.
    pub fn is_open(&self) -> bool {
        self.state.is_open()
    }

    /// Takes what the run model knows of the call: its state, duration, exit, reason and
    /// live output (the one fold of call state; the cell only shows it).
    pub fn sync(&mut self, call: &CallNode) {
        self.state = call.state;
        self.duration_ms = call.duration_ms;
        self.reason.clone_from(&call.reason);
        self.live.clone_from(&call.tail);
        self.progress = (call.progress.as_ref())
            .filter(|_| call.state.is_open())
            .map(|p| {
                let text =
                    crate::tui::theme::progress_text(p.progress, p.total, p.message.as_deref());
                text.trim_end_matches(" · ").to_string()
            });
        self.end = match call.state {
            CallState::Ended(ToolStatus::ExitNonzero) => call.end_label(),
            _ => None,
        };
    }

    /// The last lines a finished call printed, for a failed command: its live tail, else the
    /// end of its stderr (or stdout).
    fn last_lines(&self) -> Option<&str> {
        if self.state != CallState::Ended(ToolStatus::ExitNonzero) {
            return None;
        }
        let text = |key: &str| {
            (self.result.as_ref())
                .and_then(|r| r.get(key))
                .and_then(Value::as_str)
                .filter(|t| !t.trim().is_empty())
        };
        (self.live.as_deref())
            .or_else(|| text("stderr"))
            .or_else(|| text("stdout"))
    }

    /// Lays the call out; a nested call's lines are indented under its parent's, the first
    /// one marked `↳`.
    pub fn layout(&self, lines: &mut Vec<Line<'static>>, width: u16, details: bool, t: &Theme) {
        if self.depth == 0 {
            self.layout_flat(lines, width, details, t);
            return;
        }
        let prefix = nest_prefix(self.depth, width);
        let pad = str_width(&prefix);
        let start = lines.len();
        let inner = width.saturating_sub(pad as u16).max(1);
        self.layout_flat(lines, inner, details, t);
        for (n, line) in lines.iter_mut().enumerate().skip(start) {
            let span = if n == start {
                Span::styled(prefix.clone(), t.dim)
            } else {
                Span::raw(" ".repeat(pad))
            };
            line.spans.insert(0, span);
        }
    }

    fn layout_flat(&self, lines: &mut Vec<Line<'static>>, width: u16, details: bool, t: &Theme) {
        // A spinning mark is a placeholder: the view draws the current frame over it.
        let (mark, mark_style) = crate::tui::theme::call_mark(self.state, t);
        let took = |ms: Option<u64>| ms.map(|ms| format!(" · {}", duration(ms)));
        let (suffix, suffix_style) = match self.state {
            CallState::Running | CallState::Proposed => match &self.flag {
                Some(flag) => (format!(" · {flag}"), t.warn),
                None => (String::new(), t.dim),
            },
            CallState::AwaitingInput => (" · awaiting input".to_string(), t.warn),
            CallState::Queued => (" · queued".to_string(), t.dim),
            CallState::AwaitingApproval => (" · awaiting approval".to_string(), t.warn),
            CallState::Ended(ToolStatus::Denied) => (" · denied".to_string(), t.warn),
            CallState::Ended(ToolStatus::Cancelled) => (" · cancelled".to_string(), t.dim),
            CallState::Ended(ToolStatus::SandboxDenied) => {
                (" · refused by the sandbox".to_string(), t.error)
            }
            // A command that said it failed says how, in the colour of a failure.
            CallState::Ended(ToolStatus::ExitNonzero) => {
                let end = self.end.as_deref().unwrap_or("exit non-zero");
                let took = took(self.duration_ms).unwrap_or_default();
                (format!(" · {end}{took}"), t.error)
            }
            CallState::Ended(_) => (took(self.duration_ms).unwrap_or_default(), t.dim),
        };
        let tag = self.sandbox_tag(t);
        let tag_width = tag.as_ref().map_or(0, |(text, _)| str_width(text));
        // `server · tool` for an MCP tool: the `mcp__` prefix is for the model.
        let name = crate::mcp::names::display(&self.name);
        let used = 2 + str_width(&name) + str_width(&suffix) + tag_width;
        let room = usize::from(width).saturating_sub(used + 1);
        let mut spans = vec![
            Span::styled(format!("{mark} "), mark_style),
            Span::styled(name.into_owned(), t.tool),
        ];
        let args = argument_summary(&self.name, &self.arguments);
        if room >= 2 && !args.is_empty() {
            spans.push(Span::styled(format!(" {}", truncate(&args, room)), t.text));
        }
        if !suffix.is_empty() {
            spans.push(Span::styled(suffix, suffix_style));
        }
        if let Some((text, style)) = tag {
            spans.push(Span::styled(text, style));
        }
        lines.push(Line::from(spans));

        if let Some(progress) = self.progress.as_deref().filter(|_| self.is_open()) {
            let room = usize::from(width).saturating_sub(4);
            lines.push(Line::from(vec![
                Span::styled("  ⋯ ", t.dim),
                Span::styled(truncate(progress, room), t.key),
            ]));
        }
        let indent = [Span::raw("    ")];
        // A running command's last lines; a failed one keeps them (the model got them all).
        let live = self.live.as_deref().filter(|_| self.is_open());
        if let Some(live) = live.or_else(|| self.last_lines()) {
            let room = usize::from(width).saturating_sub(4);
            let shown: Vec<&str> = live.lines().collect();
            for line in &shown[shown.len().saturating_sub(LIVE_LINES)..] {
                lines.push(Line::from(vec![
                    Span::styled("  │ ", t.dim),
                    Span::styled(truncate(line, room), t.dim),
                ]));
            }
        }
        if !details {
            let (note, style) = match self.state {
                CallState::Ended(ToolStatus::SandboxDenied) => (Some(SANDBOX_DENIED_NOTE), t.error),
                CallState::Ended(ToolStatus::Denied) => {
                    (self.reason.as_deref().or(self.error.as_deref()), t.dim)
                }
                CallState::Ended(
                    ToolStatus::Failed
                    | ToolStatus::Invalid
                    | ToolStatus::Unknown
                    | ToolStatus::Abandoned
                    | ToolStatus::TimedOut,
                ) => (self.error.as_deref(), t.error),
                // A file change says what it changes; Ctrl-O shows the diff.
                _ => (self.diff.as_deref(), t.dim),
            };
            if let Some(note) = note.and_then(|n| n.lines().find(|l| !l.trim().is_empty())) {
                let room = usize::from(width).saturating_sub(4);
                let note = crate::text::plain(note.trim());
                lines.push(Line::from(vec![
                    Span::styled("  └ ", t.dim),
                    Span::styled(truncate(&note, room), style),
                ]));
            }
            return;
        }
        match &self.diff {
            Some(diff) => {
                lines.push(Line::from(Span::styled("  change", t.dim)));
                let shown = crate::tui::views::approval::diff_lines(diff, t);
                let total = shown.len();
                let room = usize::from(width).saturating_sub(4);
                for line in shown.into_iter().take(DIFF_LINES) {
                    let mut spans = vec![Span::raw("    ")];
                    spans.extend(truncate_spans(line.spans, room));
                    lines.push(Line::from(spans));
                }
                if total > DIFF_LINES {
                    let more = format!("    … {} more lines of diff", total - DIFF_LINES);
                    lines.push(Line::from(Span::styled(more, t.dim)));
                }
            }
            None => section(lines, "arguments", &self.arguments, t.text, width, t),
        }
        if let Some(sandbox) = self.sandbox {
            lines.push(Line::from(Span::styled(
                format!("  {}", sandbox.label()),
                t.dim,
            )));
        }
        if let Some(result) = &self.result {
            section(lines, "result", result, t.text, width, t);
        }
        if let Some(error) = &self.error {
            section(
                lines,
                "error",
                &Value::String(error.clone()),
                t.error,
                width,
                t,
            );
        }
        if let Some(reason) = self.reason.as_ref().filter(|_| self.error.is_none()) {
            lines.extend(wrap_plain(reason, t.dim, width, &indent, &indent));
        }
    }
}

impl Tool {
    /// ` · sandboxed`: how the call runs, after its state; a warning when it runs
    /// unconfined although a sandbox was expected.
    fn sandbox_tag(&self, t: &Theme) -> Option<(String, Style)> {
        let sandbox = self.sandbox?;
        let style = match sandbox {
            Confinement::Unsandboxed | Confinement::Unavailable => t.warn,
            _ => t.dim,
        };
        Some((format!(" · {}", sandbox.short()), style))
    }
}

/// What a call the sandbox refused says under its line (Ctrl-O shows its output).
const SANDBOX_DENIED_NOTE: &str =
    "the sandbox refused it; the model may ask to run it unsandboxed, which you approve or not";

/// A labelled, capped block of `value` lines.
fn section(
    lines: &mut Vec<Line<'static>>,
    label: &str,
    value: &Value,
    style: Style,
    width: u16,
    t: &Theme,
) {
    lines.push(Line::from(Span::styled(format!("  {label}"), t.dim)));
    let mut out = Capped::default();
    value_lines(value, "", &mut out);
    let indent = [Span::raw("    ")];
    for line in &out.lines {
        if line.trim().is_empty() {
            lines.push(Line::default());
        } else {
            lines.extend(wrap_plain(line, style, width, &indent, &indent));
        }
    }
    if out.total > out.lines.len() {
        let more = out.total - out.lines.len();
        let plural = if more == 1 { "" } else { "s" };
        lines.push(Line::from(Span::styled(
            format!("    … {more} more line{plural}"),
            t.dim,
        )));
    }
}

/// Collects up to [`SECTION_LINES`] lines and counts the rest.
#[derive(Default)]
struct Capped {
    lines: Vec<String>,
    total: usize,
}

impl Capped {
    fn push(&mut self, line: String) {
        self.total += 1;
        if self.lines.len() < SECTION_LINES {
            self.lines.push(line);
        }
    }
}

/// Readable lines for a JSON value: objects as `key: value`, multi-line strings as their lines.
fn value_lines(value: &Value, indent: &str, out: &mut Capped) {
    match value {
        Value::String(s) => s.lines().for_each(|l| out.push(format!("{indent}{l}"))),
        Value::Object(map) if !map.is_empty() => {
            for (key, v) in map {
                match v {
                    Value::String(s) if !s.contains('\n') => {
                        out.push(format!("{indent}{key}: {s}"))
                    }
                    Value::String(_) | Value::Object(_) | Value::Array(_) if !is_short(v) => {
                        out.push(format!("{indent}{key}:"));
                        value_lines(v, &format!("{indent}  "), out);
                    }
                    other => out.push(format!("{indent}{key}: {other}")),
                }
            }
        }
        other => match serde_json::to_string_pretty(other) {
            Ok(text) => text.lines().for_each(|l| out.push(format!("{indent}{l}"))),
            Err(_) => out.push(format!("{indent}{other}")),
        },
    }
}

fn is_short(value: &Value) -> bool {
    match value {
        Value::Object(_) | Value::Array(_) => value.to_string().len() <= 60,
        Value::String(s) => !s.contains('\n'),
        _ => true,
    }
}

/// `  ↳ ` for a call nested one level deep, two more spaces per further level; the
/// indentation stops growing at 8 levels or half the width, so names stay readable.
pub(super) fn nest_prefix(depth: usize, width: u16) -> String {
    if depth == 0 || width < 6 {
        return String::new();
    }
    let most = (usize::from(width) / 2).saturating_sub(2) / 2;
    let levels = depth.min(8).min(most.max(1));
    format!("{}↳ ", "  ".repeat(levels))
}

/// `key=value` pairs of the top-level arguments on one line, the telling keys first. A
/// `delegate` call leads with its task, quoted: it says what the sub-agent is doing.
fn argument_summary(name: &str, arguments: &Value) -> String {
    if let Some(todos) = crate::todo::call_summary(name, arguments) {
        return todos;
    }
    if is_delegate(name)
        && let Some(task) = arguments.get("task").and_then(Value::as_str)
    {
        let task = format!("“{}”", truncate(&one_line(task, 201), 200));
        let mut rest = arguments.clone();
        if let Value::Object(map) = &mut rest {
            map.remove("task");
        }
        let rest = argument_summary("", &rest);
        return if rest.is_empty() {
            task
        } else {
            format!("{task} {rest}")
        };
    }
    match arguments {
        Value::Object(map) => crate::text::telling_pairs(map)
            .iter()
            .map(|(k, v)| {
                let text = match v {
                    Value::String(s) => one_line(s, 41),
                    other => one_line(&other.to_string(), 41),
                };
                format!("{k}={}", truncate(&text, 40))
            })
            .collect::<Vec<_>>()
            .join(" "),
        Value::Null => String::new(),
        Value::String(s) => truncate(&one_line(s, 61), 60),
        other => truncate(&one_line(&other.to_string(), 61), 60),
    }
}

/// The words of `text` on one line, at most `max + 1` chars: enough for `truncate` to see
/// whether to cut, without copying a megabyte file's content.
fn one_line(text: &str, max: usize) -> String {
    text.split_whitespace()
        .flat_map(|word| std::iter::once(' ').chain(word.chars()))
        .skip(1)
        .take(max + 1)
        .collect()
}

/// Styled `spans` cut to `max` display columns as one line, with `…` when cut.
pub(super) fn truncate_spans(spans: Vec<Span<'static>>, max: usize) -> Vec<Span<'static>> {
    let total: usize = spans.iter().map(Span::width).sum();
    if total <= max {
        return spans;
    }
    let mut out = Vec::new();
    let mut left = max;
    for span in spans {
        let w = span.width();
        if w < left {
            left -= w;
            out.push(span);
            continue;
        }
        // The span that does not fit ends the line, cut with the ellipsis in its style.
        out.push(Span::styled(cut(&span.content, left), span.style));
        break;
    }
    out
}

/// `text` cut to `max` display columns, with `…` when cut.
pub(super) fn truncate(text: &str, max: usize) -> String {
    if str_width(text) <= max {
        return text.to_string();
    }
    cut(text, max)
}

/// `text` cut to fit `max - 1` columns, then `…` (nothing at all when `max` is 0).
fn cut(text: &str, max: usize) -> String {
    let mut out = String::new();
    let mut w = 0;
    for c in text.chars() {
        let cw = c.width().unwrap_or(0);
        if w + cw + 1 > max {
            break;
        }
        out.push(c);
        w += cw;
    }
    if max > 0 {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn styled_spans_are_cut_as_one_line() {
        let spans = vec![Span::styled("abc", Style::new().red()), Span::raw("defg")];
        let cut = truncate_spans(spans.clone(), 5);
        let parts: Vec<&str> = cut.iter().map(|s| s.content.as_ref()).collect();
        assert_eq!(parts, ["abc", "d…"]);
        assert_eq!(
            cut[0].style,
            Style::new().red(),
            "each piece keeps its style"
        );
        assert_eq!(truncate_spans(spans.clone(), 7), spans, "fits: unchanged");
        let parts: Vec<String> = truncate_spans(spans, 3)
            .into_iter()
            .map(|s| s.content.into_owned())
            .collect();
        assert_eq!(parts, ["ab…"]);
    }

    #[test]
    fn an_expanded_file_change_shows_its_diff_in_colour() {
        let theme = Theme::default();
        let mut tool = Tool::new("write_file", &json!({"path": "a.rs"}));
        tool.state = CallState::Ended(ToolStatus::Ok);
        tool.diff = Some(crate::tools::diff::render(
            "a.rs",
            Some("fn a() {}\n"),
            "fn a() {}\nlet s = \"new\";\n",
        ));
        let mut lines = Vec::new();
        tool.layout(&mut lines, 40, true, &theme);
        let span = |needle: &str| {
            lines
                .iter()
                .flat_map(|l| l.spans.iter())
                .find(|s| s.content.contains(needle))
                .map(|s| s.style.fg)
                .unwrap_or_else(|| panic!("{needle:?} in {lines:?}"))
        };
        let mark = lines
            .iter()
            .flat_map(|l| l.spans.iter())
            .find(|s| s.content == "+");
        assert_eq!(mark.and_then(|s| s.style.fg), theme.ok.fg, "{lines:?}");
        assert_eq!(span("let"), theme.syntax.keyword.fg);
        assert_eq!(span("\"new\""), theme.syntax.string.fg);
        for line in &lines {
            assert!(line.width() <= 40, "{line:?}");
        }
    }
}
