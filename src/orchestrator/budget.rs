//! The cost budget (issue 31): `--max-cost DOLLARS` (`max_cost`). Before each model call —
//! the user's conversation, a sub-agent's, a tool's, a compaction's summary — the session's
//! cost so far (every model, earlier runs of the session included, at the prices the status
//! line uses) plus the least the call will cost (its input, estimated, at the model's input
//! price) is held against the budget; a call that would pass it is not sent and the run ends.

use std::collections::BTreeMap;

use super::context::{messages_tokens, specs_tokens};
use super::scope::Run;
use crate::config::pricing::Pricing;
use crate::conversation::{Message, ToolSpec, Usage};
use crate::event::{BudgetReached, EventData, Purpose};

/// The most a budget may be, in US dollars: more is a typing slip, not a budget.
pub const MAX_BUDGET: f64 = 10_000.0;

/// A budget, checked: a finite amount of US dollars above zero and at most [`MAX_BUDGET`].
pub fn checked(dollars: f64) -> Result<f64, String> {
    if !dollars.is_finite() || dollars <= 0.0 {
        return Err(format!(
            "a cost budget is an amount of US dollars above 0, not {dollars}"
        ));
    }
    if dollars > MAX_BUDGET {
        return Err(format!(
            "a cost budget of {dollars} US dollars is more than taco takes ({MAX_BUDGET})"
        ));
    }
    Ok(dollars)
}

/// `--max-cost`'s value: `0.50`, `$2`; checked as [`checked`] does.
pub fn parse_dollars(text: &str) -> Result<f64, String> {
    let trimmed = text.trim();
    let number = trimmed.strip_prefix('$').unwrap_or(trimmed);
    let dollars: f64 = number
        .parse()
        .map_err(|_| format!("'{text}' is not an amount of US dollars (e.g. 0.50)"))?;
    checked(dollars)
}

/// The budget of a session and the prices it is counted at.
#[derive(Debug, Clone, PartialEq)]
pub struct CostBudget {
    /// The most the session may cost, in US dollars (see [`checked`]).
    pub max_cost: f64,
    /// The prices: the config's `[pricing]` over the built-in ones.
    pub pricing: Pricing,
}

/// What the session spent: its tokens by model, as the status line counts them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Spent {
    by_model: BTreeMap<String, Usage>,
}

impl Spent {
    /// Counts one call's tokens on `model`.
    pub fn add(&mut self, model: &str, usage: Usage) {
        self.by_model
            .entry(model.to_string())
            .or_default()
            .add(usage);
    }

    /// Counts tokens by model (a resumed session's).
    pub fn add_all(&mut self, by_model: &BTreeMap<String, Usage>) {
        for (model, usage) in by_model {
            self.add(model, *usage);
        }
    }

    /// The tokens by model.
    pub fn by_model(&self) -> &BTreeMap<String, Usage> {
        &self.by_model
    }

    /// What they cost, summed over the models whose price is known (as the status line).
    pub fn cost(&self, pricing: &Pricing) -> f64 {
        (self.by_model.iter())
            .filter_map(|(model, usage)| pricing.cost(model, usage))
            .sum()
    }
}

/// Why a model call was not made.
#[derive(Debug, Clone, PartialEq)]
pub enum Stop {
    /// It would have passed the budget.
    Reached(Box<BudgetReached>),
    /// Its model has no price (a model switched to mid-session): its cost cannot be counted.
    NoPrice {
        /// The model.
        model: String,
    },
}

impl Stop {
    /// What happened and what to do.
    pub fn message(&self) -> String {
        match self {
            Self::Reached(reached) => reached.message(),
            Self::NoPrice { model } => format!(
                "the cost budget (--max-cost, max_cost) cannot be kept: taco knows no price for \
                 the model {model}; set [pricing.\"{model}\"] in the config or use a model \
                 with a price"
            ),
        }
    }
}

/// The call a check is about.
#[derive(Debug, Clone)]
pub struct NextCall<'a> {
    /// The model it is for.
    pub model: &'a str,
    /// Its input, estimated ([`input_tokens`]).
    pub input_tokens: u64,
    /// What it is for.
    pub purpose: Purpose,
    /// The frame it runs under.
    pub parent: Option<String>,
}

/// The estimated input tokens of a request: its messages and its tools' definitions.
pub fn input_tokens(messages: &[Message], tools: &[ToolSpec]) -> u64 {
    messages_tokens(messages) + specs_tokens(tools)
}

impl CostBudget {
    /// Whether `next` may be made after `spent`: its input alone, at the model's input
    /// price, must not take the session past the budget (its output is not known yet, so
    /// the last call may pass the budget by what it answers).
    pub fn check(&self, spent: &Spent, next: NextCall<'_>) -> Result<(), Stop> {
        let Some(price) = self.pricing.price(next.model) else {
            return Err(Stop::NoPrice {
                model: next.model.to_string(),
            });
        };
        let so_far = spent.cost(&self.pricing);
        let next_call = next.input_tokens as f64 * price.input / 1_000_000.0;
        if so_far + next_call <= self.max_cost {
            return Ok(());
        }
        Err(Stop::Reached(Box::new(BudgetReached {
            max_cost: self.max_cost,
            spent: so_far,
            next_call,
            input_tokens: next.input_tokens,
            model: next.model.to_string(),
            purpose: next.purpose,
            parent: next.parent,
        })))
    }
}

