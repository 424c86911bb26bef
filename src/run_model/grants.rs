//! The grants the user gave, as the events tell them: which tool (or shell prefix), how far
//! (`turn` or `session`), since when and how many calls each let run without asking. The
//! orchestrator owns the grants themselves (`approval::Policies`); this is the view `/tools`,
//! `/revoke` and the audit log read.

use std::collections::BTreeMap;

use crate::event::{Grant, Scope, ShellGrant};

/// One grant as the events tell it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GrantRecord {
    /// How far it reaches (`turn` or `session`; a shell prefix is always `session`).
    pub scope: Scope,
    /// When the user gave it (event time, Unix ms).
    pub since_ms: u64,
    /// Calls it let run without asking since.
    pub used: u64,
}

/// Every grant still in force, tools by name, shell prefixes in the order given.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Grants {
    tools: BTreeMap<String, GrantRecord>,
    prefixes: Vec<(ShellGrant, GrantRecord)>,
}

impl Grants {
    /// The scope of the tool's grant, if it has one.
    pub fn get(&self, tool: &str) -> Option<&Scope> {
        self.tools.get(tool).map(|r| &r.scope)
    }

    /// Whether no grant is in force.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty() && self.prefixes.is_empty()
    }

    /// Every grant, tools first (by name), then shell prefixes (in the order given).
    pub fn all(&self) -> Vec<(Grant, GrantRecord)> {
        let tools = (self.tools.iter()).map(|(name, r)| (Grant::Tool(name.clone()), *r));
        let prefixes = (self.prefixes.iter()).map(|(p, r)| (Grant::ShellPrefix(p.clone()), *r));
        tools.chain(prefixes).collect()
    }

    /// The grant `/revoke NAME` means: a shell grant whose words are spelled so (`git log`),
    /// else a tool of that name.
    pub fn find(&self, name: &str) -> Option<Grant> {
        let name = name.trim();
        let shell = (self.prefixes.iter()).find(|(g, _)| g.name() == name || g.to_string() == name);
        if let Some((grant, _)) = shell {
            Some(Grant::ShellPrefix(grant.clone()))
        } else {
            (self.tools.contains_key(name)).then(|| Grant::Tool(name.to_string()))
        }
    }

    /// A tool granted for the turn or session at `at`; a wider grant is kept.
    pub(super) fn tool(&mut self, name: &str, scope: Scope, at: u64) {
        if !matches!(scope, Scope::Turn | Scope::Session) {
            return;
        }
        let record = self.tools.entry(name.to_string()).or_insert(GrantRecord {
            scope,
            since_ms: at,
            used: 0,
        });
        if scope == Scope::Session {
            record.scope = Scope::Session;
        }
    }

    /// A shell grant given for the session at `at`.
    pub(super) fn prefix(&mut self, grant: &ShellGrant, at: u64) {
        if !self.prefixes.iter().any(|(g, _)| g == grant) {
            let record = GrantRecord {
                scope: Scope::Session,
                since_ms: at,
                used: 0,
            };
            self.prefixes.push((grant.clone(), record));
        }
    }

    /// A call ran because of `grant`.
    pub(super) fn used(&mut self, grant: &Grant) {
        let record = match grant {
            Grant::Tool(name) => self.tools.get_mut(name),
            Grant::ShellPrefix(prefix) => (self.prefixes.iter_mut())
                .find(|(p, _)| p == prefix)
                .map(|(_, r)| r),
        };
        if let Some(record) = record {
            record.used = record.used.saturating_add(1);
        }
    }

    /// The user took `grant` back.
    pub(super) fn revoked(&mut self, grant: &Grant) {
        match grant {
            Grant::Tool(name) => {
                self.tools.remove(name);
            }
            Grant::ShellPrefix(prefix) => self.prefixes.retain(|(p, _)| p != prefix),
        }
    }

    /// The run ended: its turn grants end with it.
    pub(super) fn end_run(&mut self) {
        self.tools.retain(|_, r| r.scope == Scope::Session);
    }

    /// A new process (a resumed session): no grant carries over.
    pub(super) fn clear(&mut self) {
        self.tools.clear();
        self.prefixes.clear();
    }

    /// Shell grants in the order given.
    pub(super) fn prefixes(&self) -> impl Iterator<Item = &ShellGrant> {
        self.prefixes.iter().map(|(g, _)| g)
    }
}
