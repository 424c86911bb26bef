//! The full-screen TUI (DESIGN §1, §7): chat, tool stack and trace timeline side by side.
//! One `select!` loop over terminal input, engine events and frame deadlines; the engine (the
//! orchestrator task, or a test's fake) runs on its own and hears back through Ops.

use std::io;
use std::time::{Duration, Instant};

use futures_util::{Stream, StreamExt};
use ratatui::crossterm::event::{Event as TermEvent, EventStream, KeyEventKind};
use tokio::time::sleep_until;

use crate::engine::{Engine, next_event};
use crate::event::Event;
use crate::session::Entry;
use crate::signals::{Signals, Stop};

pub mod app;
pub mod clipboard;
pub mod commands;
pub mod frames;
mod hangup;
pub mod highlight;
pub mod layout;
pub mod markdown;
pub mod notify;
pub mod overlay;
pub mod put;
mod reading;
mod safe;
pub mod terminal;
pub mod theme;
pub mod tmux;
pub mod views;

use reading::{Purpose, Reading, recv_read};

use app::{App, AppInfo, Command};

/// Frames are at least this far apart (≈120 frames/s at most).
const FRAME: Duration = Duration::from_micros(8_334);
/// How often moving things (spinners, elapsed times) redraw while something runs.
const TICK: Duration = Duration::from_millis(100);

/// How long the wind-down waits for the engine (a cancelled tool, the last session lines).
const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);

/// What the TUI starts with.
pub struct Launch {
    /// Provider, model, tools, workdir.
    pub info: AppInfo,
    /// The running agent (it records the session); `None` shows a saved trace read-only.
    pub engine: Option<Box<dyn Engine>>,
    /// A saved session or trace to show first (`--resume`, `taco trace`).
    pub history: Vec<Entry>,
    /// For a read-only view: what is shown (e.g. the file name).
    pub viewing: Option<String>,
    /// A note for the chat after the greeting (e.g. "resumed session …").
    pub notice: Option<String>,
    /// When the process started, for the first-frame time in the log.
    pub launched: Instant,
    /// The prompt history file: read for Up and Ctrl-R, appended to as prompts are sent.
    pub prompts: Option<crate::history::PromptLog>,
    /// Mouse and theme (`[ui]`).
    pub ui: crate::config::UiSettings,
}

/// Runs the TUI until the user quits or a signal stops it. The terminal is restored however
/// this ends, and the engine is stopped.
pub async fn run(launch: Launch) -> io::Result<Ended> {
    let Launch {
        info,
        mut engine,
        history,
        viewing,
        notice,
        launched,
        prompts,
        ui,
    } = launch;
    let mut app = App::new(info, Instant::now());
    // Regexes cost ~0.15 ms a line: a stream's code is coloured off the frame (DESIGN §7).
    app.chat.set_highlight_in_background(true);
    if let Some(log) = prompts {
        app.set_prompt_history(log.load(), Some(log));
    }
    if let Some(what) = &viewing {
        app.set_read_only(what);
    }
    if !history.is_empty() {
        app.replay(&history, Instant::now());
    }
    if let Some(notice) = notice {
        app.chat.push_notice(views::chat::NoticeKind::Info, notice);
    }
    let setup = terminal::Setup {
        mouse: ui.mouse,
        ask_background: ui.theme == crate::config::ThemeChoice::Auto,
    };
    let mut guard = match terminal::TerminalGuard::enter(setup) {
        Ok(guard) => guard,
        Err(e) => {
            if let Some(engine) = engine {
                engine.shutdown(SHUTDOWN_GRACE).await;
            }
            return Err(e);
        }
    };
    let colorfgbg = std::env::var("COLORFGBG").ok();
    let background = theme::detect::choose(ui.theme, guard.background, colorfgbg.as_deref());
    tracing::info!(?background, answered = guard.background.is_some(), "theme");
    app.set_theme(theme::Theme::for_background(background));
    let tmux_env = std::env::var_os("TMUX");
    let route = clipboard::Route::from_env(tmux_env.as_deref());
    app.set_clipboard(route);
    let term = std::env::var("TERM").unwrap_or_default();
    let desktop = notify::Desktop::for_terminal(&term);
    app.set_notifier(notify::Notifier::new(ui.notify, desktop, route));
    // Inside tmux: whether anyone sees taco's pane, and whether a copy gets out.
    let mut tmux = tmux::Watch::start(tmux_env.as_deref(), std::env::var("TMUX_PANE").ok());
    let mut input = hangup::UntilHangup::new(EventStream::new(), &io::stdin());
    let mut signals = match Signals::install() {
        Ok(signals) => Some(signals),
        Err(e) => {
            tracing::warn!("cannot watch for signals: {e}");
            None
        }
    };
    let mut io = Io {
        screen: &mut guard,
        input: &mut input,
        signals: &mut signals,
        tmux: &mut tmux,
        launched,
    };
    let ended = drive(&mut app, &mut io, &mut engine).await;
    // Every way out winds down alike: the run is cancelled (tools' process groups are
    // killed) at once, the terminal restored, then the engine given a moment to end.
    let stopping = engine.map(|engine| engine.shutdown(SHUTDOWN_GRACE));
    // Another session opens next: the screen stays (the next TUI clears and redraws it).
    if matches!(ended, Ok(Ended::Resume(_))) {
        guard.hold();
    } else {
        drop(guard);
    }
    if let Some(stopping) = stopping {
        stopping.await;
    }
    ended
}

