//! The tool stack (DESIGN §5, spec/004): every call in flight, nested under the call that
//! caused it (a `delegate` sub-agent's calls, the calls a tool needs first, parameter
//! collection), with its state and start time. A plain struct: the orchestrator pushes and
//! pops, and emits the frames this returns as `stack_push` / `stack_pop` events.

use std::time::Instant;

use serde_json::Value;

use crate::event::{FrameState, StackFrame};
use crate::text::summarize;

/// How many more levels the user grants at a time when the depth limit is reached.
pub const DEPTH_STEP: usize = 20;

#[derive(Debug, Clone)]
struct Live {
    frame: StackFrame,
    depth: usize,
    started: Instant,
}

/// The frames in flight, in push order.
#[derive(Debug, Clone)]
pub struct ToolStack {
    frames: Vec<Live>,
    limit: usize,
}

impl Default for ToolStack {
    fn default() -> Self {
        Self::new(DEPTH_STEP)
    }
}

impl ToolStack {
    /// An empty stack that allows `limit` levels of nesting.
    pub fn new(limit: usize) -> Self {
        Self {
            frames: Vec::new(),
            limit: limit.max(1),
        }
    }

    /// The nesting depth allowed now.
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// Allows another [`DEPTH_STEP`] levels (the user said to continue).
    pub fn extend(&mut self) {
        self.limit += DEPTH_STEP;
    }

    /// The depth a frame pushed under `parent` gets: 1 at the top, one more than its parent.
    pub fn depth_under(&self, parent: Option<&str>) -> usize {
        parent
            .and_then(|p| self.find(p))
            .map_or(1, |live| live.depth + 1)
    }

    /// Whether a frame under `parent` would be deeper than the limit allows.
    pub fn too_deep(&self, parent: Option<&str>) -> bool {
        self.depth_under(parent) > self.limit
    }

    fn find(&self, id: &str) -> Option<&Live> {
        self.frames.iter().find(|l| l.frame.id == id)
    }

    /// Pushes a frame (a frame already there changes state instead); returns it for the event.
    pub fn push(&mut self, frame: StackFrame, now: Instant) -> StackFrame {
        if let Some(live) = self.frames.iter_mut().find(|l| l.frame.id == frame.id) {
            live.frame.state = frame.state;
            return live.frame.clone();
        }
        let depth = self.depth_under(frame.parent.as_deref());
        self.frames.push(Live {
            frame: frame.clone(),
            depth,
            started: now,
        });
        frame
    }

    /// A queued frame starts running: its time counts from `now`. Returns it for a
    /// `stack_push` event.
    pub fn start(&mut self, id: &str, now: Instant) -> Option<StackFrame> {
        let live = self.frames.iter_mut().find(|l| l.frame.id == id)?;
        live.frame.state = FrameState::Running;
        live.started = now;
        Some(live.frame.clone())
    }

    /// Changes a frame's state; returns it for a `stack_push` event.
    pub fn set_state(&mut self, id: &str, state: FrameState) -> Option<StackFrame> {
        let live = self.frames.iter_mut().find(|l| l.frame.id == id)?;
        live.frame.state = state;
        Some(live.frame.clone())
    }

    /// Removes a frame with its final state, after any frames still nested under it
    /// (innermost first); returns them all for `stack_pop` events.
    pub fn pop(&mut self, id: &str, state: FrameState) -> Vec<StackFrame> {
        let mut popped = self.pop_children(id, state);
        if let Some(i) = self.frames.iter().position(|l| l.frame.id == id) {
            let mut live = self.frames.remove(i);
            live.frame.state = state;
            popped.push(live.frame);
        }
        popped
    }

    fn pop_children(&mut self, id: &str, state: FrameState) -> Vec<StackFrame> {
        let children: Vec<String> = self
            .frames
            .iter()
            .filter(|l| l.frame.parent.as_deref() == Some(id))
            .map(|l| l.frame.id.clone())
            .collect();
        let mut popped = Vec::new();
        for child in children.iter().rev() {
            popped.extend(self.pop(child, state));
        }
        popped
    }

    /// Empties the stack (cancel, abandonment), innermost first, every frame ending in `state`.
    pub fn clear(&mut self, state: FrameState) -> Vec<StackFrame> {
        let mut popped: Vec<StackFrame> = self.frames.drain(..).rev().map(|l| l.frame).collect();
        for frame in &mut popped {
            frame.state = state;
        }
        popped
    }

    /// Whether nothing is in flight.
    pub fn is_empty(&self) -> bool {
        self.frames.is_empty()
    }

    /// The frames in push order.
    pub fn frames(&self) -> impl Iterator<Item = &StackFrame> {
        self.frames.iter().map(|l| &l.frame)
    }

    /// The nesting depth of the deepest frame (0 when empty).
    pub fn depth(&self) -> usize {
        self.frames.iter().map(|l| l.depth).max().unwrap_or(0)
    }

    /// How long a frame has been on the stack.
    pub fn elapsed(&self, id: &str, now: Instant) -> Option<std::time::Duration> {
        self.find(id)
            .map(|l| now.saturating_duration_since(l.started))
    }

