//! The composer: a multi-line editor (ratatui-textarea) that grows with its wrapped rows,
//! with readline keys, a prompt history (Up/Down, Ctrl-R search), big pastes shown as chips
//! (`[pasted 40 lines]`) that are sent whole, a popup of slash commands and of workspace
//! files (`@`), and files mentioned with `@path` attached when the message is sent.

use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::Rect;
use ratatui::widgets::{Paragraph, Widget};
use ratatui_textarea::{CursorMove, TextArea, WrapMode};

use crate::tui::theme::Theme;

mod attach;
mod files;
mod fuzzy;
mod layout;
mod mcp;
mod paste;
mod popup;
mod queue;
mod readline;
mod search;
#[cfg(test)]
mod tests;

use std::collections::VecDeque;
use std::path::PathBuf;

pub use attach::{MAX_FILE, MAX_TOTAL, Read, shown_from_sent};
pub use files::{MAX_FILES, MAX_WALK};
pub use mcp::{McpEntries, PromptEntry, ResourceEntry};
use paste::Paste;
pub use paste::{COLLAPSE_CHARS, COLLAPSE_LINES};
pub use popup::PopupKind;
pub use queue::MAX_LISTED;
use search::Search;

/// Most rows the composer grows to before it scrolls.
pub const MAX_ROWS: u16 = 8;
/// Prompts remembered (as many as the history file keeps).
const MAX_HISTORY: usize = 1000;
/// Bytes of history held in memory: past this the oldest prompts go (big pastes add up).
const MAX_HISTORY_BYTES: usize = 64 << 20;
/// Most chars a paste adds to a Ctrl-R query.
const MAX_QUERY_PASTE: usize = 256;
/// Recent messages whose chips [`Composer::shown`] remembers.
const SHOWN_LOOKBACK: usize = 64;

/// A message taken from the composer to send.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Outgoing {
    /// What is sent: pastes in place, mentioned files attached.
    pub text: String,
    /// What the user should know about attachments (refused or cut files), plain text.
    pub notes: Vec<String>,
    /// As it was typed (chips, mentions), should it be queued and edited again.
    draft: Draft,
    /// MCP resources it mentions (`server:uri`), to read before it is sent: then
    /// [`Composer::finish_message`] attaches them (and its files).
    wanted: Vec<String>,
}

/// A prompt as typed: its text with chip labels, and the pastes behind them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Draft {
    typed: String,
    pastes: Vec<Paste>,
}

impl Draft {
    /// The text to send: chips replaced by what was pasted.
    fn full(&self) -> String {
        paste::expand(&self.typed, &self.pastes)
    }

    fn bytes(&self) -> usize {
        self.typed.len() + self.pastes.iter().map(|p| p.text.len()).sum::<usize>()
    }
}

impl AsRef<str> for Draft {
    fn as_ref(&self) -> &str {
        &self.typed
    }
}

/// What a key did to a Ctrl-R search.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SearchStep {
    /// The search took it.
    Used,
    /// The search ended with the match in the editor; the key still does what it does.
    Accepted,
}

/// The prompt editor.
pub struct Composer {
    area: TextArea<'static>,
    /// The chips in the text and what they stand for.
    pastes: Vec<Paste>,
    history: Vec<Draft>,
    /// Position while recalling history (`None`: editing a fresh draft).
    recall: Option<usize>,
    /// The draft put aside while recalling or searching.
    draft: Draft,
    search: Option<Search>,
    /// Prompts remembered since [`Composer::take_unsaved`] was last called.
    unsaved: Vec<String>,
    /// The width the editor last laid its wrapped rows out for.
    laid_out: Option<u16>,
    /// The workspace files are attached from and listed for `@` (none: no attachments).
    workspace: Option<PathBuf>,
    files: files::FileIndex,
    popup: popup::Popup,
    /// Recent messages sent that showed otherwise (chips): (sent, shown), newest last.
    sent: VecDeque<(String, String)>,
    /// Messages waiting for the running request to end.
    queue: queue::Queue,
    /// The MCP servers' prompts and resources (the popups, `@server:uri`).
    mcp: McpEntries,
    /// Bumped by [`Composer::set_mcp`]: rankings of the old entries are redone.
    mcp_generation: u64,
    /// The custom commands (`.taco/commands/`), listed after the built-in ones.
    custom: Vec<PromptEntry>,
}

