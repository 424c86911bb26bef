//! `[hooks]` as written: `[[hooks.pre_tool_use]] matcher = "shell|write_file", command = "…",
//! timeout_secs = 10`, one array per event.

use std::time::Duration;

use serde::Deserialize;

use super::{DEFAULT_TIMEOUT, Hook, HookEvent, MAX_PER_EVENT, MAX_TIMEOUT, Source};

/// Longest command line of a hook.
const MAX_COMMAND: usize = 8 * 1024;

/// One hook as written.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HookSpec {
    /// A regular expression over tool names (whole name: `shell|write_file`); tool events
    /// only; absent: every tool.
    pub matcher: Option<String>,
    /// The command line (`sh -c`).
    pub command: String,
    /// Seconds it may take (default 10, at most 600).
    pub timeout_secs: Option<u64>,
}

/// `[hooks]` as written.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HooksConfig {
    /// Before a session's first request.
    #[serde(default)]
    pub session_start: Vec<HookSpec>,
    /// When the user sends a request.
    #[serde(default)]
    pub user_prompt_submit: Vec<HookSpec>,
    /// Before a tool call.
    #[serde(default)]
    pub pre_tool_use: Vec<HookSpec>,
    /// After a tool call.
    #[serde(default)]
    pub post_tool_use: Vec<HookSpec>,
    /// When the run would end.
    #[serde(default)]
    pub stop: Vec<HookSpec>,
    /// When taco waits for the user.
    #[serde(default)]
    pub notification: Vec<HookSpec>,
}

impl HooksConfig {
    /// Whether no hook is configured.
    pub fn is_empty(&self) -> bool {
        HookEvent::ALL.iter().all(|e| self.of(*e).is_empty())
    }

    /// The specs of one event.
    pub fn of(&self, event: HookEvent) -> &[HookSpec] {
        match event {
            HookEvent::SessionStart => &self.session_start,
            HookEvent::UserPromptSubmit => &self.user_prompt_submit,
            HookEvent::PreToolUse => &self.pre_tool_use,
            HookEvent::PostToolUse => &self.post_tool_use,
            HookEvent::Stop => &self.stop,
            HookEvent::Notification => &self.notification,
        }
    }

    /// The hooks, checked: a bad matcher, an empty or huge command, too many hooks are
    /// errors naming the hook.
    pub fn compile(&self, source: Source) -> Result<Vec<Hook>, String> {
        let mut hooks = Vec::new();
        for event in HookEvent::ALL {
            let specs = self.of(event);
            if specs.len() > MAX_PER_EVENT {
                return Err(format!(
                    "[[hooks.{}]]: {} hooks, at most {MAX_PER_EVENT}",
                    event.name(),
                    specs.len()
                ));
            }
            for (i, spec) in specs.iter().enumerate() {
                let at = format!("[[hooks.{}]] #{}", event.name(), i + 1);
                if spec.command.trim().is_empty() {
                    return Err(format!("{at}: the command is empty"));
                }
                if spec.command.len() > MAX_COMMAND {
                    return Err(format!(
                        "{at}: the command is longer than {MAX_COMMAND} bytes"
                    ));
                }
                let matcher = match &spec.matcher {
                    Some(_) if !event.has_tool() => {
                        return Err(format!("{at}: matcher applies to tool events only"));
                    }
                    Some(m) if m.trim().is_empty() || m == "*" => None,
                    Some(m) => Some(
                        regex::RegexBuilder::new(&format!("^(?:{m})$"))
                            .size_limit(1 << 20)
                            .build()
                            .map_err(|e| format!("{at}: matcher is not a valid pattern: {e}"))?,
                    ),
                    None => None,
                };
                let timeout = match spec.timeout_secs {
                    Some(0) => return Err(format!("{at}: timeout_secs must be at least 1")),
                    Some(s) => Duration::from_secs(s).min(MAX_TIMEOUT),
                    None => DEFAULT_TIMEOUT,
                };
                hooks.push(Hook {
                    event,
                    matcher,
                    command: spec.command.clone(),
                    timeout,
                    source,
                });
            }
        }
        Ok(hooks)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_compile_with_whole_name_matchers_and_bounds() {
        let config: HooksConfig = toml::from_str(
            r#"
            [[pre_tool_use]]
            matcher = "shell|write_file"
            command = "check"
            timeout_secs = 5000
            [[stop]]
            command = "done"
            "#,
        )
        .unwrap();
        let hooks = config.compile(Source::User).unwrap();
        assert_eq!(hooks.len(), 2);
        assert!(hooks[0].matches(Some("shell")) && hooks[0].matches(Some("write_file")));
        assert!(!hooks[0].matches(Some("shell2")) && !hooks[0].matches(Some("read_file")));
        assert_eq!(hooks[0].timeout, MAX_TIMEOUT);
        assert_eq!(hooks[1].timeout, DEFAULT_TIMEOUT);
        assert!(hooks[1].matches(None));
        let bad = |text: &str| {
            toml::from_str::<HooksConfig>(text)
                .unwrap()
                .compile(Source::User)
        };
        assert!(
            bad("[[pre_tool_use]]\nmatcher = \"(\"\ncommand = \"x\"")
                .unwrap_err()
                .contains("not a valid pattern")
        );
        assert!(
            bad("[[stop]]\nmatcher = \"x\"\ncommand = \"x\"")
                .unwrap_err()
                .contains("tool events only")
        );
        assert!(
            bad("[[stop]]\ncommand = \" \"")
                .unwrap_err()
                .contains("empty")
        );
        assert!(bad("[[stop]]\ncommand = \"x\"\ntimeout_secs = 0").is_err());
        assert!(toml::from_str::<HooksConfig>("[[stop]]\ncommand = \"x\"\nwhat = 1").is_err());
        assert!(toml::from_str::<HooksConfig>("[[nope]]\ncommand = \"x\"").is_err());
    }
}
