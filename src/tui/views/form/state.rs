//! The form's state: what each field holds, where the cursor is, which reasons show. Keys go
//! in, a [`Step`] comes out (the answer is a value, sent by the overlay). Accept is refused
//! while a field is invalid: the cursor goes to the first, and every reason shows.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use serde_json::{Map, Value};

use crate::event::InputRequest;
use crate::form::{Checker, Field, FieldKind, FormSpec, parse_number};
use crate::tools::AskReply;

/// Characters a text field holds at most (a paste is cut there).
pub const MAX_ENTRY: usize = 10_000;

/// What a field holds as it is being filled in.
#[derive(Debug, Clone, PartialEq)]
pub enum Entry {
    /// Typed text (a text or number field).
    Text(String),
    /// Yes, no, or not set.
    Toggle(Option<bool>),
    /// The picked option, if any.
    Choice(Option<usize>),
    /// The picked options, and the option the cursor is on.
    Multi {
        /// One per option.
        picked: Vec<bool>,
        /// The option the cursor is on.
        at: usize,
    },
}

/// The buttons under the fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Button {
    /// Send the content.
    Accept,
    /// Say no to the server.
    Decline,
    /// Walk away (the server hears `cancel`).
    Cancel,
}

impl Button {
    /// The buttons, in order.
    pub const ALL: [Self; 3] = [Self::Accept, Self::Decline, Self::Cancel];

    /// Its word.
    pub fn word(self) -> &'static str {
        match self {
            Self::Accept => "Accept",
            Self::Decline => "Decline",
            Self::Cancel => "Cancel",
        }
    }
}

/// What a key did.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// Taken.
    Used,
    /// Not a key of the form.
    Ignored,
    /// Accept was refused: a field is invalid (the cursor moved to it).
    Refused,
    /// The form is answered.
    Done(AskReply),
}

/// One form being filled in.
#[derive(Debug)]
pub struct FormState {
    /// The question (its id names the answer; its prompt is the server's message).
    pub request: InputRequest,
    /// The fields.
    pub spec: FormSpec,
    checker: Checker,
    entries: Vec<Entry>,
    /// Fields the user left or changed: their reasons show.
    touched: Vec<bool>,
    /// Accept was tried: every reason shows.
    tried: bool,
    /// The field the cursor is on; `fields.len()` is the row of buttons.
    at: usize,
    /// The button picked on that row.
    button: Button,
    /// The first body row shown (the view scrolls to keep the cursor in sight).
    pub(super) top: usize,
}

/// A value as a text field shows it: a string as it is, anything else as JSON.
fn as_text(value: &Value) -> String {
    match value {
        Value::String(text) => text.chars().take(MAX_ENTRY).collect(),
        other => other.to_string(),
    }
}

/// What `field` starts with: its default, where it fits.
fn initial(field: &Field) -> Entry {
    let default = field.default.as_ref();
    match &field.kind {
        FieldKind::Text { .. } | FieldKind::Number { .. } => {
            Entry::Text(default.map(as_text).unwrap_or_default())
        }
        FieldKind::Toggle => Entry::Toggle(default.and_then(Value::as_bool)),
        FieldKind::Choice { options } => {
            Entry::Choice(default.and_then(|d| options.iter().position(|o| o.value == *d)))
        }
        FieldKind::Multi { options, .. } => {
            let chosen = default.and_then(Value::as_array);
            Entry::Multi {
                picked: (options.iter())
                    .map(|o| chosen.is_some_and(|c| c.contains(&o.value)))
                    .collect(),
                at: 0,
            }
        }
    }
}

impl FormState {
    /// The form a `form` question asks; `None` when it carries none.
    pub fn new(request: InputRequest) -> Option<Self> {
        let spec = request.form.clone()?;
        let entries: Vec<Entry> = spec.fields.iter().map(initial).collect();
        Some(Self {
            checker: Checker::new(&spec),
            touched: vec![false; entries.len()],
            entries,
            spec,
            request,
            tried: false,
            at: 0,
            button: Button::Accept,
            top: 0,
        })
    }

    /// The field the cursor is on (`None`: the buttons).
    pub fn at(&self) -> Option<usize> {
        (self.at < self.spec.fields.len()).then_some(self.at)
    }

