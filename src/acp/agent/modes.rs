//! taco's permission modes as ACP session modes (the client's mode picker: ask, auto-edit,
//! plan; `session/set_mode` switches, `current_mode_update` says a switch), and plan mode's
//! review as a permission request: approve (ask mode), approve in auto-edit, or keep planning
//! (the client's next prompt is the feedback).

use agent_client_protocol::v1::schema::{
    PermissionOption, PermissionOptionKind, RequestPermissionOutcome, RequestPermissionRequest,
    SessionId, SessionMode, SessionModeState, ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields,
    ToolKind,
};

use crate::event::{InputRequest, Mode};

const MODES: [Mode; 3] = [Mode::Ask, Mode::AutoEdit, Mode::Plan];

/// The modes a client can pick, `current` picked.
pub fn state(current: Mode) -> SessionModeState {
    let modes = MODES
        .iter()
        .map(|mode| {
            let (name, description) = match mode {
                Mode::Ask => (
                    "Ask",
                    "Calls ask as configured: policies, grants, approvals.",
                ),
                Mode::AutoEdit => (
                    "Auto-edit",
                    "File edits in the workspace run without asking; commands and the rest ask.",
                ),
                Mode::Plan => (
                    "Plan",
                    "Only read-only tools run; the model writes a plan for you to approve.",
                ),
            };
            SessionMode::new(mode.name(), name).description(description.to_string())
        })
        .collect();
    SessionModeState::new(current.name(), modes)
}

/// The mode a client's mode id names.
pub fn parse(id: &str) -> Option<Mode> {
    MODES.into_iter().find(|m| m.name() == id)
}

/// One answer to a plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Review {
    Approve,
    ApproveAutoEdit,
    KeepPlanning,
}

impl Review {
    const ALL: [Self; 3] = [Self::Approve, Self::ApproveAutoEdit, Self::KeepPlanning];

    fn id(self) -> &'static str {
        match self {
            Self::Approve => "approve",
            Self::ApproveAutoEdit => "approve-auto-edit",
            Self::KeepPlanning => "keep-planning",
        }
    }
}

/// Plan mode's question, as a permission request on a call of its own (the question's id).
pub fn plan_request(session: &SessionId, question: &InputRequest) -> RequestPermissionRequest {
    let options = Review::ALL
        .into_iter()
        .map(|review| {
            let (name, kind) = match review {
                Review::Approve => ("Approve the plan", PermissionOptionKind::AllowOnce),
                Review::ApproveAutoEdit => (
                    "Approve it, edits without asking",
                    PermissionOptionKind::AllowAlways,
                ),
                Review::KeepPlanning => ("Keep planning", PermissionOptionKind::RejectOnce),
            };
            PermissionOption::new(review.id(), name, kind)
        })
        .collect();
    let fields = ToolCallUpdateFields::new()
        .title("The plan is ready".to_string())
        .kind(ToolKind::Think)
        .status(ToolCallStatus::Pending);
    RequestPermissionRequest::new(
        session.clone(),
        ToolCallUpdate::new(question.id.clone(), fields),
        options,
    )
}

/// The answer plan mode's question takes (`a`, `e`), or none: keep planning, and the next
/// prompt says what to change.
pub fn plan_answer(outcome: &RequestPermissionOutcome) -> Option<String> {
    let RequestPermissionOutcome::Selected(selected) = outcome else {
        return None;
    };
    let picked = Review::ALL
        .into_iter()
        .find(|r| r.id() == &*selected.option_id.0)?;
    match picked {
        Review::Approve => Some("a".to_string()),
        Review::ApproveAutoEdit => Some("e".to_string()),
        Review::KeepPlanning => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_client_protocol::v1::schema::SelectedPermissionOutcome;

    #[test]
    fn every_mode_is_offered_and_reads_back() {
        let offered = state(Mode::Plan);
        assert_eq!(&*offered.current_mode_id.0, "plan");
        let ids: Vec<&str> = offered.available_modes.iter().map(|m| &*m.id.0).collect();
        assert_eq!(ids, ["ask", "auto-edit", "plan"]);
        for id in ids {
            assert_eq!(parse(id).map(Mode::name), Some(id));
        }
        assert_eq!(parse("yolo"), None);
    }

    #[test]
    fn a_plan_is_approved_only_by_its_own_options() {
        let pick = |id: &str| {
            plan_answer(&RequestPermissionOutcome::Selected(
                SelectedPermissionOutcome::new(id.to_string()),
            ))
        };
        assert_eq!(pick("approve").as_deref(), Some("a"));
        assert_eq!(pick("approve-auto-edit").as_deref(), Some("e"));
        assert_eq!(pick("keep-planning"), None);
        assert_eq!(pick("once"), None);
        assert_eq!(plan_answer(&RequestPermissionOutcome::Cancelled), None);
    }
}
