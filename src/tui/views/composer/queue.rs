//! Messages typed while a request runs wait here, oldest first, and are listed above the
//! editor (dim, one row each, cut to the width). ↑ on an empty editor takes the newest back
//! into the editor, as it was typed (chips and mentions, not the expanded text), to edit;
//! Ctrl-D on an empty editor drops it. The composer is their one owner: the app queues a
//! message here and takes the next one to send when the run ends.

use std::collections::VecDeque;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;
use unicode_width::UnicodeWidthStr;

use super::{Composer, Draft, Outgoing};
use crate::tui::theme::Theme;
use crate::tui::views::keyline::clip_line;

/// Most queued messages listed by name; the older ones are counted on one row.
pub const MAX_LISTED: usize = 3;

/// A message waiting for the running request to end.
#[derive(Debug, Clone)]
struct Queued {
    /// What is sent: pastes in place, files attached.
    text: String,
    /// As it was typed, for editing it again.
    draft: Draft,
}

/// The queued messages, oldest first.
#[derive(Debug, Clone, Default)]
pub(super) struct Queue {
    items: VecDeque<Queued>,
}

impl Composer {
    /// Keeps `message` (just taken with [`Composer::take_message`]) to send when the running
    /// request ends.
    pub fn queue(&mut self, message: &Outgoing) {
        self.queue.items.push_back(Queued {
            text: message.text.clone(),
            draft: message.draft.clone(),
        });
    }

    /// The oldest queued message, to send now, off the queue.
    pub fn next_queued(&mut self) -> Option<String> {
        self.queue.items.pop_front().map(|q| q.text)
    }

    /// The queued messages, oldest first, as they are sent.
    pub fn queued(&self) -> impl Iterator<Item = &str> {
        self.queue.items.iter().map(|q| q.text.as_str())
    }

    /// How many messages are queued.
    pub fn queued_len(&self) -> usize {
        self.queue.items.len()
    }

    /// Forgets every queued message (`/clear`, a resumed session).
    pub fn clear_queue(&mut self) {
        self.queue.items.clear();
    }

    /// ↑ on an empty editor: the newest queued message back into the editor, as it was
    /// typed, off the queue; `false` when the editor holds text or nothing is queued.
    pub fn unqueue(&mut self) -> bool {
        if !self.is_empty() || self.is_searching() {
            return false;
        }
        let Some(last) = self.queue.items.pop_back() else {
            return false;
        };
        self.recall = None;
        self.load(last.draft);
        self.cursor_to_end();
        true
    }

    /// Ctrl-D on an empty editor: drops the newest queued message; `false` when the editor
    /// holds text or nothing is queued.
    pub fn drop_queued(&mut self) -> bool {
        self.is_empty() && self.queue.items.pop_back().is_some()
    }

    /// Rows the queued messages take above the editor.
    pub fn queue_rows(&self) -> u16 {
        let n = self.queue.items.len();
        let rows = if n > MAX_LISTED { MAX_LISTED + 1 } else { n };
        u16::try_from(rows).unwrap_or(u16::MAX)
    }

    /// Lists the queued messages in `area`: the newest at the bottom, next to the editor ↑
    /// takes it into; older ones past [`MAX_LISTED`] counted on the first row. `keys`: ↑ and
    /// Ctrl-D reach the composer now (no dialog takes them), so the newest says what they do.
    pub fn render_queue(&self, area: Rect, buf: &mut Buffer, theme: &Theme, keys: bool) {
        let width = usize::from(area.width);
        let n = self.queue.items.len();
        let hidden = n.saturating_sub(MAX_LISTED);
        let mut lines = Vec::new();
        if hidden > 0 {
            let more = if hidden == 1 { "message" } else { "messages" };
            lines.push(Line::from(Span::styled(
                format!(" ⋯ {hidden} more queued {more}"),
                theme.dim,
            )));
        }
        for (i, queued) in self.queue.items.iter().enumerate().skip(hidden) {
            let mut rows = queued.draft.typed.lines();
            let first = rows.next().unwrap_or("").trim_end();
            let more = if rows.next().is_some() { " …" } else { "" };
            // The newest says what ↑ and Ctrl-D do with it, when they would and there is room.
            let keys = if keys && i + 1 == n {
                "  ↑ edit · Ctrl-D drop"
            } else {
                ""
            };
            let text = format!(" ◌ queued: {first}{more}");
            let line = if text.width() + keys.width() <= width {
                Line::from(vec![
                    Span::styled(text, theme.dim),
                    Span::styled(keys, theme.dim),
                ])
            } else {
                clip_line(Line::from(Span::styled(text, theme.dim)), width)
            };
            lines.push(line);
        }
        for (row, line) in lines.into_iter().enumerate() {
            let Ok(offset) = u16::try_from(row) else {
                break;
            };
            if offset >= area.height {
                break;
            }
            line.render(
                Rect {
                    y: area.y + offset,
                    height: 1,
                    ..area
                },
                buf,
            );
        }
    }
}
