//! The inline question dialog (DESIGN §5): a required parameter the model left out, typed on
//! one line, or whether the tool stack may grow past its depth limit. Answers leave as
//! `(question id, Option<String>)`; `None` abandons (a parameter) or stops (the depth limit).

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use crate::event::{InputKind, InputRequest};

mod render;

/// Indentation of the depth-limit stack stops growing here, so deep stacks keep their names.
const MAX_INDENT_LEVELS: usize = 12;

/// What a key did to the dialog.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Not a dialog key.
    Ignored,
    /// Used (typing, scrolling, the continue question).
    Used,
    /// The answer to send for the question with this id.
    Answered(String, Option<String>),
    /// These keys were typing, not an answer: they belong to the composer, and the dialog
    /// steps back.
    Typed(Vec<char>),
}

/// A question and what the user typed so far.
#[derive(Debug, Clone)]
struct Question {
    request: InputRequest,
    line: String,
    /// Cursor position in chars.
    cursor: usize,
    /// An empty Enter asked "Continue with current task? (y/n)".
    confirming: bool,
    /// First stack row shown (depth limit); `None` keeps the innermost frames in view.
    scroll: Option<usize>,
    /// A yes/no question's answer picked by its letter (`true`: yes), waiting for Enter.
    armed: Option<(bool, char)>,
}

/// The questions waiting for an answer, the first one shown.
#[derive(Debug, Default)]
pub struct InputState {
    pending: Vec<Question>,
    /// Stack rows and their room at the last render, for scrolling by key.
    rows: usize,
    room: usize,
}

impl InputState {
    /// No questions.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a question from an `input_requested` event (a repeated id is ignored).
    pub fn push(&mut self, request: InputRequest) {
        if self.pending.iter().any(|q| q.request.id == request.id) {
            return;
        }
        self.pending.push(Question {
            request,
            line: String::new(),
            cursor: 0,
            confirming: false,
            scroll: None,
            armed: None,
        });
    }

    /// Whether the dialog is showing.
    pub fn is_open(&self) -> bool {
        !self.pending.is_empty()
    }

    /// The question shown now.
    pub fn current(&self) -> Option<&InputRequest> {
        self.pending.first().map(|q| &q.request)
    }

    /// Whether the dialog asks "Continue with current task?".
    pub fn is_confirming(&self) -> bool {
        self.pending.first().is_some_and(|q| q.confirming)
    }

    /// The text typed for the current question.
    pub fn line(&self) -> &str {
        self.pending.first().map_or("", |q| q.line.as_str())
    }

    /// Takes the typed text out of the line (a slash command typed in the dialog).
    pub fn take_line(&mut self) -> String {
        match self.pending.first_mut() {
            Some(q) => {
                q.cursor = 0;
                std::mem::take(&mut q.line)
            }
            None => String::new(),
        }
    }

    /// Forgets a question (answered, here or elsewhere).
    pub fn remove(&mut self, id: &str) {
        self.pending.retain(|q| q.request.id != id);
    }

    /// Drops every question (the run ended).
    pub fn clear(&mut self) {
        self.pending.clear();
    }

    /// The yes/no answer picked and waiting for Enter (`true`: yes).
    pub fn armed(&self) -> Option<bool> {
        self.pending.first()?.armed.map(|(yes, _)| yes)
    }

    /// Forgets a picked answer (the dialog stepped back).
    pub fn disarm(&mut self) {
        if let Some(q) = self.pending.first_mut() {
            q.armed = None;
        }
    }

    /// Whether the question shown is answered yes or no (not typed).
    pub fn is_yes_no(&self) -> bool {
        self.pending.first().is_some_and(|q| q.yes_no())
    }

    /// Key hints for the status line.
    pub fn hints(&self) -> &'static [(&'static str, &'static str)] {
        match self.pending.first() {
            Some(q) if q.request.kind == InputKind::DepthLimit => {
                &[("y", "continue"), ("n", "stop"), ("Enter", "confirm")]
            }
            Some(q) if q.request.kind == InputKind::Submit => {
                &[("y", "send"), ("n", "decline"), ("Enter", "confirm")]
            }
            Some(q) if q.confirming => &[("y", "continue"), ("n", "abandon"), ("Enter", "confirm")],
            _ => &[("Enter", "send"), ("Esc", "abandon"), ("Tab", "panes")],
        }
    }

    /// Handles a key while the dialog is open.
    pub fn on_key(&mut self, key: KeyEvent) -> Outcome {
        let (rows, room) = (self.rows, self.room);
        let Some(q) = self.pending.first_mut() else {
            return Outcome::Ignored;
        };
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        if key.modifiers.contains(KeyModifiers::ALT) {
            return Outcome::Ignored;
        }
        let outcome = if q.yes_no() {
            match yes_no_key(q, key.code, ctrl) {
                Some(outcome) => outcome,
                None if q.request.kind == InputKind::DepthLimit => {
                    depth_key(q, key.code, rows, room)
                }
                None => Outcome::Ignored,
            }
        } else {
            parameter_key(q, key.code, ctrl)
        };
        if let Outcome::Answered(id, _) = &outcome {
            let id = id.clone();
            self.remove(&id);
        }
        outcome
    }

    /// Takes pasted text: into the parameter line, newlines as spaces. `false` when no
    /// parameter is asked for.
    pub fn on_paste(&mut self, text: &str) -> bool {
        let Some(q) = self.pending.first_mut() else {
            return false;
        };
        if !matches!(q.request.kind, InputKind::Parameter | InputKind::Plan) {
            return false;
        }
        // Pasting means answering: leave the continue question.
        q.confirming = false;
        let text = text.replace("\r\n", "\n");
        for c in text.chars() {
            match c {
                '\n' | '\r' | '\t' => q.insert(' '),
                c if c.is_control() => {}
                c => q.insert(c),
            }
        }
        true
    }
}

