//! The help overlay (`?` or `/help`): every key and command on one page.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Widget};

use crate::tui::commands::COMMANDS;
use crate::tui::markdown::wrap_plain;
use crate::tui::theme::Theme;
use crate::tui::views::keyline;

/// Sections of (key, what it does).
const SECTIONS: &[(&str, &[(&str, &str)])] = &[
    (
        "Anywhere",
        &[
            ("Tab / Shift-Tab", "move focus: chat → stack → timeline"),
            ("Esc", "cancel the running request"),
            ("Ctrl-C", "clear the draft, else cancel; twice quits"),
            ("?", "this help (when the composer is empty)"),
            ("wheel, click", "scroll / select what is under the pointer"),
        ],
    ),
    (
        "Chat and composer",
        &[
            ("Enter", "send (queued while a request runs)"),
            ("↑, Ctrl-D", "empty composer: edit / drop the last queued"),
            ("Shift-Enter / Ctrl-J", "new line"),
            (
                "↑ / ↓, Ctrl-P / N",
                "earlier prompts (kept across launches)",
            ),
            ("Ctrl-R", "search earlier prompts"),
            (
                "Ctrl-A / E, Alt-B / F",
                "line start / end, word back / forward",
            ),
            (
                "Ctrl-U / K / W, Ctrl-Y",
                "delete to start / end / a word; put back",
            ),
            ("Ctrl-Z, Alt-Z", "undo, redo"),
            ("/", "command popup: ↑↓ choose, Tab / Enter take"),
            ("@", "attach a file or MCP resource (finder)"),
            ("PgUp / PgDn, wheel", "scroll the chat"),
            ("End", "follow the bottom again (empty composer)"),
            ("Ctrl-O", "expand / collapse tool details, reasoning, diffs"),
            ("Alt-↑, click", "select a message (↑ ↓ move, y copies)"),
        ],
    ),
    (
        "Dialogs (approval, question, form): typing never answers",
        &[
            (
                "Tab, click",
                "move to a dialog that waits (you were typing)",
            ),
            (
                "letter, Enter",
                "a letter picks an answer, Enter carries it out",
            ),
            (
                "more typing",
                "a letter then more letters go to your message",
            ),
        ],
    ),
    (
        "Approval dialog (a letter, then Enter)",
        &[
            ("y", "approve this call once"),
            ("t", "approve this tool for this request"),
            ("a", "approve this tool for the session"),
            ("p", "shell: approve, and allow that command's shape"),
            ("n", "deny, then optionally type a reason for the model"),
            ("Y", "several calls wait: approve every one once"),
            ("N", "several calls wait: deny every one (one reason)"),
            ("Esc", "deny at once (with a letter picked: back)"),
            ("↑ / ↓", "scroll long arguments"),
        ],
    ),
    (
        "Question dialog (a missing parameter, the depth limit, a form)",
        &[
            ("Enter", "send the typed answer"),
            ("empty Enter", "asks “Continue with current task?”: y / n"),
            ("Esc", "abandon the task (the stack is cleared)"),
            (
                "← → Home End ⌫",
                "edit the answer; paste goes in on one line",
            ),
            ("y / n, Enter", "depth limit: 20 levels deeper / stop"),
            ("y / n, Enter", "a filled-in form: send it / decline"),
            ("/status …", "commands typed in the dialog still run"),
        ],
    ),
    (
        "Tool stack (letters once you moved in it or clicked it)",
        &[
            ("↑ ↓ / j k", "select a call (Home / End: first / last)"),
            ("Enter", "its arguments, state, parents and live output"),
            ("c", "cancel that call alone (deny it if it waits)"),
            ("Esc", "close the detail, then drop the selection"),
        ],
    ),
    (
        "Timeline (letters once you moved in it or clicked it)",
        &[
            ("↑ ↓ / j k", "select an event"),
            ("Enter", "open the full payload (again: full screen)"),
            ("y", "in the payload: copy it to the clipboard"),
            ("z", "payload: full screen, and back (Esc too)"),
            ("w", "payload: wrap long lines, or cut them"),
            ("← →", "payload: pan lines that are cut"),
            ("f", "filter: all, llm, tools, asks, problems"),
            ("r", "rewind files / conversation to before this row"),
            ("Home / End", "first / last (End follows new events)"),
        ],
    ),
    (
        "Rewind (r in the timeline, /rewind)",
        &[
            ("f / c / b", "pick: files, conversation, both"),
            ("o", "overwrite files edited by hand too (default: kept)"),
            ("Enter", "after a pick: rewind"),
            ("← → / ↑ ↓", "the file whose diff shows / scroll the diff"),
            ("Esc", "close, changing nothing"),
        ],
    ),
    (
        "Pickers (/model, /provider, /resume, /rewind)",
        &[
            ("type", "filter: every word, in any order"),
            ("↑ ↓ / PgUp PgDn", "move (Home / End: first / last)"),
            ("Enter", "choose"),
            ("Esc", "close"),
        ],
    ),
];

