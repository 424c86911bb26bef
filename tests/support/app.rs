//! The TUI's app driven by events on an injected clock, for app-level tests: the setup they
//! share, and a harness each test file adds its own keys and helpers to.

use std::sync::Arc;
use std::time::{Duration, Instant};

use ratatui::Terminal;
use ratatui::backend::TestBackend;
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
}
