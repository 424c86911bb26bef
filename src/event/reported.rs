//! What an external agent driven over ACP says it has used (`usage_reported`, issue 32): its
//! context window and, when it says, what the session cost. taco cannot count the tokens of
//! calls it does not make, so the status line shows the agent's own figures.

use serde::{Deserialize, Serialize};

/// Data of a `usage_reported` event: an ACP agent's `usage_update`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UsageReported {
    /// Tokens in its context now.
    pub used: u64,
    /// Its context window in tokens.
    pub size: u64,
    /// The session's cost so far, as the agent reckons it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<f64>,
    /// The currency of `cost` (ISO 4217, `USD`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub currency: Option<String>,
}

impl UsageReported {
    /// The cost in US dollars, when it is given in them (the status line shows dollars).
    pub fn dollars(&self) -> Option<f64> {
        self.cost
            .filter(|c| c.is_finite() && *c >= 0.0)
            .filter(|_| {
                self.currency
                    .as_deref()
                    .is_some_and(|c| c.eq_ignore_ascii_case("USD"))
            })
    }
}
