//! `[sandbox]`: how shell commands (and MCP servers that ask) are confined, resolved with
//! `--sandbox` and checked against the kernel.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

use super::ConfigError;
use crate::sandbox::{Sandbox, SandboxMode};

/// `[sandbox]` as written.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SandboxConfig {
    /// `workspace-write` (default), `read-only` or `off`.
    pub mode: Option<SandboxMode>,
    /// Let sandboxed commands open TCP connections and listen (default false).
    pub network: Option<bool>,
    /// More directories sandboxed commands may write: absolute, `~/…`, or relative to the
    /// workspace.
    #[serde(default)]
    pub writable: Vec<Spanned<String>>,
}

impl SandboxConfig {
    /// The `writable` entries as absolute paths; `Err` is an entry that names nothing, with
    /// where it is in the file.
    pub(super) fn writable_paths(
        &self,
        workdir: &Path,
        home: Option<&Path>,
    ) -> Result<Vec<PathBuf>, (std::ops::Range<usize>, String)> {
        self.writable
            .iter()
            .map(|entry| {
                let text = entry.get_ref();
                let bad = |why: &str| (entry.span(), format!("[sandbox] writable: {text:?} {why}"));
                if text.trim().is_empty() || text.contains('\0') {
                    return Err(bad("is not a path"));
                }
                let path = match text.strip_prefix("~/") {
                    Some(rest) => home
                        .ok_or_else(|| bad("starts with ~/ but there is no home directory"))?
                        .join(rest),
                    None if text == "~" => home
                        .ok_or_else(|| bad("is ~ but there is no home directory"))?
                        .to_path_buf(),
                    None => workdir.join(text),
                };
                Ok(path)
            })
            .collect()
    }
}

/// The user's home directory, for `~/` entries.
pub(super) fn home() -> Option<PathBuf> {
    directories::BaseDirs::new().map(|d| d.home_dir().to_path_buf())
}

/// The session's sandbox: the command line's mode over the file's, checked against the
/// kernel (`env` may hold the tests' switch).
pub(super) fn resolve(
    config: &SandboxConfig,
    flag: Option<SandboxMode>,
    workdir: &Path,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Sandbox, ConfigError> {
    // `parse_config` already checked the entries, with their lines.
    let writable = config
        .writable_paths(workdir, home().as_deref())
        .map_err(|(_, message)| ConfigError(message))?;
    let mode = flag.or(config.mode).unwrap_or_default();
    Ok(Sandbox::resolve(
        mode,
        config.network.unwrap_or(false),
        writable,
        workdir,
        env,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(text: &str) -> SandboxConfig {
        toml::from_str(text).unwrap()
    }

    #[test]
    fn writable_paths_are_made_absolute() {
        let c = config("writable = [\"/opt/cache\", \"~/.cargo\", \"build/out\"]");
        let paths = c
            .writable_paths(Path::new("/w"), Some(Path::new("/home/me")))
            .unwrap();
        assert_eq!(
            paths,
            [
                PathBuf::from("/opt/cache"),
                PathBuf::from("/home/me/.cargo"),
                PathBuf::from("/w/build/out")
            ]
        );
        let (_, error) = config("writable = [\" \"]")
            .writable_paths(Path::new("/w"), None)
            .unwrap_err();
        assert!(error.contains("is not a path"), "{error}");
        let (_, error) = config("writable = [\"~/x\"]")
            .writable_paths(Path::new("/w"), None)
            .unwrap_err();
        assert!(error.contains("home"), "{error}");
    }

    #[test]
    fn modes_are_the_three_words() {
        assert_eq!(
            config("mode = \"read-only\"").mode,
            Some(SandboxMode::ReadOnly)
        );
        assert_eq!(config("mode = \"off\"").mode, Some(SandboxMode::Off));
        assert!(toml::from_str::<SandboxConfig>("mode = \"none\"").is_err());
        assert!(toml::from_str::<SandboxConfig>("net = true").is_err());
    }
}
