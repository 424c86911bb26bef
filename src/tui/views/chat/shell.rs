//! The cell of a command the user ran with `!`: the command, how it ended (exit code, time),
//! and the end of its output; Ctrl-O shows all that was kept.

use ratatui::style::Modifier;
use ratatui::text::{Line, Span};

use super::ChatState;
use super::cell::CellKind;
use crate::event::{UserShell, UserShellState};
use crate::tui::markdown::wrap_plain;
use crate::tui::theme::{Theme, duration};

/// Output lines shown while details are collapsed (the last ones).
const TAIL_LINES: usize = 6;
/// Most output lines laid out with details shown.
const MAX_LINES: usize = 400;

impl ChatState {
    /// A `user_shell` event: a new cell when it starts, the same cell updated when it ends.
    pub(super) fn user_shell(&mut self, shell: &UserShell) {
        let found = (self.cells.iter_mut().rev())
            .find(|c| matches!(&c.kind, CellKind::Shell(s) if s.id == shell.id));
        match found {
            Some(cell) => {
                cell.kind = CellKind::Shell(Box::new(shell.clone()));
                cell.invalidate();
                self.changed();
            }
            None => {
                self.close_streams(None);
                self.push(CellKind::Shell(Box::new(shell.clone())));
            }
        }
    }
}

/// Lays a shell cell out.
pub(super) fn layout(
    shell: &UserShell,
    lines: &mut Vec<Line<'static>>,
    width: u16,
    details: bool,
    t: &Theme,
) {
    let first = [Span::styled("! ", t.user.add_modifier(Modifier::BOLD))];
    let indent = [Span::raw("  ")];
    lines.extend(wrap_plain(&shell.command, t.user, width, &first, &indent));
    let took = duration(shell.duration_ms);
    let (mark, style, how) = match (shell.state, shell.exit_code) {
        (UserShellState::Running, _) => ("…", t.dim, "running · Esc cancels".to_string()),
        (UserShellState::Exited, Some(0)) => ("✓", t.dim, format!("exit 0 · {took}")),
        (UserShellState::Exited, Some(code)) => ("✗", t.warn, format!("exit {code} · {took}")),
        (UserShellState::Exited, None) => ("✗", t.warn, format!("killed · {took}")),
        (UserShellState::TimedOut, _) => ("✗", t.error, format!("timed out · {took}")),
        (UserShellState::Cancelled, _) => ("■", t.dim, "cancelled".to_string()),
        (UserShellState::Failed, _) => ("✗", t.error, "could not run".to_string()),
    };
    let sandbox = match shell.sandbox {
        Some(c) if c.is_sandboxed() => " · sandboxed",
        _ => "",
    };
    let next = if shell.is_running() || shell.state == UserShellState::Cancelled {
        ""
    } else {
        " · goes with your next message"
    };
    let lead = [Span::raw("  "), Span::styled(format!("{mark} "), style)];
    let under = [Span::raw("    ")];
    let status = format!("{how}{sandbox}{next}");
    lines.extend(wrap_plain(&status, t.dim, width, &lead, &under));
    if let Some(error) = &shell.error {
        let text = crate::text::plain(error);
        lines.extend(wrap_plain(&text, t.warn, width, &indent, &indent));
    }
    let output: Vec<&str> = shell.output.lines().collect();
    let keep = if details { MAX_LINES } else { TAIL_LINES };
    let skip = output.len().saturating_sub(keep);
    if skip > 0 {
        let hint = if details {
            format!("  ▾ {skip} earlier lines not shown")
        } else {
            format!("  ▸ {skip} earlier lines · Ctrl-O shows them")
        };
        lines.push(Line::styled(hint, t.dim));
    }
    for line in &output[skip..] {
        let text = crate::text::plain(line);
        lines.extend(wrap_plain(&text, t.text, width, &indent, &indent));
    }
}

/// The text `y` copies for a shell cell.
pub(super) fn copy_text(shell: &UserShell) -> String {
    format!("$ {}\n{}", shell.command, shell.output)
}
