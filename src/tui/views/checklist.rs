//! The agent's todo checklist at the top of the stack pane (issue 30.3): a header with how
//! far the list got, then each item with its state, then a rule. Pure: the run model's list
//! in, rows out. A long list shows the window around the item in progress; a finished one
//! folds to its header.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};

use crate::todo::{TodoList, TodoStatus};
use crate::tui::put;
use crate::tui::theme::Theme;
use crate::tui::views::keyline::clip_line;

/// The checklist of one list.
#[derive(Debug, Clone, Copy)]
pub struct Checklist<'a> {
    /// The list, as the run model folded it.
    pub list: &'a TodoList,
}

impl Checklist<'_> {
    /// Rows it takes at the top of a pane `pane` rows high over a stack that wants
    /// `stack_rows`: none for an empty list or a pane too small to share, else what it needs
    /// (its header, its items, a rule) less what the stack needs, which keeps up to half
    /// the pane; at least the header and the rule.
    pub fn height(&self, pane: u16, stack_rows: usize) -> u16 {
        if self.list.is_empty() || pane < 4 {
            return 0;
        }
        let need = u16::try_from(self.shown_items())
            .unwrap_or(u16::MAX)
            .saturating_add(2);
        let stack = u16::try_from(stack_rows).unwrap_or(u16::MAX).min(pane / 2);
        need.min(pane - stack).max(2)
    }

    /// Items drawn under the header when there is room: none once every item is done.
    fn shown_items(&self) -> usize {
        let counts = self.list.counts();
        if counts.completed == self.list.items.len() {
            0
        } else {
            self.list.items.len()
        }
    }

    /// Draws it into `area` (as tall as [`Checklist::height`] said).
    pub fn render(&self, area: Rect, buf: &mut Buffer, theme: &Theme) {
        let area = area.intersection(buf.area);
        if area.height < 2 || area.width == 0 {
            return;
        }
        let width = usize::from(area.width);
        let rows = usize::from(area.height - 2);
        let total = self.shown_items();
        let first = self.window(rows, total);
        let shown = rows.min(total);
        let counts = self.list.counts();
        let done = counts.completed == self.list.items.len();
        let mut header = vec![
            Span::styled("todo ", theme.heading),
            Span::styled(
                format!(
                    "{}{}/{} done",
                    if done { "✔ " } else { "" },
                    counts.completed,
                    self.list.items.len()
                ),
                if done { theme.ok } else { theme.text },
            ),
        ];
        let (above, below) = (first, total.saturating_sub(first + shown));
        if shown == 0
            && let Some(item) = self.list.current()
        {
            // No row for the items: what is being done goes in the header.
            header.push(Span::styled(format!(" · {}", item.shown()), theme.tool));
        } else if above + below > 0 {
            header.push(Span::styled(format!("  ↑{above} ↓{below}"), theme.dim));
        }
        put::line(
            buf,
            area.x,
            area.y,
            &clip_line(Line::from(header), width),
            area.width,
        );
        let items = self.list.items.iter().skip(first).take(shown);
        for (y, item) in (area.y + 1..).zip(items) {
            let (mark, style) = match item.status {
                TodoStatus::Completed => ("✔ ", theme.dim.add_modifier(Modifier::CROSSED_OUT)),
                TodoStatus::InProgress => ("▶ ", theme.tool.add_modifier(Modifier::BOLD)),
                TodoStatus::Pending => ("○ ", theme.text),
            };
            let mark_style = match item.status {
                TodoStatus::Completed => theme.ok,
                _ => style,
            };
            let line = Line::from(vec![
                Span::styled(mark, mark_style),
                Span::styled(item.shown().to_string(), style),
            ]);
            put::line(buf, area.x, y, &clip_line(line, width), area.width);
        }
        let rule_y = area.y + area.height - 1;
        put::repeat(buf, area.x, rule_y, "─", area.width, theme.border);
    }

    /// The first item shown when `rows` of `total` fit: the item in progress (or the first
    /// not done) is always in view, with the one before it when there is room, so what is
    /// being done and what comes next show.
    fn window(&self, rows: usize, total: usize) -> usize {
        if total <= rows || rows == 0 {
            return 0;
        }
        let focus = (self.list.items.iter())
            .position(|i| i.status == TodoStatus::InProgress)
            .or_else(|| (self.list.items.iter()).position(|i| i.status != TodoStatus::Completed))
            .unwrap_or(0);
        let lead = usize::from(rows >= 3);
        focus.saturating_sub(lead).min(total - rows)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::todo::TodoItem;

    fn list(statuses: &[TodoStatus]) -> TodoList {
        TodoList {
            items: (statuses.iter().enumerate())
                .map(|(n, s)| TodoItem {
                    content: format!("Step {n}"),
                    status: *s,
                    active_form: Some(format!("Doing step {n}")),
                })
                .collect(),
        }
    }

    fn draw(list: &TodoList, width: u16, pane: u16, stack: usize) -> Vec<String> {
        let checklist = Checklist { list };
        let height = checklist.height(pane, stack);
        let area = Rect::new(0, 0, width, height);
        let mut buf = Buffer::empty(area);
        checklist.render(area, &mut buf, &Theme::dark());
        (0..height)
            .map(|y| {
                (0..width)
                    .map(|x| buf[(x, y)].symbol())
                    .collect::<String>()
                    .trim_end()
                    .to_string()
            })
            .collect()
    }

    #[test]
    fn each_state_has_its_mark_and_the_active_form_shows_in_progress() {
        use TodoStatus::*;
        let rows = draw(&list(&[Completed, InProgress, Pending]), 30, 30, 4);
        assert_eq!(
            rows,
            [
                "todo 1/3 done",
                "✔ Step 0",
                "▶ Doing step 1",
                "○ Step 2",
                "─".repeat(30).as_str(),
            ]
        );
    }

    #[test]
    fn a_long_list_shows_the_window_around_the_item_in_progress() {
        use TodoStatus::*;
        let mut statuses = vec![Completed; 20];
        statuses.push(InProgress);
        statuses.extend([Pending; 19]);
        // A 16-row pane over a stack of 10 frames keeps 8 for them: header, 6 items, rule.
        let rows = draw(&list(&statuses), 40, 16, 10);
        assert_eq!(rows.len(), 8);
        assert_eq!(rows[0], "todo 20/40 done  ↑19 ↓15");
        assert_eq!(rows[1], "✔ Step 19");
        assert_eq!(rows[2], "▶ Doing step 20");
        assert_eq!(rows[6], "○ Step 24");
        // Nothing running: the list takes the pane.
        assert_eq!(draw(&list(&statuses), 40, 16, 0).len(), 16);
        // However small the window, the item in progress is in it.
        for (pane, stack) in [(4, 2), (5, 2), (6, 3), (7, 3)] {
            let rows = draw(&list(&statuses), 40, pane, stack);
            assert!(
                rows.iter().any(|r| r.contains("Doing step 20")),
                "{pane}: {rows:?}"
            );
        }
        // Nothing in progress: the first not done is in view.
        let mut statuses = vec![Completed; 20];
        statuses.extend([Pending; 20]);
        let rows = draw(&list(&statuses), 40, 7, 2);
        assert_eq!(rows[1..4], ["✔ Step 19", "○ Step 20", "○ Step 21"]);
        let rows = draw(&list(&statuses), 40, 5, 2);
        assert_eq!(rows[1], "○ Step 20");
    }

    #[test]
    fn a_finished_list_folds_and_nothing_shows_for_none_or_a_tiny_pane() {
        use TodoStatus::*;
        let rows = draw(&list(&[Completed, Completed]), 30, 30, 0);
        assert_eq!(rows, ["todo ✔ 2/2 done", "─".repeat(30).as_str()]);
        assert_eq!(
            Checklist {
                list: &TodoList::default()
            }
            .height(30, 0),
            0
        );
        assert_eq!(
            Checklist {
                list: &list(&[Pending])
            }
            .height(3, 0),
            0
        );
        // Narrow: clipped, never past the pane.
        let rows = draw(&list(&[InProgress]), 8, 30, 0);
        assert!(
            rows.iter()
                .all(|r| unicode_width::UnicodeWidthStr::width(r.as_str()) <= 8)
        );
    }
}
