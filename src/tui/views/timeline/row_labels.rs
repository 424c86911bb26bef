//! The colour roles of the timeline's rows, and the labels of approval, hook and rewind rows.

use ratatui::style::Style;

use crate::tui::theme::Theme;
use crate::tui::views::timeline::label::one_line;

/// A colour role, resolved against the theme at render time (rows outlive theme changes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Tone {
    Text,
    Dim,
    Heading,
    Code,
    Llm,
    Tool,
    Ok,
    Error,
    Warn,
}

impl Tone {
    /// The theme style of this tone.
    pub(super) fn style(self, theme: &Theme) -> Style {
        match self {
            Self::Text => theme.text,
            Self::Dim => theme.dim,
            Self::Heading => theme.heading,
            Self::Code => theme.code,
            Self::Llm => theme.llm,
            Self::Tool => theme.tool,
            Self::Ok => theme.ok,
            Self::Error => theme.error,
            Self::Warn => theme.warn,
        }
    }
}

/// A `hook` row: which hook, on what, what it decided.
pub(super) fn hook_label(h: &crate::event::HookRan) -> (&'static str, Tone, String) {
    use crate::event::HookDecision;
    let what = format!("hook {} · {}", h.event.name(), one_line(&h.command));
    match (&h.error, h.decision) {
        (Some(error), _) => (
            "⚓",
            Tone::Warn,
            format!("{what} · failed: {}", one_line(error)),
        ),
        (None, Some(HookDecision::Deny)) => {
            let why = h.reason.as_deref().map(one_line).unwrap_or_default();
            ("↪", Tone::Error, format!("{what} · denied: {why}"))
        }
        (None, Some(HookDecision::Ask)) => ("↪", Tone::Warn, format!("{what} · ask")),
        (None, Some(HookDecision::Allow)) => ("↪", Tone::Ok, format!("{what} · allowed")),
        (None, None) if h.context => ("↪", Tone::Dim, format!("{what} · added context")),
        (None, None) => ("↪", Tone::Dim, what),
    }
}

/// A `rewound` row: what went back, and how many files.
pub(super) fn rewound_label(r: &crate::event::Rewound) -> String {
    let mut said = Vec::new();
    if r.checkpoint.is_some() {
        let n = r.restored.len();
        said.push(format!(
            "{n} file{} restored",
            if n == 1 { "" } else { "s" }
        ));
    }
    if !r.kept.is_empty() {
        said.push(format!("{} kept (edited by hand)", r.kept.len()));
    }
    if let Some(fork) = &r.fork {
        said.push(format!(
            "conversation forked before “{}”",
            one_line(&fork.prompt)
        ));
    }
    format!("rewound · {}", said.join(" · "))
}

/// An approval asked: `approve? (1/2) shell command=…` (`run unsandboxed?` to leave the
/// sandbox).
pub(super) fn approval_asked(
    name: &str,
    arguments: &serde_json::Value,
    (position, of): (usize, usize),
    sandbox: Option<crate::event::Confinement>,
) -> (&'static str, Tone, String) {
    use super::label::{sandboxed, summary, titled};
    let ask = match sandbox {
        Some(crate::event::Confinement::Unsandboxed) => "run unsandboxed?",
        _ => "approve?",
    };
    let call = titled(
        &sandboxed(&crate::mcp::names::display(name), sandbox),
        &summary(arguments),
    );
    ("?", Tone::Warn, format!("{ask} ({position}/{of}) {call}"))
}

/// An approval decided: `approved shell (this request)`, `denied shell (once): why`.
pub(super) fn approval_decided(
    name: &str,
    decision: crate::event::Decision,
    scope: crate::event::Scope,
    reason: Option<&str>,
    prefix: Option<crate::tools::builtin::ShellGrant>,
) -> (&'static str, Tone, String) {
    let name = &*crate::mcp::names::display(name);
    // How far it was allowed, worded as the run model words it (a `p` grant by what it
    // allows).
    let via = crate::run_model::Via::Approved { scope, prefix };
    let scope = one_line(&via.label());
    match decision {
        crate::event::Decision::Approved => (
            "✔",
            Tone::Ok,
            format!("approved {} ({scope})", one_line(name)),
        ),
        crate::event::Decision::Denied => {
            let mut text = format!("denied {} ({scope})", one_line(name));
            if let Some(why) = reason {
                text.push_str(&format!(": {}", one_line(why)));
            }
            ("⊘", Tone::Warn, text)
        }
    }
}
