//! The permission mode (issue 30.2): how calls are let through. `ask` asks as configured;
//! `auto-edit` lets file edits in the workspace through without asking (shell and the rest
//! still ask); `plan` runs only what cannot change the workspace and has the model write a
//! plan, which the user approves or sends back with feedback.

use serde::{Deserialize, Serialize};

/// How calls are let through.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// As configured: policies, grants, approvals.
    #[default]
    Ask,
    /// File edits in the workspace (`write_file`, `edit_file`) are approved; the rest asks.
    AutoEdit,
    /// Only read-only tools run; the model writes a plan.
    Plan,
}

impl Mode {
    /// The next one, as Shift-Tab cycles: ask → auto-edit → plan → ask.
    pub fn next(self) -> Self {
        match self {
            Self::Ask => Self::AutoEdit,
            Self::AutoEdit => Self::Plan,
            Self::Plan => Self::Ask,
        }
    }

    /// Its name (`ask`, `auto-edit`, `plan`).
    pub fn name(self) -> &'static str {
        match self {
            Self::Ask => "ask",
            Self::AutoEdit => "auto-edit",
            Self::Plan => "plan",
        }
    }

    /// From its name.
    pub fn parse(text: &str) -> Option<Self> {
        match text.trim() {
            "ask" => Some(Self::Ask),
            "auto-edit" | "auto_edit" | "autoedit" => Some(Self::AutoEdit),
            "plan" => Some(Self::Plan),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_cycle_and_read_back() {
        let mut m = Mode::Ask;
        for _ in 0..3 {
            assert_eq!(Mode::parse(m.name()), Some(m));
            m = m.next();
        }
        assert_eq!(m, Mode::Ask);
        assert_eq!(serde_json::to_value(Mode::AutoEdit).unwrap(), "auto-edit");
        assert_eq!(Mode::parse("nope"), None);
    }
}
