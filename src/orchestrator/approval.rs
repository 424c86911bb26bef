//! Approval policies and the approver port (DESIGN §4 rule 6): which calls run, which are
//! asked about, and who answers.

use std::collections::{HashMap, HashSet};

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use serde_json::Value;

use crate::event::{Confinement, Decision, Grant, InputRequest, Scope, ShellGrant};
use crate::tools::outcome::DeniedBy;
use crate::tools::{AskReply, Policy, Tool, ToolSettings};

/// One call that needs the user's consent.
#[derive(Debug, Clone, PartialEq)]
pub struct ApprovalRequest {
    /// Call id.
    pub id: String,
    /// Tool name.
    pub name: String,
    /// Parsed arguments.
    pub arguments: Value,
    /// How it would run, for tools the sandbox covers.
    pub sandbox: Option<Confinement>,
}

impl ApprovalRequest {
    /// Whether this call may only be approved once: it runs outside the sandbox (an
    /// escalation) or where no sandbox exists. No grant comes of its answer, and no earlier
    /// grant covered it.
    pub fn once_only(&self) -> bool {
        self.sandbox.is_some_and(needs_each_approval)
    }

    /// Keeps `answer` to this call alone when it may only be approved once, whatever key
    /// was pressed; a batch-wide approval never reaches it (see [`ApprovalRequest::accepts`]).
    /// A shell grant is kept only when it is the one `p` offers for this very command, so no
    /// answer can grant more than the command shown.
    pub fn limit(&self, answer: &mut ApprovalAnswer) {
        if answer.prefix.is_some() && answer.prefix != self.offered_grant() {
            answer.prefix = None;
        }
        if self.once_only() {
            if answer.scope == Scope::Batch && answer.decision == Decision::Approved {
                *answer = ApprovalAnswer::deny(None);
            }
            answer.scope = Scope::Once;
            answer.prefix = None;
        }
    }

    /// The shell grant `p` offers for this call, if it is a shell command that has one.
    pub fn offered_grant(&self) -> Option<ShellGrant> {
        if self.name != crate::tools::builtin::SHELL || self.once_only() {
            return None;
        }
        let command = self.arguments.get("command")?.as_str()?;
        crate::tools::builtin::suggested_grant(command)
    }

    /// Whether `answer` may decide this call: an approval of the whole batch (`Y`) never
    /// approves a call that may only be approved once; that call waits for its own answer.
    pub fn accepts(&self, answer: &ApprovalAnswer) -> bool {
        !(self.once_only() && answer.scope == Scope::Batch && answer.decision == Decision::Approved)
    }
}

/// One decision for every call of a batch still waiting (`Y`, `N` in the dialog).
#[derive(Debug, Clone, PartialEq)]
pub enum BatchDecision {
    /// Approve each call once (a call that may only be approved once is left to ask).
    ApproveAll,
    /// Deny each call, with one reason for the model, if the user gave one.
    DenyAll(Option<String>),
}

impl BatchDecision {
    /// The answer each call of the batch gets (scope `batch`: no grant comes of it).
    pub fn answer(&self) -> ApprovalAnswer {
        let answer = match self {
            Self::ApproveAll => ApprovalAnswer::approve(Scope::Batch),
            Self::DenyAll(reason) => ApprovalAnswer::deny(reason.clone()),
        };
        ApprovalAnswer {
            scope: Scope::Batch,
            ..answer
        }
    }
}

/// Whether a call that runs so must be asked about each time.
pub fn needs_each_approval(confinement: Confinement) -> bool {
    matches!(
        confinement,
        Confinement::Unsandboxed | Confinement::Unavailable
    )
}

/// The answer to one [`ApprovalRequest`].
#[derive(Debug, Clone, PartialEq)]
pub struct ApprovalAnswer {
    /// Approved or denied.
    pub decision: Decision,
    /// How far an approval reaches.
    pub scope: Scope,
    /// Why it was denied (told to the model), if the user said.
    pub reason: Option<String>,
    /// Who denied it (a person, or a headless run's fixed answer).
    pub by: DeniedBy,
    /// With an approval of `shell`: also run, for the rest of the session, every command this
    /// grant covers (see `shell::grants`).
    pub prefix: Option<ShellGrant>,
}

impl ApprovalAnswer {
    /// Approve with a scope.
    pub fn approve(scope: Scope) -> Self {
        Self {
            decision: Decision::Approved,
            scope,
            reason: None,
            by: DeniedBy::User,
            prefix: None,
        }
    }

