//! `[checkpoints]`: whether taco keeps checkpoints, what a checkpoint may hold, how long they
//! are kept.

use serde::Deserialize;

/// Default cap of one file, in MB.
pub const DEFAULT_MAX_FILE_MB: u64 = 5;
/// Default cap of what one checkpoint adds, in MB.
pub const DEFAULT_MAX_TOTAL_MB: u64 = 200;
/// Default age at which checkpoints are pruned, in days.
pub const DEFAULT_KEEP_DAYS: u64 = 14;

/// `[checkpoints]` as written.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckpointConfig {
    /// Take checkpoints (default true; off also when git is missing).
    pub enabled: Option<bool>,
    /// A file larger than this many MB is not stored (listed as skipped).
    pub max_file_mb: Option<u64>,
    /// One checkpoint stores at most this many MB of new or changed files.
    pub max_total_mb: Option<u64>,
    /// Checkpoints older than this many days are pruned.
    pub keep_days: Option<u64>,
}

impl CheckpointConfig {
    /// Whether checkpoints are on.
    pub fn enabled(&self) -> bool {
        self.enabled.unwrap_or(true)
    }

    /// The size caps.
    pub fn limits(&self) -> Limits {
        let mb = |v: Option<u64>, d: u64| v.unwrap_or(d).saturating_mul(1 << 20);
        Limits {
            max_file_bytes: mb(self.max_file_mb, DEFAULT_MAX_FILE_MB),
            max_total_bytes: mb(self.max_total_mb, DEFAULT_MAX_TOTAL_MB),
        }
    }

    /// Days checkpoints are kept.
    pub fn keep_days(&self) -> u64 {
        self.keep_days.unwrap_or(DEFAULT_KEEP_DAYS)
    }
}

/// What one checkpoint may store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// A larger file is skipped.
    pub max_file_bytes: u64,
    /// New or changed files beyond this total (in path order) are skipped.
    pub max_total_bytes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        CheckpointConfig::default().limits()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_keys() {
        let empty: CheckpointConfig = toml::from_str("").unwrap();
        assert!(empty.enabled());
        assert_eq!(empty.limits().max_file_bytes, 5 << 20);
        assert_eq!(empty.limits().max_total_bytes, 200 << 20);
        assert_eq!(empty.keep_days(), 14);
        let set: CheckpointConfig =
            toml::from_str("enabled = false\nmax_file_mb = 1\nmax_total_mb = 2\nkeep_days = 3")
                .unwrap();
        assert!(!set.enabled());
        assert_eq!(set.limits().max_file_bytes, 1 << 20);
        assert_eq!(set.limits().max_total_bytes, 2 << 20);
        assert_eq!(set.keep_days(), 3);
        assert!(toml::from_str::<CheckpointConfig>("max_file = 1").is_err());
    }

    #[test]
    fn the_example_config_says_the_defaults() {
        let example: toml::Table =
            toml::from_str(include_str!("../../config.example.toml")).unwrap();
        let section: CheckpointConfig = example["checkpoints"].clone().try_into().unwrap();
        let defaults = CheckpointConfig::default();
        assert_eq!(section.enabled(), defaults.enabled());
        assert_eq!(section.limits(), defaults.limits());
        assert_eq!(section.keep_days(), defaults.keep_days());
        assert!(section.max_file_mb.is_some() && section.keep_days.is_some());
    }
}