/// Where the loop draws, and writes what is not a frame (a clipboard copy).
trait Screen {
    /// Draws the app at `now` (the frame is complete when it returns); says how long the
    /// app's render into the frame's buffer took, and the writes to the terminal.
    fn draw(&mut self, app: &mut App, now: Instant) -> io::Result<frames::Drawn>;
    /// Writes escape sequences straight to the terminal, between frames.
    fn write(&mut self, bytes: &[u8]) -> io::Result<()>;
    /// What each frame's write to the terminal took, where frames are written apart from
    /// the loop; `None` where nothing is written.
    fn written(&self) -> Option<frames::Summary> {
        None
    }
    /// How long frames took from the start of their draw to their last byte written.
    fn shown(&self) -> Option<frames::Summary> {
        None
    }
    /// Whether the terminal is behind (frames still waiting to be written).
    fn behind(&self) -> bool {
        false
    }
}

impl Screen for terminal::TerminalGuard {
    fn draw(&mut self, app: &mut App, now: Instant) -> io::Result<frames::Drawn> {
        let mut render = frames::Took::ZERO;
        let wait = self.draw_synced(|area, buf| render = render_timed(app, area, buf, now))?;
        Ok(frames::Drawn { render, wait })
    }

    fn write(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.write_raw(bytes)
    }

    fn written(&self) -> Option<frames::Summary> {
        terminal::TerminalGuard::written(self)
    }

    fn shown(&self) -> Option<frames::Summary> {
        terminal::TerminalGuard::shown(self)
    }

    fn behind(&self) -> bool {
        terminal::TerminalGuard::behind(self)
    }
}

/// Renders the app into the frame's buffer; returns how long that took (the real clocks, read
/// here at the loop's edge: the app itself only sees `now`).
fn render_timed(
    app: &mut App,
    area: ratatui::layout::Rect,
    buf: &mut ratatui::buffer::Buffer,
    now: Instant,
) -> frames::Took {
    frames::timed(|| app.render(area, buf, now))
}

/// What the loop reads and draws besides the engine: the real terminal, or a test's.
struct Io<'a, I> {
    /// The terminal's screen.
    screen: &'a mut dyn Screen,
    /// Terminal input.
    input: &'a mut I,
    /// Termination signals, when they could be watched.
    signals: &'a mut Option<Signals>,
    /// What tmux says about taco's pane, when taco runs inside tmux.
    tmux: &'a mut Option<tmux::Watch>,
    /// When the process started, for the first-frame time in the log.
    launched: Instant,
}

