//! What the agent asks of the user and plans: a permission request as an approval, its
//! answer, and a plan as the todo checklist.

#[allow(clippy::wildcard_imports)]
use super::*;

impl Translator {
    /// The agent asks to run a call (`session/request_permission`): the call as it stands
    /// (announced now if it was not), waiting for approval; `note` lists the agent's options.
    pub fn approval(
        &mut self,
        update: &ToolCallUpdate,
        raw: Value,
        note: String,
        now: u64,
    ) -> Vec<EventData> {
        let id = update.tool_call_id.0.to_string();
        let mut out = self.tool_update(update, raw, now);
        let Some(call) = self.calls.get_mut(&id) else {
            return out;
        };
        if call.ended {
            return out;
        }
        call.state = FrameState::AwaitingApproval;
        let diff = diff_of(&call.content, &self.workdir);
        out.push(EventData::StackPush(frame(
            &id,
            call,
            FrameState::AwaitingApproval,
        )));
        out.push(EventData::ApprovalRequested {
            id: id.clone(),
            name: call.name.clone(),
            arguments: call.arguments.clone(),
            position: 1,
            of: 1,
            note: Some(note),
            diff,
            sandbox: None,
        });
        out
    }

    /// The user answered an approval: approved calls run (as the agent reports), denied
    /// ones end.
    pub fn decided(
        &mut self,
        id: &str,
        decision: crate::event::Decision,
        scope: crate::event::Scope,
        reason: Option<String>,
        now: u64,
    ) -> Vec<EventData> {
        let Some(call) = self.calls.get_mut(id) else {
            return Vec::new();
        };
        let mut out = vec![EventData::ApprovalDecided {
            id: id.to_string(),
            name: call.name.clone(),
            decision,
            scope,
            reason,
            prefix: None,
        }];
        match decision {
            crate::event::Decision::Approved => {
                call.state = FrameState::Running;
                out.push(EventData::StackPush(frame(id, call, FrameState::Running)));
            }
            crate::event::Decision::Denied => {
                call.state = FrameState::Denied;
                out.extend(self.maybe_end(id, now));
            }
        }
        out
    }

    pub(super) fn plan(&mut self, plan: &Plan, now: u64) -> Vec<EventData> {
        // The text before it is a turn's, as before any call.
        let mut out = self.close_span(now);
        self.plans += 1;
        let todos: Vec<Value> = plan
            .entries
            .iter()
            .filter(|e| !e.content.trim().is_empty())
            .take(crate::todo::MAX_ITEMS)
            .map(|entry| {
                let status = match entry.status {
                    PlanEntryStatus::Completed => "completed",
                    PlanEntryStatus::InProgress => "in_progress",
                    _ => "pending",
                };
                json!({"content": entry.content, "status": status})
            })
            .collect();
        let list = json!({ "todos": todos });
        let id = format!("plan-{}", self.plans);
        let name = crate::tools::builtin::todo_write::NAME.to_string();
        out.extend([
            EventData::ToolCall {
                turn: self.turn.max(1),
                id: id.clone(),
                name: name.clone(),
                arguments: list.clone(),
                parent: None,
                sandbox: None,
            },
            EventData::ToolResult {
                id,
                name,
                ok: true,
                status: Some(ToolStatus::Ok),
                denied_by: None,
                result: Some(list),
                error: None,
                duration_ms: 0,
            },
        ]);
        out
    }
}