    /// The button picked (it has the cursor when [`FormState::at`] is `None`).
    pub fn button(&self) -> Button {
        self.button
    }

    /// What field `i` holds.
    pub fn entry(&self, i: usize) -> Option<&Entry> {
        self.entries.get(i)
    }

    /// The value field `i` would send (`None`: left out), or why it cannot be read.
    pub fn value(&self, i: usize) -> Result<Option<Value>, String> {
        let (Some(field), Some(entry)) = (self.spec.fields.get(i), self.entries.get(i)) else {
            return Ok(None);
        };
        Ok(match (entry, &field.kind) {
            (Entry::Text(text), _) if text.is_empty() => None,
            (Entry::Text(text), FieldKind::Number { integer, .. }) => {
                Some(parse_number(text, *integer)?)
            }
            (Entry::Text(text), _) => Some(Value::String(text.clone())),
            (Entry::Toggle(on), _) => on.map(Value::Bool),
            (Entry::Choice(picked), FieldKind::Choice { options }) => {
                picked.and_then(|p| options.get(p)).map(|o| o.value.clone())
            }
            (Entry::Multi { picked, .. }, FieldKind::Multi { options, .. }) => {
                let chosen: Vec<Value> = (options.iter().zip(picked))
                    .filter(|(_, on)| **on)
                    .map(|(o, _)| o.value.clone())
                    .collect();
                (!chosen.is_empty()).then_some(Value::Array(chosen))
            }
            _ => None,
        })
    }

    /// Why field `i` does not hold, if it does not.
    pub fn error(&self, i: usize) -> Option<String> {
        let field = self.spec.fields.get(i)?;
        match self.value(i) {
            Err(reason) => Some(reason),
            Ok(None) if field.required => Some("required".to_string()),
            Ok(None) => None,
            Ok(Some(value)) => self.checker.check(i, field, &value).err(),
        }
    }

    /// The reason shown beside field `i`: once it was left or changed, or Accept tried.
    pub fn shown_error(&self, i: usize) -> Option<String> {
        let seen = self.tried || self.touched.get(i).copied().unwrap_or(false);
        seen.then(|| self.error(i)).flatten()
    }

    /// How many fields do not hold.
    pub fn invalid(&self) -> usize {
        (0..self.spec.fields.len())
            .filter(|i| self.error(*i).is_some())
            .count()
    }

    /// Whether Accept was tried (and refused).
    pub fn tried(&self) -> bool {
        self.tried
    }

    /// The content Accept sends: the fields that hold a value (empty ones are left out).
    pub fn content(&self) -> Result<Map<String, Value>, usize> {
        let mut content = Map::new();
        for (i, field) in self.spec.fields.iter().enumerate() {
            if self.error(i).is_some() {
                return Err(i);
            }
            if let Ok(Some(value)) = self.value(i) {
                content.insert(field.name.clone(), value);
            }
        }
        Ok(content)
    }

    /// Moves the cursor to row `to` (a field or the buttons), marking the field it leaves.
    fn go(&mut self, to: usize) {
        if let Some(left) = self.touched.get_mut(self.at) {
            *left = true;
        }
        self.at = to.min(self.spec.fields.len());
    }

    /// Presses the picked button.
    fn press(&mut self) -> Step {
        match self.button {
            Button::Accept => match self.content() {
                Ok(content) => Step::Done(AskReply::Accept(content)),
                Err(first) => {
                    self.tried = true;
                    self.go(first);
                    Step::Refused
                }
            },
            Button::Decline => Step::Done(AskReply::Decline),
            Button::Cancel => Step::Done(AskReply::Cancel),
        }
    }

