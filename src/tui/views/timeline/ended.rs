//! A finished call's timeline row: the mark the chat and the stack show for how it ended,
//! its tone and its words (`exit 3`, `denied: why`, `refused by the sandbox`).

use super::label::{one_line, titled};
use super::row::Tone;
use crate::event::ToolStatus;
use crate::run_model::{CallNode, CallState};

/// The symbol, tone and text of the row of call `name` that ended `status` (with `error`,
/// and the run model's `node` for its end label and denial reason).
pub(super) fn label(
    name: &str,
    status: ToolStatus,
    error: Option<&str>,
    node: Option<&CallNode>,
) -> (&'static str, Tone, String) {
    let mark = crate::tui::theme::call_glyph(CallState::Ended(status));
    match (status, error) {
        (ToolStatus::SandboxDenied, _) => (
            mark,
            Tone::Error,
            format!("{} refused by the sandbox", one_line(name)),
        ),
        (ToolStatus::Ok, _) => (mark, Tone::Ok, format!("{} ok", one_line(name))),
        (ToolStatus::ExitNonzero, _) => {
            let end = node
                .and_then(CallNode::end_label)
                .unwrap_or_else(|| crate::tools::outcome::end_label(status, None, None));
            (mark, Tone::Error, format!("{} {end}", one_line(name)))
        }
        (ToolStatus::Denied, _) => match node.and_then(|c| c.reason.as_deref()) {
            Some(why) => (mark, Tone::Warn, titled(name, &format!("denied: {why}"))),
            None => (mark, Tone::Warn, format!("{} denied", one_line(name))),
        },
        (ToolStatus::Cancelled | ToolStatus::Abandoned, _) => (
            mark,
            Tone::Dim,
            format!("{} {}", one_line(name), status.word()),
        ),
        (_, Some(e)) => (mark, Tone::Error, titled(name, &format!("failed: {e}"))),
        (_, None) => (mark, Tone::Error, format!("{} failed", one_line(name))),
    }
}
