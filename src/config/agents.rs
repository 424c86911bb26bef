//! `[agents.NAME]`: external agents taco drives over ACP (`taco --agent NAME`, issue 32).
//! An agent is a program speaking ACP on its stdin and stdout; it starts in the workdir with
//! the environment of a shell command (no provider key, no withheld secret) plus the
//! variables named here.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Deserialize;

use super::ConfigError;
use crate::acp::client::process::Command;

/// One `[agents.NAME]` table as written.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentEntry {
    /// The program (looked up on PATH).
    pub command: String,
    /// Its arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// Variables set for it; a value may name taco's variables as `${NAME}` (a key the
    /// agent needs, which taco's tools never get).
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// How long it may take to answer `initialize` and open a session (default 30 s).
    pub startup_timeout_secs: Option<u64>,
    /// The authentication method to use, one the agent advertises (`openai-api-key` for
    /// codex-acp, with the key in `env`); taco then calls `authenticate` before the session.
    pub auth: Option<String>,
}

/// The agent `name` of the config: how to start it and how long its start may take.
pub fn agent(
    agents: &BTreeMap<String, AgentEntry>,
    name: &str,
) -> Result<(Command, Duration), ConfigError> {
    let Some(entry) = agents.get(name) else {
        let known: Vec<&str> = agents.keys().map(String::as_str).collect();
        let hint = if known.is_empty() {
            "the config defines no [agents] (see README: Driving other agents)".to_string()
        } else {
            format!("the config defines: {}", known.join(", "))
        };
        return Err(ConfigError(format!("no agent named `{name}`: {hint}")));
    };
    let wait = entry
        .startup_timeout_secs
        .map_or(crate::acp::client::INIT_WAIT, |s| {
            Duration::from_secs(s.max(1))
        });
    Ok((
        Command {
            name: name.to_string(),
            command: entry.command.clone(),
            args: entry.args.clone(),
            env: entry.env.clone(),
            auth: entry.auth.clone(),
        },
        wait,
    ))
}

/// What is wrong with an entry, if anything (said with the file's line).
pub fn check(name: &str, entry: &AgentEntry) -> Result<(), String> {
    if name.trim().is_empty() {
        return Err("an agent needs a name: [agents.NAME]".to_string());
    }
    if entry.command.trim().is_empty() {
        return Err(format!("agents.{name}: `command` is empty"));
    }
    for key in entry.env.keys() {
        if key.is_empty() || key.contains('=') || key.contains('\0') {
            return Err(format!("agents.{name}: `{key}` is not a variable name"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_agent_names_the_known_ones() {
        let mut agents = BTreeMap::new();
        agents.insert(
            "codex".to_string(),
            AgentEntry {
                command: "npx".into(),
                args: vec!["@zed-industries/codex-acp".into()],
                ..AgentEntry::default()
            },
        );
        let (command, wait) = agent(&agents, "codex").unwrap();
        assert_eq!(command.args, ["@zed-industries/codex-acp"]);
        assert_eq!(wait, crate::acp::client::INIT_WAIT);
        let err = agent(&agents, "claude").unwrap_err().to_string();
        assert!(
            err.contains("no agent named `claude`") && err.contains("codex"),
            "{err}"
        );
        let err = agent(&BTreeMap::new(), "x").unwrap_err().to_string();
        assert!(err.contains("defines no [agents]"), "{err}");
    }

    #[test]
    fn entries_are_checked() {
        let empty = AgentEntry::default();
        assert!(
            check("a", &empty)
                .unwrap_err()
                .contains("`command` is empty")
        );
        let mut bad = AgentEntry {
            command: "x".into(),
            ..AgentEntry::default()
        };
        bad.env.insert("A=B".into(), "v".into());
        assert!(check("a", &bad).is_err());
    }
}
