//! The dialog guard (issue 9): a dialog that opens while the user is typing must not take
//! their next letters as its answer ("also try this" once approved a write with its `t`).
//! A dialog ignores answer keys until it has been on screen for the guard time *and* the
//! keyboard has been quiet for a short gap; until then keys go where they would go without
//! a dialog. Pure state with injected time, so tests can walk the clock.

use std::time::{Duration, Instant};

/// Longest guard honoured: a config typo must not lock a dialog for hours (or overflow).
const MAX_GUARD: Duration = Duration::from_secs(10);

/// Keys closer together than this are one burst of typing. An average typist (40 wpm) leaves
/// about 240 ms between keys and faster ones much less, so a burst rarely has a gap this
/// long; someone who noticed the dialog takes longer than this to stop, read and press a key
/// (a visual reaction alone is about 250 ms), so a deliberate answer never waits for it.
const QUIET: Duration = Duration::from_millis(250);

/// Which dialog shows since when, and when the last key was typed.
#[derive(Debug)]
pub(super) struct DialogGuard {
    guard: Duration,
    quiet: Duration,
    /// The dialog on screen (a tagged approval or question id) and when it appeared.
    shown: Option<(String, Instant)>,
    /// The shown dialog has become ready once: it stays ready (typing a reason or a
    /// parameter fast must not lock it again) until another dialog shows.
    armed: bool,
    /// The last key that typed or answered (moving around does not count).
    last_key: Option<Instant>,
}

impl DialogGuard {
    /// A guard of `guard` (zero: dialogs take keys at once).
    pub(super) fn new(guard: Duration) -> Self {
        let guard = guard.min(MAX_GUARD);
        Self {
            guard,
            // A short guard means the user wants fast dialogs: the gap never exceeds it.
            quiet: QUIET.min(guard),
            shown: None,
            armed: false,
            last_key: None,
        }
    }

    /// Notes which dialog is on screen; a different one starts guarded from `now`.
    pub(super) fn show(&mut self, shown: Option<String>, now: Instant) {
        let same = match (&shown, &self.shown) {
            (Some(id), Some((current, _))) => id == current,
            (None, None) => true,
            _ => false,
        };
        if !same {
            self.armed = shown.is_some() && self.guard.is_zero();
            self.shown = shown.map(|id| (id, now));
        }
    }

    /// How long until the shown dialog takes answer keys, if it does not yet (no new keys
    /// assumed). `None` when it takes them now or no dialog shows.
    pub(super) fn wait(&self, now: Instant) -> Option<Duration> {
        let (_, opened) = self.shown.as_ref()?;
        if self.armed {
            return None;
        }
        let mut ready = opened.checked_add(self.guard)?;
        if let Some(key) = self.last_key.and_then(|k| k.checked_add(self.quiet)) {
            ready = ready.max(key);
        }
        let left = ready.saturating_duration_since(now);
        (!left.is_zero()).then_some(left)
    }

    /// Takes a key press at `now`: `true` while a dialog shows that must not take it as an
    /// answer. `typing` keys (all but moving around) extend the burst.
    pub(super) fn holds(&mut self, now: Instant, typing: bool) -> bool {
        let held = self.shown.is_some() && self.wait(now).is_some();
        if self.shown.is_some() && !held {
            self.armed = true;
        }
        if typing {
            self.last_key = Some(now);
        }
        held
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn a_dialog_waits_for_the_guard_and_a_quiet_gap() {
        let t0 = Instant::now();
        let mut g = DialogGuard::new(ms(400));
        assert!(!g.holds(t0, true), "no dialog: nothing to hold");
        g.show(Some("a:1".into()), t0 + ms(100));
        assert_eq!(g.wait(t0 + ms(100)), Some(ms(400)));
        assert!(g.holds(t0 + ms(300), true), "inside the guard");
        // The guard is over at 500 ms, but the last key (300 ms) needs 250 ms of quiet.
        assert_eq!(g.wait(t0 + ms(500)), Some(ms(50)));
        assert!(g.holds(t0 + ms(520), true), "a burst re-arms the gap");
        assert!(g.holds(t0 + ms(700), true));
        assert!(!g.holds(t0 + ms(950), true), "quiet for 250 ms: ready");
        assert_eq!(g.wait(t0 + ms(951)), None);
        // Ready stays ready: typing a reason fast does not lock it again.
        assert!(!g.holds(t0 + ms(960), true));
        assert!(!g.holds(t0 + ms(970), true));
    }

    #[test]
    fn moving_around_does_not_extend_the_burst() {
        let t0 = Instant::now();
        let mut g = DialogGuard::new(ms(400));
        g.show(Some("a:1".into()), t0);
        assert!(g.holds(t0 + ms(350), false));
        assert!(!g.holds(t0 + ms(420), true));
    }

    #[test]
    fn each_new_dialog_is_guarded_again_and_zero_turns_it_off() {
        let t0 = Instant::now();
        let mut g = DialogGuard::new(ms(400));
        g.show(Some("a:1".into()), t0);
        assert!(!g.holds(t0 + ms(1000), true));
        g.show(Some("a:1".into()), t0 + ms(1000));
        assert!(!g.holds(t0 + ms(1010), true), "the same dialog stays ready");
        g.show(Some("a:2".into()), t0 + ms(1010));
        assert!(
            g.holds(t0 + ms(1020), true),
            "the next call must be read first"
        );
        g.show(None, t0 + ms(1030));
        assert_eq!(g.wait(t0 + ms(1030)), None);

        let mut off = DialogGuard::new(Duration::ZERO);
        off.show(Some("q:1".into()), t0);
        assert!(!off.holds(t0, true));
        assert_eq!(off.wait(t0), None);
    }

    #[test]
    fn a_huge_guard_is_capped() {
        let t0 = Instant::now();
        let mut g = DialogGuard::new(Duration::from_millis(u64::MAX));
        g.show(Some("a:1".into()), t0);
        assert_eq!(g.wait(t0), Some(MAX_GUARD));
        assert!(!g.holds(t0 + MAX_GUARD, false));
    }
}
