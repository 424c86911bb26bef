//! Owns the terminal while the TUI runs: raw mode, alternate screen, bracketed paste, focus
//! reports (for notifications), mouse (unless `[ui] mouse = false`), keyboard enhancement
//! where supported. Restored on drop, on error and on panic; the alternate screen is cleared
//! before it is left (tmux, grown while taco ran, would otherwise hand rows of the last frame
//! back to the shell). Each frame is drawn as one synchronized update (mode 2026; terminals
//! without it ignore the mode, as they must any private mode they do not know). On the way in
//! it asks the terminal for its background colour (for `theme = "auto"`), before anything
//! else reads the keyboard.

use std::io::{self, Stdout, Write};
use std::os::fd::AsFd;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::time::Duration;

use ratatui::backend::{Backend, CrosstermBackend};
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{
    DisableBracketedPaste, DisableFocusChange, DisableMouseCapture, EnableBracketedPaste,
    EnableFocusChange, EnableMouseCapture, KeyboardEnhancementFlags, PopKeyboardEnhancementFlags,
    PushKeyboardEnhancementFlags,
};
use ratatui::crossterm::terminal::{
    BeginSynchronizedUpdate, Clear, ClearType, EndSynchronizedUpdate, EnterAlternateScreen,
    LeaveAlternateScreen, disable_raw_mode, enable_raw_mode, supports_keyboard_enhancement,
};
use ratatui::crossterm::{cursor, execute, queue};
use ratatui::layout::{Rect, Size};

use super::theme::{Background, detect};

mod out;
mod screen;
use out::{Flushing, Generation, Out};
use screen::Screen;

/// The frames' generation: [`restore`] ends it, so no frame queued before it is written after.
static FRAMES: Generation = Generation::new();
/// How long a dropped guard waits for its last frames to reach the terminal.
const DRAIN: Duration = Duration::from_secs(1);
/// Whether the terminal is ours right now (so restore runs once).
static ACTIVE: AtomicBool = AtomicBool::new(false);
/// Whether keyboard enhancement flags were pushed and must be popped.
static ENHANCED: AtomicBool = AtomicBool::new(false);
/// Whether the mouse was captured and must be let go.
static MOUSE: AtomicBool = AtomicBool::new(false);
/// Whether a guard was dropped holding the terminal for the next one (an in-place `/resume`).
static HELD: AtomicBool = AtomicBool::new(false);
/// What the terminal said its background is (0: unknown, 1: dark, 2: light), for the next
/// guard of a held terminal, which asks nothing.
static BACKGROUND: AtomicU8 = AtomicU8::new(0);

/// What taking the terminal turns on, from the config.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Setup {
    /// Capture the mouse (wheel, clicks). Off, the terminal keeps its own selection.
    pub mouse: bool,
    /// Ask the terminal for its background colour (`theme = "auto"`).
    pub ask_background: bool,
}

/// The terminal in TUI mode; dropping it restores the terminal.
pub struct TerminalGuard {
    /// The backend and the frame on screen ([`restore`] shows the cursor at the end).
    screen: Screen<Out>,
    /// What the terminal said its background is, when it was asked and answered.
    pub background: Option<Background>,
    /// Left in TUI mode on drop, for the next guard ([`TerminalGuard::hold`]).
    held: bool,
    /// How long the terminal's writes took, counted by its writer.
    flushing: Flushing,
}

