//! What the app says about itself: read-only questions the loop, the tests and the views ask.

use std::time::Instant;

use super::{App, FLASH_FOR};
use crate::event::InputRequest;
use crate::tui::layout::Focus;
use crate::tui::overlay::{ApprovalDialog, Place, QuestionDialog};
use crate::tui::views::composer::PopupKind;
use crate::tui::views::help::Help;
use crate::tui::views::status::Activity;

impl App {
    /// Whether the user asked to leave.
    pub fn should_quit(&self) -> bool {
        self.quit
    }

    /// The focused pane.
    pub fn focus(&self) -> Focus {
        self.focus
    }

    /// What the status line says is happening.
    pub fn activity(&self) -> Activity {
        self.activity
    }

    /// The run model the panes read every call's state and clock from.
    pub fn run_model(&self) -> &crate::run_model::RunModel {
        &self.run
    }

    /// Whether a request is running.
    pub fn is_busy(&self) -> bool {
        self.busy
    }

    /// Prompts waiting for the running request to end.
    pub fn queued(&self) -> impl Iterator<Item = &str> {
        self.composer.queued()
    }

    /// The text in the composer.
    pub fn composer_text(&self) -> String {
        self.composer.text()
    }

    /// The composer's popup when it shows: what it lists, its choices best first and the
    /// selected one.
    pub fn popup(&mut self) -> Option<(PopupKind, Vec<String>, usize)> {
        self.composer.popup()
    }

    /// Whether the file list for `@` is still being made (takes it when it is done).
    pub fn listing_files(&mut self) -> bool {
        self.composer.listing_files()
    }

    /// The status line's word when shell commands run unconfined: `sandbox off` (chosen)
    /// or `no sandbox` (the kernel cannot).
    pub fn unconfined(&self) -> Option<&'static str> {
        match self.info.sandbox.as_ref()?.state() {
            crate::sandbox::State::Enforced => None,
            crate::sandbox::State::Off => Some("sandbox off"),
            crate::sandbox::State::Unavailable(_) => Some("no sandbox"),
        }
    }

    /// Whether the approval dialog is open (it shows before any question).
    pub fn approval_open(&self) -> bool {
        self.overlays.get::<ApprovalDialog>().is_some()
    }

    /// Whether the question dialog is open (a missing parameter or the depth limit).
    pub fn question_open(&self) -> bool {
        self.overlays.get::<QuestionDialog>().is_some()
    }

    /// The question the dialog asks now.
    pub fn question(&self) -> Option<&InputRequest> {
        self.overlays.get::<QuestionDialog>()?.current()
    }

    /// Whether the question dialog asks "Continue with current task?".
    pub fn question_confirming(&self) -> bool {
        (self.overlays.get::<QuestionDialog>()).is_some_and(QuestionDialog::is_confirming)
    }

    /// Whether the dialog on screen takes keys, and if not, why (until then keys go to the
    /// composer).
    pub fn dialog_gate(&self, now: Instant) -> crate::tui::views::gate::Gate {
        self.guard.gate(now, !self.composer.is_empty())
    }

    /// Which answer a letter picked in the dialog on screen, waiting for Enter.
    pub fn dialog_armed(&self) -> bool {
        (self.overlays.get::<ApprovalDialog>()).is_some_and(|d| d.armed().is_some())
            || (self.overlays.get::<QuestionDialog>()).is_some_and(|d| d.armed().is_some())
    }

    /// Whether the rewind overlay is open.
    pub fn rewind_open(&self) -> bool {
        (self.overlays.get::<crate::tui::views::rewind::RewindView>()).is_some()
    }

    /// Whether the help overlay shows.
    pub fn help_open(&self) -> bool {
        self.overlays.get::<Help>().is_some()
    }

    /// Whether the timeline shows an event's detail view instead of its list.
    pub fn detail_open(&self) -> bool {
        self.overlays.is_open(Place::Pane(Focus::Timeline))
    }

    /// Whether something moves on screen by itself (spinner, elapsed times, fading frames).
    pub fn needs_tick(&self, now: Instant) -> bool {
        self.busy
            || self.stack.is_animating(now)
            // `/tools` ages its grants as time passes.
            || self.overlays.get::<crate::tui::views::grants::ToolsView>().is_some()
            // The dialog's countdown, and the frame where its keys come alive.
            || matches!(self.dialog_gate(now), crate::tui::views::gate::Gate::Quiet(_))
            // The `@` finder's file list, shown when it is done.
            || self.composer.is_listing()
            || self
                .flash
                .as_ref()
                .is_some_and(|(_, at)| now.duration_since(*at) < FLASH_FOR)
    }
}
