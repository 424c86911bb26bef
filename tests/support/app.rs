//! The TUI's app driven by events on an injected clock, for app-level tests: the one harness
//! they share (events, keys, typing, slash commands, the screen), to which a test file adds
//! only the steps of its own story (a trait of its own).

use std::sync::Arc;
use std::time::{Duration, Instant};

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use taco::event::{Event, EventData};
use taco::tui::app::{App, AppInfo, Command};

/// The demo provider in `/work/project`, dialogs taking keys at once.
pub fn info() -> AppInfo {
    AppInfo {
        provider: "demo".into(),
        model: "demo".into(),
        max_turns: 10,
        workdir: "/work/project".into(),
        dialog_guard: Duration::ZERO,
        ..Default::default()
    }
}

/// An app and its clock: `t0` plus `ms` milliseconds.
pub struct Harness {
    pub app: App,
    pub t0: Instant,
    pub ms: u64,
}

impl Harness {
    /// A fresh app on [`info`].
    pub fn new() -> Self {
        let t0 = Instant::now();
        Self {
            app: App::new(info(), t0),
            t0,
            ms: 0,
        }
    }

    /// The app's now.
    pub fn now(&self) -> Instant {
        self.t0 + Duration::from_millis(self.ms)
    }

    /// One event of run `run-1`, 10 ms after the last.
    pub fn event(&mut self, data: EventData) -> Vec<Command> {
        self.ms += 10;
        let event = Event {
            timestamp: 1_700_000_000_000 + self.ms,
            request_id: Arc::from("run-1"),
            data,
        };
        let now = self.now();
        self.app.on_event(&event, now)
    }

    /// The screen at this size.
    pub fn screen(&mut self, width: u16, height: u16) -> Terminal<TestBackend> {
        let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
        let now = self.now();
        terminal
            .draw(|f| self.app.render(f.area(), f.buffer_mut(), now))
            .unwrap();
        terminal
    }

    /// A key with `modifiers`, at the harness's now (the clock does not move).
    pub fn key_with(&mut self, code: KeyCode, modifiers: KeyModifiers) -> Vec<Command> {
        let now = self.now();
        self.app.on_key(KeyEvent::new(code, modifiers), now)
    }

    /// A key without modifiers.
    pub fn key(&mut self, code: KeyCode) -> Vec<Command> {
        self.key_with(code, KeyModifiers::NONE)
    }

    /// Each character of `text` as a key; what they asked for.
    pub fn type_text(&mut self, text: &str) -> Vec<Command> {
        text.chars()
            .flat_map(|c| self.key(KeyCode::Char(c)))
            .collect()
    }

    /// A line typed into the composer and sent (a slash command, a message).
    pub fn command(&mut self, line: &str) -> Vec<Command> {
        self.type_text(line);
        self.key(KeyCode::Enter)
    }
}

/// The screen as text: its rows, joined by newlines.
pub fn screen_text(terminal: &Terminal<TestBackend>) -> String {
    let buffer = terminal.backend().buffer();
    (0..buffer.area.height)
        .map(|y| {
            (0..buffer.area.width)
                .map(|x| buffer[(x, y)].symbol())
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join("\n")
}
