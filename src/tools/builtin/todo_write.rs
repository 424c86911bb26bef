//! `todo_write`: the model's checklist for a multi-step task (the convention of Claude Code
//! and codex). The call replaces the whole list; taco shows it at the top of the stack pane.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::todo::{TodoItem, TodoList};
use crate::tools::{ToolContext, ToolError, TypedTool};

/// The tool's name.
pub const NAME: &str = "todo_write";

/// Writes the todo list.
#[derive(Debug, Clone, Copy, Default)]
pub struct TodoWrite;

/// Arguments of `todo_write`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct TodoWriteParams {
    /// The whole list, in order; it replaces the previous one (an empty list clears it).
    /// At most 50 items of at most 500 characters.
    pub todos: Vec<TodoItem>,
}

impl TypedTool for TodoWrite {
    type Params = TodoWriteParams;
    const NAME: &'static str = NAME;
    const DESCRIPTION: &'static str = "Write the todo list for the task at hand: the whole \
        list each time, every item pending, in_progress or completed. The user watches it \
        as a checklist. Use it for work of three steps or more; keep one item in_progress \
        and mark each completed as soon as it is done.";
    const USAGE: Option<&'static str> = Some(
        "Plan a multi-step task as a list before starting, then call todo_write again \
         whenever an item starts or ends. Send the whole list every time. Give each item \
         an imperative `content` (\"Run the tests\") and an `activeForm` (\"Running the \
         tests\") shown while it is in progress. Do not use it for a one-step request.",
    );

    async fn run(&self, params: TodoWriteParams, _ctx: &ToolContext) -> Result<Value, ToolError> {
        let list = TodoList::checked(params.todos).map_err(ToolError::InvalidArguments)?;
        let counts = list.counts();
        let note = if list.is_empty() {
            "The todo list is cleared.".to_string()
        } else {
            format!(
                "Todo list updated: {} of {} completed, {} in progress. Keep it current.",
                counts.completed,
                list.items.len(),
                counts.in_progress
            )
        };
        Ok(json!({ "todos": list.items, "note": note }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::Tool;

    #[tokio::test]
    async fn writes_the_whole_list_and_refuses_one_out_of_bounds() {
        let ctx = ToolContext {
            workdir: std::env::temp_dir(),
            settings: Default::default(),
            cancel: Default::default(),
            call: "t1".into(),
            progress: None,
            seen: None,
            trace: None,
        };
        let args = json!({"todos": [
            {"content": "Read\nit", "status": "completed"},
            {"content": "Fix it", "status": "in_progress", "activeForm": "Fixing it"},
        ]});
        assert!(TodoWrite.validate(&args).is_ok());
        let reply = TodoWrite.call(args, &ctx).await.unwrap();
        let crate::tools::ToolReply::Done(value) = reply else {
            panic!("{reply:?}")
        };
        assert_eq!(value["todos"][0]["content"], "Read it");
        assert_eq!(value["todos"][1]["activeForm"], "Fixing it");
        assert!(value["note"].as_str().unwrap().contains("1 of 2 completed"));
        let list = TodoList::from_result(&value).unwrap();
        assert_eq!(list.headline(), "1/2 done · Fixing it");

        let bad = json!({"todos": [{"content": "x", "status": "done"}]});
        let err = TodoWrite.validate(&bad).unwrap_err();
        assert!(err.contains("in_progress"), "{err}");
        let many: Vec<Value> = (0..51)
            .map(|n| json!({"content": n.to_string(), "status": "pending"}))
            .collect();
        let err = TodoWrite
            .call(json!({ "todos": many }), &ctx)
            .await
            .unwrap_err();
        assert!(matches!(&err, ToolError::InvalidArguments(m) if m.contains("at most 50")));
    }
}