    /// Takes a key.
    pub fn on_key(&mut self, key: KeyEvent) -> Step {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let rows = self.spec.fields.len() + 1;
        match key.code {
            KeyCode::Esc => return Step::Done(AskReply::Cancel),
            KeyCode::Tab | KeyCode::Down => {
                self.go((self.at + 1) % rows);
                return Step::Used;
            }
            KeyCode::BackTab | KeyCode::Up => {
                self.go((self.at + rows - 1) % rows);
                return Step::Used;
            }
            _ => {}
        }
        let Some(i) = self.at() else {
            return self.button_key(key);
        };
        if key.code == KeyCode::Enter {
            self.go(i + 1);
            return Step::Used;
        }
        let field = &self.spec.fields[i];
        let options = match &field.kind {
            FieldKind::Choice { options } | FieldKind::Multi { options, .. } => options.len(),
            _ => 0,
        };
        let required = field.required;
        let Some(entry) = self.entries.get_mut(i) else {
            return Step::Ignored;
        };
        let used = edit(entry, key, ctrl, options, required);
        if used {
            self.touched[i] = true;
            Step::Used
        } else {
            Step::Ignored
        }
    }

    /// A key on the row of buttons: ←→ or a letter picks, Enter presses.
    fn button_key(&mut self, key: KeyEvent) -> Step {
        let at = Button::ALL
            .iter()
            .position(|b| *b == self.button)
            .unwrap_or(0);
        match key.code {
            KeyCode::Enter => return self.press(),
            KeyCode::Left => self.button = Button::ALL[(at + 2) % 3],
            KeyCode::Right => self.button = Button::ALL[(at + 1) % 3],
            KeyCode::Char('a') => self.button = Button::Accept,
            KeyCode::Char('d') => self.button = Button::Decline,
            KeyCode::Char('c') => self.button = Button::Cancel,
            _ => return Step::Ignored,
        }
        Step::Used
    }

    /// Pasted text into the text field under the cursor, on one line; `false` elsewhere.
    pub fn on_paste(&mut self, text: &str) -> bool {
        let Some(Entry::Text(line)) = self.at().and_then(|i| self.entries.get_mut(i)) else {
            return false;
        };
        let room = MAX_ENTRY.saturating_sub(line.chars().count());
        line.extend(
            text.chars()
                .map(|c| if c.is_control() { ' ' } else { c })
                .take(room),
        );
        if let Some(i) = self.at() {
            self.touched[i] = true;
        }
        true
    }
}

/// Changes `entry` by `key`: typing into text, Space or ←→ for a toggle or a choice (an
/// optional choice can be left unpicked), ←→ and Space for the options of a multi-select.
fn edit(entry: &mut Entry, key: KeyEvent, ctrl: bool, options: usize, required: bool) -> bool {
    match entry {
        Entry::Text(text) => match key.code {
            KeyCode::Char('u') if ctrl => {
                text.clear();
                true
            }
            KeyCode::Char(c) if !ctrl && text.chars().count() < MAX_ENTRY => {
                text.push(c);
                true
            }
            KeyCode::Backspace => {
                text.pop();
                true
            }
            _ => false,
        },
        Entry::Toggle(on) => {
            *on = match key.code {
                KeyCode::Char(' ') | KeyCode::Left | KeyCode::Right => match on {
                    None | Some(false) => Some(true),
                    Some(true) => Some(false),
                },
                KeyCode::Char('y') => Some(true),
                KeyCode::Char('n') => Some(false),
                KeyCode::Backspace | KeyCode::Delete if !required => None,
                _ => return false,
            };
            true
        }
        Entry::Choice(picked) => {
            // Positions: the options, and "none" after them when it may stay empty.
            let slots = options + usize::from(!required);
            if slots == 0 {
                return false;
            }
            let next = match (key.code, *picked) {
                (KeyCode::Right | KeyCode::Char(' '), None) => 0,
                (KeyCode::Left, None) => options.saturating_sub(1),
                (KeyCode::Right | KeyCode::Char(' '), Some(now)) => (now + 1) % slots,
                (KeyCode::Left, Some(now)) => (now + slots - 1) % slots,
                _ => return false,
            };
            *picked = (next < options).then_some(next);
            true
        }
        Entry::Multi { picked, at } => match key.code {
            KeyCode::Right if options > 0 => {
                *at = (*at + 1) % options;
                true
            }
            KeyCode::Left if options > 0 => {
                *at = (*at + options - 1) % options;
                true
            }
            KeyCode::Char(' ') => {
                if let Some(on) = picked.get_mut(*at) {
                    *on = !*on;
                }
                true
            }
            _ => false,
        },
    }
}
