//! Drawing the rewind overlay: the two sides (files, conversation) and why one cannot go
//! back, the hand-edited files, the files that change and the shown one's diff, then the
//! keys (dimmed, with why, while the dialog waits for the user).

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Widget};

use super::RewindView;
use crate::event::{ConversationPreview, FilesPreview, RewindPreview};
use crate::tui::theme::Theme;
use crate::tui::views::file_diff;
use crate::tui::views::gate::Gate;
use crate::tui::views::keyline::{self, KeyHint, KeyStyles, hint};

/// Most rows the file list takes (it scrolls with the selection).
const FILE_ROWS: usize = 6;
/// Most hand-edited files named (the rest are counted).
const HAND_NAMED: usize = 6;

impl RewindView {
    /// Draws the overlay into `area` (the screen but its status line).
    pub fn draw(&mut self, area: Rect, buf: &mut Buffer, theme: &Theme, gate: Gate) {
        let area = area.intersection(buf.area);
        if area.width < 8 || area.height < 5 {
            return;
        }
        Clear.render(area, buf);
        let title = format!(" ⟲ rewind to {} ", crate::text::plain(&self.label));
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(theme.warn)
            .title(Line::styled(title, theme.title));
        let inner = block.inner(area);
        block.render(area, buf);
        let width = inner.width;
        let footer = self.footer(theme, width, gate);
        let Some(preview) = self.preview.clone() else {
            let lines = vec![Line::styled(
                "reading what the rewind would change…",
                theme.dim,
            )];
            keyline::draw_inside(inner, buf, lines, footer);
            return;
        };
        let mut lines = sides(&preview, theme);
        lines.extend(self.hand_lines(theme));
        lines.push(Line::default());
        if let Ok(files) = &preview.files {
            lines.extend(self.file_lines(files, theme));
        }
        let footer_rows = u16::try_from(footer.len()).unwrap_or(u16::MAX);
        let body_rows = usize::from(inner.height.saturating_sub(footer_rows));
        let room = body_rows.saturating_sub(lines.len());
        if let Ok(files) = &preview.files {
            lines.extend(self.diff_lines(files, room, theme));
        }
        lines.truncate(body_rows);
        let clipped = lines
            .into_iter()
            .map(|l| keyline::clip_line(l, usize::from(width)))
            .collect();
        keyline::draw_inside(inner, buf, clipped, footer);
    }

