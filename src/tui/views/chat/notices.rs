//! The chat's one-line notices for events outside the turn: a compaction, a repeated call,
//! a revoked grant.

use super::cell::NoteStyle;
use crate::event::{CompactTrigger, Compacted, Grant};

/// What a compaction did, or why it did not.
pub(super) fn compacted(c: &Compacted) -> (NoteStyle, String) {
    let why = match c.trigger {
        CompactTrigger::Auto => "the context was filling up",
        CompactTrigger::Overflow => "the provider said the request was too long",
        CompactTrigger::Manual => "/compact",
    };
    match &c.error {
        None => (
            NoteStyle::Dim,
            format!(
                "context compacted ({why}): {} → {} tokens, {} older messages summarised",
                tokens(c.before_tokens),
                tokens(c.after_tokens),
                c.summarized
            ),
        ),
        Some(error) => (NoteStyle::Warn, format!("not compacted ({why}): {error}")),
    }
}

/// A call the model keeps repeating.
pub(super) fn repeated(name: &str, times: u32) -> String {
    format!(
        "repeated call: {name} was called {times} times with the same arguments; the model was told"
    )
}

/// A grant taken back (Markdown).
pub(super) fn revoked(grant: &Grant) -> String {
    match grant {
        Grant::Tool(name) => format!("`{name}` is asked about again (grant revoked)."),
        Grant::ShellPrefix(grant) => {
            format!("Shell commands `{grant}` are asked about again (grant revoked).")
        }
    }
}

/// `12.3k` tokens for big counts.
fn tokens(n: u64) -> String {
    if n >= 1000 {
        format!("{:.1}k", n as f64 / 1000.0)
    } else {
        n.to_string()
    }
}

/// A `/model` or `/provider` switch: what the next request talks to.
pub(super) fn switched(provider: &str, model: &str) -> String {
    let (provider, model) = (provider.replace('`', "'"), model.replace('`', "'"));
    format!("Switched to `{provider}` with model `{model}`: the next request uses them.")
}

/// Most files a `files_changed` notice lists (the rest are counted).
const MAX_LISTED: usize = 12;

/// `✎ 3 files changed (+40 −12)` and the files (Markdown).
pub(super) fn files_changed(changed: &crate::event::FilesChanged) -> String {
    use crate::event::Change;
    let mut text = format!("✎ {}", changed.headline());
    for file in changed.files.iter().take(MAX_LISTED) {
        let mark = match file.change {
            Change::Added => "+",
            Change::Modified => "~",
            Change::Deleted => "−",
        };
        let counts = if file.binary {
            "binary".to_string()
        } else {
            format!("+{} −{}", file.added, file.removed)
        };
        text.push_str(&format!(
            "\n- {mark} `{}` {counts}",
            file.path.replace('`', "'")
        ));
    }
    if changed.count() > MAX_LISTED {
        text.push_str(&format!("\n- … and {} more", changed.count() - MAX_LISTED));
    }
    text
}

/// What a rewind did (Markdown).
pub(super) fn rewound(r: &crate::event::Rewound) -> String {
    let quote = |paths: &[String]| {
        paths
            .iter()
            .map(|p| format!("`{}`", p.replace('`', "'")))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut text = String::from("⟲ Rewound.");
    if r.checkpoint.is_some() {
        let n = r.restored.len();
        text.push_str(&format!(
            " {n} file{} restored",
            if n == 1 { "" } else { "s" }
        ));
        if let Some(undo) = &r.undo {
            text.push_str(&format!(
                " (undo: `taco rewind {}`)",
                undo.get(..12).unwrap_or(undo)
            ));
        }
        text.push('.');
    }
    if !r.kept.is_empty() {
        text.push_str(&format!(" Kept, edited by hand: {}.", quote(&r.kept)));
    }
    if !r.failed.is_empty() {
        text.push_str(&format!(" Not restored: {}.", r.failed.join("; ")));
    }
    if let Some(fork) = &r.fork {
        text.push_str(&format!(
            " The conversation went back to before “{}”; the later part stays in session `{}`.",
            fork.prompt.replace('`', "'"),
            fork.from_session
        ));
    }
    text
}
