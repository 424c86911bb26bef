//! How much of a server's chatter reaches taco's log (issue 28.1): stderr lines and
//! `notifications/message` are written at most [`PER_WINDOW`] a second per server and kind;
//! the rest are counted and said in one line when the next second opens (a server logged
//! 1.44 GB in 20 s before).

use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

/// Lines written per window.
pub const PER_WINDOW: u32 = 20;

/// The window.
const WINDOW: Duration = Duration::from_secs(1);

/// What to do with one line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admit {
    /// Write it.
    Write,
    /// Write it, after saying how many lines the last window dropped.
    WriteAfterDropped(u64),
    /// Drop it (counted).
    Drop,
}

/// A per-second allowance of log lines; `now` is passed in (time is injected).
#[derive(Debug, Default)]
pub struct LogGate(Mutex<Window>);

#[derive(Debug, Default)]
struct Window {
    start: Option<Instant>,
    written: u32,
    dropped: u64,
}

impl LogGate {
    /// Whether a line that came at `now` is written.
    pub fn admit(&self, now: Instant) -> Admit {
        let mut w = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let fresh = w
            .start
            .is_none_or(|start| now.saturating_duration_since(start) >= WINDOW);
        let mut dropped = 0;
        if fresh {
            dropped = std::mem::take(&mut w.dropped);
            w.start = Some(now);
            w.written = 0;
        }
        if w.written >= PER_WINDOW {
            w.dropped = w.dropped.saturating_add(1);
            return Admit::Drop;
        }
        w.written += 1;
        match dropped {
            0 => Admit::Write,
            n => Admit::WriteAfterDropped(n),
        }
    }
}

impl LogGate {
    /// Whether a line of `server`'s `what` (stderr, log) is written now; a second that
    /// dropped lines is said once, when the next one opens.
    pub fn allows(&self, server: &str, what: &str) -> bool {
        match self.admit(Instant::now()) {
            Admit::Drop => false,
            Admit::Write => true,
            Admit::WriteAfterDropped(dropped) => {
                tracing::info!(
                    server,
                    what,
                    dropped,
                    "mcp server: lines not logged (over 20 a second)"
                );
                true
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flood_writes_its_allowance_then_says_what_it_dropped() {
        let gate = LogGate::default();
        let t0 = Instant::now();
        let admitted: Vec<Admit> = (0..1_000u64)
            .map(|n| gate.admit(t0 + Duration::from_micros(n * 900)))
            .collect();
        let written = admitted.iter().filter(|a| **a != Admit::Drop).count();
        assert_eq!(written, PER_WINDOW as usize);
        // The next second opens with one line saying what the last one dropped.
        assert_eq!(
            gate.admit(t0 + Duration::from_millis(1_000)),
            Admit::WriteAfterDropped(1_000 - u64::from(PER_WINDOW))
        );
        assert_eq!(gate.admit(t0 + Duration::from_millis(1_001)), Admit::Write);
    }

    #[test]
    fn a_quiet_server_loses_nothing() {
        let gate = LogGate::default();
        let t0 = Instant::now();
        for n in 0..100u64 {
            assert_eq!(
                gate.admit(t0 + Duration::from_millis(n * 100)),
                Admit::Write
            );
        }
    }
}
