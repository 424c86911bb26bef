//! The ACP client's test drive: a scripted agent (`acp_script`) under the real `AcpEngine`
//! over in-memory pipes, its events fed to the TUI's app (issue 32).

use std::path::Path;
use std::time::{Duration, Instant};

use super::acp_script::{self, Script};
use super::app::Harness;
use serde_json::Value;
use taco::acp::client::{self, AcpEngine};
use taco::engine::{Engine, next_event};
use taco::event::{Event, EventData};
use taco::orchestrator::task::Op;
use taco::recorder::Recorder;
use taco::session::{Entry, SessionKind};
use taco::tui::app::{App, AppInfo, Command};

/// How long any step may take before the test fails.
pub const STEP: Duration = Duration::from_secs(10);

/// The app over an engine over a scripted agent.
pub struct Drive {
    pub h: Harness,
    pub engine: AcpEngine,
    pub script_seen: acp_script::Seen,
    /// Every event the engine sent, as it sent it.
    pub events: Vec<Event>,
}

impl Drive {
    pub fn new(steps: Vec<Value>, workdir: &Path, sessions: &Path, init_wait: Duration) -> Self {
        Self::authenticating(steps, workdir, sessions, init_wait, None)
    }

    /// [`Drive::new`] with an `auth` method configured.
    pub fn authenticating(
        steps: Vec<Value>,
        workdir: &Path,
        sessions: &Path,
        init_wait: Duration,
        auth: Option<&str>,
    ) -> Self {
        let options = client::Options {
            init_wait,
            auth: auth.map(String::from),
            terminals: None,
        };
        Self::with(steps, workdir, sessions, options)
    }

    /// [`Drive::new`] with these connection options.
    pub fn with(
        steps: Vec<Value>,
        workdir: &Path,
        sessions: &Path,
        options: client::Options,
    ) -> Self {
        let Script {
            client_read,
            client_write,
            seen,
        } = acp_script::start(steps);
        let recorder = Recorder::deferred(
            Some(sessions.to_path_buf()),
            None,
            "acp",
            "scripted",
            workdir,
        )
        .made_in(SessionKind::Agent);
        let engine = client::connect(
            "scripted",
            workdir.to_path_buf(),
            client_read,
            client_write,
            recorder,
            options,
        );
        let mut h = Harness::new();
        h.app = App::new(
            AppInfo {
                provider: "acp".into(),
                model: "scripted".into(),
                max_turns: client::SHOWN_MAX_TURNS,
                // Shown only: a fixed path keeps the snapshots the same on every machine.
                workdir: "/work/project".into(),
                dialog_guard: Duration::ZERO,
                ..Default::default()
            },
            h.t0,
        );
        Self {
            h,
            engine,
            script_seen: seen,
            events: Vec::new(),
        }
    }

    /// What the app asked for goes to the engine.
    pub fn forward(&mut self, commands: Vec<Command>) {
        for command in commands {
            if let Command::Op(op) = command {
                assert!(self.engine.send(op), "the engine is gone");
            }
        }
    }

    /// A line typed and sent.
    pub fn submit(&mut self, text: &str) {
        let commands = self.h.command(text);
        assert!(
            commands
                .iter()
                .any(|c| matches!(c, Command::Op(Op::Submit(_)))),
            "{commands:?}"
        );
        self.forward(commands);
    }

    /// Feeds the app the engine's events until one `until` picks; that one.
    pub async fn until(&mut self, what: &str, until: impl Fn(&Event) -> bool) -> Event {
        let deadline = Instant::now() + STEP;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let event = match tokio::time::timeout(left, next_event(&mut self.engine)).await {
                Ok(Some(event)) => event,
                Ok(None) => panic!("the engine stopped before {what}: {:#?}", self.kinds()),
                Err(_) => panic!("no {what} within {STEP:?}: {:#?}", self.kinds()),
            };
            self.events.push(event.clone());
            let shown = self.restamped(event.clone());
            let now = self.h.now();
            let commands = self.h.app.on_event(&shown, now);
            self.forward(commands);
            if until(&event) {
                return event;
            }
        }
    }

    /// The event on the harness's clock, its spans a fixed length, so a snapshot does not
    /// depend on how fast the machine is.
    pub fn restamped(&mut self, mut event: Event) -> Event {
        // A running command's tail comes as often as the machine's speed makes it: it does
        // not move the clock.
        if !matches!(event.data, EventData::ToolOutput { .. }) {
            self.h.ms += 10;
        }
        event.timestamp = 1_700_000_000_000 + self.h.ms;
        match &mut event.data {
            EventData::ToolResult { duration_ms, .. } => *duration_ms = 20,
            EventData::LlmCall(call) => call.duration_ms = 30,
            _ => {}
        }
        event
    }

    pub fn kinds(&self) -> Vec<String> {
        self.events
            .iter()
            .map(|e| match &e.data {
                EventData::Error { message, .. } => format!("error: {message}"),
                other => other.kind().to_string(),
            })
            .collect()
    }

    pub fn errors(&self) -> Vec<String> {
        self.events
            .iter()
            .filter_map(|e| match &e.data {
                EventData::Error { message, .. } => Some(message.clone()),
                _ => None,
            })
            .collect()
    }
}

pub fn is(kind: &'static str) -> impl Fn(&Event) -> bool {
    move |e| e.kind() == kind
}

/// The one session file in `dir`, read back.
pub fn session(dir: &Path) -> taco::session::Loaded {
    let files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    taco::session::load(&files[0]).unwrap()
}

pub fn event_kinds(loaded: &taco::session::Loaded) -> Vec<&'static str> {
    loaded
        .entries
        .iter()
        .filter_map(|e| match e {
            Entry::Event(e) => Some(e.kind()),
            Entry::Message(_) => None,
        })
        .collect()
}

pub fn dirs() -> (tempfile::TempDir, std::path::PathBuf, tempfile::TempDir) {
    let work = tempfile::tempdir().unwrap();
    let root = work.path().canonicalize().unwrap();
    (work, root, tempfile::tempdir().unwrap())
}

/// Every needle is on the screen's text.
pub fn shows(text: &str, needles: &[&str]) {
    for needle in needles {
        assert!(text.contains(needle), "{needle:?} missing:\n{text}");
    }
}
