//! The agent's todo checklist (issue 30.3): the list the `todo_write` tool replaces whole,
//! its bounds, and how it reads back from a recorded result. The tool checks and returns the
//! list; the run model folds the latest one (so the stack pane, `/status` and a resumed
//! session read it from one place).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::conversation::{Message, Role};

/// Most items in a list: a plan, not a backlog.
pub const MAX_ITEMS: usize = 50;
/// Most characters in an item's text (and in its `activeForm`).
pub const MAX_CHARS: usize = 500;

/// Where an item stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TodoStatus {
    /// Not started.
    Pending,
    /// Being worked on now.
    InProgress,
    /// Done.
    Completed,
}

impl TodoStatus {
    /// The state as a Markdown task box (`~`: in progress).
    pub fn mark(self) -> &'static str {
        match self {
            Self::Completed => "[x]",
            Self::InProgress => "[~]",
            Self::Pending => "[ ]",
        }
    }
}

/// One item of the checklist.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TodoItem {
    /// What is to be done, in the imperative ("Run the tests").
    pub content: String,
    /// Where it stands: pending, in_progress or completed.
    pub status: TodoStatus,
    /// The item while it is being done, in the present continuous ("Running the tests");
    /// shown instead of `content` while it is in progress.
    #[serde(
        default,
        rename = "activeForm",
        skip_serializing_if = "Option::is_none"
    )]
    pub active_form: Option<String>,
}

/// The whole checklist, in the model's order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TodoList {
    /// The items.
    pub items: Vec<TodoItem>,
}

/// How many items stand where.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// Not started.
    pub pending: usize,
    /// Being worked on.
    pub in_progress: usize,
    /// Done.
    pub completed: usize,
}

impl TodoList {
    /// Checks a list the model wrote: within the bounds, every item with some text. Text
    /// is kept on one line (a newline would break the checklist's rows).
    pub fn checked(items: Vec<TodoItem>) -> Result<Self, String> {
        if items.len() > MAX_ITEMS {
            return Err(format!(
                "{} items is too many: a todo list holds at most {MAX_ITEMS}; merge small steps",
                items.len()
            ));
        }
        let mut out = Vec::with_capacity(items.len());
        for (n, item) in items.into_iter().enumerate() {
            let content = one_line(&item.content);
            if content.is_empty() {
                return Err(format!("item {} has no content", n + 1));
            }
            let active_form = item.active_form.as_deref().map(one_line);
            let longest = active_form.as_ref().map_or(0, |a| a.chars().count());
            if content.chars().count().max(longest) > MAX_CHARS {
                return Err(format!(
                    "item {} is longer than {MAX_CHARS} characters; keep items short",
                    n + 1
                ));
            }
            out.push(TodoItem {
                content,
                status: item.status,
                active_form: active_form.filter(|a| !a.is_empty()),
            });
        }
        Ok(Self { items: out })
    }

    /// The list a recorded `todo_write` result holds, checked again (a trace file may have
    /// been edited); `None` when it holds none.
    pub fn from_result(result: &Value) -> Option<Self> {
        let items = result.get("todos")?.as_array()?;
        let items: Vec<TodoItem> = items
            .iter()
            .take(MAX_ITEMS)
            .filter_map(|item| TodoItem::deserialize(item).ok())
            .collect();
        Self::checked(items).ok()
    }

    /// How many items stand where.
    pub fn counts(&self) -> Counts {
        let mut counts = Counts::default();
        for item in &self.items {
            match item.status {
                TodoStatus::Pending => counts.pending += 1,
                TodoStatus::InProgress => counts.in_progress += 1,
                TodoStatus::Completed => counts.completed += 1,
            }
        }
        counts
    }

    /// Whether the list has no items.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// `2/5 done`, with what is in progress.
    pub fn headline(&self) -> String {
        let counts = self.counts();
        let mut out = format!("{}/{} done", counts.completed, self.items.len());
        if let Some(item) = self.current() {
            out.push_str(" · ");
            out.push_str(item.shown());
        }
        out
    }

    /// The items as a Markdown list, one line each with its state's box.
    pub fn markdown(&self) -> String {
        let mut out = String::new();
        for item in &self.items {
            out.push_str("- ");
            out.push_str(item.status.mark());
            out.push(' ');
            out.push_str(item.shown());
            out.push('\n');
        }
        out
    }

    /// The first item in progress.
    pub fn current(&self) -> Option<&TodoItem> {
        self.items
            .iter()
            .find(|i| i.status == TodoStatus::InProgress)
    }
}

/// What a `todo_write` call says, for its row in the stack and the timeline (`1/3 done ·
/// Fixing it`); `None` for any other call, or arguments that are not a list.
pub fn call_summary(name: &str, arguments: &Value) -> Option<String> {
    if name != crate::tools::builtin::todo_write::NAME {
        return None;
    }
    let list = TodoList::from_result(arguments)?;
    Some(if list.is_empty() {
        "cleared".to_string()
    } else {
        list.headline()
    })
}