    /// The tool context for a system prompt (spec/004) while something is in flight.
    pub fn context(&self, original_request: &str) -> Option<String> {
        let active = self.frames.iter().max_by_key(|l| l.depth)?;
        let waiting = match active.frame.state {
            FrameState::AwaitingApproval => "the user's approval",
            FrameState::AwaitingInput => "the user's input",
            _ if active.frame.name == "delegate" => "the sub-agent's answer",
            _ => "its result",
        };
        Some(format!(
            "Current tool context:\n- Active tool: {}\n- Waiting for: {waiting}\n- Original request: \"{}\"\n- Stack depth: {}\n",
            active.frame.name,
            summarize(original_request, 200),
            self.depth()
        ))
    }
}

/// `key=value` pairs of the top-level arguments on one short line, the telling keys first.
pub fn argument_summary(arguments: &Value) -> String {
    let text = match arguments {
        Value::Object(map) => crate::text::telling_pairs(map)
            .iter()
            .map(|(k, v)| match v {
                Value::String(s) => format!("{k}={s}"),
                other => format!("{k}={other}"),
            })
            .collect::<Vec<_>>()
            .join(" "),
        other => other.to_string(),
    };
    summarize(&text, 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(id: &str, parent: Option<&str>, name: &str) -> StackFrame {
        StackFrame {
            id: id.into(),
            parent: parent.map(String::from),
            name: name.into(),
            summary: String::new(),
            state: FrameState::Running,
        }
    }

    #[test]
    fn push_nest_and_pop() {
        let now = Instant::now();
        let mut stack = ToolStack::new(20);
        assert!(stack.is_empty());
        stack.push(frame("a", None, "delegate"), now);
        stack.push(frame("b", Some("a"), "read_file"), now);
        stack.push(frame("c", Some("b"), "list_dir"), now);
        stack.push(frame("d", None, "shell"), now);
        assert_eq!(stack.depth(), 3);
        assert_eq!(stack.depth_under(Some("c")), 4);
        assert_eq!(
            stack.depth_under(Some("gone")),
            1,
            "an unknown parent counts as the top"
        );
        let popped = stack.pop("c", FrameState::Done);
        assert_eq!(popped.len(), 1);
        assert_eq!(popped[0].state, FrameState::Done);
        assert_eq!(stack.depth(), 2);
        // Pushing a frame that is there is a state change.
        let changed = stack.push(
            StackFrame {
                state: FrameState::AwaitingApproval,
                ..frame("d", None, "shell")
            },
            now,
        );
        assert_eq!(changed.state, FrameState::AwaitingApproval);
        assert_eq!(stack.frames().count(), 3);
        assert_eq!(
            stack.set_state("d", FrameState::Running).unwrap().state,
            FrameState::Running
        );
        assert!(stack.set_state("zz", FrameState::Running).is_none());
    }

    #[test]
    fn popping_a_parent_pops_what_is_nested_under_it_first() {
        let now = Instant::now();
        let mut stack = ToolStack::new(20);
        stack.push(frame("a", None, "delegate"), now);
        stack.push(frame("b", Some("a"), "x"), now);
        stack.push(frame("c", Some("b"), "y"), now);
        stack.push(frame("d", None, "z"), now);
        let popped: Vec<String> = stack
            .pop("a", FrameState::Failed)
            .into_iter()
            .map(|f| f.id)
            .collect();
        assert_eq!(popped, ["c", "b", "a"]);
        assert_eq!(
            stack.frames().map(|f| f.id.as_str()).collect::<Vec<_>>(),
            ["d"]
        );
    }

    #[test]
    fn failure_and_cancel_clear_everything_innermost_first() {
        let now = Instant::now();
        let mut stack = ToolStack::new(20);
        stack.push(frame("a", None, "delegate"), now);
        stack.push(frame("b", Some("a"), "x"), now);
        let popped = stack.clear(FrameState::Cancelled);
        assert_eq!(
            popped.iter().map(|f| f.id.as_str()).collect::<Vec<_>>(),
            ["b", "a"]
        );
        assert!(popped.iter().all(|f| f.state == FrameState::Cancelled));
        assert!(stack.is_empty());
        assert_eq!(stack.depth(), 0);
    }

    #[test]
    fn the_depth_limit_is_checked_and_extended() {
        let now = Instant::now();
        let mut stack = ToolStack::new(2);
        assert!(!stack.too_deep(None));
        stack.push(frame("a", None, "t"), now);
        assert!(!stack.too_deep(Some("a")));
        stack.push(frame("b", Some("a"), "t"), now);
        assert!(
            stack.too_deep(Some("b")),
            "a third level is past a limit of 2"
        );
        stack.extend();
        assert_eq!(stack.limit(), 22);
        assert!(!stack.too_deep(Some("b")));
    }

    #[test]
    fn context_names_the_innermost_tool() {
        let now = Instant::now();
        let mut stack = ToolStack::new(20);
        assert!(stack.context("x").is_none());
        stack.push(frame("a", None, "delegate"), now);
        let context = stack.context("build the thing").unwrap();
        assert!(context.contains("Active tool: delegate"), "{context}");
        assert!(context.contains("the sub-agent's answer"), "{context}");
        assert!(
            context.contains("Original request: \"build the thing\""),
            "{context}"
        );
        assert!(context.contains("Stack depth: 1"), "{context}");
        stack.push(
            StackFrame {
                state: FrameState::AwaitingInput,
                ..frame("b", Some("a"), "collect_tool_parameters")
            },
            now,
        );
        assert!(stack.context("x").unwrap().contains("the user's input"));
    }
}
