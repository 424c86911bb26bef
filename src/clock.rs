//! Time as a value the core is given, not one it reads: the orchestrator stamps events and
//! measures calls with a [`Clock`], so tests can run it on a clock they move by hand.
//! Timers (timeouts, backoff) use tokio's clock, which tests pause and advance the same way.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// Where the core reads the time.
pub trait Clock: Send + Sync + std::fmt::Debug {
    /// A monotonic instant, for durations.
    fn now(&self) -> Instant;
    /// Wall time in Unix milliseconds, for event stamps.
    fn unix_ms(&self) -> u64;
}

/// The real clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Instant {
        Instant::now()
    }

    fn unix_ms(&self) -> u64 {
        crate::event::unix_ms()
    }
}

/// A clock that moves only when told (tests).
#[derive(Debug, Clone)]
pub struct ManualClock {
    start: Instant,
    start_ms: u64,
    elapsed: Arc<Mutex<Duration>>,
}

impl ManualClock {
    /// A clock standing at `unix_ms`.
    pub fn at(unix_ms: u64) -> Self {
        Self {
            start: Instant::now(),
            start_ms: unix_ms,
            elapsed: Arc::default(),
        }
    }

    /// Moves the clock on by `by`.
    pub fn advance(&self, by: Duration) {
        let mut elapsed = self.elapsed.lock().unwrap_or_else(PoisonError::into_inner);
        *elapsed += by;
    }

    fn elapsed(&self) -> Duration {
        *self.elapsed.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Instant {
        self.start + self.elapsed()
    }

    fn unix_ms(&self) -> u64 {
        self.start_ms + self.elapsed().as_millis() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_manual_clock_moves_only_when_told() {
        let clock = ManualClock::at(1_000);
        let before = clock.now();
        assert_eq!(clock.unix_ms(), 1_000);
        clock.advance(Duration::from_millis(250));
        assert_eq!(clock.now() - before, Duration::from_millis(250));
        assert_eq!(clock.unix_ms(), 1_250);
    }
}