    /// Deny, optionally with a reason for the model.
    pub fn deny(reason: Option<String>) -> Self {
        Self {
            decision: Decision::Denied,
            scope: Scope::Once,
            reason,
            by: DeniedBy::User,
            prefix: None,
        }
    }
}

/// Whoever answers for the user: the TUI (dialogs) or `exec` (fixed answers).
pub trait Approver: Send {
    /// Decides a whole batch (the `ask` calls of one turn); one answer per request, in order.
    fn decide<'a>(&'a mut self, batch: &'a [ApprovalRequest])
    -> BoxFuture<'a, Vec<ApprovalAnswer>>;

    /// Whether someone can answer questions ([`Approver::ask`]); headless runs cannot.
    fn can_ask(&self) -> bool {
        false
    }

    /// Answers a question (a missing parameter, whether to go past the depth limit);
    /// `None` declines. Headless runs have no one to ask, so the default declines.
    fn ask<'a>(&'a mut self, _request: &'a InputRequest) -> BoxFuture<'a, Option<String>> {
        async { None }.boxed()
    }

    /// Answers a form (an MCP server's `elicitation/create`, `InputKind::Form`): the whole
    /// content, a decline or a cancel. Headless runs have no one to ask: they decline.
    fn fill<'a>(&'a mut self, _request: &'a InputRequest) -> BoxFuture<'a, AskReply> {
        async { AskReply::Decline }.boxed()
    }

    /// Grants the user took back since the last call (`/revoke`), applied before the
    /// next batch is planned. Headless runs have no one to take them back.
    fn revocations(&mut self) -> Vec<Grant> {
        Vec::new()
    }
}

/// Answers every request the same way (`taco exec --approve all|none`).
#[derive(Debug, Clone)]
pub struct FixedApprover {
    approve: bool,
}

impl FixedApprover {
    /// Approves everything (`--approve all`).
    pub fn all() -> Self {
        Self { approve: true }
    }

    /// Denies everything (`--approve none`), telling the model why.
    pub fn none() -> Self {
        Self { approve: false }
    }
}

/// What the model is told when `exec --approve none` denies a call.
pub const EXEC_DENIED: &str = "it needs the user's approval, but taco exec runs without anyone to ask and --approve none is in effect. Do the task without this call, or tell the user to re-run with --approve all.";

/// What the model is told when `exec` is asked to run a command outside the sandbox.
pub const EXEC_NO_ESCALATION: &str = "taco exec never runs a command outside the sandbox, even with --approve all. Do the task inside the sandbox, or tell the user to run the command themselves or to re-run taco exec with --sandbox off.";

impl Approver for FixedApprover {
    fn decide<'a>(
        &'a mut self,
        batch: &'a [ApprovalRequest],
    ) -> BoxFuture<'a, Vec<ApprovalAnswer>> {
        let headless = |reason: &str| ApprovalAnswer {
            by: DeniedBy::Headless,
            ..ApprovalAnswer::deny(Some(reason.to_string()))
        };
        let answers = batch
            .iter()
            .map(|request| match request.sandbox {
                // Leaving the sandbox is never approved wholesale.
                Some(Confinement::Unsandboxed) => headless(EXEC_NO_ESCALATION),
                _ if self.approve => ApprovalAnswer::approve(Scope::Once),
                _ => headless(EXEC_DENIED),
            })
            .collect();
        async move { answers }.boxed()
    }
}

/// Per-tool policies from the config plus the grants the user gave this session and turn.
#[derive(Debug, Clone, Default)]
pub struct Policies {
    overrides: HashMap<String, Policy>,
    session_grants: HashSet<String>,
    turn_grants: HashSet<String>,
    /// Shell grants the user gave for the session from the dialog.
    shell_prefixes: Vec<ShellGrant>,
}

impl Policies {
    /// Policies with config overrides by tool name.
    pub fn new(overrides: HashMap<String, Policy>) -> Self {
        Self {
            overrides,
            ..Self::default()
        }
    }

