//! Switching without restarting: `/model` and `/provider` (a picker of the configured
//! providers and their models, filled in as servers answer; the switch applies to the next
//! request) and `/resume` (a picker of saved sessions; the TUI then reopens on the chosen one).

use std::time::Instant;

use super::{App, Command};
use crate::event::{Event, EventData, Listed};
use crate::orchestrator::switch::ProviderModels;
use crate::orchestrator::task::Op;
use crate::session::Summary;
use crate::text::{human, shorten_start};
use crate::tui::views::chat::NoticeKind;
use crate::tui::views::picker::{Pick, Picker, Row, age};

/// The pickers' topics: which one a listing fills.
const MODELS: &str = "models";
const PROVIDERS: &str = "providers";
const SESSIONS: &str = "sessions";

impl App {
    /// Keeps the status line's provider and model with what the events say is in use, and
    /// fills an open picker with what was listed.
    pub(super) fn switch_event(&mut self, event: &Event) {
        let (provider, model) = match &event.data {
            EventData::RunStarted {
                provider, model, ..
            } => (provider, model),
            EventData::ModelSwitched(chosen) => {
                // A provider picked automatically is no longer what is running.
                self.info.auto_reason = None;
                (&chosen.provider, &chosen.model)
            }
            EventData::Listed(listed) => return self.listed(listed, event.timestamp),
            _ => return,
        };
        self.info.provider.clone_from(provider);
        self.info.model.clone_from(model);
    }

    /// Fills the open picker with what was listed for it (a late listing finds none).
    fn listed(&mut self, listed: &Listed, now: u64) {
        match listed {
            Listed::Models {
                provider,
                models,
                error,
            } => {
                let Some(known) = self.info.providers.iter().find(|p| &p.name == provider) else {
                    return;
                };
                let rows = model_rows(known, &self.info, Some((models, error.as_deref())));
                if let Some(picker) = self.open_picker(MODELS) {
                    picker.set_group(provider, rows);
                }
            }
            Listed::Sessions {
                sessions,
                problems,
                open,
            } => {
                let rows = session_rows(sessions, problems, open.as_deref(), now);
                if let Some(picker) = self.open_picker(SESSIONS) {
                    picker.set_group(SESSIONS, rows);
                    // The open session is the newest; the one before it is the likelier pick.
                    if picker.selected() == Some(&Pick::ThisSession) {
                        picker.move_by(1);
                    }
                }
            }
            // The rewind overlay and the chat's `✎` cells take these (`app/rewind.rs`).
            Listed::Rewind(preview) => self.rewind_listed(preview),
            Listed::Changes(view) => self.chat.changes_listed(view),
        }
    }

    /// What a live session runs, which a replay must leave as it is (a saved trace shows
    /// what it ran last instead): provider, model, why it was picked.
    pub(super) fn running_model(&self) -> Option<(String, String, Option<String>)> {
        let info = &self.info;
        (!self.read_only).then(|| {
            let why = info.auto_reason.clone();
            (info.provider.clone(), info.model.clone(), why)
        })
    }

    /// Puts back what [`running_model`](Self::running_model) saw, after a replay.
    pub(super) fn keep_running_model(&mut self, running: Option<(String, String, Option<String>)>) {
        if let Some((provider, model, why)) = running {
            (self.info.provider, self.info.model, self.info.auto_reason) = (provider, model, why);
        }
    }

    /// The open picker of `topic`, if that is the one open.
    fn open_picker(&mut self, topic: &str) -> Option<&mut Picker> {
        self.overlays
            .get_mut::<Picker>()
            .filter(|p| p.topic() == topic)
    }

    /// `/model`: the picker of every provider's models; `/model NAME`: that model of the
    /// running provider.
    pub(super) fn model_command(&mut self, name: &str, now: Instant) -> Vec<Command> {
        if let Some(refused) = self.cannot_switch(now) {
            return refused;
        }
        if !name.is_empty() {
            let provider = self.info.provider.clone();
            return self.switch(provider, Some(name.to_string()));
        }
        let rows = (self.info.providers.iter())
            .flat_map(|p| model_rows(p, &self.info, None))
            .collect();
        self.show_picker(Picker::new(
            MODELS,
            "switch model",
            rows,
            "no models configured",
        ));
        vec![Command::Op(Op::ListModels)]
    }

    /// `/provider`: the picker of providers; `/provider NAME [MODEL]`: that one.
    pub(super) fn provider_command(&mut self, text: &str, now: Instant) -> Vec<Command> {
        if let Some(refused) = self.cannot_switch(now) {
            return refused;
        }
        let mut words = text.split_whitespace();
        if let Some(name) = words.next() {
            return self.switch(name.to_string(), words.next().map(String::from));
        }
        let rows = (self.info.providers.iter())
            .map(|p| {
                let current = p.name == self.info.provider;
                let (model, note) = if current {
                    (self.info.model.clone(), " · current")
                } else {
                    (p.model.clone(), "")
                };
                let pick = Pick::Model {
                    provider: p.name.clone(),
                    model: model.clone(),
                };
                Row::item(PROVIDERS, &p.name, &format!("{model}{note}"), pick)
            })
            .collect();
        self.show_picker(Picker::new(
            PROVIDERS,
            "switch provider",
            rows,
            "no providers configured",
        ));
        Vec::new()
    }

