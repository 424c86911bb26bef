//! The dialog gate (issue 26): keys meant for the composer never answer a dialog, at any
//! typing speed and whenever the dialog opens. Two rules, neither a typing-speed window:
//!
//! 1. **A dialog takes keys only once the user is with it.** A dialog answered by a letter
//!    opens *waiting* when the user has an unsent message or typed in the last 2 s
//!    (`[ui] dialog_guard_ms`); keys then go on as if it were not there (to the composer),
//!    and it says so. It takes keys once the user moves to it (Tab, a click) or, with nothing
//!    unsent, after that quiet — a wait it shows as a countdown. An unsent message never
//!    lapses, so a typist who pauses mid-sentence for any time keeps typing into the
//!    composer. A dialog that takes typed text (a missing parameter, a form's field) takes
//!    keys only when the user moves to it, or when it follows straight on from a dialog the
//!    user just answered (the next field of a form): typed text could be a message either way.
//! 2. **An answer is a letter and then Enter** (the dialogs own that part: `choice.rs` in
//!    `views/approval/`, `views/input.rs`). A letter only picks; any other printable key
//!    after it, or a letter that answers nothing, is typing: it and the picked letter go to
//!    the composer and the dialog steps back to waiting.
//!
//! So a sentence reaches the composer whole: typed before the dialog, it keeps the dialog
//! waiting; typed at a dialog that took keys, its second key gives it back. What is left is
//! a message of one answer letter and Enter typed at a dialog that was on screen with
//! nothing unsent. Pure state with injected time, so tests can walk the clock.

use std::time::{Duration, Instant};

pub use crate::tui::views::gate::Gate;

/// Longest quiet honoured: a config typo must not lock dialogs for hours (or overflow).
const MAX_QUIET: Duration = Duration::from_secs(10);

/// A dialog that opens this soon after the user answered the one before follows on from it
/// (the next field of a form, the next call of a batch): the user is with the dialogs.
const FOLLOW_ON: Duration = Duration::from_millis(1000);

/// The dialog on screen.
#[derive(Debug)]
struct Shown {
    /// A tagged approval or question id.
    id: String,
    /// It takes typed text (Tab moves to it; quiet does not).
    text: bool,
    /// The user is with it: it takes keys.
    engaged: bool,
}

/// Which dialog shows, whether the user is with it, and when they last typed.
#[derive(Debug)]
pub(super) struct DialogGuard {
    quiet: Duration,
    shown: Option<Shown>,
    /// The last key that typed into the composer (or a pane), not into a dialog.
    last_typed: Option<Instant>,
    /// When a dialog the user was with went away (answered, most likely).
    left_engaged: Option<Instant>,
    /// Which dialog that was.
    left_id: Option<String>,
}

impl DialogGuard {
    /// A gate that lets a dialog take keys after `quiet` without typing (zero: at once when
    /// nothing is unsent).
    pub(super) fn new(quiet: Duration) -> Self {
        Self {
            quiet: quiet.min(MAX_QUIET),
            shown: None,
            last_typed: None,
            left_engaged: None,
            left_id: None,
        }
    }

    /// Whether a letter-answered dialog would take keys by itself at `now` (`draft`: the
    /// composer holds unsent text).
    fn ready(&self, now: Instant, draft: bool) -> bool {
        !draft && self.quiet_left(now).is_none()
    }

    /// How much quiet is still needed, if any.
    fn quiet_left(&self, now: Instant) -> Option<Duration> {
        let ready = self.last_typed?.checked_add(self.quiet)?;
        let left = ready.saturating_duration_since(now);
        (!left.is_zero()).then_some(left)
    }

    /// Whether a dialog opening at `now` follows on from one the user just answered, with
    /// no typing since.
    fn follows_on(&self, now: Instant) -> bool {
        self.left_engaged.is_some_and(|left| {
            now.saturating_duration_since(left) <= FOLLOW_ON
                && self.last_typed.is_none_or(|typed| typed <= left)
        })
    }

    /// Notes which dialog is on screen (`id`, and whether it takes typed text); a
    /// different one takes keys at once only if the user is not typing.
    pub(super) fn show(&mut self, shown: Option<(String, bool)>, now: Instant, draft: bool) {
        let same = match (&shown, &self.shown) {
            (Some((id, _)), Some(current)) => *id == current.id,
            (None, None) => true,
            _ => false,
        };
        if same {
            return;
        }
        // The same call asked again (its file changed after the answer) follows on from
        // nothing: it is judged as a new dialog.
        let again = (shown.as_ref().zip(self.left_id.as_ref())).is_some_and(|((id, _), l)| id == l);
        if let Some(left) = self.shown.as_ref().filter(|s| s.engaged) {
            self.left_engaged = Some(now);
            self.left_id = Some(left.id.clone());
        }
        let follows = !again && self.follows_on(now);
        let ready = self.ready(now, draft);
        self.shown = shown.map(|(id, text)| Shown {
            engaged: follows || (!text && ready),
            id,
            text,
        });
    }

    /// Where the dialog on screen stands at `now`.
    pub(super) fn gate(&self, now: Instant, draft: bool) -> Gate {
        match &self.shown {
            None => Gate::Open,
            Some(shown) if shown.engaged => Gate::Open,
            Some(_) if draft => Gate::Draft,
            Some(shown) if shown.text => Gate::Tab,
            Some(_) => match self.quiet_left(now) {
                Some(left) => Gate::Quiet(left),
                None => Gate::Open,
            },
        }
    }

    /// Takes a key press at `now`: `true` while a dialog shows that does not take keys (the
    /// key goes on as if it were not there). `typing` keys that go past a dialog (or are
    /// typed with none) start the quiet again.
    pub(super) fn holds(&mut self, now: Instant, typing: bool, draft: bool) -> bool {
        let ready = self.ready(now, draft);
        let held = match &mut self.shown {
            Some(shown) => {
                // The wait ended: the dialog takes keys from now on, typed into or not.
                shown.engaged |= !shown.text && ready;
                !shown.engaged
            }
            None => false,
        };
        let with_dialog = self.shown.is_some() && !held;
        if typing && !with_dialog {
            self.last_typed = Some(now);
        }
        held
    }

    /// The user moved to the dialog (Tab, a click): it takes keys now. `false` when none
    /// was waiting.
    pub(super) fn engage(&mut self) -> bool {
        match &mut self.shown {
            Some(shown) if !shown.engaged => {
                shown.engaged = true;
                true
            }
            _ => false,
        }
    }

    /// The dialog gave typing back at `now`: it waits again, as if it had opened now.
    pub(super) fn step_back(&mut self, now: Instant) {
        self.last_typed = Some(now);
        if let Some(shown) = &mut self.shown {
            shown.engaged = false;
        }
    }
}

#[cfg(test)]
mod tests;
