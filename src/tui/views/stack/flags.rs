//! Stuck and slow calls (issue 14.8): a call running longer than its tool's typical time, or
//! one that streams output and went quiet, gets a ⚠. Pure: durations and times come in, the
//! flag's text comes out, so the chat can show the same flag.

use std::collections::{HashMap, VecDeque};
use std::time::Duration;

/// Finished calls remembered per tool for its typical time.
const SAMPLES: usize = 50;
/// Samples needed before a tool's own history sets its threshold.
const MIN_SAMPLES: usize = 3;
/// A threshold from history is at least this: a tool that always takes 10 ms is not slow at 40.
const FLOOR: Duration = Duration::from_secs(2);
/// How many times its p95 a call may run before it is slow.
const FACTOR: u32 = 3;

/// When calls count as slow or quiet (`[tui] slow_after_secs`, `quiet_after_secs`).
#[derive(Debug, Clone, PartialEq)]
pub struct FlagSettings {
    /// A configured threshold per tool name; others go by their history.
    pub slow_after: HashMap<String, Duration>,
    /// Quiet this long after its last output, a call that streams output is flagged (zero:
    /// never).
    pub quiet_after: Duration,
}

impl Default for FlagSettings {
    fn default() -> Self {
        Self {
            slow_after: HashMap::new(),
            quiet_after: Duration::from_secs(30),
        }
    }
}

/// Durations of this session's finished calls per tool (bounded), and the settings.
#[derive(Debug, Clone, Default)]
pub struct Flags {
    /// The thresholds.
    pub settings: FlagSettings,
    history: HashMap<String, VecDeque<Duration>>,
}

impl Flags {
    /// Remembers how long a call of `tool` took.
    pub fn record(&mut self, tool: &str, took: Duration) {
        let samples = self.history.entry(tool.to_string()).or_default();
        if samples.len() == SAMPLES {
            samples.pop_front();
        }
        samples.push_back(took);
    }

    /// The durations remembered for `tool`, oldest first.
    pub fn history(&self, tool: &str) -> Vec<Duration> {
        (self.history.get(tool)).map_or_else(Vec::new, |s| s.iter().copied().collect())
    }

    /// How long a call of `tool` may run before it is slow, if that is known.
    pub fn threshold(&self, tool: &str) -> Option<Duration> {
        if let Some(configured) = self.settings.slow_after.get(tool) {
            return Some(*configured);
        }
        let samples: Vec<Duration> = self.history.get(tool)?.iter().copied().collect();
        threshold_from(&samples)
    }

    /// The flag for a running call of `tool` that ran `elapsed`, its last output `quiet_for`
    /// ago (`None`: it streamed none).
    pub fn flag(
        &self,
        tool: &str,
        elapsed: Duration,
        quiet_for: Option<Duration>,
    ) -> Option<String> {
        slow_flag(
            elapsed,
            self.threshold(tool),
            quiet_for,
            self.settings.quiet_after,
        )
    }
}

/// The threshold from a tool's past durations: p95 × 3, at least 2 s; `None` with fewer than
/// 3 samples.
pub fn threshold_from(samples: &[Duration]) -> Option<Duration> {
    if samples.len() < MIN_SAMPLES {
        return None;
    }
    let mut sorted = samples.to_vec();
    sorted.sort_unstable();
    // Nearest rank: the smallest sample at or above 95 % of them.
    let rank = (sorted.len() * 95).div_ceil(100).max(1);
    let p95 = sorted.get(rank - 1).copied().unwrap_or_default();
    Some(p95.saturating_mul(FACTOR).max(FLOOR))
}

/// The ⚠ text for a running call, if it deserves one: `⚠ slow` past `threshold`, `⚠ quiet 45 s`
/// when its last output is `quiet_after` or more ago (quiet wins: it says more).
pub fn slow_flag(
    elapsed: Duration,
    threshold: Option<Duration>,
    quiet_for: Option<Duration>,
    quiet_after: Duration,
) -> Option<String> {
    if let Some(quiet) = quiet_for.filter(|q| !quiet_after.is_zero() && *q >= quiet_after) {
        return Some(format!("⚠ quiet {} s", quiet.as_secs()));
    }
    threshold
        .filter(|t| elapsed > *t)
        .map(|_| "⚠ slow".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secs(s: u64) -> Duration {
        Duration::from_secs(s)
    }

    #[test]
    fn history_sets_the_threshold_once_there_are_three_samples() {
        let mut flags = Flags::default();
        flags.record("shell", secs(1));
        flags.record("shell", secs(2));
        assert_eq!(flags.threshold("shell"), None);
        flags.record("shell", secs(4));
        assert_eq!(
            flags.threshold("shell"),
            Some(secs(12)),
            "p95 of 1,2,4 is 4"
        );
        assert_eq!(flags.flag("shell", secs(12), None), None);
        assert_eq!(
            flags.flag("shell", secs(13), None).as_deref(),
            Some("⚠ slow")
        );
        assert_eq!(flags.threshold("other"), None);
    }

    #[test]
    fn quick_tools_get_the_floor_and_configuration_wins() {
        let mut flags = Flags::default();
        for _ in 0..5 {
            flags.record("read_file", Duration::from_millis(5));
        }
        assert_eq!(flags.threshold("read_file"), Some(FLOOR));
        flags
            .settings
            .slow_after
            .insert("read_file".into(), secs(60));
        assert_eq!(flags.threshold("read_file"), Some(secs(60)));
    }

    #[test]
    fn history_is_bounded_and_p95_ignores_one_outlier_in_many() {
        let mut flags = Flags::default();
        flags.record("t", secs(1000));
        for _ in 0..SAMPLES {
            flags.record("t", secs(1));
        }
        assert_eq!(flags.history["t"].len(), SAMPLES);
        assert_eq!(flags.threshold("t"), Some(secs(3)), "the outlier left");
    }

    #[test]
    fn quiet_needs_output_and_says_how_long() {
        let quiet = secs(30);
        assert_eq!(
            slow_flag(secs(100), None, None, quiet),
            None,
            "no output: never quiet"
        );
        assert_eq!(slow_flag(secs(100), None, Some(secs(29)), quiet), None);
        assert_eq!(
            slow_flag(secs(100), Some(secs(1)), Some(secs(45)), quiet).as_deref(),
            Some("⚠ quiet 45 s")
        );
        assert_eq!(
            slow_flag(secs(100), None, Some(secs(999)), Duration::ZERO),
            None
        );
    }
}
