//! Drawing the question dialog: the prompt, the parameter and its input line, or the
//! live stack for the depth limit, and a footer of keys.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Widget};
use unicode_width::UnicodeWidthChar;

use super::{InputState, MAX_INDENT_LEVELS, Question, byte_at};
use crate::event::{FrameState, InputKind, InputRequest, StackFrame};
use crate::tui::markdown::{str_width, wrap_plain};
use crate::tui::theme::Theme;
use crate::tui::views::gate::Gate;
use crate::tui::views::keyline::{self, KeyHint, KeyStyles, hint};

impl InputState {
    /// Rows the dialog wants for `width` with `stack` live frames (capped by the caller).
    pub fn wanted_rows(&self, width: u16, stack: usize) -> u16 {
        let Some(q) = self.pending.first() else {
            return 0;
        };
        let inner = width.saturating_sub(2).max(1);
        let theme = Theme::default();
        let body = match q.request.kind {
            InputKind::Parameter | InputKind::Plan => {
                prompt_lines(&q.request, inner, &theme).len() + 1
            }
            InputKind::DepthLimit => prompt_lines(&q.request, inner, &theme).len() + stack.max(1),
            InputKind::Submit | InputKind::Form => prompt_lines(&q.request, inner, &theme).len(),
        };
        let (note, hints) = footer_hints(q, Gate::Open);
        let footer = keyline::rows_needed(&hints, &note, inner);
        // Two borders.
        (body + usize::from(footer) + 2).min(usize::from(u16::MAX)) as u16
    }

    /// Draws the current question into `area`; `stack` is the live stack in tree order
    /// with nesting levels (shown for the depth limit); `gate` says whether it takes keys
    /// yet (see `app/guard.rs`). The keys keep their rows (wrapped, else
    /// shortened); a cut stack says on the bottom border how much is out of sight.
    pub fn render(
        &mut self,
        area: Rect,
        buf: &mut Buffer,
        theme: &Theme,
        stack: &[(usize, &StackFrame)],
        gate: Gate,
    ) {
        let area = area.intersection(buf.area);
        let Some(q) = self.pending.first() else {
            return;
        };
        if area.width < 4 || area.height < 3 {
            return;
        }
        Clear.render(area, buf);
        let title = match q.request.kind {
            InputKind::Parameter => {
                format!(" collect_tool_parameters · {} ", one_line(&q.request.tool))
            }
            InputKind::DepthLimit => match q.request.depth {
                Some(depth) => format!(" tool stack depth limit · depth {depth} "),
                None => " tool stack depth limit ".to_string(),
            },
            InputKind::Submit | InputKind::Form => {
                format!(" send a form · {} ", one_line(&q.request.tool))
            }
            InputKind::Plan => " the plan is ready ".to_string(),
        };
        let (width, inside) = (area.width - 2, area.height - 2);
        let mut lines = prompt_lines(&q.request, width, theme);
        // The keys take the rows the body leaves, at least half the inside.
        let wanted = lines.len()
            + match q.request.kind {
                InputKind::Parameter | InputKind::Plan => 1,
                InputKind::DepthLimit => stack.len().max(1),
                InputKind::Submit | InputKind::Form => 0,
            };
        let max_footer = keyline::footer_room(inside, wanted);
        let footer = footer_lines(q, theme, width, max_footer, gate);
        let body = inside.saturating_sub(footer.len() as u16);
        let mut more = None;
        let shown: Vec<Line> = match q.request.kind {
            InputKind::Parameter | InputKind::Plan => {
                if q.confirming {
                    lines.push(Line::styled(
                        "Continue with current task? (y/n)",
                        theme.warn,
                    ));
                } else {
                    lines.push(q.input_line(usize::from(width), theme));
                }
                // Keep the input line in view: the prompt gives way first.
                let skip = lines.len().saturating_sub(usize::from(body));
                lines.into_iter().skip(skip).collect()
            }
            // What would be sent, in full, from its first line.
            InputKind::Submit | InputKind::Form => {
                lines.into_iter().take(usize::from(body)).collect()
            }
            InputKind::DepthLimit => {
                let prompt = lines.len().min(usize::from(body));
                let room = usize::from(body) - prompt;
                let rows: Vec<Line> = stack
                    .iter()
                    .map(|(level, frame)| frame_line(*level, frame, theme))
                    .map(|line| keyline::clip_line(line, usize::from(width)))
                    .collect();
                let top = match q.scroll {
                    Some(top) => top.min(rows.len().saturating_sub(room)),
                    None => rows.len().saturating_sub(room),
                };
                let below = rows.len().saturating_sub(top + room);
                more = keyline::more(top, below);
                self.rows = rows.len();
                self.room = room;
                let mut shown: Vec<Line> = lines.into_iter().take(prompt).collect();
                if rows.is_empty() && room > 0 {
                    shown.push(Line::styled("(the stack is empty)", theme.dim));
                }
                shown.extend(rows.into_iter().skip(top).take(room));
                shown
            }
        };
        let mut block = Block::default()
            .borders(Borders::ALL)
            .border_style(theme.warn)
            .title(Span::styled(title, theme.warn));
        if let Some(more) = more {
            block = block.title_bottom(Line::styled(more, theme.warn).right_aligned());
        }
        let inner = block.inner(area);
        block.render(area, buf);
        keyline::draw_inside(inner, buf, shown, footer);
    }
}