/// The event loop: terminal input, engine events, signals and frame deadlines in one
/// `select!`, until the user quits, the input ends, a draw fails or a signal arrives.
async fn drive<I>(
    app: &mut App,
    io: &mut Io<'_, I>,
    engine: &mut Option<Box<dyn Engine>>,
) -> io::Result<Ended>
where
    I: Stream<Item = io::Result<TermEvent>> + Unpin,
{
    let mut engine_alive = engine.is_some();
    let mut dirty = true;
    let mut last_frame = Instant::now() - FRAME;
    let started = Instant::now();
    // What the session's frames took, for the `tui quit` line.
    let mut timings = frames::Timings::default();
    // Earlier runs of a resumed session being read (off the UI thread).
    let mut reading: Option<Reading> = None;
    // An MCP prompt or resources being fetched for the app (one at a time: the app is busy).
    let mut fetching: Option<tokio::task::JoinHandle<app::McpFetched>> = None;
    // The checkpoint store being measured for `/status`.
    let mut measuring: Option<tokio::task::JoinHandle<u64>> = None;
    let ended: io::Result<Ended> = loop {
        let now = Instant::now();
        if dirty && now >= last_frame + FRAME && io.screen.behind() {
            // The terminal has yet to take the last two frames: this one waits a frame's time
            // (keys and events still handled) rather than stall the loop behind them.
            timings.postpone();
            last_frame = now;
        } else if dirty && now >= last_frame + FRAME {
            match io.screen.draw(app, now) {
                Ok(drawn) => timings.drawn(drawn),
                Err(e) => break Err(e),
            }
            if timings.draw_took(now.elapsed()) == 1 {
                tracing::info!(
                    ms_since_launch = io.launched.elapsed().as_secs_f64() * 1000.0,
                    "first frame"
                );
            }
            last_frame = now;
            // Code drawn plain while its colours were on the way is drawn again.
            dirty = app.chat.highlight_pending();
        }
        if let Some(tmux) = io.tmux.as_ref() {
            tmux.set_busy(app.is_busy());
        }
        let next_frame = tokio::time::Instant::from_std(last_frame + FRAME);
        let ticking = app.needs_tick(now);
        let next_tick = tokio::time::Instant::from_std(last_frame + TICK);
        let commands = tokio::select! {
            maybe = io.input.next() => match maybe {
                Some(Ok(event)) => {
                    dirty = true;
                    let mut commands = handle_terminal(app, event);
                    commands.extend(app.want_earlier());
                    commands
                }
                // The terminal is gone or broken: nothing more can be shown or typed.
                Some(Err(e)) => break Err(e),
                None => break Ok(Ended::Quit),
            },
            stop = recv_signal(io.signals) => {
                tracing::info!(signal = stop.name(), "stopping on a signal");
                break Ok(Ended::Signal(stop));
            }
            event = recv_event(engine), if engine_alive => match event {
                Some(event) => {
                    dirty = true;
                    let now = Instant::now();
                    let mut commands = app.on_event(&event, now);
                    // Take whatever else is already waiting, so a burst of deltas is one frame.
                    while let Some(event) = engine.as_mut().and_then(|e| e.try_event()) {
                        commands.extend(app.on_event(&event, now));
                    }
                    commands
                }
                None => {
                    engine_alive = false;
                    tracing::error!("the orchestrator task stopped");
                    app.chat.push_notice(
                        views::chat::NoticeKind::Error,
                        "The agent stopped unexpectedly (see the log). Restart taco to go on.",
                    );
                    dirty = true;
                    Vec::new()
                }
            },
            state = tmux::next(io.tmux) => {
                app.on_tmux(state);
                Vec::new()
            }
            fetched = recv_fetch(&mut fetching), if fetching.is_some() => {
                fetching = None;
                dirty = true;
                app.on_mcp_fetched(fetched, Instant::now())
            }
            bytes = recv_measured(&mut measuring), if measuring.is_some() => {
                measuring = None;
                dirty = true;
                if let Some(bytes) = bytes {
                    app.on_checkpoints_measured(bytes);
                }
                Vec::new()
            }
            read = recv_read(&mut reading), if reading.is_some() => {
                dirty = true;
                match reading.take() {
                    Some((path, _, Purpose::Trim)) => app.trimmed(path, read, Instant::now()),
                    _ => app.prepend_earlier(read, Instant::now()),
                }
                Vec::new()
            }
            _ = sleep_until(next_frame), if dirty => Vec::new(),
            _ = sleep_until(next_tick), if ticking && !dirty => {
                dirty = true;
                Vec::new()
            }
        };
        let mut quit = false;
        let mut resume = None;
        let mut agent = None;
        for command in commands {
            match command {
                Command::Op(op) => {
                    if engine_alive
                        && let Some(engine) = engine.as_mut()
                        && !engine.send(op)
                    {
                        tracing::warn!("the orchestrator task is gone; op dropped");
                    }
                }
                Command::Quit => quit = true,
                Command::Copy(osc) => {
                    // A terminal that cannot take it fails its next frame too; that ends.
                    if let Err(e) = io.screen.write(osc.bytes()) {
                        tracing::warn!("the clipboard copy was not written: {e}");
                    }
                }
                Command::Notify(escapes) => {
                    tracing::info!("notifying: something waits for the user");
                    if let Err(e) = io.screen.write(escapes.bytes()) {
                        tracing::warn!("the notification was not written: {e}");
                    }
                }
                Command::Resume(id) => resume = Some(id),
                Command::Agent(choice) => agent = Some(choice),
                Command::McpLogin(name) => {
                    if let Some(hub) = app.mcp_hub()
                        && let Err(why) = hub.login(&name)
                    {
                        tracing::warn!(server = name, why, "mcp login not started");
                    }
                }
                Command::Mcp(fetch) => match app.mcp_hub() {
                    Some(hub) => {
                        fetching = Some(tokio::spawn(async move { fetch.run(&hub).await }));
                    }
                    None => {
                        let lost = app::McpFetched::Lost("no MCP servers here".into());
                        let _ = app.on_mcp_fetched(lost, Instant::now());
                    }
                },
                Command::MeasureCheckpoints(store) => {
                    measuring = Some(tokio::task::spawn_blocking(move || store.0.size()));
                }
                Command::LoadEarlier(earlier) => {
                    let path = earlier.path.clone();
                    let handle = tokio::task::spawn_blocking(move || {
                        crate::session::earlier(
                            &earlier.path,
                            earlier.before,
                            crate::startup::RESUME_ENTRIES,
                        )
                    });
                    reading = Some((path, handle, Purpose::Earlier));
                }
                Command::Trim(path) => {
                    let file = path.clone();
                    let handle = tokio::task::spawn_blocking(move || {
                        let end = std::fs::metadata(&file)
                            .map_err(|e| crate::session::SessionError::io(&file, e))?
                            .len();
                        crate::session::earlier(&file, end, app::TRIM_KEEP_ENTRIES)
                    });
                    reading = Some((path, handle, Purpose::Trim));
                }
            }
        }
        if quit {
            break Ok(Ended::Quit);
        }
        if let Some(id) = resume {
            break Ok(Ended::Resume(id));
        }
        if let Some(choice) = agent {
            break Ok(Ended::Agent(choice));
        }
    };
    timings.log(started.elapsed(), io.screen.written(), io.screen.shown());
    ended
}

