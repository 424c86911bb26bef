//! How full the user's conversation is (the status line's `ctx 43%`).

/// How much of the model's context window the user's conversation uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContextGauge {
    /// Tokens of the latest request and its reply (after a compaction: the estimate of the
    /// next request).
    pub used: u64,
    /// The window, when known.
    pub window: Option<u64>,
}

impl ContextGauge {
    /// The share of the window used, in percent (`None` with no known window).
    pub fn percent(&self) -> Option<u64> {
        self.window
            .filter(|w| *w > 0)
            .map(|w| self.used.saturating_mul(100) / w)
    }
}
