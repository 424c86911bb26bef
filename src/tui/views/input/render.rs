//! Drawing the question dialog: the prompt, the parameter and its input line, or the
//! live stack for the depth limit, and a footer of keys.

use std::time::Duration;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Widget};
use unicode_width::UnicodeWidthChar;

use super::{InputState, MAX_INDENT_LEVELS, Question, byte_at};
use crate::event::{FrameState, InputKind, InputRequest, StackFrame};
use crate::tui::markdown::{str_width, wrap_plain};
use crate::tui::theme::Theme;
use crate::tui::views::approval::guard_note;

impl InputState {
    /// Rows the dialog wants for `width` with `stack` live frames (capped by the caller).
    pub fn wanted_rows(&self, width: u16, stack: usize) -> u16 {
        let Some(q) = self.pending.first() else {
            return 0;
        };
        let inner = width.saturating_sub(2).max(1);
        let theme = Theme::default();
        let body = match q.request.kind {
            InputKind::Parameter => prompt_lines(&q.request, inner, &theme).len() + 1,
            InputKind::DepthLimit => prompt_lines(&q.request, inner, &theme).len() + stack.max(1),
        };
        // Two borders and the footer.
        (body + 3).min(usize::from(u16::MAX)) as u16
    }

    /// Draws the current question into `area`; `stack` is the live stack in tree order
    /// with nesting levels (shown for the depth limit); `wait` is how long its keys are
    /// still guarded (see `App::dialog_wait`).
    pub fn render(
        &mut self,
        area: Rect,
        buf: &mut Buffer,
        theme: &Theme,
        stack: &[(usize, &StackFrame)],
        wait: Option<Duration>,
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
        };
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(theme.warn)
            .title(Span::styled(title, theme.warn));
        let inner = block.inner(area);
        block.render(area, buf);
        if inner.height == 0 {
            return;
        }
        let mut lines = prompt_lines(&q.request, inner.width, theme);
        let footer_y = inner.bottom() - 1;
        let body = inner.height.saturating_sub(1);
        let footer = match q.request.kind {
            InputKind::Parameter => {
                if q.confirming {
                    lines.push(Line::styled(
                        "Continue with current task? (y/n)",
                        theme.warn,
                    ));
                } else {
                    lines.push(q.input_line(usize::from(inner.width), theme));
                }
                // Keep the input line in view: the prompt gives way first.
                let skip = lines.len().saturating_sub(usize::from(body));
                let shown: Vec<Line> = lines.into_iter().skip(skip).collect();
                Paragraph::new(shown).render(
                    Rect {
                        height: body,
                        ..inner
                    },
                    buf,
                );
                parameter_footer(q.confirming, theme, wait)
            }
            InputKind::DepthLimit => {
                let prompt = lines.len().min(usize::from(body));
                let room = usize::from(body) - prompt;
                let rows: Vec<Line> = stack
                    .iter()
                    .map(|(level, frame)| frame_line(*level, frame, theme))
                    .collect();
                let top = match q.scroll {
                    Some(top) => top.min(rows.len().saturating_sub(room)),
                    None => rows.len().saturating_sub(room),
                };
                let below = rows.len().saturating_sub(top + room);
                self.rows = rows.len();
                self.room = room;
                let mut shown: Vec<Line> = lines.into_iter().take(prompt).collect();
                if rows.is_empty() && room > 0 {
                    shown.push(Line::styled("(the stack is empty)", theme.dim));
                }
                shown.extend(rows.into_iter().skip(top).take(room));
                Paragraph::new(shown).render(
                    Rect {
                        height: body,
                        ..inner
                    },
                    buf,
                );
                depth_footer(top, below, theme, wait)
            }
        };
        if body < inner.height {
            let footer_area = Rect {
                y: footer_y,
                height: 1,
                ..inner
            };
            Paragraph::new(footer).render(footer_area, buf);
        }
    }
}

impl Question {
    /// `› text` with a `▏` cursor, scrolled so the cursor stays in view.
    fn input_line(&self, width: usize, theme: &Theme) -> Line<'static> {
        let room = width.saturating_sub(3);
        let at = byte_at(&self.line, self.cursor);
        let (before, after) = self.line.split_at(at);
        let before = if str_width(before) > room {
            format!("…{}", tail(before, room.saturating_sub(1)))
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

fn parameter_footer(confirming: bool, theme: &Theme, wait: Option<Duration>) -> Line<'static> {
    let keys: &[(&str, &str)] = if confirming {
        &[("y", " back to the question  "), ("n", " abandon the task")]
    } else {
        &[("Enter", " send  "), ("Esc", " abandon the task")]
    };
    key_line(keys, theme, wait)
}

fn depth_footer(top: usize, below: usize, theme: &Theme, wait: Option<Duration>) -> Line<'static> {
    let mut line = key_line(
        &[("y", " continue for another 20 levels · "), ("n", " stop")],
        theme,
        wait,
    );
    let more = match (top, below) {
        (0, 0) => None,
        (0, below) => Some(format!("  ↓ {below} more")),
        (top, 0) => Some(format!("  ↑ {top} more")),
        (top, below) => Some(format!("  ↑ {top} ↓ {below} more")),
    };
    if let Some(more) = more {
        line.spans.push(Span::styled(more, theme.dim));
    }
    line
}

/// Keys and what they do; while guarded, dimmed after how long they still wait (first, so
/// it shows at any width).
fn key_line(keys: &[(&str, &str)], theme: &Theme, wait: Option<Duration>) -> Line<'static> {
    let (key_style, what_style) = match wait {
        Some(_) => (theme.dim, theme.dim),
        None => (theme.key, theme.text),
    };
    let note = wait.map(|wait| Span::styled(format!("{} · ", guard_note(wait)), theme.warn));
    let spans = keys.iter().flat_map(|(k, what)| {
        [
            Span::styled(k.to_string(), key_style),
            Span::styled(what.to_string(), what_style),
        ]
    });
    Line::from(note.into_iter().chain(spans).collect::<Vec<_>>())
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

/// The longest end of `text` at most `width` cells wide.
fn tail(text: &str, width: usize) -> String {
    let mut used = 0;
    let mut out: Vec<char> = text
        .chars()
        .rev()
        .take_while(|c| {
            used += c.width().unwrap_or(0);
            used <= width
        })
        .collect();
    out.reverse();
    out.into_iter().collect()
}

/// Names and titles come from the model: keep them on one row, without control characters.
fn one_line(text: &str) -> String {
    text.split_whitespace()
        .flat_map(|w| std::iter::once(' ').chain(w.chars().filter(|c| !c.is_control())))
        .skip(1)
        .collect()
}
