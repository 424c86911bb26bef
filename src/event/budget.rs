//! The cost budget's limit event (issue 31): `budget_reached`, sent when the next model call
//! would take the session's cost past `--max-cost` (`max_cost`), before that call is sent.

use serde::{Deserialize, Serialize};

use super::Purpose;

/// The session's cost plus the next call's would pass the budget: the call was not made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BudgetReached {
    /// The budget, in US dollars.
    pub max_cost: f64,
    /// What the session had spent, at the configured prices (every model, earlier runs of
    /// the session included).
    pub spent: f64,
    /// What the call not made would have cost at least: its input at the model's price.
    pub next_call: f64,
    /// That input, estimated in tokens.
    pub input_tokens: u64,
    /// The model it was for.
    pub model: String,
    /// What the call was for.
    pub purpose: Purpose,
    /// The frame it would have run under, if a sub-agent's or a tool's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
}

impl BudgetReached {
    /// What happened and what to do, in one sentence.
    pub fn message(&self) -> String {
        use crate::config::pricing::dollars;
        format!(
            "the cost budget of {} (--max-cost, max_cost) is reached: this session has spent {}, \
             and the next model call ({}, about {} input tokens) would cost at least {} more; \
             stopped before sending it. Raise the budget to go on",
            dollars(self.max_cost),
            dollars(self.spent),
            self.model,
            self.input_tokens,
            dollars(self.next_call),
        )
    }
}