/// The help page's scroll position (its keys are in `overlay/help.rs`).
#[derive(Debug, Default)]
pub struct Help {
    /// First line shown.
    pub scroll: u16,
    /// Closed by a key: the overlay stack drops it.
    pub closed: bool,
    /// The custom commands and the files skipped, as (key, what) rows.
    pub custom: Vec<(String, String)>,
}

impl Help {
    /// All lines of the help text at `width` cells. A description that does not fit wraps
    /// under itself, never cut mid-word; when too little room is left beside the keys, each
    /// description goes under its key.
    pub fn lines(theme: &Theme, width: u16) -> Vec<Line<'static>> {
        Self::lines_with(theme, width, &[])
    }

    /// [`Help::lines`] with a section of custom commands (`custom`: (key, what) rows).
    pub fn lines_with(
        theme: &Theme,
        width: u16,
        custom: &[(String, String)],
    ) -> Vec<Line<'static>> {
        let mut sections: Vec<(&str, Vec<(String, &str)>)> = (SECTIONS.iter())
            .map(|(title, keys)| {
                (
                    *title,
                    keys.iter().map(|(k, w)| (k.to_string(), *w)).collect(),
                )
            })
            .collect();
        // The commands come from the one table the popup and Tab read.
        let commands = (COMMANDS.iter()).map(|c| {
            (
                format!("{} {}", c.name, c.args).trim_end().to_string(),
                c.about,
            )
        });
        sections.push(("Commands", commands.collect()));
        if !custom.is_empty() {
            let rows = custom
                .iter()
                .map(|(k, w)| (k.clone(), w.as_str()))
                .collect();
            sections.push((
                "Custom commands (.taco/commands/, ~/.config/taco/commands/)",
                rows,
            ));
        }
        let key_width = (sections.iter())
            .flat_map(|(_, keys)| keys.iter())
            .map(|(k, _)| k.chars().count())
            .max()
            .unwrap_or(0);
        // Descriptions beside their keys need this much room to read as sentences.
        let beside = usize::from(width) >= key_width + 4 + 24;
        let mut lines = Vec::new();
        for (i, (title, keys)) in sections.into_iter().enumerate() {
            if i > 0 {
                lines.push(Line::default());
            }
            lines.extend(wrap_plain(title, theme.heading, width, &[], &[]));
            for (key, what) in keys {
                let (first, rest) = if beside {
                    let first = Span::styled(format!("  {key:<key_width$}  "), theme.key);
                    let rest = Span::raw(" ".repeat(key_width + 4));
                    (first, rest)
                } else {
                    lines.push(Line::styled(format!("  {key}"), theme.key));
                    (Span::raw("      "), Span::raw("      "))
                };
                lines.extend(wrap_plain(what, theme.text, width, &[first], &[rest]));
            }
        }
        lines
    }

    /// Draws the page centered in `area`; when it is cut, the bottom border says how much
    /// is out of sight.
    pub fn draw(&self, area: Rect, buf: &mut Buffer, theme: &Theme) {
        let width = area.width.min(76);
        let lines = Self::lines_with(theme, width.saturating_sub(2), &self.custom);
        let height = area.height.min(lines.len() as u16 + 2);
        if width < 4 || height < 3 {
            return;
        }
        let popup = crate::tui::layout::centered(area, width, height);
        Clear.render(popup, buf);
        let page = usize::from(height - 2);
        let max_scroll = lines.len().saturating_sub(page);
        let scroll = usize::from(self.scroll).min(max_scroll);
        // Say so when the page does not fit, or the last sections go unseen.
        let title = if max_scroll > 0 {
            " taco help · ↑↓ PgUp PgDn scroll · Esc closes "
        } else {
            " taco help · Esc closes "
        };
        let mut block = Block::default()
            .borders(Borders::ALL)
            .border_style(theme.border_focused)
            .title(Span::styled(title, theme.title));
        let below = lines.len().saturating_sub(scroll + page);
        if let Some(more) = keyline::more(scroll, below) {
            block = block.title_bottom(Line::styled(more, theme.warn).right_aligned());
        }
        let shown: Vec<Line> = lines.into_iter().skip(scroll).take(page).collect();
        Paragraph::new(shown).block(block).render(popup, buf);
    }
}