impl TerminalGuard {
    /// Takes over the terminal as `setup` says and installs the panic hook that gives it back.
    /// A terminal a previous guard [held](TerminalGuard::hold) is taken as it is, and cleared.
    pub fn enter(setup: Setup) -> io::Result<Self> {
        install_panic_hook();
        if HELD.swap(false, Ordering::SeqCst) && ACTIVE.load(Ordering::SeqCst) {
            return Self::take_held();
        }
        enable_raw_mode()?;
        ACTIVE.store(true, Ordering::SeqCst);
        let mut stdout = io::stdout();
        // In raw mode (so the answer is not echoed) and before the event stream reads keys
        // (so the answer is never taken for typing); at most `detect::TIMEOUT`.
        let background = if setup.ask_background {
            let stdin = io::stdin();
            let mut tty = detect::Tty::new(stdin.as_fd());
            detect::query(&mut stdout, &mut tty, detect::TIMEOUT)
        } else {
            None
        };
        // Set first: a failure halfway still lets go of whatever was turned on.
        MOUSE.store(setup.mouse, Ordering::SeqCst);
        if let Err(e) = enter_modes(&mut stdout, setup) {
            restore();
            return Err(e);
        }
        // Shift-Enter is only distinguishable from Enter with the kitty keyboard protocol.
        if supports_keyboard_enhancement().unwrap_or(false)
            && execute!(
                stdout,
                PushKeyboardEnhancementFlags(KeyboardEnhancementFlags::DISAMBIGUATE_ESCAPE_CODES)
            )
            .is_ok()
        {
            ENHANCED.store(true, Ordering::SeqCst);
        }
        let flushing = Flushing::default();
        let backend = match frame_writer(stdout, &flushing) {
            Ok(out) => CrosstermBackend::new(out),
            Err(e) => {
                restore();
                return Err(e);
            }
        };
        match backend.size() {
            Ok(size) => {
                let code = match background {
                    None => 0,
                    Some(Background::Dark) => 1,
                    Some(Background::Light) => 2,
                };
                BACKGROUND.store(code, Ordering::SeqCst);
                Ok(Self {
                    screen: Screen::new(backend, size),
                    background,
                    held: false,
                    flushing,
                })
            }
            Err(e) => {
                restore();
                Err(e)
            }
        }
    }
}

/// Draws one frame of `size` on `screen` between the begin and end of a synchronized update.
fn draw_synced<W: Write>(
    screen: &mut Screen<W>,
    size: Size,
    render: impl FnOnce(Rect, &mut Buffer),
) -> io::Result<()> {
    queue!(screen.backend_mut(), BeginSynchronizedUpdate)?;
    let drawn = screen.draw(size, render);
    // Ended even when the draw failed halfway, so the terminal does not wait on it.
    let ended = execute!(screen.backend_mut(), EndSynchronizedUpdate);
    drawn.and(ended)
}

/// Turns on the alternate screen, bracketed paste, focus reports and, when `setup` says so,
/// mouse capture.
fn enter_modes(out: &mut impl Write, setup: Setup) -> io::Result<()> {
    queue!(
        out,
        EnterAlternateScreen,
        EnableBracketedPaste,
        EnableFocusChange
    )?;
    if setup.mouse {
        queue!(out, EnableMouseCapture)?;
    }
    out.flush()
}

impl TerminalGuard {
    /// Draws one frame with `render` as a single synchronized update: the terminal shows it
    /// whole, never half of it, however long the write takes.
    /// The frame is handed to the writer thread; returns how long that waited (a frame
    /// already queued behind the write in progress: the terminal falling behind).
    pub fn draw_synced(&mut self, render: impl FnOnce(Rect, &mut Buffer)) -> io::Result<Duration> {
        let size = self.screen.backend_mut().size()?;
        let started = std::time::Instant::now();
        self.screen
            .backend_mut()
            .writer_mut()
            .frame_started(started);
        self.flushing.take();
        draw_synced(&mut self.screen, size, render)?;
        Ok(self.flushing.take())
    }

    /// Whether the terminal is behind (a frame being written, another waiting): the next
    /// frame had better wait than queue.
    pub fn behind(&self) -> bool {
        self.screen.backend().writer().behind()
    }

    /// What each frame's write to the terminal took (the writer thread's count); `None`
    /// before any frame.
    pub fn written(&self) -> Option<super::frames::Summary> {
        self.flushing.written()
    }

    /// How long frames took from the start of their draw to their last byte written (the
    /// draw and the write, and any wait between); `None` before any frame.
    pub fn shown(&self) -> Option<super::frames::Summary> {
        self.flushing.shown()
    }

