//! The full-screen TUI (DESIGN §1, §7): chat, tool stack and trace timeline side by side.
//! One `select!` loop over terminal input, orchestrator events and frame deadlines; the
//! orchestrator runs as its own task and hears back through Ops.

use std::io;
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use ratatui::crossterm::event::{Event as TermEvent, EventStream, KeyEventKind};
use tokio::time::sleep_until;

use crate::orchestrator::Orchestrator;
use crate::orchestrator::task::{self, Op};
use crate::recorder::Recorder;
use crate::session::Entry;
use crate::signals::{Signals, Stop};

pub mod app;
pub mod commands;
pub mod layout;
pub mod markdown;
pub mod overlay;
pub mod safe;
pub mod terminal;
pub mod theme;
pub mod views;

use app::{App, AppInfo, Command};

/// Frames are at least this far apart (≈120 frames/s at most).
const FRAME: Duration = Duration::from_micros(8_334);
/// How often moving things (spinners, elapsed times) redraw while something runs.
const TICK: Duration = Duration::from_millis(100);

/// What the TUI starts with.
pub struct Launch {
    /// Provider, model, tools, workdir.
    pub info: AppInfo,
    /// The agent; `None` shows a saved trace read-only.
    pub orchestrator: Option<Orchestrator>,
    /// Where the session goes (session file, audit log).
    pub recorder: Recorder,
    /// A saved session or trace to show first (`--resume`, `taco trace`).
    pub history: Vec<Entry>,
    /// For a read-only view: what is shown (e.g. the file name).
    pub viewing: Option<String>,
    /// A note for the chat after the greeting (e.g. "resumed session …").
    pub notice: Option<String>,
    /// When the process started, for the first-frame time in the log.
    pub launched: Instant,
}

/// Runs the TUI until the user quits or a signal stops it. The terminal is restored however
/// this ends.
pub async fn run(launch: Launch) -> io::Result<Ended> {
    let Launch {
        info,
        orchestrator,
        recorder,
        history,
        viewing,
        notice,
        launched,
    } = launch;
    let mut app = App::new(info, Instant::now());
    if let Some(what) = &viewing {
        app.set_read_only(what);
    }
    if !history.is_empty() {
        app.replay(&history, Instant::now());
    }
    if let Some(notice) = notice {
        app.chat.push_notice(views::chat::NoticeKind::Info, notice);
    }
    let mut guard = terminal::TerminalGuard::enter()?;
    let mut orchestrator_alive = orchestrator.is_some();
    let mut orchestrator = match orchestrator {
        Some(orchestrator) => task::spawn_recording(orchestrator, recorder),
        // A read-only view: channels that never carry anything.
        None => {
            let (ops, _) = tokio::sync::mpsc::unbounded_channel();
            let (_, events) = tokio::sync::mpsc::unbounded_channel();
            task::OrchestratorTask {
                ops,
                events,
                handle: None,
            }
        }
    };
    let mut input = EventStream::new();
    let mut signals = match Signals::install() {
        Ok(signals) => Some(signals),
        Err(e) => {
            tracing::warn!("cannot watch for signals: {e}");
            None
        }
    };
    let mut dirty = true;
    let mut last_frame = Instant::now() - FRAME;
    let started = Instant::now();
    let mut frames: u64 = 0;
    // Every way out (quit, a signal, a closed terminal, a failed draw) goes through the same
    // wind-down below: the run is cancelled, the terminal restored, the task awaited.
    let ended: io::Result<Ended> = loop {
        let now = Instant::now();
        if dirty && now >= last_frame + FRAME {
            let drawn = guard.terminal.draw(|frame| {
                let area = frame.area();
                app.render(area, frame.buffer_mut(), now);
            });
            if let Err(e) = drawn {
                break Err(e);
            }
            if frames == 0 {
                tracing::info!(
                    ms_since_launch = launched.elapsed().as_secs_f64() * 1000.0,
                    "first frame"
                );
            }
            frames += 1;
            last_frame = now;
            dirty = false;
        }
        let next_frame = tokio::time::Instant::from_std(last_frame + FRAME);
        let ticking = app.needs_tick(now);
        let next_tick = tokio::time::Instant::from_std(last_frame + TICK);
        let commands = tokio::select! {
            maybe = input.next() => match maybe {
                Some(Ok(event)) => {
                    dirty = true;
                    handle_terminal(&mut app, event)
                }
                // The terminal is gone or broken: nothing more can be shown or typed.
                Some(Err(e)) => break Err(e),
                None => break Ok(Ended::Quit),
            },
            stop = recv_signal(&mut signals) => {
                tracing::info!(signal = stop.name(), "stopping on a signal");
                break Ok(Ended::Signal(stop));
            }
            event = orchestrator.events.recv(), if orchestrator_alive => match event {
                Some(event) => {
                    dirty = true;
                    let now = Instant::now();
                    let mut commands = app.on_event(&event, now);
                    // Take whatever else is already waiting, so a burst of deltas is one frame.
                    while let Ok(event) = orchestrator.events.try_recv() {
                        commands.extend(app.on_event(&event, now));
                    }
                    commands
                }
                None => {
                    orchestrator_alive = false;
                    tracing::error!("the orchestrator task stopped");
                    app.chat.push_notice(
                        views::chat::NoticeKind::Error,
                        "The agent stopped unexpectedly (see the log). Restart taco to go on.",
                    );
                    dirty = true;
                    Vec::new()
                }
            },
            _ = sleep_until(next_frame), if dirty => Vec::new(),
            _ = sleep_until(next_tick), if ticking && !dirty => {
                dirty = true;
                Vec::new()
            }
        };
        let mut quit = false;
        for command in commands {
            match command {
                Command::Op(op) => {
                    if orchestrator_alive && orchestrator.ops.send(op).is_err() {
                        tracing::warn!("the orchestrator task is gone; op dropped");
                    }
                }
                Command::Quit => quit = true,
            }
        }
        if quit {
            break Ok(Ended::Quit);
        }
    };
    tracing::info!(
        frames,
        seconds = started.elapsed().as_secs_f64(),
        "tui quit"
    );
    // Cancels whatever runs (tools' process groups are killed) and ends the task.
    let _ = orchestrator.ops.send(Op::Shutdown);
    drop(guard);
    // Give a running tool a moment to be cancelled and its session lines written.
    if let Some(handle) = orchestrator.handle {
        let _ = tokio::time::timeout(Duration::from_secs(2), handle).await;
    }
    ended
}

/// How the TUI ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    /// The user quit (or the terminal closed its input).
    Quit,
    /// A signal stopped it; taco exits 128 + signal.
    Signal(Stop),
}

/// The next signal, or never when signals could not be watched.
async fn recv_signal(signals: &mut Option<Signals>) -> Stop {
    match signals {
        Some(signals) => signals.recv().await,
        None => std::future::pending().await,
    }
}

fn handle_terminal(app: &mut App, event: TermEvent) -> Vec<Command> {
    let now = Instant::now();
    match event {
        TermEvent::Key(key) if key.kind != KeyEventKind::Release => app.on_key(key, now),
        TermEvent::Paste(text) => {
            app.on_paste(&text, now);
            Vec::new()
        }
        TermEvent::Mouse(mouse) => {
            app.on_mouse(mouse);
            Vec::new()
        }
        _ => Vec::new(),
    }
}