/// The list the conversation's latest successful `todo_write` left, with the index of its
/// tool message (a failed write left the list as it was).
pub fn latest_in(messages: &[Message]) -> Option<(usize, TodoList)> {
    let name = crate::tools::builtin::todo_write::NAME;
    messages.iter().enumerate().rev().find_map(|(at, m)| {
        if m.role != Role::Tool || m.name.as_deref() != Some(name) {
            return None;
        }
        let value: Value = serde_json::from_str(m.content.as_deref()?).ok()?;
        TodoList::from_result(&value).map(|list| (at, list))
    })
}

impl TodoItem {
    /// The text to show: the active form while in progress, else the content.
    pub fn shown(&self) -> &str {
        match (self.status, &self.active_form) {
            (TodoStatus::InProgress, Some(active)) => active,
            _ => &self.content,
        }
    }
}

/// Text on one line: runs of whitespace (newlines included) become one space, control
/// characters go.
fn one_line(text: &str) -> String {
    let cleaned: String = text
        .chars()
        .map(|c| if c.is_whitespace() { ' ' } else { c })
        .filter(|c| !c.is_control())
        .collect();
    cleaned.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn item(content: &str, status: TodoStatus) -> TodoItem {
        TodoItem {
            content: content.into(),
            status,
            active_form: None,
        }
    }

    #[test]
    fn bounds_are_checked_with_a_reason() {
        let many = vec![item("x", TodoStatus::Pending); MAX_ITEMS + 1];
        let err = TodoList::checked(many).unwrap_err();
        assert!(err.contains("at most 50"), "{err}");
        assert!(TodoList::checked(vec![item("x", TodoStatus::Pending); MAX_ITEMS]).is_ok());
        let long = "é".repeat(MAX_CHARS + 1);
        let err = TodoList::checked(vec![item(&long, TodoStatus::Pending)]).unwrap_err();
        assert!(err.contains("item 1"), "{err}");
        assert!(TodoList::checked(vec![item(&"é".repeat(MAX_CHARS), TodoStatus::Pending)]).is_ok());
        let mut active = item("ok", TodoStatus::InProgress);
        active.active_form = Some("a".repeat(MAX_CHARS + 1));
        assert!(TodoList::checked(vec![active]).is_err());
        let err = TodoList::checked(vec![item(" \n\t", TodoStatus::Pending)]).unwrap_err();
        assert!(err.contains("no content"), "{err}");
    }

    #[test]
    fn the_latest_successful_write_of_a_conversation() {
        let write = |id: &str, content: &str| Message::tool(id, "todo_write", content.to_string());
        let messages = vec![
            Message::user("go"),
            write("a", r#"{"todos":[{"content":"One","status":"pending"}]}"#),
            Message::tool("b", "shell", r#"{"todos":[]}"#.to_string()),
            write("c", "invalid arguments: missing field `todos`"),
        ];
        let (at, list) = latest_in(&messages).unwrap();
        assert_eq!((at, list.items[0].content.as_str()), (1, "One"));
        assert_eq!(latest_in(&messages[..1]), None);
    }

    #[test]
    fn text_is_kept_on_one_line() {
        let mut it = item("Run\nthe \x1b[31mtests\r\n", TodoStatus::InProgress);
        it.active_form = Some("  ".into());
        let list = TodoList::checked(vec![it]).unwrap();
        assert_eq!(list.items[0].content, "Run the [31mtests");
        assert_eq!(list.items[0].active_form, None);
        assert_eq!(list.items[0].shown(), "Run the [31mtests");
    }

    #[test]
    fn counts_headline_and_the_active_form() {
        let mut doing = item("Write tests", TodoStatus::InProgress);
        doing.active_form = Some("Writing tests".into());
        let list = TodoList::checked(vec![
            item("Read the code", TodoStatus::Completed),
            doing,
            item("Ship", TodoStatus::Pending),
        ])
        .unwrap();
        let c = list.counts();
        assert_eq!((c.pending, c.in_progress, c.completed), (1, 1, 1));
        assert_eq!(list.headline(), "1/3 done · Writing tests");
        assert_eq!(
            list.markdown(),
            "- [x] Read the code\n- [~] Writing tests\n- [ ] Ship\n"
        );
    }

    #[test]
    fn reads_back_from_a_result_and_drops_what_is_malformed() {
        let result = json!({"todos": [
            {"content": "a", "status": "completed"},
            {"content": "b", "status": "done"},
            {"content": "c", "status": "in_progress", "activeForm": "Doing c"},
            7
        ]});
        let list = TodoList::from_result(&result).unwrap();
        assert_eq!(list.items.len(), 2);
        assert_eq!(list.items[1].shown(), "Doing c");
        assert_eq!(TodoList::from_result(&json!({"todos": "x"})), None);
        assert_eq!(TodoList::from_result(&json!(null)), None);
        assert_eq!(
            call_summary("todo_write", &result).unwrap(),
            "1/2 done · Doing c"
        );
        assert_eq!(
            call_summary("todo_write", &json!({"todos": []})).unwrap(),
            "cleared"
        );
        assert_eq!(call_summary("shell", &result), None);
        let many: Vec<Value> = (0..200)
            .map(|n| json!({"content": n.to_string(), "status": "pending"}))
            .collect();
        let list = TodoList::from_result(&json!({ "todos": many })).unwrap();
        assert_eq!(list.items.len(), MAX_ITEMS);
    }
}
