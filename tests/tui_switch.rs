//! Switching without restarting (issue 14.5), in the app: `/model` and `/provider` open a
//! picker of the configured providers' models, filled in as their servers answer; choosing
//! one sends `Op::Switch` and the status line follows `model_switched`; `/resume` opens a
//! picker of saved sessions and ends the TUI on the chosen one. Snapshots at 80×24 and 60×20.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed unwrap is a failed test

use std::path::PathBuf;
use std::time::Instant;

use ratatui::crossterm::event::KeyCode;
use taco::conversation::Usage;
use taco::event::{EventData, Listed, ModelChoice};
use taco::orchestrator::switch::ProviderModels;
use taco::orchestrator::task::Op;
use taco::session::{Outcome, SessionKind, Summary};
use taco::tui::app::{App, Command};

use crate::support;
use support::app::{Harness, info};

/// Two local servers configured, the first running, and the demo.
fn switching() -> Harness {
    let mut info = info();
    info.provider = "first".into();
    info.model = "m1".into();
    info.providers = vec![
        ProviderModels {
            name: "first".into(),
            model: "m1".into(),
            models: vec!["m1".into(), "m1-large".into()],
            lists: true,
        },
        ProviderModels {
            name: "second".into(),
            model: "qwen3:8b".into(),
            models: vec!["qwen3:8b".into()],
            lists: true,
        },
        ProviderModels {
            name: "demo".into(),
            model: "demo".into(),
            models: vec!["demo".into()],
            lists: false,
        },
    ];
    let t0 = Instant::now();
    Harness {
        app: App::new(info, t0),
        t0,
        ms: 0,
    }
}

/// The steps of this file's stories, on the shared harness.
trait TuiSwitchSteps {
    fn text(&mut self, width: u16, height: u16) -> String;
    fn listed(&mut self, provider: &str, models: &[&str], error: Option<&str>);
}

impl TuiSwitchSteps for Harness {
    fn text(&mut self, width: u16, height: u16) -> String {
        let terminal = self.screen(width, height);
        let buffer = terminal.backend().buffer();
        let mut out = String::new();
        for y in 0..buffer.area.height {
            for x in 0..buffer.area.width {
                out.push_str(buffer[(x, y)].symbol());
            }
            out.push('\n');
        }
        out
    }

    fn listed(&mut self, provider: &str, models: &[&str], error: Option<&str>) {
        self.event(EventData::Listed(Box::new(Listed::Models {
            provider: provider.into(),
            models: models.iter().map(|m| m.to_string()).collect(),
            error: error.map(String::from),
        })));
    }
}

fn switch(provider: &str, model: &str) -> Command {
    Command::Op(Op::Switch {
        provider: provider.into(),
        model: Some(model.into()),
    })
}

/// The model picker once both servers answered: the second failed.
fn models_loaded() -> Harness {
    let mut h = switching();
    let sent = h.command("/model");
    assert_eq!(
        sent,
        vec![Command::Op(Op::ListModels)],
        "the servers are asked"
    );
    h.listed("first", &["m1", "m2-mini", "m3-coder"], None);
    h.listed(
        "second",
        &[],
        Some("cannot reach http://127.0.0.1:2/api/tags: connection refused — is the server running and is base_url right?"),
    );
    h
}

#[test]
fn the_model_picker_shows_config_models_then_what_the_servers_list() {
    let mut h = switching();
    h.command("/model");
    let screen = h.text(80, 24);
    assert!(screen.contains("switch model"), "{screen}");
    assert!(
        screen.contains("m1-large"),
        "config models at once:\n{screen}"
    );
    assert!(screen.contains("asking first…"), "{screen}");
    assert!(screen.contains("asking second…"), "{screen}");
    assert!(
        !screen.contains("asking demo"),
        "the demo lists nothing:\n{screen}"
    );
    h.listed("first", &["m1", "m2-mini"], None);
    let screen = h.text(80, 24);
    assert!(!screen.contains("asking first…"), "{screen}");
    assert!(screen.contains("m2-mini"), "{screen}");
    let rows = (screen.lines())
        .filter(|l| l.contains("│› m1 ") || l.contains("│  m1 "))
        .count();
    assert_eq!(
        rows, 1,
        "a model both in the config and on the server shows once:\n{screen}"
    );
}