    /// The policy for one call: an `ask` becomes `allow` when the user granted the tool for
    /// this turn or session; `deny` stays `deny`.
    pub fn policy_for(
        &self,
        tool: &dyn Tool,
        arguments: &Value,
        settings: &ToolSettings,
    ) -> Policy {
        let name = tool.name();
        let base = match self.overrides.get(name) {
            Some(policy) => *policy,
            None => tool.default_policy(arguments, settings),
        };
        // Outside the sandbox (asked for, or none to be had): asked about every time; no
        // grant, prefix or allow rule covers it.
        if tool
            .confinement(arguments, settings)
            .is_some_and(needs_each_approval)
        {
            return if base == Policy::Deny {
                Policy::Deny
            } else {
                Policy::Ask
            };
        }
        if base == Policy::Ask
            && (self.session_grants.contains(name)
                || self.turn_grants.contains(name)
                || self.shell_grants_cover(name, arguments, settings).is_some())
        {
            Policy::Allow
        } else {
            base
        }
    }

    /// The grant that allows this call without asking, when its policy would ask and a
    /// grant (a tool for the turn or session, a shell prefix) covers it.
    pub fn granting(
        &self,
        tool: &dyn Tool,
        arguments: &Value,
        settings: &ToolSettings,
    ) -> Option<Grant> {
        let name = tool.name();
        let base = match self.overrides.get(name) {
            Some(policy) => *policy,
            None => tool.default_policy(arguments, settings),
        };
        if base != Policy::Ask
            || tool
                .confinement(arguments, settings)
                .is_some_and(needs_each_approval)
        {
            return None;
        }
        if self.session_grants.contains(name) || self.turn_grants.contains(name) {
            return Some(Grant::Tool(name.to_string()));
        }
        self.shell_grants_cover(name, arguments, settings)
            .map(|grant| Grant::ShellPrefix(grant.clone()))
    }

    /// For a `shell` call: the first of the session's shell grants that covers a command of
    /// it, when with the allow rules they cover every command it runs and no ask rule names
    /// one.
    fn shell_grants_cover(
        &self,
        tool: &str,
        arguments: &Value,
        settings: &ToolSettings,
    ) -> Option<&ShellGrant> {
        if tool != crate::tools::builtin::SHELL || self.shell_prefixes.is_empty() {
            return None;
        }
        let command = arguments.get("command").and_then(Value::as_str)?;
        let verdict = crate::tools::builtin::judge_shell(
            command,
            &settings.shell_allow,
            &settings.shell_ask,
            &self.shell_prefixes,
        );
        match verdict {
            crate::tools::builtin::ShellVerdict::Allowed { grants } => {
                self.shell_prefixes.get(*grants.first()?)
            }
            _ => None,
        }
    }

    /// Records an approval that reaches beyond one call.
    pub fn grant(&mut self, tool: &str, scope: Scope) {
        match scope {
            Scope::Once | Scope::Batch => {}
            Scope::Turn => {
                self.turn_grants.insert(tool.to_string());
            }
            Scope::Session => {
                self.session_grants.insert(tool.to_string());
            }
        }
    }

    /// Allows, for the session, the shell commands `grant` covers.
    pub fn allow_shell_prefix(&mut self, grant: &ShellGrant) {
        if !self.shell_prefixes.contains(grant) {
            self.shell_prefixes.push(grant.clone());
        }
    }

    /// The shell grants given for the session from the dialog.
    pub fn shell_prefixes(&self) -> &[ShellGrant] {
        &self.shell_prefixes
    }

    /// Takes a grant back; `false` when there was no such grant.
    pub fn revoke(&mut self, grant: &Grant) -> bool {
        match grant {
            Grant::Tool(name) => {
                let session = self.session_grants.remove(name);
                self.turn_grants.remove(name) || session
            }
            Grant::ShellPrefix(prefix) => {
                let before = self.shell_prefixes.len();
                self.shell_prefixes.retain(|p| p != prefix);
                self.shell_prefixes.len() != before
            }
        }
    }

    /// Forgets the grants of the finished turn (user request).
    pub fn end_turn(&mut self) {
        self.turn_grants.clear();
    }

    /// Tools granted for the rest of the session.
    pub fn session_grants(&self) -> impl Iterator<Item = &str> {
        self.session_grants.iter().map(String::as_str)
    }

    /// Every configured override, by tool name.
    pub fn overrides(&self) -> impl Iterator<Item = (&str, Policy)> {
        self.overrides.iter().map(|(name, p)| (name.as_str(), *p))
    }

    /// The configured override for a tool, if any.
    pub fn override_for(&self, tool: &str) -> Option<Policy> {
        self.overrides.get(tool).copied()
    }
}
