//! A saved session or trace shown again: `--resume` replays it into the chat and timeline,
//! `taco trace` views it read-only.

use std::time::Instant;

use super::App;
use crate::conversation::Role;
use crate::event::EventData;
use crate::session::Entry;
use crate::tui::views::chat::NoticeKind;
use crate::tui::views::composer::shown_from_sent;

impl App {
    /// Shows a saved trace read-only (`taco trace FILE`): nothing is sent to a model.
    pub fn set_read_only(&mut self, what: &str) {
        self.read_only = true;
        self.composer.set_workspace(None);
        self.chat.clear();
        self.chat.push_notice(
            NoticeKind::Info,
            format!("**Viewing {what}** (read-only). Tab moves to the timeline, Enter there opens an event's payload; `/quit` or Ctrl-C twice leaves."),
        );
    }

    /// Whether this is a read-only view of a saved trace.
    pub fn is_read_only(&self) -> bool {
        self.read_only
    }

    /// Rebuilds the chat and the timeline from a saved session or trace (`--resume`,
    /// `taco trace`): user messages become user cells (trace files without messages use each
    /// run's prompt), events replay as they happened. Whatever was running when the file
    /// ended is over now.
    pub fn replay(&mut self, entries: &[Entry], now: Instant) {
        self.history_at = self.chat.len();
        let has_messages = entries.iter().any(|e| matches!(e, Entry::Message(_)));
        let running = self.running_model();
        self.replaying = has_messages;
        for entry in entries {
            match entry {
                Entry::Message(message) if message.role == Role::User => {
                    let text = message.content.as_deref().unwrap_or("");
                    // Attached files show as the chips they were sent as.
                    self.chat.push_user_shown(text, shown_from_sent(text));
                    self.original_request = Some(text.to_string());
                }
                Entry::Message(_) => {}
                Entry::Event(event) => {
                    if let (false, EventData::RunStarted { prompt, .. }) =
                        (has_messages, &event.data)
                    {
                        self.chat.push_user(prompt);
                    }
                    // Replayed events never send anything.
                    let _ = self.on_event(event, now);
                }
            }
        }
        if has_messages {
            let messages: Vec<_> = (entries.iter())
                .filter_map(|e| match e {
                    Entry::Message(m) => Some(m.clone()),
                    Entry::Event(_) => None,
                })
                .collect();
            self.timeline.restore_conversation(&messages);
        }
        self.replaying = false;
        self.keep_running_model(running);
        // Grants belong to the process that gave them: a resumed session starts with none,
        // and `/tools` must not show any.
        self.run.resumed();
        self.run.add_earlier(&self.info.earlier_usage);
        self.composer.clear_queue();
        let _ = self.end_run(now);
        self.sync_guard(now);
        self.stack.clear();
        self.chat.scroll_to_bottom();
    }
}
