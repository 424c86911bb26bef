//! Owns the terminal while the TUI runs: raw mode, alternate screen, bracketed paste, mouse,
//! keyboard enhancement where supported. Restored on drop, on error and on panic.

use std::io::{self, Stdout, Write};
use std::mem::ManuallyDrop;
use std::sync::atomic::{AtomicBool, Ordering};

use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use ratatui::crossterm::event::{
    DisableBracketedPaste, DisableMouseCapture, EnableBracketedPaste, EnableMouseCapture,
    KeyboardEnhancementFlags, PopKeyboardEnhancementFlags, PushKeyboardEnhancementFlags,
};
use ratatui::crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
    supports_keyboard_enhancement,
};
use ratatui::crossterm::{cursor, execute};

/// Whether the terminal is ours right now (so restore runs once).
static ACTIVE: AtomicBool = AtomicBool::new(false);
/// Whether keyboard enhancement flags were pushed and must be popped.
static ENHANCED: AtomicBool = AtomicBool::new(false);

/// The terminal in TUI mode; dropping it restores the terminal.
pub struct TerminalGuard {
    /// The ratatui terminal. Never dropped: ratatui's own drop `eprintln!`s when it cannot
    /// show the cursor, which panics when the terminal is gone (a closed window); [`restore`]
    /// shows the cursor instead and ignores such errors.
    pub terminal: ManuallyDrop<Terminal<CrosstermBackend<Stdout>>>,
}

impl TerminalGuard {
    /// Takes over the terminal and installs the panic hook that gives it back.
    pub fn enter() -> io::Result<Self> {
        install_panic_hook();
        enable_raw_mode()?;
        ACTIVE.store(true, Ordering::SeqCst);
        let mut stdout = io::stdout();
        if let Err(e) = execute!(
            stdout,
            EnterAlternateScreen,
            EnableBracketedPaste,
            EnableMouseCapture
        ) {
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
        match Terminal::new(CrosstermBackend::new(stdout)) {
            Ok(terminal) => Ok(Self {
                terminal: ManuallyDrop::new(terminal),
            }),
            Err(e) => {
                restore();
                Err(e)
            }
        }
    }
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        restore();
    }
}

/// Gives the terminal back (idempotent): leaves raw mode and the alternate screen.
pub fn restore() {
    if !ACTIVE.swap(false, Ordering::SeqCst) {
        return;
    }
    let mut stdout = io::stdout();
    if ENHANCED.swap(false, Ordering::SeqCst) {
        let _ = execute!(stdout, PopKeyboardEnhancementFlags);
    }
    let _ = execute!(
        stdout,
        DisableMouseCapture,
        DisableBracketedPaste,
        LeaveAlternateScreen,
        cursor::Show
    );
    let _ = disable_raw_mode();
    let _ = stdout.flush();
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
