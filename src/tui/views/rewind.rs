//! The rewind overlay's state (issue 29): what a rewind to a point would do — the files
//! that go back (each with its diff), the hand-edited ones (kept unless the user says
//! otherwise), the conversation's side — and the user's choice. Pure: keys in, a [`Step`]
//! out; drawing is in `rewind/draw.rs`, the overlay's plumbing in `overlay/rewind.rs`.
//!
//! Answering follows every dialog's rule (`app/guard.rs`): a letter only picks (`f` files,
//! `c` conversation, `b` both) and Enter carries the pick out; a printable key that answers
//! nothing, or any after a pick, is typing, and goes back to the composer with the letters
//! before it. `o` (overwrite the hand edits too) is one of those letters: typing a word
//! that starts with it undoes it.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::text::Line;

use crate::event::{RewindPoint, RewindPreview, RewindScope};

mod draw;
#[cfg(test)]
mod tests;

/// What a key did to the overlay.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// Taken (a pick, scrolling, a toggle).
    Used,
    /// Not a key of the overlay.
    Ignored,
    /// Close it; nothing changes.
    Close,
    /// Rewind, as picked.
    Confirm {
        /// Where to.
        point: RewindPoint,
        /// What goes back.
        scope: RewindScope,
        /// Hand-edited files are overwritten too.
        overwrite: bool,
    },
    /// These keys were typing, not an answer: they go to the composer.
    Typed(Vec<char>),
}

/// The rewind overlay: the point, its preview once listed, the file shown, the pick.
#[derive(Debug)]
pub struct RewindView {
    point: RewindPoint,
    /// What the point is, in words (`before write_file notes.txt`).
    label: String,
    /// `None` while the preview is on its way.
    preview: Option<RewindPreview>,
    /// The file whose diff shows.
    file: usize,
    /// The diff's first shown line.
    scroll: usize,
    /// The picked scope, waiting for Enter.
    armed: Option<RewindScope>,
    /// Hand-edited files are overwritten too (default: kept).
    overwrite: bool,
    /// Letters taken since the last other key: given back with the key that shows they
    /// were a word.
    word: Vec<char>,
    closed: bool,
    /// The shown file's diff, painted (by file index): painting is not done every frame.
    painted: Option<(usize, Vec<Line<'static>>)>,
    /// Diff rows of the last frame (paging).
    page: usize,
}

impl RewindView {
    /// The overlay for `point`, waiting for its preview.
    pub fn new(point: RewindPoint, label: impl Into<String>) -> Self {
        Self {
            point,
            label: label.into(),
            preview: None,
            file: 0,
            scroll: 0,
            armed: None,
            overwrite: false,
            word: Vec::new(),
            closed: false,
            painted: None,
            page: 10,
        }
    }

    /// The point it asks about.
    pub fn point(&self) -> &RewindPoint {
        &self.point
    }

    /// Takes the preview listed for its point (one for another point is not its own).
    pub fn loaded(&mut self, preview: &RewindPreview) -> bool {
        if preview.point != self.point {
            return false;
        }
        self.preview = Some(preview.clone());
        self.file = 0;
        self.scroll = 0;
        self.painted = None;
        true
    }

    /// Whether the preview is still on its way.
    pub fn is_loading(&self) -> bool {
        self.preview.is_none()
    }

    /// Whether it was closed.
    pub fn is_closed(&self) -> bool {
        self.closed
    }

    /// The picked scope waiting for Enter.
    pub fn armed(&self) -> Option<RewindScope> {
        self.armed
    }

    /// Whether hand-edited files would be overwritten.
    pub fn overwrites(&self) -> bool {
        self.overwrite
    }

    /// Whether `scope` can be chosen: each side it takes back has a preview.
    pub fn can(&self, scope: RewindScope) -> bool {
        let Some(preview) = &self.preview else {
            return false;
        };
        (!scope.files() || preview.files.is_ok())
            && (!scope.conversation() || preview.conversation.is_ok())
    }

    /// Files edited by hand since taco's last checkpoint.
    fn hand_edits(&self) -> &[String] {
        match self.preview.as_ref().map(|p| &p.files) {
            Some(Ok(files)) => &files.hand_edits,
            _ => &[],
        }
    }

    /// Files listed (each with its diff).
    fn file_count(&self) -> usize {
        match self.preview.as_ref().map(|p| &p.files) {
            Some(Ok(files)) => files.files.len(),
            _ => 0,
        }
    }

    /// Files that go back, listed or not.
    fn files_in_all(&self) -> usize {
        match self.preview.as_ref().map(|p| &p.files) {
            Some(Ok(files)) => files.files.len() + files.omitted,
            _ => 0,
        }
    }

    /// The user typed past it: a half-given answer is dropped, the default comes back.
    pub fn step_back(&mut self) {
        self.armed = None;
        self.overwrite = false;
        self.word.clear();
    }

