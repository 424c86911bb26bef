//! An external agent's `session/update`s as taco events (issue 32): pure, so the mapping is
//! tested without a process. The agent's text between tool calls is one model call's span
//! (`llm_started` … `llm_call`, its content the text), so the chat, the timeline and a replay
//! read it as they read taco's own turns; each ACP tool call is a `tool_call` with its stack
//! frames and its `tool_result`; a plan is a `todo_write`, the checklist's one source; a
//! usage update is `usage_reported`. The raw ACP JSON is the call's payload: the first
//! `tool_call` update is its `arguments`, every later update is kept in its `result`
//! (`updates`), so the payload view shows what the agent sent.

use std::collections::{HashMap, VecDeque};

use agent_client_protocol::v1::schema::{
    ContentBlock, Plan, PlanEntryStatus, StopReason, ToolCall, ToolCallContent, ToolCallUpdate,
};
use serde_json::{Value, json};

use crate::conversation::Usage;
use crate::event::{
    DeltaKind, EventData, FrameState, LlmCall, LlmEnd, LlmFailed, LlmStarted, Purpose, ToolStatus,
};

/// Most text of one span kept for its `llm_call` (and the chat): past it, chunks are
/// dropped and said once.
pub const MAX_TEXT: usize = 1 << 20;
/// Most tool calls one run may report; more are dropped and said once.
pub const MAX_CALLS: usize = 5_000;
/// Updates of one call kept for its payload (the latest ones).
pub const MAX_UPDATES: usize = 32;
/// Most bytes of one call's content text kept in its result.
const MAX_CONTENT: usize = 256 * 1024;

/// One tool call as reported so far.
#[derive(Debug, Clone)]
struct Call {
    name: String,
    /// What the call was given: the agent's `rawInput`, else its title.
    arguments: Value,
    title: String,
    parent: Option<String>,
    state: FrameState,
    started: u64,
    /// Its place in the run's calls (newest highest).
    seq: usize,
    content: Vec<ToolCallContent>,
    locations: Vec<Value>,
    raw_output: Option<Value>,
    updates: VecDeque<Value>,
    dropped_updates: usize,
    ended: bool,
}

/// The model call span in flight: the agent's text since its last tool call.
#[derive(Debug, Clone, Default)]
struct Span {
    call: u32,
    started: u64,
    text: String,
    reasoning: String,
    cut: bool,
}

/// The translation state of one session (a run at a time).
#[derive(Debug, Clone, Default)]
pub struct Translator {
    /// The agent's name: the runs' "provider" and "model".
    agent: String,
    /// The workspace: diffs name their files relative to it.
    workdir: std::path::PathBuf,
    running: bool,
    turn: u32,
    calls_made: u32,
    span: Option<Span>,
    /// The text of the latest span: the run's answer.
    last_text: String,
    calls: HashMap<String, Call>,
    /// The agent's terminals this run: their calls' ids.
    terminals: HashMap<String, String>,
    plans: u32,
    /// What was said once this run (dropped text, too many calls).
    said: Vec<&'static str>,
    /// Said and not yet taken.
    notices: Vec<String>,
}

impl Translator {
    /// Translates the updates of `agent`, working in `workdir`.
    pub fn new(agent: &str, workdir: &std::path::Path) -> Self {
        Self {
            agent: agent.to_string(),
            workdir: workdir.to_path_buf(),
            ..Self::default()
        }
    }

    /// Whether a run is in progress.
    pub fn is_running(&self) -> bool {
        self.running
    }

    /// A prompt was sent: the run starts.
    pub fn start(&mut self, prompt: &str, max_turns: u32) -> Vec<EventData> {
        *self = Self::new(&self.agent, &self.workdir);
        self.running = true;
        vec![EventData::RunStarted {
            prompt: crate::text::shorten_end(prompt, 200),
            provider: "acp".to_string(),
            model: self.agent.clone(),
            max_turns,
            trace_parent: None,
        }]
    }

    /// One `session/update` at `now` (unix ms); `raw` is its JSON, for the payload view.
    pub fn update(
        &mut self,
        update: &agent_client_protocol::v1::schema::SessionUpdate,
        raw: Value,
        now: u64,
    ) -> Vec<EventData> {
        use agent_client_protocol::v1::schema::SessionUpdate as U;
        match update {
            U::AgentMessageChunk(chunk) => self.text(DeltaKind::Text, &chunk.content, now),
            U::AgentThoughtChunk(chunk) => self.text(DeltaKind::Reasoning, &chunk.content, now),
            U::ToolCall(call) => self.tool_call(call, raw, now),
            U::ToolCallUpdate(update) => self.tool_update(update, raw, now),
            U::Plan(plan) => self.plan(plan, now),
            U::UsageUpdate(usage) => vec![usage_reported(usage)],
            // The user's own message (a replay), commands, modes, session info: nothing
            // the panes show.
            _ => Vec::new(),
        }
    }