#[test]
fn choosing_a_filtered_model_switches_and_the_status_line_follows_the_switch() {
    let mut h = models_loaded();
    // The running model is selected first.
    assert!(h.text(80, 24).contains("› m1 "), "{}", h.text(80, 24));
    h.type_text("QWEN");
    let sent = h.key(KeyCode::Enter);
    assert_eq!(sent, vec![switch("second", "qwen3:8b")]);
    let screen = h.text(80, 24);
    assert!(
        !screen.contains("switch model"),
        "the picker closed:\n{screen}"
    );
    assert!(
        screen.contains("first m1"),
        "nothing changes before the switch is made:\n{screen}"
    );
    h.event(EventData::ModelSwitched(ModelChoice {
        provider: "second".into(),
        model: "qwen3:8b".into(),
    }));
    let screen = h.text(80, 24);
    assert!(screen.contains("second qwen3:8b"), "status line:\n{screen}");
    assert!(
        screen.contains("Switched to second with model qwen3:8b"),
        "the chat says so:\n{screen}"
    );
}

#[test]
fn esc_closes_the_picker_without_switching_and_a_late_listing_is_ignored() {
    let mut h = switching();
    h.command("/model");
    assert!(h.key(KeyCode::Esc).is_empty());
    h.listed("first", &["late"], None);
    let screen = h.text(80, 24);
    assert!(!screen.contains("switch model"), "{screen}");
    assert!(!screen.contains("late"), "{screen}");
}

#[test]
fn model_and_provider_with_an_argument_switch_directly() {
    let mut h = switching();
    assert_eq!(
        h.command("/model m1-large"),
        vec![switch("first", "m1-large")]
    );
    assert_eq!(
        h.command("/provider second"),
        vec![Command::Op(Op::Switch {
            provider: "second".into(),
            model: None,
        })]
    );
    assert_eq!(
        h.command("/provider second big"),
        vec![switch("second", "big")]
    );
}

#[test]
fn the_provider_picker_lists_each_provider_with_its_model() {
    let mut h = switching();
    assert!(h.command("/provider").is_empty(), "nothing to ask a server");
    let screen = h.text(80, 24);
    assert!(screen.contains("switch provider"), "{screen}");
    assert!(screen.contains("m1 · current"), "{screen}");
    assert!(screen.contains("qwen3:8b"), "{screen}");
    h.type_text("dem");
    assert_eq!(h.key(KeyCode::Enter), vec![switch("demo", "demo")]);
}

#[test]
fn a_switch_asked_during_a_run_is_said_to_wait_for_it() {
    let mut h = switching();
    h.command("hello");
    h.event(EventData::RunStarted {
        prompt: "hello".into(),
        provider: "first".into(),
        model: "m1".into(),
        max_turns: 10,
        trace_parent: None,
    });
    assert_eq!(h.command("/model m2"), vec![switch("first", "m2")]);
    let screen = h.text(100, 30);
    assert!(
        screen.contains("The switch applies when the running request ends"),
        "{screen}"
    );
}

#[test]
fn without_providers_to_switch_to_the_commands_say_so() {
    let mut h = Harness::new();
    assert!(h.command("/model").is_empty());
    let screen = h.text(100, 30);
    assert!(
        screen.contains("cannot switch providers or models"),
        "{screen}"
    );
}

#[test]
fn model_picker_loaded_and_filtered_at_80x24() {
    let mut h = models_loaded();
    insta::assert_snapshot!("model_picker_80x24", h.screen(80, 24).backend());
    h.type_text("FIRST -");
    insta::assert_snapshot!("model_picker_filtered_80x24", h.screen(80, 24).backend());
}

#[test]
fn model_picker_loaded_and_filtered_at_60x20() {
    let mut h = models_loaded();
    insta::assert_snapshot!("model_picker_60x20", h.screen(60, 20).backend());
    h.type_text("FIRST -");
    insta::assert_snapshot!("model_picker_filtered_60x20", h.screen(60, 20).backend());
}