/// How the TUI ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ended {
    /// The user quit (or the terminal closed its input).
    Quit,
    /// The user picked a saved session (`/resume`): the caller reopens the TUI on it.
    Resume(String),
    /// The user picked another loop (`/agent`): this external agent, or taco's own (`None`);
    /// the caller reopens the TUI on it.
    Agent(Option<String>),
    /// A signal stopped it; taco exits 128 + signal.
    Signal(Stop),
}

/// The engine's next event, or never in a read-only view.
async fn recv_event(engine: &mut Option<Box<dyn Engine>>) -> Option<Event> {
    match engine {
        Some(engine) => next_event(engine.as_mut()).await,
        None => std::future::pending().await,
    }
}

/// The checkpoint store's size once measured (`None`: the measuring failed); never when
/// nothing is measured.
async fn recv_measured(measuring: &mut Option<tokio::task::JoinHandle<u64>>) -> Option<u64> {
    match measuring {
        Some(handle) => handle.await.ok(),
        None => std::future::pending().await,
    }
}

/// What the MCP fetch gave, once it is done; never when none runs.
async fn recv_fetch(
    fetching: &mut Option<tokio::task::JoinHandle<app::McpFetched>>,
) -> app::McpFetched {
    match fetching {
        Some(handle) => handle
            .await
            .unwrap_or_else(|e| app::McpFetched::Lost(e.to_string())),
        None => std::future::pending().await,
    }
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
        TermEvent::FocusGained => {
            app.on_focus(true);
            Vec::new()
        }
        TermEvent::FocusLost => {
            app.on_focus(false);
            Vec::new()
        }
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests;