    fn text(&mut self, kind: DeltaKind, content: &ContentBlock, now: u64) -> Vec<EventData> {
        let text = match content {
            ContentBlock::Text(text) => text.text.clone(),
            ContentBlock::ResourceLink(link) => link.uri.clone(),
            // Images, audio and embedded resources are not drawn in the chat.
            _ => return Vec::new(),
        };
        if text.is_empty() {
            return Vec::new();
        }
        let mut out = Vec::new();
        if self.span.is_none() {
            self.calls_made += 1;
            self.turn += 1;
            self.span = Some(Span {
                call: self.calls_made,
                started: now,
                ..Span::default()
            });
            out.push(EventData::LlmStarted(LlmStarted {
                call: self.calls_made,
                purpose: Purpose::Conversation,
                parent: None,
                model: self.agent.clone(),
                turn: self.turn,
            }));
        }
        let Some(span) = self.span.as_mut() else {
            return out;
        };
        let kept = match kind {
            DeltaKind::Text => &mut span.text,
            DeltaKind::Reasoning => &mut span.reasoning,
        };
        if kept.len() + text.len() > MAX_TEXT {
            span.cut = true;
            out.extend(self.say_once(
                "text",
                format!(
                    "the agent sent more than {} MiB of text in one turn; the rest is not shown",
                    MAX_TEXT >> 20
                ),
            ));
            return out;
        }
        kept.push_str(&text);
        out.push(EventData::Delta { kind, text });
        out
    }

    /// Ends the span in flight, if any, as an answered model call.
    fn close_span(&mut self, now: u64) -> Vec<EventData> {
        let Some(span) = self.span.take() else {
            return Vec::new();
        };
        self.last_text.clone_from(&span.text);
        vec![EventData::LlmCall(Box::new(LlmCall {
            turn: self.turn,
            model: self.agent.clone(),
            duration_ms: now.saturating_sub(span.started),
            ttft_ms: None,
            finish_reason: None,
            content: span.text,
            reasoning_content: (!span.reasoning.is_empty()).then_some(span.reasoning),
            tool_calls: Vec::new(),
            usage: Usage::default(),
            timings: None,
            message_count: 0,
            new_messages: Vec::new(),
            tools: Vec::new(),
            parent: None,
            omitted: 0,
            context_window: None,
            call: Some(span.call),
            purpose: Some(Purpose::Conversation),
        }))]
    }

    fn tool_call(&mut self, call: &ToolCall, raw: Value, now: u64) -> Vec<EventData> {
        let id = call.tool_call_id.0.to_string();
        if self.calls.contains_key(&id) {
            // Announced again: read as an update of every field.
            let update = ToolCallUpdate::new(call.tool_call_id.clone(), fields_of(call));
            return self.tool_update(&update, raw, now);
        }
        let mut out = self.close_span(now);
        if self.calls.len() >= MAX_CALLS {
            out.extend(self.say_once(
                "calls",
                format!("the agent reported more than {MAX_CALLS} tool calls in one run; the rest are not shown"),
            ));
            return out;
        }
        let parent = parent_of(call.meta.as_ref()).filter(|p| self.calls.contains_key(p));
        let name = call
            .name
            .clone()
            .filter(|n| !n.trim().is_empty())
            .unwrap_or_else(|| kind_name(call.kind).to_string());
        let state = frame_state(call.status);
        let title = title_of(&call.title, &name);
        let arguments = match &call.raw_input {
            Some(input) if !input.is_null() => input.clone(),
            _ => json!({ "title": title }),
        };
        let entry = Call {
            arguments: arguments.clone(),
            name: name.clone(),
            title,
            parent: parent.clone(),
            state,
            started: now,
            seq: self.calls.len(),
            content: call.content.clone(),
            locations: locations(&call.locations),
            raw_output: call.raw_output.clone(),
            updates: VecDeque::from([raw]),
            dropped_updates: 0,
            ended: false,
        };
        out.push(EventData::ToolCall {
            turn: self.turn.max(1),
            id: id.clone(),
            name,
            arguments,
            parent,
            sandbox: None,
        });
        out.push(EventData::StackPush(frame(&id, &entry, state)));
        self.calls.insert(id.clone(), entry);
        out.extend(self.maybe_end(&id, now));
        out
    }

    fn tool_update(&mut self, update: &ToolCallUpdate, raw: Value, now: u64) -> Vec<EventData> {
        let id = update.tool_call_id.0.to_string();
        if !self.calls.contains_key(&id) {
            // An update of a call never announced: announced now, from what it says.
            let call = announced(update);
            return self.tool_call(&call, raw, now);
        }
        let Some(call) = self.calls.get_mut(&id) else {
            return Vec::new();
        };
        if call.updates.len() == MAX_UPDATES {
            call.updates.pop_front();
            call.dropped_updates += 1;
        }
        call.updates.push_back(raw);
        let fields = &update.fields;
        let mut changed = false;
        if let Some(title) = &fields.title {
            let title = title_of(title, &call.name);
            changed |= title != call.title;
            call.title = title;
        }
        if let Some(content) = &fields.content {
            call.content.clone_from(content);
        }
        if let Some(found) = &fields.locations {
            call.locations = locations(found);
        }
        if let Some(output) = &fields.raw_output {
            call.raw_output = Some(output.clone());
        }
        if let Some(status) = fields.status {
            let state = frame_state(status);
            // A denied or ended call stays so; a call approved and then reported pending
            // stays running.
            if !call.ended && call.state != state && call.state != FrameState::Denied {
                changed = true;
                call.state = state;
            }
        }
        let mut out = Vec::new();
        if changed && !call.ended && !is_end(call.state) {
            out.push(EventData::StackPush(frame(&id, call, call.state)));
        }
        out.extend(self.maybe_end(&id, now));
        out
    }