/// One saved session as `taco sessions` lists it, last active `ago_ms` before `now`.
#[allow(clippy::too_many_arguments)]
fn summary(
    now: u64,
    id: &str,
    ago_ms: u64,
    prompt: &str,
    workdir: &str,
    kind: Option<SessionKind>,
    turns: u32,
    outcome: Outcome,
) -> Summary {
    let tokens = u64::from(turns) * 3_000;
    Summary {
        id: id.into(),
        path: PathBuf::from(format!("/data/sessions/{id}.jsonl")),
        started: now - ago_ms - 60_000,
        workdir: workdir.into(),
        provider: "first".into(),
        model: "m1".into(),
        first_prompt: Some(prompt.into()),
        turns,
        tokens: Usage {
            input_tokens: tokens,
            output_tokens: tokens / 10,
            cached_tokens: 0,
        },
        size: 4096,
        last_activity: now - ago_ms,
        kind,
        outcome,
    }
}

/// Saved sessions as `taco sessions` lists them, newest activity first, around `now`: the
/// one open here (s5), a person's, an empty headless run, a failed one, and an older file
/// that does not say where it was started.
fn sessions(now: u64) -> Vec<Summary> {
    let (tui, exec) = (Some(SessionKind::Tui), Some(SessionKind::Exec));
    let project = "/work/project";
    let other = "/work/other-project/with/a/long/path";
    vec![
        summary(
            now,
            "s5",
            0,
            "rename the config keys",
            project,
            tui,
            1,
            Outcome::Interrupted,
        ),
        summary(
            now,
            "s4",
            120_000,
            "fix the failing test in parser.rs",
            project,
            tui,
            4,
            Outcome::Answered,
        ),
        summary(
            now,
            "s3",
            1_200_000,
            "run the nightly checks",
            project,
            exec,
            0,
            Outcome::Empty,
        ),
        summary(
            now,
            "s2",
            3 * 3_600_000,
            "why is the build slow?",
            other,
            exec,
            2,
            Outcome::Failed,
        ),
        summary(
            now,
            "s1",
            2 * 86_400_000,
            "write a README for this crate",
            project,
            None,
            7,
            Outcome::Answered,
        ),
    ]
}

fn resume_loaded() -> Harness {
    let mut h = switching();
    let sent = h.command("/resume");
    assert_eq!(sent, vec![Command::Op(Op::ListSessions)]);
    let screen = h.text(80, 24);
    assert!(screen.contains("reading saved sessions"), "{screen}");
    let now = 1_700_000_000_000 + h.ms + 10;
    h.event(EventData::Listed(Box::new(Listed::Sessions {
        sessions: sessions(now),
        problems: vec![
            "/data/sessions/bad.jsonl: not listed: its first line is not a session header".into(),
        ],
        open: Some("s5".into()),
    })));
    h
}

#[test]
fn the_resume_picker_lists_sessions_newest_first_and_choosing_one_resumes_it() {
    let mut h = resume_loaded();
    let screen = h.text(80, 24);
    let at = |needle: &str| {
        screen
            .find(needle)
            .unwrap_or_else(|| panic!("{needle}:\n{screen}"))
    };
    assert!(
        at("rename the config") < at("fix the failing")
            && at("fix the failing") < at("run the nightly")
            && at("run the nightly") < at("why is the build")
            && at("why is the build") < at("write a README")
    );
    // Kind and last activity beside the prompt; outcome, turns, tokens, workdir and model
    // under it.
    assert!(screen.contains("tui · 2 min ago"), "{screen}");
    assert!(screen.contains("exec · 20 min ago"), "{screen}");
    let older = screen
        .lines()
        .find(|l| l.contains("write a README"))
        .unwrap();
    assert!(
        older.ends_with("2 d ago│ │") && !older.contains("tui") && !older.contains("exec"),
        "a file that does not say where it was started:\n{screen}"
    );
    for below in [
        "answered · 4 turns · 13.2k tok · /work/project · m1",
        "empty · 0 turns · 0 tok · /work/project · m1",
        "failed · 2 turns",
    ] {
        assert!(screen.contains(below), "{below}:\n{screen}");
    }
    assert!(
        screen.contains("not listed"),
        "a file it could not read is said:\n{screen}"
    );
    assert!(!screen.contains("reading saved sessions"), "{screen}");
    h.type_text("readme");
    assert_eq!(h.key(KeyCode::Enter), vec![Command::Resume("s1".into())]);
}