impl Default for Composer {
    fn default() -> Self {
        Self::new()
    }
}

impl Composer {
    /// An empty composer.
    pub fn new() -> Self {
        Self {
            area: fresh(),
            pastes: Vec::new(),
            history: Vec::new(),
            recall: None,
            draft: Draft::default(),
            search: None,
            unsaved: Vec::new(),
            laid_out: None,
            workspace: None,
            files: files::FileIndex::new(None),
            popup: popup::Popup::default(),
            sent: VecDeque::new(),
            queue: queue::Queue::default(),
            mcp: McpEntries::default(),
            mcp_generation: 0,
            custom: Vec::new(),
        }
    }

    /// Sets the workspace `@` lists and attaches files from (`None`: neither).
    pub fn set_workspace(&mut self, root: Option<PathBuf>) {
        self.files = files::FileIndex::new(root.clone());
        self.workspace = root;
    }

    /// Starts the history with prompts of earlier launches, oldest first.
    pub fn set_history(&mut self, entries: Vec<String>) {
        self.history = entries
            .into_iter()
            .map(|typed| Draft {
                typed,
                pastes: Vec::new(),
            })
            .collect();
        self.recall = None;
        self.trim_history();
    }

    /// The text to send: as typed, with every chip's paste in place.
    pub fn text(&self) -> String {
        paste::expand(&self.typed(), &self.pastes)
    }

    /// The text as it shows (chips as their labels).
    pub fn typed(&self) -> String {
        self.area.lines().join("\n")
    }

    /// Whether nothing is typed.
    pub fn is_empty(&self) -> bool {
        self.area.lines().iter().all(|l| l.is_empty())
    }

    /// Replaces the text and puts the cursor at the end.
    pub fn set_text(&mut self, text: &str) {
        self.load(Draft {
            typed: text.to_string(),
            pastes: Vec::new(),
        });
        self.cursor_to_end();
    }

    /// Takes the text for sending: remembers it in the history and empties the editor.
    pub fn take(&mut self) -> String {
        self.take_draft().full()
    }

    /// Takes a message to send: the text with its pastes in place and the files it mentions
    /// (`@path`) attached, unless it is a command. The history keeps it as typed (a mention,
    /// not the file), and [`Composer::shown`] how it showed.
    pub fn take_message(&mut self) -> Outgoing {
        let draft = self.take_draft();
        let full = draft.full();
        if !full.starts_with('/') {
            let wanted = mcp::wanted(&draft.typed, self.workspace.as_deref(), &self.mcp);
            if !wanted.is_empty() {
                // Attached (files too) once the resources are read: `finish_message`.
                return Outgoing {
                    text: full,
                    notes: Vec::new(),
                    draft,
                    wanted,
                };
            }
        }
        self.attach_message(draft, &[])
    }

    fn attach_message(&mut self, draft: Draft, read: &[attach::Read]) -> Outgoing {
        let full = draft.full();
        let command = full.starts_with('/');
        let attached = match &self.workspace {
            _ if command => attach::Attached {
                text: full,
                ..attach::Attached::default()
            },
            root => attach::attach(&draft.typed, &full, root.as_deref(), read),
        };
        let shown = attached
            .shown
            .or_else(|| (!draft.pastes.is_empty()).then(|| draft.typed.clone()));
        if let Some(shown) = shown {
            if self.sent.len() == SHOWN_LOOKBACK {
                self.sent.pop_front();
            }
            self.sent.push_back((attached.text.clone(), shown));
        }
        Outgoing {
            text: attached.text,
            notes: attached.notes,
            draft,
            wanted: Vec::new(),
        }
    }

    fn take_draft(&mut self) -> Draft {
        let draft = self.current();
        self.remember(draft.clone());
        self.load(Draft::default());
        self.recall = None;
        self.draft = Draft::default();
        draft
    }

    /// Puts a draft aside into the history (Ctrl-C; blanks are only cleared) and empties the
    /// editor; `false` when it was empty.
    pub fn clear_to_history(&mut self) -> bool {
        if self.is_empty() {
            return false;
        }
        self.take();
        true
    }

    /// The prompts remembered since the last call, as sent (for the history file).
    pub fn take_unsaved(&mut self) -> Vec<String> {
        std::mem::take(&mut self.unsaved)
    }

