//! A call taco would ask about, as ACP's `session/request_permission`: the options are the
//! approval dialog's answers (once, this request, this session, the shell grant `p` offers,
//! deny), and the client's pick comes back as the same typed answer the dialog gives.

use std::path::Path;

use agent_client_protocol::v1::schema::{
    PermissionOption, PermissionOptionKind, RequestPermissionOutcome, RequestPermissionRequest,
    SessionId, ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields,
};

use super::updates;
use crate::event::Scope;
use crate::orchestrator::approval::{ApprovalAnswer, ApprovalRequest};

/// One answer the client may pick.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Choice {
    /// Run this call.
    Once,
    /// Run every call of this tool until the request is answered.
    Turn,
    /// Run every call of this tool for the session.
    Session,
    /// Run this command, and every command the offered shell grant covers, for the session.
    Prefix,
    /// Do not run it.
    Deny,
}

impl Choice {
    /// The option id on the wire.
    pub fn id(self) -> &'static str {
        match self {
            Self::Once => "once",
            Self::Turn => "turn",
            Self::Session => "session",
            Self::Prefix => "prefix",
            Self::Deny => "deny",
        }
    }

    /// The choice an option id names (`None`: not one taco offered).
    pub fn from_id(id: &str) -> Option<Self> {
        [
            Self::Once,
            Self::Turn,
            Self::Session,
            Self::Prefix,
            Self::Deny,
        ]
        .into_iter()
        .find(|c| c.id() == id)
    }
}

/// The choices offered for `request`: a call that may only be approved once (it leaves the
/// sandbox) gets once and deny, as in the dialog.
pub fn choices(request: &ApprovalRequest) -> Vec<Choice> {
    if request.once_only() {
        return vec![Choice::Once, Choice::Deny];
    }
    let mut out = vec![Choice::Once, Choice::Turn, Choice::Session];
    if request.offered_grant().is_some() {
        out.push(Choice::Prefix);
    }
    out.push(Choice::Deny);
    out
}

/// The `session/request_permission` for `request`.
pub fn request(
    session: &SessionId,
    request: &ApprovalRequest,
    workdir: &Path,
) -> RequestPermissionRequest {
    let options = choices(request)
        .into_iter()
        .map(|choice| option(choice, request))
        .collect();
    let fields = ToolCallUpdateFields::new()
        .title(updates::title(&request.name, &request.arguments))
        .kind(updates::kind(&request.name))
        .status(ToolCallStatus::Pending)
        .content(updates::diffs(&request.name, &request.arguments, workdir))
        .locations(updates::locations(
            &request.name,
            &request.arguments,
            workdir,
        ))
        .raw_input(request.arguments.clone());
    RequestPermissionRequest::new(
        session.clone(),
        ToolCallUpdate::new(request.id.clone(), fields),
        options,
    )
}

fn option(choice: Choice, request: &ApprovalRequest) -> PermissionOption {
    let (name, kind) = match choice {
        Choice::Once if request.once_only() => (
            "Run it once, outside the sandbox".to_string(),
            PermissionOptionKind::AllowOnce,
        ),
        Choice::Once => ("Allow once".to_string(), PermissionOptionKind::AllowOnce),
        Choice::Turn => (
            format!("Allow {} for this request", request.name),
            PermissionOptionKind::AllowAlways,
        ),
        Choice::Session => (
            format!("Allow {} for this session", request.name),
            PermissionOptionKind::AllowAlways,
        ),
        Choice::Prefix => (
            request.offered_grant().map_or_else(
                || "Allow commands like this one".to_string(),
                |grant| format!("Allow {} for this session", grant.hint()),
            ),
            PermissionOptionKind::AllowAlways,
        ),
        Choice::Deny => ("Deny".to_string(), PermissionOptionKind::RejectOnce),
    };
    PermissionOption::new(choice.id(), name, kind)
}

/// The answer the client's outcome gives `request`; cancelled, or an option taco did not
/// offer, denies (nothing runs that the user did not pick).
pub fn answer(request: &ApprovalRequest, outcome: &RequestPermissionOutcome) -> ApprovalAnswer {
    let picked = match outcome {
        RequestPermissionOutcome::Selected(selected) => {
            Choice::from_id(&selected.option_id.0).filter(|c| choices(request).contains(c))
        }
        _ => None,
    };
    let mut answer = match picked {
        Some(Choice::Once) => ApprovalAnswer::approve(Scope::Once),
        Some(Choice::Turn) => ApprovalAnswer::approve(Scope::Turn),
        Some(Choice::Session) => ApprovalAnswer::approve(Scope::Session),
        Some(Choice::Prefix) => ApprovalAnswer {
            prefix: request.offered_grant(),
            ..ApprovalAnswer::approve(Scope::Once)
        },
        Some(Choice::Deny) => ApprovalAnswer::deny(None),
        None => ApprovalAnswer::deny(Some(
            "the client cancelled the permission request".to_string(),
        )),
    };
    request.limit(&mut answer);
    answer
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_client_protocol::v1::schema::SelectedPermissionOutcome;
    use serde_json::json;

    fn shell(command: &str) -> ApprovalRequest {
        ApprovalRequest {
            id: "c1".into(),
            name: "shell".into(),
            arguments: json!({ "command": command }),
            sandbox: None,
        }
    }

    fn pick(id: &str) -> RequestPermissionOutcome {
        RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new(id.to_string()))
    }

    #[test]
    fn every_choice_maps_to_the_dialogs_answer() {
        let request = shell("git log -n 3");
        assert_eq!(
            choices(&request),
            [
                Choice::Once,
                Choice::Turn,
                Choice::Session,
                Choice::Prefix,
                Choice::Deny
            ]
        );
        assert_eq!(answer(&request, &pick("once")).scope, Scope::Once);
        assert_eq!(answer(&request, &pick("turn")).scope, Scope::Turn);
        assert_eq!(answer(&request, &pick("session")).scope, Scope::Session);
        let prefix = answer(&request, &pick("prefix"));
        assert_eq!(prefix.prefix, request.offered_grant());
        assert!(prefix.prefix.is_some());
        assert_eq!(
            answer(&request, &pick("deny")).decision,
            crate::event::Decision::Denied
        );
    }

    #[test]
    fn cancelled_or_unknown_options_deny() {
        let request = shell("ls");
        for outcome in [
            RequestPermissionOutcome::Cancelled,
            pick("allow"),
            pick(""),
            pick("ONCE"),
        ] {
            assert_eq!(
                answer(&request, &outcome).decision,
                crate::event::Decision::Denied,
                "{outcome:?}"
            );
        }
    }

    #[test]
    fn a_command_with_no_grant_offers_no_prefix_and_a_forged_pick_grants_nothing() {
        // `rm` is never offered as a grant: picking "prefix" anyway must not approve.
        let request = shell("rm -rf build");
        assert!(!choices(&request).contains(&Choice::Prefix));
        let forged = answer(&request, &pick("prefix"));
        assert_eq!(forged.decision, crate::event::Decision::Denied);
        assert!(forged.prefix.is_none());
    }

    #[test]
    fn leaving_the_sandbox_is_offered_once_or_deny_only() {
        let mut request = shell("curl example.com");
        request.sandbox = Some(crate::event::Confinement::Unsandboxed);
        assert_eq!(choices(&request), [Choice::Once, Choice::Deny]);
        let session = answer(&request, &pick("session"));
        assert_eq!(session.decision, crate::event::Decision::Denied);
        let once = answer(&request, &pick("once"));
        assert_eq!(once.scope, Scope::Once);
    }
}
