//! Termination signals (issue 9.5): SIGINT, SIGTERM, SIGHUP (a closed terminal) and SIGQUIT
//! all end taco the same careful way — running work is cancelled, tool processes are
//! killed, the terminal and the session file are left whole — and taco exits 128 + signal.

use std::io;

use tokio::signal::unix::{Signal, SignalKind, signal};

/// A signal that ends taco.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// SIGINT (Ctrl-C outside raw mode, `kill -INT`).
    Interrupt,
    /// SIGTERM.
    Terminate,
    /// SIGHUP: the terminal went away.
    Hangup,
    /// SIGQUIT.
    Quit,
}

impl Stop {
    /// The signal number.
    pub fn number(self) -> i32 {
        match self {
            Self::Interrupt => libc::SIGINT,
            Self::Terminate => libc::SIGTERM,
            Self::Hangup => libc::SIGHUP,
            Self::Quit => libc::SIGQUIT,
        }
    }

    /// The exit code the shell convention gives a process ended by this signal.
    pub fn exit_code(self) -> i32 {
        128 + self.number()
    }

    /// `SIGTERM`, …
    pub fn name(self) -> &'static str {
        match self {
            Self::Interrupt => "SIGINT",
            Self::Terminate => "SIGTERM",
            Self::Hangup => "SIGHUP",
            Self::Quit => "SIGQUIT",
        }
    }
}

/// Listens for the signals that end taco. Once installed, they no longer kill the process
/// outright: whoever holds this decides how to wind down.
pub struct Signals {
    interrupt: Signal,
    terminate: Signal,
    hangup: Signal,
    quit: Signal,
}

impl Signals {
    /// Installs the handlers (inside a tokio runtime).
    pub fn install() -> io::Result<Self> {
        Ok(Self {
            interrupt: signal(SignalKind::interrupt())?,
            terminate: signal(SignalKind::terminate())?,
            hangup: signal(SignalKind::hangup())?,
            quit: signal(SignalKind::quit())?,
        })
    }

    /// The next signal that arrives.
    pub async fn recv(&mut self) -> Stop {
        tokio::select! {
            _ = self.interrupt.recv() => Stop::Interrupt,
            _ = self.terminate.recv() => Stop::Terminate,
            _ = self.hangup.recv() => Stop::Hangup,
            _ = self.quit.recv() => Stop::Quit,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_follow_the_shell_convention() {
        assert_eq!(Stop::Interrupt.exit_code(), 130);
        assert_eq!(Stop::Terminate.exit_code(), 143);
        assert_eq!(Stop::Hangup.exit_code(), 129);
        assert_eq!(Stop::Quit.exit_code(), 131);
    }

    #[tokio::test]
    async fn a_signal_sent_to_ourselves_is_received_not_fatal() {
        let mut signals = Signals::install().unwrap();
        // SAFETY: raise has no memory-safety preconditions; the handler is installed above,
        // so SIGHUP is delivered to it instead of ending the test process.
        unsafe {
            libc::raise(libc::SIGHUP);
        }
        assert_eq!(signals.recv().await, Stop::Hangup);
    }
}