    /// How a message sent recently showed, when it had chips (pastes, attached files): the
    /// transcript shows it so; `None` when it had none.
    pub fn shown(&self, full: &str) -> Option<String> {
        (self.sent.iter().rev())
            .find(|(sent, _)| sent == full)
            .map(|(_, shown)| shown.clone())
    }

    /// Inserts a line break at the cursor.
    pub fn newline(&mut self) {
        self.area.insert_newline();
    }

    /// Inserts pasted text (nothing is sent): as it is, or as a chip when it is big; during a
    /// Ctrl-R search it goes into the query.
    pub fn paste(&mut self, text: &str) {
        if let Some(search) = self.search.as_mut() {
            // Into the query, on one line; a query longer than this finds nothing anyway.
            let chars = text.chars().take(MAX_QUERY_PASTE);
            for c in chars.map(|c| if c.is_whitespace() { ' ' } else { c }) {
                if !c.is_control() {
                    search.push(c, &self.history);
                }
            }
            return;
        }
        // Terminals send CR for line breaks inside a paste.
        let text = text.replace("\r\n", "\n").replace('\r', "\n");
        if paste::collapses(&text) {
            // Chips whose label was edited away are gone; their labels may be used again.
            paste::still_in(&self.typed(), &mut self.pastes);
            let chip = paste::chip(text, &self.pastes);
            self.area.insert_str(&chip.label);
            self.pastes.push(chip);
        } else {
            self.area.insert_str(text);
        }
    }

    /// Edits with a key: readline keys (Ctrl-A/E, Ctrl-U/K/W/Y, Alt-B/F/D), Ctrl-Z undo,
    /// Ctrl-R search; Up on the first row and Down on the last walk the history.
    pub fn input(&mut self, key: KeyEvent) -> bool {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        let shift = key.modifiers.contains(KeyModifiers::SHIFT);
        let plain = !ctrl && !alt;
        match key.code {
            KeyCode::Up if plain && !shift => self.up(),
            KeyCode::Down if plain && !shift => self.down(),
            KeyCode::Char('p') if ctrl && !alt => self.up(),
            KeyCode::Char('n') if ctrl && !alt => self.down(),
            KeyCode::Char('r') if ctrl && !alt => {
                self.search = Some(Search::new());
                false
            }
            KeyCode::Char('u') if ctrl && !alt => self.kill_to_line_start(),
            KeyCode::Char('w') if ctrl && !alt => self.rub_out_word(),
            KeyCode::Char('z' | 'Z') if ctrl && shift => self.area.redo(),
            // Ctrl-_ is readline's undo; terminals send it as Ctrl-7 or Ctrl-/.
            KeyCode::Char('z' | '_' | '7' | '/') if ctrl => self.area.undo(),
            KeyCode::Char('z') if alt => self.area.redo(),
            KeyCode::Char('b') if alt && !ctrl => self.word_back(),
            KeyCode::Char('f') if alt && !ctrl => self.word_forward(),
            _ => self.area.input(key),
        }
    }

    /// Whether a Ctrl-R search is on.
    pub fn is_searching(&self) -> bool {
        self.search.is_some()
    }

    /// A key during a Ctrl-R search: typing narrows it, Ctrl-R goes further back, Enter takes
    /// the match into the editor (not sent), Esc or Ctrl-G leaves the draft as it was; any
    /// other key takes the match and then does what it does.
    pub fn search_key(&mut self, key: KeyEvent) -> SearchStep {
        let Some(search) = self.search.as_mut() else {
            return SearchStep::Accepted;
        };
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        match key.code {
            KeyCode::Char('r') if ctrl && !alt => search.older(&self.history),
            KeyCode::Char('g') if ctrl && !alt => self.cancel_search(),
            KeyCode::Esc => self.cancel_search(),
            KeyCode::Backspace if !ctrl && !alt => search.pop(&self.history),
            KeyCode::Char(c) if !ctrl && !alt => search.push(c, &self.history),
            KeyCode::Enter => {
                self.accept_search();
                return SearchStep::Used;
            }
            _ => {
                self.accept_search();
                return SearchStep::Accepted;
            }
        }
        SearchStep::Used
    }

    /// Ends a Ctrl-R search, the draft as it was.
    pub fn cancel_search(&mut self) {
        self.search = None;
    }

    fn accept_search(&mut self) {
        let Some(found) = self.search.take().and_then(|s| s.found()) else {
            return;
        };
        if self.recall.is_none() {
            self.draft = self.current();
        }
        self.recall = Some(found);
        self.recall_entry(found);
    }