    /// `/resume`: the picker of saved sessions; `/resume ID`: that one.
    pub(super) fn resume_command(&mut self, id: &str, now: Instant) -> Vec<Command> {
        if self.read_only {
            self.flash("read-only: this is a saved trace", now);
            return Vec::new();
        }
        if self.busy {
            self.chat.push_notice(
                NoticeKind::Warn,
                "A request is running: cancel it (Esc) or let it finish, then `/resume`.",
            );
            return Vec::new();
        }
        if !id.is_empty() {
            return vec![Command::Resume(id.to_string())];
        }
        let rows = vec![Row::loading(SESSIONS, "reading saved sessions")];
        self.show_picker(Picker::new(
            SESSIONS,
            "resume a session",
            rows,
            "no saved sessions yet",
        ));
        vec![Command::Op(Op::ListSessions)]
    }

    /// A picker row was chosen.
    pub(super) fn picked(&mut self, pick: Pick, now: Instant) -> Vec<Command> {
        match pick {
            Pick::Model { provider, model } => self.switch(provider, Some(model)),
            Pick::Session { id } => self.resume_command(&id, now),
            Pick::ThisSession => {
                self.flash("that is the session open here", now);
                Vec::new()
            }
            Pick::Rewind(point) => self.ask_rewind(point, now),
        }
    }

    /// Why nothing can be switched here, said; `None` when it can.
    fn cannot_switch(&mut self, now: Instant) -> Option<Vec<Command>> {
        if self.read_only {
            self.flash("read-only: this is a saved trace", now);
            return Some(Vec::new());
        }
        if self.info.providers.is_empty() {
            self.chat.push_notice(
                NoticeKind::Warn,
                "This session cannot switch providers or models.",
            );
            return Some(Vec::new());
        }
        None
    }

    /// Asks to switch; the status line follows when the switch is made (`model_switched`).
    fn switch(&mut self, provider: String, model: Option<String>) -> Vec<Command> {
        if self.busy {
            self.chat.push_notice(
                NoticeKind::Info,
                "The switch applies when the running request ends.",
            );
        }
        vec![Command::Op(Op::Switch { provider, model })]
    }

    fn show_picker(&mut self, picker: Picker) {
        self.overlays.remove::<Picker>();
        let current = Pick::Model {
            provider: self.info.provider.clone(),
            model: self.info.model.clone(),
        };
        let mut picker = picker;
        picker.select(&current);
        self.overlays.push(Box::new(picker));
    }
}

/// A provider's rows in the model picker: the config's models, then the server's (or a row
/// saying they are on their way, or why there are none).
fn model_rows(
    provider: &ProviderModels,
    info: &super::AppInfo,
    listed: Option<(&Vec<String>, Option<&str>)>,
) -> Vec<Row> {
    let name = &provider.name;
    let mut models: Vec<&str> = provider.models.iter().map(String::as_str).collect();
    if name == &info.provider && !models.contains(&info.model.as_str()) {
        models.insert(0, &info.model);
    }
    if let Some((listed, _)) = listed {
        for model in listed {
            if !models.contains(&model.as_str()) {
                models.push(model);
            }
        }
    }
    let mut rows: Vec<Row> = (models.into_iter())
        .map(|model| {
            let current = name == &info.provider && model == info.model;
            let detail = if current {
                format!("{name} · current")
            } else {
                name.clone()
            };
            let pick = Pick::Model {
                provider: name.clone(),
                model: model.to_string(),
            };
            Row::item(name, model, &detail, pick)
        })
        .collect();
    match listed {
        None if provider.lists => rows.push(Row::loading(name, &format!("asking {name}…"))),
        Some((_, Some(error))) => rows.push(Row::error(name, &format!("{name}: {error}"))),
        _ => {}
    }
    rows
}

/// The session picker's rows, newest activity first (as listed), ages as of `now` (Unix ms):
/// the first prompt; where it was started and when it last had a line; under it how it
/// stands, its turns, tokens, workdir and model. The session `open` here is marked (choosing
/// it does nothing); an empty one is greyed out.
fn session_rows(
    sessions: &[Summary],
    problems: &[String],
    open: Option<&str>,
    now: u64,
) -> Vec<Row> {
    let mut rows: Vec<Row> = (sessions.iter())
        .map(|s| {
            let prompt = s.first_prompt.as_deref().unwrap_or("(no prompt)");
            let tokens = s.tokens.input_tokens + s.tokens.output_tokens;
            // A file from before kinds were recorded says nothing of where it was started.
            let kind = s.kind.map_or(String::new(), |k| format!("{} · ", k.name()));
            let is_open = open == Some(s.id.as_str());
            let detail = if is_open {
                format!("{kind}open here")
            } else {
                format!("{kind}{}", age(s.last_activity, now))
            };
            let below = format!(
                "{} · {} turn{} · {} tok · {} · {}",
                s.outcome.name(),
                s.turns,
                if s.turns == 1 { "" } else { "s" },
                human(tokens),
                shorten_start(&s.workdir.display().to_string(), 28),
                s.model,
            );
            let pick = if is_open {
                Pick::ThisSession
            } else {
                Pick::Session { id: s.id.clone() }
            };
            let row = Row::item(SESSIONS, prompt, &detail, pick).with_below(&below);
            match (is_open, s.is_empty()) {
                (true, _) => row.marked(),
                (false, true) => row.dimmed(),
                (false, false) => row,
            }
        })
        .collect();
    match problems {
        [] => {}
        [one] => rows.push(Row::error(SESSIONS, one)),
        many => rows.push(Row::error(
            SESSIONS,
            &format!(
                "{} files could not be listed (taco sessions says which)",
                many.len()
            ),
        )),
    }
    rows
}