    /// Writes escape sequences straight to the terminal, between frames.
    pub fn write_raw(&mut self, bytes: &[u8]) -> io::Result<()> {
        let out = self.screen.backend_mut();
        out.write_all(bytes)?;
        Write::flush(out)
    }

    /// The terminal a previous guard held, as it is: cleared without asking the terminal
    /// anything (ratatui's `clear` asks where the cursor is, and an answer can be lost while
    /// the last input reader winds down); its background is what the first guard learned.
    fn take_held() -> io::Result<Self> {
        let mut stdout = io::stdout();
        execute!(stdout, Clear(ClearType::All)).inspect_err(|_| restore())?;
        let flushing = Flushing::default();
        let backend =
            CrosstermBackend::new(frame_writer(stdout, &flushing).inspect_err(|_| restore())?);
        let size = backend.size().inspect_err(|_| restore())?;
        let background = match BACKGROUND.load(Ordering::SeqCst) {
            1 => Some(Background::Dark),
            2 => Some(Background::Light),
            _ => None,
        };
        Ok(Self {
            screen: Screen::new(backend, size),
            background,
            held: false,
            flushing,
        })
    }

    /// Ends this guard but keeps the terminal in TUI mode for the next
    /// [`enter`](TerminalGuard::enter), so switching sessions does not flash the shell's
    /// screen. Whoever holds it must enter again or [`restore`]; a panic still restores it.
    pub fn hold(mut self) {
        self.held = true;
        HELD.store(true, Ordering::SeqCst);
    }
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        // The frames handed on reach the terminal before it is given back (or held for the
        // next guard, whose first write must come after them); a terminal that stopped
        // reading gets [`DRAIN`], then the rest is dropped.
        self.screen.backend_mut().writer_mut().finish(DRAIN);
        if !self.held {
            restore();
        }
    }
}

fn frame_writer(stdout: Stdout, flushing: &Flushing) -> io::Result<Out> {
    Out::new(stdout, flushing.clone(), &FRAMES)
}

/// Gives the terminal back (idempotent): leaves raw mode and the alternate screen.
pub fn restore() {
    HELD.store(false, Ordering::SeqCst);
    if !ACTIVE.swap(false, Ordering::SeqCst) {
        return;
    }
    // Frames still queued were for the screen being left: dropped, and none is written
    // after what follows (the writer writes under this lock).
    let _frames = FRAMES.end();
    let mut stdout = io::stdout();
    if ENHANCED.swap(false, Ordering::SeqCst) {
        let _ = execute!(stdout, PopKeyboardEnhancementFlags);
    }
    if MOUSE.swap(false, Ordering::SeqCst) {
        let _ = execute!(stdout, DisableMouseCapture);
    }
    let _ = leave_modes(&mut stdout);
    let _ = disable_raw_mode();
    let _ = stdout.flush();
}

/// Turns off what [`enter_modes`] turned on (mouse capture aside) and leaves the alternate
/// screen cleared, the cursor shown.
fn leave_modes(out: &mut impl Write) -> io::Result<()> {
    execute!(
        out,
        DisableFocusChange,
        DisableBracketedPaste,
        Clear(ClearType::All),
        LeaveAlternateScreen,
        cursor::Show
    )
}

