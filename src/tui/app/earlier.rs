//! Scrolling back past what a resume read (issue 15): when the chat or the timeline shows its
//! top and the session file holds earlier runs, the app asks for them (an effect the event
//! loop carries out off the UI thread) and puts them above what is shown.

use std::time::Instant;

use super::{App, Command};
use crate::conversation::Role;
use crate::event::EventData;
use crate::run_model::RunModel;
use crate::session::{Entry, SessionError, Tail};
use crate::startup::Earlier;
use crate::tui::views::chat::{ChatState, NoticeKind};
use crate::tui::views::composer::shown_from_sent;
use crate::tui::views::timeline::TimelineState;

impl App {
    /// Asks for the earlier runs once the chat or the timeline shows its top, if the session
    /// file has any and none are being read.
    pub fn want_earlier(&mut self) -> Option<Command> {
        if self.loading_earlier {
            return None;
        }
        let earlier = self.earlier.clone()?;
        if !(self.chat.at_top() || self.timeline.at_top()) {
            return None;
        }
        self.loading_earlier = true;
        self.forget_trim();
        Some(Command::LoadEarlier(earlier))
    }

    /// Puts the runs read from the session file above the chat and the timeline. Their
    /// tokens are already in the status line (counted at resume), so the run model is left
    /// alone.
    pub fn prepend_earlier(&mut self, read: Result<Tail, SessionError>, now: Instant) {
        self.loading_earlier = false;
        let tail = match read {
            Ok(tail) => tail,
            Err(e) => {
                self.earlier = None;
                self.chat.push_notice(
                    NoticeKind::Error,
                    format!("The earlier runs could not be read: {e}"),
                );
                return;
            }
        };
        // Each read must start further back, or the next one would read the same runs.
        let asked = self.earlier.take();
        self.earlier = asked
            .filter(|asked| tail.has_earlier() && tail.from < asked.before)
            .map(|asked| Earlier {
                path: asked.path,
                before: tail.from,
            });
        // Damaged lines in the part read are said, as a resume says them.
        if !tail.loaded.warnings.is_empty() {
            let warnings = tail.loaded.warnings.join("\n");
            self.chat.push_notice(NoticeKind::Warn, warnings);
        }
        let entries = &tail.loaded.entries;
        let (chat, timeline) = views_of(entries, self.timeline.pricing.clone(), now);
        let runs = runs_in(entries);
        // The panes hold these runs too: the next trim lets them go.
        self.count_earlier_runs(runs);
        self.chat.insert_earlier(self.history_at, chat);
        self.timeline.prepend(timeline);
        let more = if self.earlier.is_some() {
            "; scroll up for more"
        } else {
            "; that was the start of the session"
        };
        self.flash(format!("{runs} earlier runs read{more}"), now);
    }
}

/// How many runs `entries` start.
pub(super) fn runs_in(entries: &[Entry]) -> usize {
    entries
        .iter()
        .filter(|e| matches!(e, Entry::Event(e) if matches!(e.data, EventData::RunStarted { .. })))
        .count()
}

/// A chat and a timeline of finished runs, as a resume replays them.
pub(super) fn views_of(
    entries: &[Entry],
    pricing: crate::config::pricing::Pricing,
    now: Instant,
) -> (ChatState, TimelineState) {
    let mut chat = ChatState::new();
    let mut timeline = TimelineState::new();
    timeline.pricing = pricing;
    let mut run = RunModel::new();
    let has_messages = entries.iter().any(|e| matches!(e, Entry::Message(_)));
    let mut messages = Vec::new();
    for entry in entries {
        match entry {
            Entry::Message(message) => {
                if message.role == Role::User {
                    let text = message.content.as_deref().unwrap_or("");
                    chat.push_user_shown(text, shown_from_sent(text));
                }
                messages.push(message.clone());
            }
            Entry::Event(event) => {
                if let (false, EventData::RunStarted { prompt, .. }) = (has_messages, &event.data) {
                    chat.push_user(prompt);
                }
                run.apply(event);
                timeline.on_event(event, &run);
                chat.on_event_at(event, &run, now);
            }
        }
    }
    if has_messages {
        timeline.restore_conversation(&messages);
    }
    (chat, timeline)
}