impl Run<'_> {
    /// Whether the model call about to send `messages` (and `tools`) keeps within the
    /// budget. Once one did not, none does for the rest of the run: a sub-agent stopped
    /// by the budget does not leave its parent a call of its own. The first stop is
    /// reported (`budget_reached`).
    pub(super) fn within_budget(
        &mut self,
        messages: &[Message],
        tools: &[ToolSpec],
        purpose: Purpose,
        parent: Option<&String>,
    ) -> Result<(), Stop> {
        if let Some(stop) = &self.over_budget {
            return Err(stop.clone());
        }
        let Some(budget) = &self.orch.settings.budget else {
            return Ok(());
        };
        let next = NextCall {
            model: self.orch.provider.model(),
            input_tokens: input_tokens(messages, tools),
            purpose,
            parent: parent.cloned(),
        };
        let stop = match budget.check(&self.orch.spent, next) {
            Ok(()) => return Ok(()),
            Err(stop) => stop,
        };
        if let Stop::Reached(reached) = &stop {
            self.emit(EventData::BudgetReached(reached.clone()));
        }
        self.over_budget = Some(stop.clone());
        Err(stop)
    }

    /// Counts what a model call that answered used, on the model it was made with.
    pub(super) fn spend(&mut self, usage: Usage) {
        let model = self.orch.provider.model().to_string();
        self.orch.spent.add(&model, usage);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::pricing::Price;

    fn budget(max_cost: f64) -> CostBudget {
        let mut prices = BTreeMap::new();
        let price = Price {
            input: 2.0,
            output: 10.0,
            cached: Some(0.5),
        };
        prices.insert("m".to_string(), price);
        CostBudget {
            max_cost,
            pricing: Pricing::new(prices),
        }
    }

    fn next(model: &str, input_tokens: u64) -> NextCall<'_> {
        NextCall {
            model,
            input_tokens,
            purpose: Purpose::Conversation,
            parent: None,
        }
    }

    fn usage(input: u64, output: u64) -> Usage {
        Usage {
            input_tokens: input,
            output_tokens: output,
            cached_tokens: 0,
        }
    }

    #[test]
    fn the_next_calls_input_counts_against_what_is_left() {
        let b = budget(1.0);
        let mut spent = Spent::default();
        // $0.20 + $0.50 spent.
        spent.add("m", usage(100_000, 50_000));
        assert!((spent.cost(&b.pricing) - 0.7).abs() < 1e-9);
        // 150k input tokens at $2/M: $0.30, exactly what is left.
        assert_eq!(b.check(&spent, next("m", 150_000)), Ok(()));
        let Err(Stop::Reached(reached)) = b.check(&spent, next("m", 150_001)) else {
            panic!("one token more passes it");
        };
        assert!((reached.spent - 0.7).abs() < 1e-9);
        assert!((reached.next_call - 0.300_002).abs() < 1e-9);
        assert_eq!(reached.input_tokens, 150_001);
        let said = reached.message();
        assert!(said.contains("$1.000") && said.contains("$0.700"), "{said}");
    }

    #[test]
    fn every_model_with_a_price_counts_and_a_model_without_one_cannot_be_budgeted() {
        let b = budget(1.0);
        let mut spent = Spent::default();
        spent.add("m", usage(0, 50_000));
        // gpt-4.1 is built in: $8/M out, 50k → $0.40.
        spent.add("gpt-4.1", usage(0, 50_000));
        // No price: it counts nothing, as on the status line.
        spent.add("llama3.2", usage(1_000_000, 1_000_000));
        assert!((spent.cost(&b.pricing) - 0.9).abs() < 1e-9);
        assert!(matches!(
            b.check(&spent, next("m", 60_000)),
            Err(Stop::Reached(_))
        ));
        assert_eq!(
            b.check(&spent, next("llama3.2", 1)),
            Err(Stop::NoPrice {
                model: "llama3.2".into()
            })
        );
    }

    #[test]
    fn a_budget_is_a_sane_amount_of_dollars() {
        assert_eq!(parse_dollars("0.50"), Ok(0.5));
        assert_eq!(parse_dollars("$2"), Ok(2.0));
        for bad in ["-1", "0", "NaN", "inf", "1e9", "ten", "", "$"] {
            assert!(parse_dollars(bad).is_err(), "{bad}");
        }
        assert!(checked(f64::NAN).is_err());
        assert_eq!(checked(MAX_BUDGET), Ok(MAX_BUDGET));
    }
}
