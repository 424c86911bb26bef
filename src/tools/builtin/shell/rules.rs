//! Shell command rules (`[tools.shell] allow` / `ask`) and the session's grants, judged on
//! what a line runs: the same parser reads the line into simple commands and looks each
//! through its wrappers (`through`). A rule is words the command must start with, matched
//! against the command that runs (`allow = ["ls"]` never allows `sudo ls`, `/bin/ls` or
//! `env LD_PRELOAD=x ls`). A line is allowed only when every command it runs is covered, by
//! an allow rule or a grant, and none carries code in its arguments; an `ask` rule that names
//! any of its commands wins.

use super::command;
use super::grants::ShellGrant;
use super::programs;
use super::through::{self, Invocation, Unit};
use crate::tools::Policy;

/// A rule: the command's name and the first words of its arguments.
struct Rule(Vec<String>);

impl Rule {
    /// A rule as written in the config: one simple command of literal words, else none.
    fn parse(text: &str) -> Option<Self> {
        let commands = command::parse(text).ok()?;
        let [simple] = commands.as_slice() else {
            return None;
        };
        (simple.assignments.is_empty() && !simple.words.is_empty())
            .then(|| Self(simple.words.clone()))
    }

    /// Whether the rule names `invocation`: its program, then its first arguments.
    fn names(&self, invocation: &Invocation) -> bool {
        let Some((program, words)) = self.0.split_first() else {
            return false;
        };
        invocation.program == *program
            && invocation.args.len() >= words.len()
            && invocation.args.iter().zip(words).all(|(a, w)| a == w)
    }
}

/// How a command line stands against the rules and grants.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// An `ask` rule names one of the commands it runs.
    Ask,
    /// Every command it runs is covered: by allow rules, and by the grants at these indices
    /// (in the order first used).
    Allowed {
        /// Indices of the grants that covered a command.
        grants: Vec<usize>,
    },
    /// Some command is covered by nothing, or cannot be known from its words.
    Uncovered,
}

/// Judges `line` against `allow` and `ask` rules and the session's `grants`.
pub fn judge(line: &str, allow: &[String], ask: &[String], grants: &[ShellGrant]) -> Verdict {
    let units = through::units(line);
    let allow: Vec<Rule> = allow.iter().filter_map(|r| Rule::parse(r)).collect();
    let ask: Vec<Rule> = ask.iter().filter_map(|r| Rule::parse(r)).collect();
    let mut used = Vec::new();
    let mut covered = true;
    for unit in &units {
        let Unit::Runs(invocation) = unit else {
            covered = false;
            continue;
        };
        if ask.iter().any(|rule| rule.names(invocation)) {
            return Verdict::Ask;
        }
        if programs::escape(invocation).is_none() && allow.iter().any(|r| r.names(invocation)) {
            continue;
        }
        match grants.iter().position(|grant| grant.covers(invocation)) {
            Some(k) if !used.contains(&k) => used.push(k),
            Some(_) => {}
            None => covered = false,
        }
    }
    if covered {
        Verdict::Allowed { grants: used }
    } else {
        Verdict::Uncovered
    }
}

/// The policy the rules alone give `line`: `ask` rules win over `allow` rules; `None` when
/// they do not cover it (it is then asked about, unless a grant covers it).
pub fn policy(line: &str, allow: &[String], ask: &[String]) -> Option<Policy> {
    match judge(line, allow, ask, &[]) {
        Verdict::Ask => Some(Policy::Ask),
        Verdict::Allowed { .. } => Some(Policy::Allow),
        Verdict::Uncovered => None,
    }
}

#[cfg(test)]
mod tests;