impl Question {
    /// `› text` with a `▏` cursor, scrolled so the cursor stays in view.
    fn input_line(&self, width: usize, theme: &Theme) -> Line<'static> {
        let room = width.saturating_sub(3);
        let at = byte_at(&self.line, self.cursor);
        let (before, after) = self.line.split_at(at);
        let before = if str_width(before) > room {
            format!("…{}", keyline::tail(before, room.saturating_sub(1)))
        } else {
            before.to_string()
        };
        let left = room.saturating_sub(str_width(&before));
        let after = if str_width(after) > left {
            format!("{}…", head(after, left.saturating_sub(1)))
        } else {
            after.to_string()
        };
        Line::from(vec![
            Span::styled("› ", theme.key),
            Span::styled(before, theme.text),
            Span::styled("▏", theme.key),
            Span::styled(after, theme.text),
        ])
    }
}

/// The prompt and, for a parameter, its name, type and description, wrapped to `width`.
fn prompt_lines(request: &InputRequest, width: u16, theme: &Theme) -> Vec<Line<'static>> {
    let mut lines = wrap_plain(request.prompt.trim(), theme.text, width, &[], &[]);
    if request.kind == InputKind::Submit {
        // The answers, one per line, as they would be sent.
        for row in request.description.as_deref().unwrap_or("").lines() {
            lines.extend(wrap_plain(
                row,
                theme.code,
                width,
                &[Span::raw("  ")],
                &[Span::raw("    ")],
            ));
        }
        return lines;
    }
    if request.kind != InputKind::Parameter {
        return lines;
    }
    let Some(name) = request.parameter.as_deref() else {
        return lines;
    };
    let mut first = vec![Span::styled(
        one_line(name),
        theme.tool.add_modifier(Modifier::BOLD),
    )];
    if let Some(kind) = request.value_type.as_deref() {
        first.push(Span::styled(format!(" ({})", one_line(kind)), theme.dim));
    }
    let description = request.description.as_deref().map(str::trim).unwrap_or("");
    if description.is_empty() {
        lines.push(Line::from(first));
    } else {
        first.push(Span::styled(" — ", theme.dim));
        let indent = [Span::raw("  ")];
        // The name, type and dash lead the first wrapped line of the description.
        let rows = wrap_plain(description, theme.dim, width, &first, &indent);
        lines.extend(rows);
    }
    lines
}