impl Question {
    /// Answered with `y` or `n` (and Enter), not typed: the depth limit, a form's
    /// submission, and "Continue with current task?".
    fn yes_no(&self) -> bool {
        self.confirming || matches!(self.request.kind, InputKind::DepthLimit | InputKind::Submit)
    }

    /// What yes or no does to this question.
    fn decide(&mut self, yes: bool) -> Outcome {
        let id = self.request.id.clone();
        match self.request.kind {
            // Back to the question, or abandon the task.
            InputKind::Parameter if yes => {
                self.confirming = false;
                Outcome::Used
            }
            InputKind::DepthLimit | InputKind::Submit if yes => {
                Outcome::Answered(id, Some("y".to_string()))
            }
            _ => Outcome::Answered(id, None),
        }
    }

    fn insert(&mut self, c: char) {
        let at = byte_at(&self.line, self.cursor);
        self.line.insert(at, c);
        self.cursor += 1;
    }
}

/// Keys of a parameter question while typing.
fn parameter_key(q: &mut Question, code: KeyCode, ctrl: bool) -> Outcome {
    match code {
        KeyCode::Enter => {
            let text = q.line.trim();
            if text.is_empty() {
                q.confirming = true;
                return Outcome::Used;
            }
            Outcome::Answered(q.request.id.clone(), Some(text.to_string()))
        }
        KeyCode::Esc => Outcome::Answered(q.request.id.clone(), None),
        KeyCode::Backspace if q.cursor > 0 => {
            q.cursor -= 1;
            let at = byte_at(&q.line, q.cursor);
            q.line.remove(at);
            Outcome::Used
        }
        KeyCode::Delete if q.cursor < q.line.chars().count() => {
            let at = byte_at(&q.line, q.cursor);
            q.line.remove(at);
            Outcome::Used
        }
        KeyCode::Backspace | KeyCode::Delete => Outcome::Used,
        KeyCode::Left => {
            q.cursor = q.cursor.saturating_sub(1);
            Outcome::Used
        }
        KeyCode::Right => {
            q.cursor = (q.cursor + 1).min(q.line.chars().count());
            Outcome::Used
        }
        KeyCode::Home => {
            q.cursor = 0;
            Outcome::Used
        }
        KeyCode::End => {
            q.cursor = q.line.chars().count();
            Outcome::Used
        }
        KeyCode::Char('u') if ctrl => {
            q.line.clear();
            q.cursor = 0;
            Outcome::Used
        }
        KeyCode::Char(c) if !ctrl && !c.is_control() => {
            q.insert(c);
            Outcome::Used
        }
        _ => Outcome::Ignored,
    }
}

/// The keys of a yes/no question (issue 26): `y` or `n` picks, Enter carries it out, Esc
/// says no at once; any other letter, or a letter after the pick, is typing and goes back to
/// the composer. `None`: not one of these keys (the depth limit scrolls with the rest).
fn yes_no_key(q: &mut Question, code: KeyCode, ctrl: bool) -> Option<Outcome> {
    if ctrl {
        return Some(Outcome::Ignored);
    }
    if let Some((yes, letter)) = q.armed {
        match code {
            KeyCode::Enter => {
                q.armed = None;
                return Some(q.decide(yes));
            }
            KeyCode::Esc | KeyCode::Backspace => {
                q.armed = None;
                return Some(Outcome::Used);
            }
            KeyCode::Char(c) => {
                q.armed = None;
                return Some(Outcome::Typed(vec![letter, c]));
            }
            _ => {}
        }
    }
    Some(match code {
        KeyCode::Char(c @ ('y' | 'Y')) => {
            q.armed = Some((true, c));
            Outcome::Used
        }
        KeyCode::Char(c @ ('n' | 'N')) => {
            q.armed = Some((false, c));
            Outcome::Used
        }
        KeyCode::Char(c) => Outcome::Typed(vec![c]),
        // Saying no is never a harm done by accident.
        KeyCode::Esc => q.decide(false),
        // Enter alone picks nothing: it is where a typed message ends.
        KeyCode::Enter | KeyCode::Backspace => Outcome::Used,
        _ => return None,
    })
}

/// Scrolling the depth-limit question's stack.
fn depth_key(q: &mut Question, code: KeyCode, rows: usize, room: usize) -> Outcome {
    let bottom = rows.saturating_sub(room);
    let top = q.scroll.unwrap_or(bottom).min(bottom);
    let top = match code {
        KeyCode::Up => top.saturating_sub(1),
        KeyCode::Down => top + 1,
        KeyCode::PageUp => top.saturating_sub(room.max(1)),
        KeyCode::PageDown => top + room.max(1),
        KeyCode::Home => 0,
        KeyCode::End => bottom,
        _ => return Outcome::Ignored,
    };
    // Back at the bottom: keep the innermost frames in view again.
    q.scroll = (top < bottom).then_some(top);
    Outcome::Used
}

/// Byte offset of char `n` (the end when past it).
fn byte_at(text: &str, n: usize) -> usize {
    text.char_indices().nth(n).map_or(text.len(), |(i, _)| i)
}

#[cfg(test)]
mod tests;
