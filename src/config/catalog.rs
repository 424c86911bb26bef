//! The providers a session can switch between (`/model`, `/provider`): the running one, the
//! config file's tables and the presets that can work here (a key is set, or none is needed),
//! each resolved once at launch the way `-p NAME` would resolve it.

use std::sync::Arc;

use super::presets::{PRESETS, choose};
use super::{
    ConfigFile, ProviderChoice, ProviderKind, build_provider, call_limits, context_settings,
    need_key, retry_policy,
};
use crate::orchestrator::Limits;
use crate::orchestrator::switch::{Listing, ProviderModels, Providers, Switched};
use crate::provider::models::ModelsError;

/// One provider the session can switch to.
#[derive(Debug, Clone)]
struct Entry {
    choice: ProviderChoice,
    limits: Limits,
}

/// The providers a session can switch to, the running one first. Keys stay in their
/// [`crate::provider::Secret`]s: nothing here prints them.
#[derive(Debug, Clone, Default)]
pub struct Catalog {
    entries: Vec<Entry>,
    compact_at: f64,
}

impl Catalog {
    /// The catalog of a launch that runs `running`: every table in `file`, then the presets
    /// not overridden that can work (a key in `env`, or none needed).
    pub fn new(
        running: &ProviderChoice,
        file: &ConfigFile,
        env: &dyn Fn(&str) -> Option<String>,
        compact_at: f64,
    ) -> Self {
        let entry = |choice: ProviderChoice| Entry {
            limits: call_limits(file, &choice.options),
            choice,
        };
        let mut entries = vec![entry(running.clone())];
        let tables = file.providers.keys().map(String::as_str);
        let presets = (PRESETS.iter())
            .filter(|p| !file.providers.contains_key(p.name))
            .filter(|p| {
                p.key_env
                    .is_none_or(|var| env(var).is_some_and(|k| !k.is_empty()))
            })
            .map(|p| p.name);
        for name in tables.chain(presets) {
            if name == running.name {
                continue;
            }
            // A table that does not resolve (a bad preset override) is said when chosen.
            if let Ok(choice) = choose(name, file, env) {
                entries.push(entry(choice));
            }
        }
        Self {
            entries,
            compact_at,
        }
    }

    fn find(&self, name: &str) -> Option<&Entry> {
        self.entries.iter().find(|e| e.choice.name == name)
    }

    /// The names, for messages.
    fn names(&self) -> String {
        let names: Vec<&str> = self
            .entries
            .iter()
            .map(|e| e.choice.name.as_str())
            .collect();
        names.join(", ")
    }
}

/// Whether `choice`'s server can be asked for its models, or why not (`Err`, said in the
/// picker without asking).
fn lists(choice: &ProviderChoice) -> Option<Result<(), String>> {
    if choice.kind == ProviderKind::Demo {
        return None;
    }
    match (&choice.api_key_env, &choice.api_key) {
        (Some(var), None) => Some(Err(format!("{var} is not set"))),
        _ => Some(Ok(())),
    }
}

impl Providers for Catalog {
    fn catalog(&self) -> Vec<ProviderModels> {
        (self.entries.iter())
            .map(|Entry { choice, .. }| {
                let mut models = vec![choice.model.clone()];
                for model in &choice.models {
                    if !models.contains(model) {
                        models.push(model.clone());
                    }
                }
                ProviderModels {
                    name: choice.name.clone(),
                    model: choice.model.clone(),
                    models,
                    lists: lists(choice).is_some(),
                }
            })
            .collect()
    }

    fn switch(&self, name: &str, model: Option<&str>) -> Result<Switched, String> {
        let Some(entry) = self.find(name) else {
            return Err(format!(
                "unknown provider '{name}'; these can be switched to: {}",
                self.names()
            ));
        };
        let mut choice = entry.choice.clone();
        if let Some(model) = model.map(str::trim).filter(|m| !m.is_empty()) {
            choice.model = model.to_string();
        }
        need_key(&choice).map_err(|e| e.to_string())?;
        let provider = build_provider(&choice).map_err(|e| e.to_string())?;
        Ok(Switched {
            provider,
            retry: retry_policy(&choice),
            limits: entry.limits,
            context: context_settings(self.compact_at, &choice),
        })
    }

    fn listings(&self) -> Vec<(String, Listing)> {
        let mut listings = Vec::new();
        for Entry { choice, .. } in &self.entries {
            let listing: Listing = match lists(choice) {
                None => continue,
                Some(Err(why)) => Box::pin(async move { Err(why) }),
                Some(Ok(())) => match build_provider(choice) {
                    Ok(provider) => {
                        let provider: Arc<dyn crate::provider::Provider> = provider;
                        Box::pin(async move {
                            provider
                                .models()
                                .await
                                .map_err(|e: ModelsError| e.to_string())
                        })
                    }
                    Err(e) => {
                        let why = e.to_string();
                        Box::pin(async move { Err(why) })
                    }
                },
            };
            listings.push((choice.name.clone(), listing));
        }
        listings
    }
}

#[cfg(test)]
mod tests;
