//! The built-in tools: files (confined to the workspace), search, shell, web fetch,
//! sub-agents, code generation and the todo checklist.

use std::sync::Arc;

use super::{Tool, ToolError};

pub mod create_code;
pub mod delegate;
mod edit_file;
mod list_dir;
mod read_file;
mod search_files;
pub mod shell;
pub mod todo_write;
mod web_fetch;
mod write_file;

pub use create_code::CreateCode;
pub use delegate::Delegate;
pub use edit_file::EditFile;
pub use list_dir::ListDir;
pub use read_file::ReadFile;
pub use search_files::SearchFiles;
pub use shell::Shell;
pub use shell::grants::{ArgShape, ShellGrant, suggest as suggested_grant};
pub use shell::rules::{Verdict as ShellVerdict, judge as judge_shell, policy as shell_rule};
pub use todo_write::TodoWrite;

/// The shell tool's name (prefix grants apply to it).
pub const SHELL: &str = "shell";
pub use web_fetch::{AllowPrivate, HTML_HELPER_ARG, WebFetch, html_helper_main};
pub use write_file::WriteFile;

/// Every built-in tool, in the order they are offered to the model.
pub fn all() -> Vec<Arc<dyn Tool>> {
    vec![
        Arc::new(ListDir),
        Arc::new(ReadFile),
        Arc::new(WriteFile),
        Arc::new(EditFile),
        Arc::new(SearchFiles),
        Arc::new(Shell),
        Arc::new(WebFetch::new()),
        Arc::new(Delegate),
        Arc::new(CreateCode),
        Arc::new(TodoWrite),
    ]
}

/// The error every long-running tool returns when the turn is cancelled.
fn cancelled() -> ToolError {
    ToolError::failed("cancelled")
}

/// Runs blocking filesystem work off the async threads (works on a current-thread runtime).
async fn blocking<T, F>(work: F) -> Result<T, ToolError>
where
    T: Send + 'static,
    F: FnOnce() -> Result<T, ToolError> + Send + 'static,
{
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| ToolError::failed(format!("internal error: {e}")))?
}

/// The longest prefix of `text` of at most `max` bytes that ends on a char boundary.
fn truncate_str(text: &str, max: usize) -> &str {
    &text[..text.floor_char_boundary(max)]
}

/// Whether bytes look binary: a NUL byte in the first 8 KiB, as git and ripgrep decide.
pub(crate) fn looks_binary(bytes: &[u8]) -> bool {
    bytes.iter().take(8192).any(|&b| b == 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncation_respects_char_boundaries() {
        assert_eq!(truncate_str("héllo", 2), "h");
        assert_eq!(truncate_str("héllo", 3), "hé");
        assert_eq!(truncate_str("abc", 10), "abc");
        assert_eq!(truncate_str("abc", 0), "");
    }

    #[test]
    fn binary_sniffing() {
        assert!(looks_binary(b"ab\0cd"));
        assert!(!looks_binary("plain text ✓".as_bytes()));
    }

    #[test]
    fn all_in_order() {
        let names: Vec<String> = all().iter().map(|t| t.name().to_string()).collect();
        let expected = [
            "list_dir",
            "read_file",
            "write_file",
            "edit_file",
            "search_files",
            "shell",
            "web_fetch",
            "delegate",
            "create_code",
            "todo_write",
        ];
        assert_eq!(names, expected);
    }
}