    /// Draws the editor; `placeholder` shows when it is empty.
    pub fn render(
        &mut self,
        area: Rect,
        buf: &mut Buffer,
        theme: &Theme,
        focused: bool,
        placeholder: &str,
    ) {
        if let Some(search) = &self.search {
            let lines = self.search_lines(search, area.width, theme);
            Paragraph::new(lines).render(area, buf);
            return;
        }
        self.area.set_placeholder_text(placeholder);
        self.area.set_placeholder_style(theme.dim);
        self.area
            .set_cursor_style(if focused { theme.selected } else { theme.text });
        if self.laid_out == Some(area.width) {
            self.fit_viewport(area.height);
        }
        (&self.area).render(area, buf);
        self.laid_out = Some(area.width);
    }

    /// Moves the cursor to the end of the text.
    pub fn cursor_to_end(&mut self) {
        self.area.move_cursor(CursorMove::Bottom);
        self.area.move_cursor(CursorMove::End);
    }

    /// The draft in the editor now.
    fn current(&self) -> Draft {
        let typed = self.typed();
        let mut pastes = self.pastes.clone();
        paste::still_in(&typed, &mut pastes);
        Draft { typed, pastes }
    }

    /// Puts `draft` in a fresh editor (no undo across drafts).
    fn load(&mut self, draft: Draft) {
        self.area = fresh();
        self.area.insert_str(&draft.typed);
        self.pastes = draft.pastes;
        self.laid_out = None;
    }

    fn remember(&mut self, draft: Draft) {
        // A repeat of the last prompt is not remembered twice (here or in the file).
        if draft.typed.trim().is_empty() || self.history.last() == Some(&draft) {
            return;
        }
        self.unsaved.push(draft.full());
        self.history.push(draft);
        self.trim_history();
    }

    fn trim_history(&mut self) {
        trim(&mut self.history, MAX_HISTORY, MAX_HISTORY_BYTES);
    }

    /// Up: the row above, or on the first row the previous prompt.
    fn up(&mut self) -> bool {
        let before = self.area.cursor();
        self.area.move_cursor(CursorMove::Up);
        if self.area.cursor() != before || self.history.is_empty() {
            return false;
        }
        let index = match self.recall {
            None => {
                self.draft = self.current();
                self.history.len() - 1
            }
            Some(0) => return false,
            Some(i) => i - 1,
        };
        self.recall = Some(index);
        self.recall_entry(index);
        true
    }

    /// Down: the row below, or on the last row the next prompt (and then the draft).
    fn down(&mut self) -> bool {
        let before = self.area.cursor();
        self.area.move_cursor(CursorMove::Down);
        if self.area.cursor() != before {
            return false;
        }
        let Some(index) = self.recall else {
            return false;
        };
        if index + 1 < self.history.len() {
            self.recall = Some(index + 1);
            self.recall_entry(index + 1);
        } else {
            self.recall = None;
            let draft = std::mem::take(&mut self.draft);
            self.load(draft);
            self.cursor_to_end();
        }
        true
    }

    /// Shows history entry `index`: a one-line prompt with the cursor at its end, a longer
    /// one at its start (so Up goes on to the one before).
    fn recall_entry(&mut self, index: usize) {
        let Some(draft) = self.history.get(index).cloned() else {
            return;
        };
        let multiline = draft.typed.contains('\n');
        self.load(draft);
        if multiline {
            self.area.move_cursor(CursorMove::Top);
            self.area.move_cursor(CursorMove::Head);
        } else {
            self.cursor_to_end();
        }
    }
}

/// Keeps the newest prompts, at most `entries` of them and `bytes` in all (the newest stays,
/// however big).
fn trim(history: &mut Vec<Draft>, entries: usize, bytes: usize) {
    let mut drop = history.len().saturating_sub(entries);
    let mut held: usize = history[drop..].iter().map(Draft::bytes).sum();
    while held > bytes && drop + 1 < history.len() {
        held -= history[drop].bytes();
        drop += 1;
    }
    history.drain(..drop);
}

fn fresh() -> TextArea<'static> {
    let mut area = TextArea::default();
    area.set_wrap_mode(WrapMode::WordOrGlyph);
    area.set_cursor_line_style(ratatui::style::Style::default());
    area
}