#[test]
fn the_open_session_is_marked_and_not_resumed_and_an_empty_run_is_greyed_out() {
    let mut h = resume_loaded();
    let terminal = h.screen(80, 24);
    let buffer = terminal.backend().buffer();
    let row_of = |needle: &str| {
        (0..buffer.area.height)
            .find(|&y| {
                let line: String = (0..buffer.area.width)
                    .map(|x| buffer[(x, y)].symbol())
                    .collect();
                line.contains(needle)
            })
            .unwrap_or_else(|| panic!("no row shows {needle}"))
    };
    let line = |y: u16| -> String {
        (0..buffer.area.width)
            .map(|x| buffer[(x, y)].symbol())
            .collect()
    };
    // The open one has a dot and says so instead of an age; the selection starts on the one
    // before it.
    let open = line(row_of("rename the config"));
    assert!(open.contains("● rename the config"), "{open}");
    assert!(open.contains("tui · open here"), "{open}");
    assert!(line(row_of("fix the failing")).contains("› fix the failing"));
    // The empty run's prompt is drawn dim; a run with turns is not.
    let dim = taco::tui::theme::Theme::default().dim.fg;
    let fg_at = |needle: &str| {
        let y = row_of(needle);
        let x = line(y)
            .find(needle)
            .map(|i| line(y)[..i].chars().count())
            .unwrap();
        buffer[(x as u16, y)].fg
    };
    assert_eq!(
        Some(fg_at("run the nightly")),
        dim,
        "the empty run is greyed out"
    );
    assert_ne!(Some(fg_at("why is the build")), dim);
    assert_ne!(Some(fg_at("rename the config")), dim);
    // Choosing the open session reopens nothing.
    assert!(h.key(KeyCode::Up).is_empty());
    assert!(h.key(KeyCode::Enter).is_empty(), "nothing to switch to");
    let screen = h.text(80, 24);
    assert!(screen.contains("that is the session open here"), "{screen}");
    assert!(!screen.contains("resume a session"), "{screen}");
}

#[test]
fn resume_is_refused_while_a_request_runs() {
    let mut h = switching();
    h.command("hello");
    assert!(h.app.is_busy());
    assert!(h.command("/resume").is_empty());
    assert!(h.command("/resume s1").is_empty());
    let screen = h.text(100, 30);
    assert!(screen.contains("A request is running"), "{screen}");
    assert!(!screen.contains("resume a session"), "{screen}");
}

#[test]
fn resume_with_an_id_resumes_it_at_once() {
    let mut h = switching();
    assert_eq!(
        h.command("/resume 2026"),
        vec![Command::Resume("2026".into())]
    );
}

#[test]
fn resume_picker_at_80x24() {
    let mut h = resume_loaded();
    insta::assert_snapshot!("resume_picker_80x24", h.screen(80, 24).backend());
}

/// The picker's box alone, with its styles: the open session's dot, the empty run in the
/// dim colour, the selection reversed.
#[test]
fn resume_picker_styles_at_80x24() {
    use ratatui::buffer::Buffer;
    use ratatui::layout::Rect;
    let mut h = resume_loaded();
    let terminal = h.screen(80, 24);
    let screen = terminal.backend().buffer();
    let (left, top) = (2, 4);
    let mut picker = Buffer::empty(Rect::new(0, 0, 76, 16));
    for y in 0..picker.area.height {
        for x in 0..picker.area.width {
            picker[(x, y)] = screen[(x + left, y + top)].clone();
        }
    }
    insta::assert_debug_snapshot!("resume_picker_styles_80x24", picker);
}

#[test]
fn resume_picker_at_60x20() {
    let mut h = resume_loaded();
    insta::assert_snapshot!("resume_picker_60x20", h.screen(60, 20).backend());
}

#[test]
fn a_resumed_session_keeps_the_running_model_but_a_trace_shows_the_last_one() {
    use std::sync::Arc;
    use taco::event::Event;
    use taco::session::Entry;
    let switched = Entry::Event(Event {
        timestamp: 1_700_000_000_000,
        request_id: Arc::from("r"),
        data: EventData::ModelSwitched(ModelChoice {
            provider: "second".into(),
            model: "qwen3:8b".into(),
        }),
    });
    // A live session runs with what it was started with (`-m` may have chosen otherwise).
    let mut h = switching();
    let now = h.now();
    h.app.replay(std::slice::from_ref(&switched), now);
    assert!(h.text(80, 24).contains("first m1"));
    // A saved trace shows what it ran with last.
    let mut h = switching();
    let now = h.now();
    h.app.set_read_only("a trace");
    h.app.replay(&[switched], now);
    assert!(
        h.text(80, 24).contains("second qwen3:8b"),
        "{}",
        h.text(80, 24)
    );
}
