//! Answering the approval dialog in two steps (issue 26): a letter picks an answer and Enter
//! carries it out. A letter alone decides nothing, so a word typed at the dialog never
//! approves anything: its second key is typing, and both go back to the composer
//! ([`Outcome::Typed`]). The picked answer says in full what it will do before Enter.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::{ApprovalState, Outcome, Pending};
use crate::event::{Confinement, Scope};
use crate::orchestrator::approval::ApprovalAnswer;
use crate::tui::safe::escape;
use crate::tui::views::keyline::{KeyHint, hint};

/// An answer the dialog can give, picked by its letter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Choice {
    /// `y`: this call, once.
    Once,
    /// `t`: this tool for the rest of the request.
    Turn,
    /// `a`: this tool for the rest of the session.
    Session,
    /// `p`: shell commands of this shape for the rest of the session.
    Prefix,
    /// `n`: deny this call (a reason may follow).
    Deny,
    /// `Y`: every call of the batch, once.
    ApproveAll,
    /// `N`: deny every call of the batch (a reason may follow).
    DenyAll,
}

/// A picked answer waiting for Enter, and the letter that picked it (given back as typing).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Armed {
    pub choice: Choice,
    pub letter: char,
}

impl ApprovalState {
    /// The answer `letter` picks for the current call, if it is one of its keys.
    fn choice_for(&self, letter: char) -> Option<Choice> {
        let current = self.current()?;
        let grants = !current.once_only();
        match letter {
            'y' => Some(Choice::Once),
            't' if grants => Some(Choice::Turn),
            'a' if grants => Some(Choice::Session),
            'p' if self.offered_prefix().is_some() => Some(Choice::Prefix),
            'n' => Some(Choice::Deny),
            'Y' if self.offers_approve_all() => Some(Choice::ApproveAll),
            'N' if self.offers_batch() => Some(Choice::DenyAll),
            _ => None,
        }
    }

    /// The answer picked and waiting for Enter.
    pub fn armed(&self) -> Option<Choice> {
        self.armed.map(|a| a.choice)
    }

    /// Keys while no reason is typed: pick, confirm, step back, scroll.
    pub(super) fn answer_key(&mut self, key: KeyEvent) -> Outcome {
        if key
            .modifiers
            .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT)
        {
            return Outcome::Ignored;
        }
        if let Some(armed) = self.armed {
            match key.code {
                KeyCode::Enter => {
                    self.armed = None;
                    return self.carry_out(armed.choice);
                }
                // Changing one's mind: nothing was decided.
                KeyCode::Esc | KeyCode::Backspace => {
                    self.armed = None;
                    return Outcome::Used;
                }
                // A second letter: the first one began a word, not an answer.
                KeyCode::Char(c) => {
                    self.armed = None;
                    return Outcome::Typed(vec![armed.letter, c]);
                }
                _ => {}
            }
        }
        match key.code {
            KeyCode::Char(c) => match self.choice_for(c) {
                Some(choice) => {
                    self.armed = Some(Armed { choice, letter: c });
                    Outcome::Used
                }
                // A letter that answers nothing here is typing.
                None => Outcome::Typed(vec![c]),
            },
            // Denying is never a harm done by accident: Esc denies at once.
            KeyCode::Esc => {
                let Some(current) = self.current() else {
                    return Outcome::Ignored;
                };
                let id = current.id.clone();
                self.decide(vec![(id, ApprovalAnswer::deny(None))])
            }
            // Enter alone picks nothing: it is where a typed message ends.
            KeyCode::Enter => Outcome::Used,
            KeyCode::Up => {
                self.scroll = self.scroll.saturating_sub(1);
                Outcome::Used
            }
            KeyCode::Down => {
                self.scroll = self.scroll.saturating_add(1);
                Outcome::Used
            }
            KeyCode::PageUp => {
                self.scroll = self.scroll.saturating_sub(10);
                Outcome::Used
            }
            KeyCode::PageDown => {
                self.scroll = self.scroll.saturating_add(10);
                Outcome::Used
            }
            _ => Outcome::Ignored,
        }
    }

    /// Enter on a picked answer.
    fn carry_out(&mut self, choice: Choice) -> Outcome {
        let Some(current) = self.current() else {
            return Outcome::Ignored;
        };
        let id = current.id.clone();
        match choice {
            Choice::Once => self.approve(Scope::Once),
            Choice::Turn => self.approve(Scope::Turn),
            Choice::Session => self.approve(Scope::Session),
            Choice::Prefix => match self.offered_prefix() {
                Some(prefix) => {
                    let mut answer = ApprovalAnswer::approve(Scope::Once);
                    answer.prefix = Some(prefix);
                    self.decide(vec![(id, answer)])
                }
                None => Outcome::Ignored,
            },
            Choice::Deny => {
                self.reason = Some(String::new());
                Outcome::Used
            }
            Choice::ApproveAll => self.approve_all(),
            Choice::DenyAll => {
                self.reason = Some(String::new());
                self.reason_for_all = true;
                Outcome::Used
            }
        }
    }

    /// What a picked answer will do, in full (`a › allow every shell call …`), shown over
    /// the keys while it waits for Enter.
    pub(super) fn armed_line(&self, choice: Choice) -> String {
        let letter = self.armed.map_or(' ', |a| a.letter);
        let what = match self.current() {
            Some(current) => self.describe(choice, current),
            None => String::new(),
        };
        format!("{letter} › {what}")
    }

    /// The keys while an answer waits for Enter.
    pub(super) fn armed_hints() -> Vec<KeyHint> {
        vec![
            hint("Enter", "do it"),
            hint("Esc", "back"),
            hint("typing", "goes to your message").or("→ message"),
        ]
    }

    /// What `choice` does to `current`, said plainly.
    fn describe(&self, choice: Choice, current: &Pending) -> String {
        let name = escape(&crate::mcp::names::display(&current.name)).replace('\n', "^J");
        let outside = current.sandbox == Some(Confinement::Unsandboxed);
        match choice {
            Choice::Once if outside => "run it OUTSIDE the sandbox, this once".to_string(),
            Choice::Once => "approve this call once".to_string(),
            Choice::Turn => format!("allow {name} until this request ends"),
            Choice::Session => format!("allow every {name} call for the rest of the session"),
            Choice::Prefix => match self.offered_prefix() {
                Some(grant) => format!(
                    "for the rest of the session, {}",
                    escape(&grant.hint()).replace('\n', "^J")
                ),
                None => String::new(),
            },
            Choice::Deny => "deny it (a reason next, optional)".to_string(),
            Choice::ApproveAll => {
                let n = self.approvable_in_batch();
                format!("approve all {n} calls of the batch, once each")
            }
            Choice::DenyAll => {
                let n = self.batch_len();
                format!("deny all {n} calls of the batch")
            }
        }
    }
}
