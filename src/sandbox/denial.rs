//! Telling a sandbox denial from a plain failure. Landlock refuses a write or a TCP connect
//! with EACCES (and a signal with EPERM), the read-only mounts a chmod or chown outside the
//! writable paths with EROFS, the seccomp guard with EPERM; programs report these as
//! "Permission denied", "Read-only file system" or "Operation not permitted". A sandboxed command that fails saying so was most likely
//! stopped by the sandbox, so the model and the user are told that, and how to escalate.

use serde_json::{Value, json};

use super::Confinement;

/// What `strerror` says for the errors the sandbox causes, lowercased.
const SIGNS: [&str; 3] = [
    "permission denied",
    "operation not permitted",
    "read-only file system",
];

/// Whether a sandboxed command that exited with `success` and printed `outputs` looks
/// stopped by the sandbox.
pub fn looks_denied(success: bool, outputs: &[&str]) -> bool {
    !success
        && outputs.iter().any(|text| {
            let lower = text.to_lowercase();
            SIGNS.iter().any(|sign| lower.contains(sign))
        })
}

/// What is added to a denied command's result: the sandbox it ran in and what the model
/// may do about it.
pub fn annotate(result: &mut Value, confinement: Confinement) {
    let how = confinement.label();
    result["sandbox_denied"] = json!(true);
    let note = format!(
        "the command failed with a permission error while {how}: the sandbox probably refused it (writes outside the workspace and temp dir, or a network connection). If the task needs it, call shell again with the same command and \"unsandboxed\": true; the user is asked to approve running it outside the sandbox."
    );
    result["note"] = match result.get("note").and_then(Value::as_str) {
        Some(earlier) => json!(format!("{earlier}; {note}")),
        None => json!(note),
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::SandboxMode;

    #[test]
    fn only_a_failure_that_says_permission_is_a_denial() {
        let denied = "sh: 1: cannot create /root/x: Permission denied";
        assert!(looks_denied(false, &["", denied]));
        assert!(looks_denied(
            false,
            &["nc: connect failed: Permission Denied", ""]
        ));
        assert!(looks_denied(false, &["kill: Operation not permitted"]));
        assert!(looks_denied(
            false,
            &["chmod: changing permissions of '/etc/x': Read-only file system"]
        ));
        assert!(!looks_denied(true, &[denied]), "it succeeded all the same");
        assert!(!looks_denied(false, &["error: no such file"]));
    }

    #[test]
    fn the_note_says_how_to_escalate_and_keeps_earlier_notes() {
        let mut result = json!({"exit_code": 2, "note": "the command exited with code 2"});
        let confinement = Confinement::Sandboxed {
            mode: SandboxMode::WorkspaceWrite,
            network: false,
        };
        annotate(&mut result, confinement);
        assert_eq!(result["sandbox_denied"], json!(true));
        let note = result["note"].as_str().unwrap();
        assert!(
            note.starts_with("the command exited with code 2; "),
            "{note}"
        );
        assert!(
            note.contains("\"unsandboxed\": true") && note.contains("workspace-write"),
            "{note}"
        );
    }
}