    /// The hand-edited files and what becomes of them.
    fn hand_lines(&self, theme: &Theme) -> Vec<Line<'static>> {
        let hand = self.hand_edits();
        if hand.is_empty() {
            return Vec::new();
        }
        let mut named: Vec<String> = (hand.iter().take(HAND_NAMED))
            .map(|p| crate::text::plain(p).into_owned())
            .collect();
        if hand.len() > HAND_NAMED {
            named.push(format!("{} more", hand.len() - HAND_NAMED));
        }
        let (fate, style) = if self.overwrite {
            ("will be OVERWRITTEN (o: keep them)", theme.error)
        } else {
            ("kept as they are (o: overwrite them too)", theme.ok)
        };
        vec![Line::from(vec![
            Span::styled("Edited by hand since: ", theme.warn),
            Span::styled(named.join(", "), theme.text),
            Span::styled(" — ", theme.dim),
            Span::styled(fate, style),
        ])]
    }

    /// The files that change: a window of the list around the shown one.
    fn file_lines(&self, files: &FilesPreview, theme: &Theme) -> Vec<Line<'static>> {
        if files.files.is_empty() {
            return vec![Line::styled(
                "No file changes: the workspace is as it was then.",
                theme.dim,
            )];
        }
        let mut lines = vec![Line::from(vec![
            Span::styled("Files that change ", theme.heading),
            Span::styled("(+ comes back · ~ restored · − removed)", theme.dim),
        ])];
        let count = files.files.len();
        let first = self
            .file
            .saturating_sub(FILE_ROWS / 2)
            .min(count.saturating_sub(FILE_ROWS));
        for (i, view) in files.files.iter().enumerate().skip(first).take(FILE_ROWS) {
            let file = &view.file;
            let selected = i == self.file;
            let pointer = if selected { "▸ " } else { "  " };
            let path_style = if selected { theme.selected } else { theme.text };
            lines.push(Line::from(vec![
                Span::styled(pointer, theme.key),
                Span::styled(
                    file_diff::mark(file.change),
                    file_diff::mark_style(file.change, theme),
                ),
                Span::raw(" "),
                Span::styled(crate::text::plain(&file.path).into_owned(), path_style),
                Span::raw("  "),
                Span::styled(file_diff::counts(file), theme.dim),
            ]));
        }
        if count > FILE_ROWS || files.omitted > 0 {
            let mut more = format!("  {count} files listed · ←→ moves");
            if files.omitted > 0 {
                more.push_str(&format!(" · {} more not listed", files.omitted));
            }
            lines.push(Line::styled(more, theme.dim));
        }
        lines
    }

    /// The shown file's diff in `room` rows, from its scroll (kept within the diff).
    fn diff_lines(
        &mut self,
        files: &FilesPreview,
        room: usize,
        theme: &Theme,
    ) -> Vec<Line<'static>> {
        let Some(view) = files.files.get(self.file) else {
            return Vec::new();
        };
        if room < 2 {
            return Vec::new();
        }
        if self.painted.as_ref().is_none_or(|(i, _)| *i != self.file) {
            self.painted = Some((self.file, file_diff::styled(view, theme)));
        }
        let painted = self.painted.as_ref().map_or(&[][..], |(_, l)| l.as_slice());
        let rows = room - 1;
        self.page = rows;
        self.scroll = self.scroll.min(painted.len().saturating_sub(rows));
        let below = painted.len().saturating_sub(self.scroll + rows);
        let more = keyline::more(self.scroll, below).unwrap_or_default();
        let head = format!(
            "── diff {}/{} ── ↑↓ scroll{more}",
            self.file + 1,
            files.files.len()
        );
        let mut lines = vec![Line::styled(head, theme.dim)];
        lines.extend(painted.iter().skip(self.scroll).take(rows).cloned());
        lines
    }

    /// The pick waiting for Enter, then the keys.
    fn footer(&self, theme: &Theme, width: u16, gate: Gate) -> Vec<Line<'static>> {
        let held = gate.holds();
        let styles = if held {
            KeyStyles {
                key: theme.dim,
                what: theme.dim,
                note: theme.warn,
            }
        } else {
            KeyStyles {
                key: theme.key,
                what: theme.text,
                note: theme.warn,
            }
        };
        let mut lines = Vec::new();
        let armed = self.armed_line().filter(|_| !held);
        let hints: Vec<KeyHint> = if self.preview.is_none() {
            vec![hint("Esc", "close")]
        } else if let Some(armed) = armed {
            let line = Line::styled(armed, theme.warn);
            lines.extend(crate::tui::markdown::wrap_line(&line, width));
            vec![
                hint("Enter", "do it"),
                hint("Esc", "back"),
                hint("typing", "goes to your message").or("→ message"),
            ]
        } else {
            self.choice_hints()
        };
        lines.extend(keyline::lines(&hints, &gate.note(), width, 2, styles));
        lines
    }

    /// The picks that can be made, then moving and closing.
    fn choice_hints(&self) -> Vec<KeyHint> {
        use crate::event::RewindScope;
        let mut hints = Vec::new();
        if self.can(RewindScope::Files) {
            hints.push(hint("f", "files"));
        }
        if self.can(RewindScope::Conversation) {
            hints.push(hint("c", "conversation"));
        }
        if self.can(RewindScope::Both) {
            hints.push(hint("b", "both"));
        }
        if !self.hand_edits().is_empty() {
            hints.push(hint("o", "overwrite hand edits").or("overwrite"));
        }
        hints.push(hint("then Enter", "confirms").or("Enter"));
        if self.file_count() > 1 {
            hints.push(hint("←→", "file"));
        }
        hints.push(hint("↑↓", "diff"));
        hints.push(hint("Esc", "close"));
        hints
    }
}

/// The files' side and the conversation's: what each would do, or why it cannot.
fn sides(preview: &RewindPreview, theme: &Theme) -> Vec<Line<'static>> {
    let files = match &preview.files {
        Ok(files) => {
            let n = files.files.len() + files.omitted;
            let short = files.checkpoint.get(..12).unwrap_or(&files.checkpoint);
            Span::styled(
                format!(
                    "{n} file{} go back to checkpoint {short}",
                    if n == 1 { "" } else { "s" }
                ),
                theme.text,
            )
        }
        Err(why) => cannot(why, theme),
    };
    let conversation = match &preview.conversation {
        Ok(ConversationPreview {
            prompt,
            runs_dropped,
        }) => Span::styled(
            format!(
                "back to before “{}” · {runs_dropped} run{} leave{} it (kept in the old session file)",
                crate::text::plain(prompt),
                if *runs_dropped == 1 { "" } else { "s" },
                if *runs_dropped == 1 { "s" } else { "" },
            ),
            theme.text,
        ),
        Err(why) => cannot(why, theme),
    };
    vec![
        Line::from(vec![Span::styled("Files          ", theme.heading), files]),
        Line::from(vec![
            Span::styled("Conversation   ", theme.heading),
            conversation,
        ]),
    ]
}

/// `✗ cannot go back: why`.
fn cannot(why: &str, theme: &Theme) -> Span<'static> {
    Span::styled(
        format!("✗ cannot go back: {}", crate::text::plain(why)),
        theme.error,
    )
}