fn install_panic_hook() {
    static INSTALLED: AtomicBool = AtomicBool::new(false);
    if INSTALLED.swap(true, Ordering::SeqCst) {
        return;
    }
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        tracing::error!("panic: {info}");
        // Panics off the main thread (a tool, the orchestrator task) are caught and reported
        // in the UI; printing them would scribble over the screen, so they go to the log only.
        let on_main = std::thread::current().name() == Some("main");
        if on_main || !ACTIVE.load(Ordering::SeqCst) {
            // Restore first so the message lands on a normal screen.
            restore();
            previous(info);
        }
    }));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `enter_modes` writes for `setup`.
    fn modes(mouse: bool) -> String {
        let mut out = Vec::new();
        let setup = Setup {
            mouse,
            ask_background: false,
        };
        enter_modes(&mut out, setup).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn mouse_off_enables_no_mouse_reporting_at_all() {
        let with = modes(true);
        let without = modes(false);
        // Any of the mouse tracking modes (1000 clicks, 1002 drags, 1003 motion, 1006 SGR).
        for mode in ["?1000h", "?1002h", "?1003h", "?1006h"] {
            assert!(with.contains(mode), "{mode} in {with:?}");
            assert!(!without.contains(mode), "{mode} in {without:?}");
        }
        for both in [&with, &without] {
            assert!(both.contains("?1049h"), "the alternate screen: {both:?}");
            assert!(both.contains("?2004h"), "bracketed paste: {both:?}");
            assert!(both.contains("?1004h"), "focus reports: {both:?}");
        }
    }

    #[test]
    fn a_frame_is_written_as_one_synchronized_update() {
        /// What the terminal was sent, kept where the test can read it.
        #[derive(Clone, Default)]
        struct Sent(std::rc::Rc<std::cell::RefCell<Vec<u8>>>);
        impl Write for Sent {
            fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
                self.0.borrow_mut().extend_from_slice(buf);
                Ok(buf.len())
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let sent = Sent::default();
        let size = Size::new(20, 2);
        let mut screen = Screen::new(CrosstermBackend::new(sent.clone()), size);
        draw_synced(&mut screen, size, |_, buf| {
            buf.set_string(0, 0, "hello", ratatui::style::Style::default());
        })
        .unwrap();
        let out = String::from_utf8_lossy(&sent.0.borrow()).into_owned();
        let begin = out.find("\x1b[?2026h").expect("begins the update");
        let text = out.find("hello").expect("the frame");
        let end = out.rfind("\x1b[?2026l").expect("ends the update");
        assert!(begin < text && text < end, "{out:?}");
        assert!(
            out.ends_with("\x1b[?2026l"),
            "nothing after the end: {out:?}"
        );
    }

    #[test]
    fn a_frame_and_its_end_go_to_the_terminal_in_one_timed_write() {
        /// Counts the writes it is given and takes a while over each.
        #[derive(Clone, Default)]
        struct Slow(std::sync::Arc<std::sync::Mutex<Vec<usize>>>);
        impl Write for Slow {
            fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
                std::thread::sleep(Duration::from_millis(5));
                self.0.lock().unwrap().push(buf.len());
                Ok(buf.len())
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        static GENERATION: Generation = Generation::new();
        let slow = Slow::default();
        let flushing = Flushing::default();
        let size = Size::new(20, 2);
        let out = Out::new(slow.clone(), flushing.clone(), &GENERATION).unwrap();
        let mut screen = Screen::new(CrosstermBackend::new(out), size);
        draw_synced(&mut screen, size, |_, buf| {
            buf.set_string(0, 0, "hello", ratatui::style::Style::default());
        })
        .unwrap();
        assert!(
            screen
                .backend_mut()
                .writer_mut()
                .finish(Duration::from_secs(10)),
            "written within the bound"
        );
        assert_eq!(slow.0.lock().unwrap().len(), 1, "one write: {:?}", slow.0);
        let written = flushing.written().expect("the write was timed");
        assert_eq!(written.frames, 1);
        assert!(written.max_us >= 5_000, "{written:?}");
    }

    #[test]
    fn leaving_clears_the_alternate_screen_first_and_turns_focus_reports_off() {
        let mut out = Vec::new();
        leave_modes(&mut out).unwrap();
        let out = String::from_utf8(out).unwrap();
        let clear = out.find("\x1b[2J").expect("a whole-screen clear");
        let leave = out.find("?1049l").expect("the alternate screen left");
        assert!(
            clear < leave,
            "cleared while still on the alternate screen: {out:?}"
        );
        assert!(out.contains("?1004l"), "focus reports off: {out:?}");
        assert!(out.contains("?2004l"), "bracketed paste off: {out:?}");
        assert!(out.contains("?25h"), "the cursor shown: {out:?}");
    }
}
