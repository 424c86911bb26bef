//! An agent's permission options and taco's approval keys (issue 32): the dialog keeps its
//! letters (`y` once, `t` this turn, `a` always, `n` deny, `Y`/`N` the batch); each picks the
//! option of the matching kind the agent offers, and the dialog's note lists the options as
//! the agent named them, with the key that picks each. No answer picks an option that grants
//! more than the key says: `y` never picks "always".

use agent_client_protocol::v1::schema::{
    PermissionOption, PermissionOptionId, PermissionOptionKind, RequestPermissionOutcome,
    SelectedPermissionOutcome,
};

use crate::event::{Decision, Scope};
use crate::orchestrator::approval::ApprovalAnswer;

/// The key that picks an option of `kind`.
fn key(kind: PermissionOptionKind) -> Option<&'static str> {
    match kind {
        PermissionOptionKind::AllowOnce => Some("y"),
        PermissionOptionKind::AllowAlways => Some("a"),
        PermissionOptionKind::RejectOnce => Some("n"),
        _ => None,
    }
}

/// The dialog's note: who asks and the agent's options, each with its key (an option no key
/// picks is listed as such).
pub fn note(agent: &str, options: &[PermissionOption]) -> String {
    let has_reject_once = options
        .iter()
        .any(|o| o.kind == PermissionOptionKind::RejectOnce);
    // A key picks the first option of its kind (see `outcome`): a later one of the same kind
    // is listed without the key, so the note never promises what the key does not do.
    let mut keyed: Vec<&str> = Vec::new();
    let listed: Vec<String> = options
        .iter()
        .map(|option| {
            let name = crate::text::summarize(&option.name, 60);
            let key = match option.kind {
                // `n` rejects "always" only when the agent offers no one-time rejection.
                PermissionOptionKind::RejectAlways if !has_reject_once => Some("n"),
                kind => key(kind),
            }
            .filter(|k| !keyed.contains(k));
            keyed.extend(key);
            match key {
                Some(key) => format!("{key}: {name}"),
                None => format!("{name} (no key)"),
            }
        })
        .collect();
    format!(
        "{agent} asks (ACP). Its options: {}",
        if listed.is_empty() {
            "none".to_string()
        } else {
            listed.join(" · ")
        }
    )
}

/// The agent's option an answer picks; `Cancelled` when it offers none that fits (an
/// approval never picks a wider grant, a denial always gets some rejection or a cancel).
pub fn outcome(options: &[PermissionOption], answer: &ApprovalAnswer) -> RequestPermissionOutcome {
    let find = |kinds: &[PermissionOptionKind]| -> Option<PermissionOptionId> {
        kinds.iter().find_map(|kind| {
            options
                .iter()
                .find(|o| o.kind == *kind)
                .map(|o| o.option_id.clone())
        })
    };
    let picked = match (answer.decision, answer.scope) {
        (Decision::Approved, Scope::Session) => find(&[
            PermissionOptionKind::AllowAlways,
            PermissionOptionKind::AllowOnce,
        ]),
        (Decision::Approved, _) => find(&[PermissionOptionKind::AllowOnce]),
        (Decision::Denied, _) => find(&[
            PermissionOptionKind::RejectOnce,
            PermissionOptionKind::RejectAlways,
        ]),
    };
    match picked {
        Some(id) => RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new(id)),
        None => RequestPermissionOutcome::Cancelled,
    }
}

/// How an outcome reads back as taco's decision (what the session file records).
pub fn decision(options: &[PermissionOption], outcome: &RequestPermissionOutcome) -> Decision {
    match outcome {
        RequestPermissionOutcome::Selected(selected) => {
            let kind = options
                .iter()
                .find(|o| o.option_id == selected.option_id)
                .map(|o| o.kind);
            match kind {
                Some(PermissionOptionKind::AllowOnce | PermissionOptionKind::AllowAlways) => {
                    Decision::Approved
                }
                _ => Decision::Denied,
            }
        }
        _ => Decision::Denied,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options() -> Vec<PermissionOption> {
        vec![
            PermissionOption::new("allow", "Allow", PermissionOptionKind::AllowOnce),
            PermissionOption::new("always", "Always Allow", PermissionOptionKind::AllowAlways),
            PermissionOption::new("reject", "Reject", PermissionOptionKind::RejectOnce),
        ]
    }

    fn picked(outcome: RequestPermissionOutcome) -> Option<String> {
        match outcome {
            RequestPermissionOutcome::Selected(s) => Some(s.option_id.0.to_string()),
            _ => None,
        }
    }

    #[test]
    fn keys_pick_the_option_of_their_kind() {
        let options = options();
        let once = ApprovalAnswer::approve(Scope::Once);
        assert_eq!(picked(outcome(&options, &once)).as_deref(), Some("allow"));
        let turn = ApprovalAnswer::approve(Scope::Turn);
        assert_eq!(picked(outcome(&options, &turn)).as_deref(), Some("allow"));
        let always = ApprovalAnswer::approve(Scope::Session);
        assert_eq!(
            picked(outcome(&options, &always)).as_deref(),
            Some("always")
        );
        let deny = ApprovalAnswer::deny(None);
        assert_eq!(picked(outcome(&options, &deny)).as_deref(), Some("reject"));
        assert_eq!(
            decision(&options, &outcome(&options, &deny)),
            Decision::Denied
        );
        assert_eq!(
            decision(&options, &outcome(&options, &once)),
            Decision::Approved
        );
    }

    #[test]
    fn an_approval_never_picks_a_wider_grant() {
        let only_always = vec![PermissionOption::new(
            "always",
            "Always",
            PermissionOptionKind::AllowAlways,
        )];
        let once = ApprovalAnswer::approve(Scope::Once);
        assert_eq!(picked(outcome(&only_always, &once)), None);
        assert_eq!(
            decision(&only_always, &outcome(&only_always, &once)),
            Decision::Denied
        );
    }

    #[test]
    fn the_note_lists_the_options_with_their_keys() {
        assert_eq!(
            note("codex", &options()),
            "codex asks (ACP). Its options: y: Allow · a: Always Allow · n: Reject"
        );
        // Two options of one kind (taco's own agent offers "this request" and "this session"
        // as allow-always): the key goes to the first, the one it picks.
        let twice = vec![
            PermissionOption::new(
                "turn",
                "For this request",
                PermissionOptionKind::AllowAlways,
            ),
            PermissionOption::new(
                "session",
                "For this session",
                PermissionOptionKind::AllowAlways,
            ),
        ];
        assert_eq!(
            note("taco", &twice),
            "taco asks (ACP). Its options: a: For this request · For this session (no key)"
        );
        let reject_always = vec![PermissionOption::new(
            "never",
            "Never",
            PermissionOptionKind::RejectAlways,
        )];
        assert_eq!(
            note("x", &reject_always),
            "x asks (ACP). Its options: n: Never"
        );
    }
}
