//! Tokens and cost: the session's usage by model, a sub-agent subtree's, and what they cost
//! at the configured prices.

use std::collections::BTreeMap;

use super::RunModel;
use crate::conversation::Usage;

impl RunModel {
    /// What an external agent said of its context and cost (it makes model calls taco does
    /// not see, so its figures are the session's).
    pub(super) fn reported(&mut self, usage: &crate::event::UsageReported) {
        self.context = Some(super::ContextGauge {
            used: usage.used,
            window: Some(usage.size),
        });
        if let Some(dollars) = usage.dollars() {
            self.reported_cost = Some(dollars);
        }
    }

    /// Counts the tokens of a resumed session's part that was not read (`session::tail`), so
    /// the session's tokens and cost are the whole file's.
    pub fn add_earlier(&mut self, by_model: &BTreeMap<String, Usage>) {
        for (model, used) in by_model {
            self.usage.add(*used);
            self.by_model.entry(model.clone()).or_default().add(*used);
        }
    }

    /// The session's tokens by model.
    pub fn usage_by_model(&self) -> &BTreeMap<String, Usage> {
        &self.by_model
    }

    /// The tokens of every model call nested under a frame (a sub-agent's subtree).
    pub fn subtree_usage(&self, frame: &str) -> Option<Usage> {
        self.subtree.get(frame).map(|by_model| {
            by_model.values().fold(Usage::default(), |mut sum, u| {
                sum.add(*u);
                sum
            })
        })
    }

    /// What the model calls under a frame cost, when their prices are known.
    pub fn subtree_cost(
        &self,
        frame: &str,
        pricing: &crate::config::pricing::Pricing,
    ) -> Option<f64> {
        let by_model = self.subtree.get(frame)?;
        let costs: Vec<f64> = by_model
            .iter()
            .filter_map(|(model, usage)| pricing.cost(model, usage))
            .collect();
        (!costs.is_empty()).then(|| costs.iter().sum())
    }

    /// What the session cost so far, summed over the models whose price is known; `None`
    /// when none is. An external agent's own figure, when it gave one, is the session's.
    pub fn session_cost(&self, pricing: &crate::config::pricing::Pricing) -> Option<f64> {
        if let Some(reported) = self.reported_cost {
            return Some(reported);
        }
        let costs: Vec<f64> = self
            .by_model
            .iter()
            .filter_map(|(model, usage)| pricing.cost(model, usage))
            .collect();
        (!costs.is_empty()).then(|| costs.iter().sum())
    }
}
