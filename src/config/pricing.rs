//! What model calls cost: `[pricing."MODEL"]` in the config, else built-in prices of common
//! models (dated: prices change, and the config wins). Used to show the cost of each model
//! call, of a sub-agent's subtree and of the session; never to decide anything.

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::conversation::Usage;

/// A model's price in US dollars per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Price {
    /// Prompt tokens.
    pub input: f64,
    /// Completion tokens.
    pub output: f64,
    /// Prompt tokens read from the provider's cache (default: the input price).
    pub cached: Option<f64>,
}

impl Price {
    /// The cost of `usage` in US dollars.
    pub fn cost(&self, usage: &Usage) -> f64 {
        let cached = usage.cached_tokens.min(usage.input_tokens);
        let fresh = usage.input_tokens - cached;
        (fresh as f64 * self.input
            + cached as f64 * self.cached.unwrap_or(self.input)
            + usage.output_tokens as f64 * self.output)
            / 1_000_000.0
    }

    /// Whether every figure is a finite, non-negative number.
    pub fn is_valid(&self) -> bool {
        [self.input, self.output, self.cached.unwrap_or(0.0)]
            .iter()
            .all(|p| p.is_finite() && *p >= 0.0)
    }
}

/// When the built-in prices were read from the providers' price pages.
pub const PRICES_AS_OF: &str = "October 2025";

const fn price(input: f64, output: f64, cached: f64) -> Price {
    Price {
        input,
        output,
        cached: Some(cached),
    }
}

/// Model id prefix → price, as published on [`PRICES_AS_OF`]; the longest prefix wins.
const KNOWN: &[(&str, Price)] = &[
    ("gpt-4.1", price(2.00, 8.00, 0.50)),
    ("gpt-4.1-mini", price(0.40, 1.60, 0.10)),
    ("gpt-4.1-nano", price(0.10, 0.40, 0.025)),
    ("gpt-4o", price(2.50, 10.00, 1.25)),
    ("gpt-4o-mini", price(0.15, 0.60, 0.075)),
    ("gpt-5", price(1.25, 10.00, 0.125)),
    ("gpt-5-mini", price(0.25, 2.00, 0.025)),
    ("gpt-5-nano", price(0.05, 0.40, 0.005)),
    ("claude-sonnet-4", price(3.00, 15.00, 0.30)),
    ("claude-opus-4", price(15.00, 75.00, 1.50)),
    ("claude-haiku-4-5", price(1.00, 5.00, 0.10)),
    ("claude-3-5-haiku", price(0.80, 4.00, 0.08)),
    ("deepseek-chat", price(0.28, 0.42, 0.028)),
    ("deepseek-reasoner", price(0.28, 0.42, 0.028)),
    ("llama-3.3-70b-versatile", price(0.59, 0.79, 0.59)),
];

/// The prices known for this session: the config's, then the built-in ones.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Pricing {
    configured: BTreeMap<String, Price>,
}

impl Pricing {
    /// The config's `[pricing]` table over the built-in prices.
    pub fn new(configured: BTreeMap<String, Price>) -> Self {
        Self { configured }
    }

    /// The price of `model`: configured by its exact id, else built in (matched by prefix,
    /// without a router's vendor prefix such as `openai/`).
    pub fn price(&self, model: &str) -> Option<Price> {
        if let Some(price) = self.configured.get(model) {
            return Some(*price);
        }
        let model = model.to_ascii_lowercase();
        let bare = model.rsplit('/').next().unwrap_or(&model);
        KNOWN
            .iter()
            .filter(|(prefix, _)| model.starts_with(prefix) || bare.starts_with(prefix))
            .max_by_key(|(prefix, _)| prefix.len())
            .map(|(_, price)| *price)
    }

    /// The cost of `usage` on `model`, when its price is known.
    pub fn cost(&self, model: &str, usage: &Usage) -> Option<f64> {
        self.price(model).map(|p| p.cost(usage))
    }
}

/// `$0.0042`, `$0.42`, `$12.30`: enough digits to tell small calls apart.
pub fn dollars(amount: f64) -> String {
    if amount < 0.01 {
        format!("${amount:.4}")
    } else if amount < 10.0 {
        format!("${amount:.3}")
    } else {
        format!("${amount:.2}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usage(input: u64, output: u64, cached: u64) -> Usage {
        Usage {
            input_tokens: input,
            output_tokens: output,
            cached_tokens: cached,
        }
    }

    #[test]
    fn cached_tokens_are_priced_apart() {
        let p = price(2.0, 8.0, 0.5);
        let cost = p.cost(&usage(1_000_000, 100_000, 400_000));
        assert!(
            (cost - (0.6 * 2.0 + 0.4 * 0.5 + 0.1 * 8.0)).abs() < 1e-9,
            "{cost}"
        );
        // A cached count above the input (a doctored file) is not negative input.
        assert!(p.cost(&usage(10, 0, 1_000)) >= 0.0);
    }

    #[test]
    fn the_config_wins_then_the_longest_known_prefix() {
        let mut configured = BTreeMap::new();
        configured.insert("gpt-4.1-mini".to_string(), price(9.0, 9.0, 9.0));
        let pricing = Pricing::new(configured);
        assert_eq!(pricing.price("gpt-4.1-mini").unwrap().input, 9.0);
        assert_eq!(
            Pricing::default().price("gpt-4.1-mini").unwrap().input,
            0.40
        );
        assert_eq!(Pricing::default().price("gpt-4.1").unwrap().input, 2.00);
        assert_eq!(
            Pricing::default()
                .price("openai/gpt-4.1-mini")
                .unwrap()
                .input,
            0.40
        );
        assert_eq!(
            Pricing::default()
                .price("claude-sonnet-4-5")
                .unwrap()
                .output,
            15.0
        );
        assert_eq!(Pricing::default().price("llama3.2"), None);
    }

    #[test]
    fn dollars_keep_small_calls_apart() {
        assert_eq!(dollars(0.000_42), "$0.0004");
        assert_eq!(dollars(0.42), "$0.420");
        assert_eq!(dollars(12.3), "$12.30");
    }
}