    /// What was taken as letters, and `c`, given back as typing.
    fn typed(&mut self, c: char) -> Step {
        let mut keys = std::mem::take(&mut self.word);
        keys.push(c);
        self.step_back();
        Step::Typed(keys)
    }

    /// A key while the dialog waits for the user (`app/guard.rs`): only scrolling and
    /// closing work; typing goes on to the composer.
    pub fn on_held_key(&mut self, key: KeyEvent) -> Step {
        if key
            .modifiers
            .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT)
        {
            return Step::Ignored;
        }
        match key.code {
            KeyCode::Esc => {
                self.closed = true;
                Step::Close
            }
            KeyCode::Char(c) => Step::Typed(vec![c]),
            _ => self.move_key(key.code),
        }
    }

    /// A key while the dialog takes keys.
    pub fn on_key(&mut self, key: KeyEvent) -> Step {
        if key
            .modifiers
            .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT)
        {
            return Step::Ignored;
        }
        if self.preview.is_none() {
            // Nothing to answer yet: Esc closes, typing goes on to the composer.
            return match key.code {
                KeyCode::Esc => {
                    self.closed = true;
                    Step::Close
                }
                KeyCode::Char(c) => Step::Typed(vec![c]),
                _ => Step::Used,
            };
        }
        if let Some(scope) = self.armed {
            match key.code {
                KeyCode::Enter => {
                    self.closed = true;
                    return Step::Confirm {
                        point: self.point.clone(),
                        scope,
                        overwrite: self.overwrite && scope.files(),
                    };
                }
                // Changing one's mind: nothing was done.
                KeyCode::Esc | KeyCode::Backspace => {
                    self.armed = None;
                    self.word.clear();
                    return Step::Used;
                }
                // A second letter: the first one began a word, not an answer.
                KeyCode::Char(c) => return self.typed(c),
                _ => {}
            }
        }
        match key.code {
            KeyCode::Char(c) => self.letter(c),
            KeyCode::Esc => {
                self.closed = true;
                Step::Close
            }
            // Enter alone picks nothing: it is where a typed message ends.
            KeyCode::Enter => Step::Used,
            code => {
                self.word.clear();
                self.move_key(code)
            }
        }
    }

    /// A letter: a pick, the overwrite toggle, or typing.
    fn letter(&mut self, c: char) -> Step {
        let scope = match c {
            'f' => Some(RewindScope::Files),
            'c' => Some(RewindScope::Conversation),
            'b' => Some(RewindScope::Both),
            'o' if !self.hand_edits().is_empty() => {
                self.overwrite = !self.overwrite;
                self.word.push(c);
                return Step::Used;
            }
            _ => None,
        };
        match scope.filter(|s| self.can(*s)) {
            Some(scope) => {
                self.armed = Some(scope);
                self.word.push(c);
                Step::Used
            }
            // A letter that answers nothing here is typing.
            None => self.typed(c),
        }
    }

    /// Moving: ←→ the file, ↑↓ PgUp PgDn Home End the diff.
    fn move_key(&mut self, code: KeyCode) -> Step {
        let page = self.page.max(1);
        match code {
            KeyCode::Left => self.select_file(-1),
            KeyCode::Right => self.select_file(1),
            KeyCode::Up => self.scroll = self.scroll.saturating_sub(1),
            KeyCode::Down => self.scroll = self.scroll.saturating_add(1),
            KeyCode::PageUp => self.scroll = self.scroll.saturating_sub(page),
            KeyCode::PageDown => self.scroll = self.scroll.saturating_add(page),
            KeyCode::Home => self.scroll = 0,
            KeyCode::End => self.scroll = usize::MAX,
            _ => return Step::Ignored,
        }
        Step::Used
    }

    /// Shows the next (`1`) or previous (`-1`) file's diff, from its top.
    fn select_file(&mut self, by: isize) {
        let count = self.file_count();
        if count == 0 {
            return;
        }
        let next = self.file.saturating_add_signed(by).min(count - 1);
        if next != self.file {
            self.file = next;
            self.scroll = 0;
        }
    }

    /// What Enter will do, said in full (`f › restore 2 files …`).
    pub fn armed_line(&self) -> Option<String> {
        let scope = self.armed?;
        let letter = match scope {
            RewindScope::Files => 'f',
            RewindScope::Conversation => 'c',
            RewindScope::Both => 'b',
        };
        let files = self.files_in_all();
        let files = format!(
            "restore {files} file{} to {}",
            if files == 1 { "" } else { "s" },
            self.label
        );
        let hand = match (self.hand_edits().len(), self.overwrite) {
            (0, _) => String::new(),
            (n, false) => format!(" (the {n} edited by hand kept)"),
            (n, true) => format!(" (OVERWRITING the {n} edited by hand)"),
        };
        let conversation = "take the conversation back (the later part stays in the old session)";
        let what = match scope {
            RewindScope::Files => format!("{files}{hand}"),
            RewindScope::Conversation => conversation.to_string(),
            RewindScope::Both => format!("{files}{hand}, and {conversation}"),
        };
        Some(format!("{letter} › {what}"))
    }
}