/// One stack frame of the depth-limit dialog: indented by nesting, with its state.
fn frame_line(level: usize, frame: &StackFrame, theme: &Theme) -> Line<'static> {
    let (mark, style, state) = match frame.state {
        FrameState::Running => ("▸", theme.tool, "running"),
        FrameState::Queued => ("◌", theme.dim, "queued"),
        FrameState::AwaitingApproval => ("?", theme.warn, "awaiting approval"),
        FrameState::AwaitingInput => ("…", theme.warn, "awaiting input"),
        FrameState::Done => ("✓", theme.ok, "done"),
        FrameState::Failed => ("✗", theme.error, "failed"),
        FrameState::Denied => ("⊘", theme.warn, "denied"),
        FrameState::Cancelled => ("■", theme.dim, "cancelled"),
    };
    let mut spans = vec![
        Span::raw("  ".repeat(level.min(MAX_INDENT_LEVELS))),
        Span::styled(format!("{mark} "), style),
        Span::styled(one_line(&frame.name), theme.tool),
    ];
    let summary = one_line(&frame.summary);
    if !summary.is_empty() {
        spans.push(Span::styled(format!(" {}", head(&summary, 60)), theme.text));
    }
    spans.push(Span::styled(format!(" · {state}"), theme.dim));
    Line::from(spans)
}

/// The note and keys of the question shown: a waiting dialog says why; a picked answer says
/// what Enter will do.
fn footer_hints(q: &Question, gate: Gate) -> (String, Vec<KeyHint>) {
    if let (Some((yes, letter)), false) = (q.armed, gate.holds()) {
        let what = match (q.request.kind, yes) {
            (InputKind::DepthLimit, true) => "continue for another 20 levels",
            (InputKind::DepthLimit, false) => "stop the nested work",
            (InputKind::Submit | InputKind::Form, true) => "send these answers",
            (InputKind::Submit | InputKind::Form, false) => "decline the form",
            (InputKind::Parameter | InputKind::Plan, true) => "back to the question",
            (InputKind::Parameter, false) => "abandon the task",
            (InputKind::Plan, false) => "leave the plan as it is",
        };
        let hints = vec![
            hint("Enter", what),
            hint("Esc", "back"),
            hint("typing", "goes to your message").or("→ message"),
        ];
        return (format!("{letter} ›"), hints);
    }
    let note = match gate {
        Gate::Open if q.yes_no() => "pick, then Enter:".to_string(),
        Gate::Open => String::new(),
        waiting => waiting.note(),
    };
    let hints = match q.request.kind {
        InputKind::Plan if !q.confirming => vec![
            hint("a Enter", "approve (ask)").or("approve"),
            hint("e Enter", "approve (auto-edit)").or("auto-edit"),
            hint("text Enter", "keep planning").or("feedback"),
            hint("Esc", "leave it"),
        ],
        InputKind::Parameter | InputKind::Plan if q.confirming => vec![
            hint("y", "back to the question").or("back"),
            hint("n", "abandon the task").or("abandon"),
        ],
        InputKind::Parameter | InputKind::Plan => vec![
            hint("Enter", "send"),
            hint("Esc", "abandon the task").or("abandon"),
        ],
        InputKind::DepthLimit => vec![
            hint("y", "continue for another 20 levels").or("continue"),
            hint("n", "stop"),
            hint("↑↓", "scroll").or(""),
        ],
        InputKind::Submit | InputKind::Form => {
            vec![hint("y", "send").or("send"), hint("n", "decline")]
        }
    };
    (note, hints)
}

/// The key rows, at most `max_rows` when a form fits them; while the dialog waits for the
/// user, dimmed after why (first, so it shows at any width).
fn footer_lines(
    q: &Question,
    theme: &Theme,
    width: u16,
    max_rows: u16,
    gate: Gate,
) -> Vec<Line<'static>> {
    let (key, what) = match gate.holds() {
        true => (theme.dim, theme.dim),
        false => (theme.key, theme.text),
    };
    let note = if q.armed.is_some() || gate.holds() {
        theme.warn
    } else {
        theme.dim
    };
    let styles = KeyStyles { key, what, note };
    let (note, hints) = footer_hints(q, gate);
    keyline::lines(&hints, &note, width, max_rows, styles)
}

/// The longest start of `text` at most `width` cells wide.
fn head(text: &str, width: usize) -> String {
    let mut used = 0;
    text.chars()
        .take_while(|c| {
            used += c.width().unwrap_or(0);
            used <= width
        })
        .collect()
}

/// Names and titles come from the model: keep them on one row, without control characters.
fn one_line(text: &str) -> String {
    text.split_whitespace()
        .flat_map(|w| std::iter::once(' ').chain(w.chars().filter(|c| !c.is_control())))
        .skip(1)
        .collect()
}