    /// The call's result and its frame's pop, once it is reported ended.
    fn maybe_end(&mut self, id: &str, now: u64) -> Vec<EventData> {
        let Some(call) = self.calls.get_mut(id) else {
            return Vec::new();
        };
        if call.ended || !is_end(call.state) {
            return Vec::new();
        }
        call.ended = true;
        let status = match call.state {
            FrameState::Done => ToolStatus::Ok,
            FrameState::Denied => ToolStatus::Denied,
            FrameState::Cancelled => ToolStatus::Cancelled,
            _ => ToolStatus::Failed,
        };
        let result = payload(call, &self.workdir);
        let error = (status != ToolStatus::Ok).then(|| {
            let said = content_text(&call.content);
            if said.trim().is_empty() {
                match status {
                    ToolStatus::Denied => "denied by the user".to_string(),
                    _ => "the agent reported that the call failed".to_string(),
                }
            } else {
                said
            }
        });
        vec![
            EventData::ToolResult {
                id: id.to_string(),
                name: call.name.clone(),
                ok: status == ToolStatus::Ok,
                status: Some(status),
                denied_by: (status == ToolStatus::Denied).then_some(crate::event::DeniedBy::User),
                result: Some(result),
                error,
                duration_ms: now.saturating_sub(call.started),
            },
            EventData::StackPop(frame(id, call, call.state)),
        ]
    }

    /// The prompt's answer came: how the run ends.
    pub fn finish(&mut self, stop: StopReason, now: u64) -> Vec<EventData> {
        if !self.running {
            return Vec::new();
        }
        self.running = false;
        let mut out = self.end_terminals(now);
        if stop == StopReason::Cancelled {
            out.extend(self.fail_span(LlmEnd::Cancelled, None));
            out.push(EventData::Cancelled {
                running: format!("{}'s turn", self.agent),
            });
            return out;
        }
        out.extend(self.close_span(now));
        let why = match stop {
            StopReason::EndTurn => None,
            StopReason::MaxTokens => Some("it reached its token limit"),
            StopReason::MaxTurnRequests => Some("it reached its limit of model requests"),
            StopReason::Refusal => Some("it refused to go on"),
            _ => Some("for a reason this taco does not know"),
        };
        match why {
            None => out.push(EventData::Final {
                content: self.last_text.clone(),
                turns: self.turn.max(1),
                usage: Usage::default(),
            }),
            Some(why) => out.push(EventData::Error {
                kind: "agent_stopped".to_string(),
                message: format!("{} stopped before its answer: {why}", self.agent),
            }),
        }
        out
    }

    /// The run ends without the agent's answer (it died, the prompt failed, a cancel it
    /// never answered) at `now`: `cancelled` or an `error` saying `message`.
    pub fn abort(&mut self, cancelled: bool, message: String, now: u64) -> Vec<EventData> {
        if !self.running {
            return Vec::new();
        }
        self.running = false;
        let mut out = self.end_terminals(now);
        if cancelled {
            out.extend(self.fail_span(LlmEnd::Cancelled, None));
            out.push(EventData::Cancelled {
                running: format!("{}'s turn", self.agent),
            });
        } else {
            out.extend(self.fail_span(LlmEnd::Failed, Some(message.clone())));
            out.push(EventData::Error {
                kind: "agent".to_string(),
                message,
            });
        }
        out
    }

    fn fail_span(&mut self, end: LlmEnd, error: Option<String>) -> Vec<EventData> {
        match self.span.take() {
            Some(span) => vec![EventData::LlmFailed(LlmFailed {
                call: span.call,
                end,
                error,
            })],
            None => Vec::new(),
        }
    }

    /// A bound the agent passed, said once a run; outside the run's events (an `error` of
    /// the run would end it): the engine takes them with [`Translator::take_notices`].
    fn say_once(&mut self, what: &'static str, message: String) -> Option<EventData> {
        if !self.said.contains(&what) {
            self.said.push(what);
            self.notices.push(message);
        }
        None
    }

    /// What the agent did past a bound since the last call, to be said outside the run.
    pub fn take_notices(&mut self) -> Vec<String> {
        std::mem::take(&mut self.notices)
    }
}

mod asks;
mod parts;
pub mod terminal;

pub use parts::kind_name;
use parts::{
    announced, content_text, diff_of, fields_of, frame, frame_state, is_end, locations, parent_of,
    payload, title_of, usage_reported,
};

#[cfg(test)]
#[path = "translate_tests.rs"]
mod tests;
