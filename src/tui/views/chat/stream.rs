//! Streams into the chat: answer and reasoning deltas, the model call that completes them,
//! and closing what a run left open.

use super::ChatState;
use super::cell::{Assistant, CellKind, Reasoning};
use crate::event::LlmCall;

impl ChatState {
    pub(super) fn text_delta(&mut self, text: &str, ts: u64) {
        if self.run.text_open.is_none() && text.trim().is_empty() {
            // Models often send blank lines before tool calls: no cell until there is text.
            self.run.pending_blank.push_str(text);
            return;
        }
        self.end_reasoning(ts);
        let i = match self.run.text_open {
            Some(i) => i,
            None => {
                let text = std::mem::take(&mut self.run.pending_blank);
                let i = self.push(CellKind::Assistant(Assistant { text }));
                self.run.text_open = Some(i);
                self.run.turn_text.push(i);
                i
            }
        };
        if let Some(cell) = self.cells.get_mut(i)
            && let CellKind::Assistant(a) = &mut cell.kind
        {
            a.text.push_str(text);
            cell.appended();
        }
        self.changed();
    }

    pub(super) fn reasoning_delta(&mut self, text: &str, ts: u64) {
        // Text after this reasoning goes into a new cell below it.
        self.run.text_open = None;
        let i = match self.run.reasoning_open {
            Some(i) => i,
            None => {
                let i = self.push(CellKind::Reasoning(Reasoning {
                    started_ms: Some(ts),
                    streaming: true,
                    ..Reasoning::default()
                }));
                self.run.reasoning_open = Some(i);
                self.run.turn_reasoning.push(i);
                i
            }
        };
        if let Some(cell) = self.cells.get_mut(i)
            && let CellKind::Reasoning(r) = &mut cell.kind
        {
            r.text.push_str(text);
            cell.appended();
        }
        self.changed();
    }

    /// The call is over: its content and reasoning are authoritative (a provider that does not
    /// stream sends them only here); what streamed is kept when it matches.
    pub(super) fn llm_call(&mut self, call: &LlmCall, ts: u64) {
        self.end_reasoning(ts);
        let reasoning = call.reasoning_content.as_deref().unwrap_or("");
        let turn_reasoning = std::mem::take(&mut self.run.turn_reasoning);
        match turn_reasoning.as_slice() {
            [] if !reasoning.trim().is_empty() => {
                let kind = CellKind::Reasoning(Reasoning {
                    text: reasoning.to_string(),
                    ..Reasoning::default()
                });
                match self.run.turn_text.first() {
                    Some(&first) => self.insert(first, kind),
                    None => {
                        self.push(kind);
                    }
                }
            }
            &[i] if !reasoning.is_empty() => self.update_cell(i, |kind| {
                if let CellKind::Reasoning(r) = kind
                    && r.text != reasoning
                {
                    r.text = reasoning.to_string();
                }
            }),
            _ => {}
        }

        let streamed: String = self
            .run
            .turn_text
            .iter()
            .filter_map(|&i| match &self.cells.get(i)?.kind {
                CellKind::Assistant(a) => Some(a.text.as_str()),
                _ => None,
            })
            .collect();
        if streamed != call.content {
            let cells = std::mem::take(&mut self.run.turn_text);
            match cells.split_first() {
                None if !call.content.trim().is_empty() => {
                    let i = self.push(CellKind::Assistant(Assistant {
                        text: call.content.clone(),
                    }));
                    self.run.turn_text.push(i);
                }
                None => {}
                Some((&first, rest)) => {
                    for (n, &i) in std::iter::once(&first).chain(rest).enumerate() {
                        let text = if n == 0 {
                            call.content.clone()
                        } else {
                            String::new()
                        };
                        self.update_cell(i, |kind| {
                            if let CellKind::Assistant(a) = kind {
                                a.text = text;
                            }
                        });
                    }
                    self.run.turn_text = cells;
                }
            }
        }
        self.run.assistant = self.run.turn_text.iter().rev().copied().find(|&i| {
            matches!(self.cells.get(i).map(|c| &c.kind), Some(CellKind::Assistant(a)) if !a.text.trim().is_empty())
        });
        self.run.text_open = None;
        self.run.turn_text.clear();
        self.run.pending_blank.clear();
        self.run.turn_reasoning.clear();
    }

    /// Reasoning stops streaming (it collapses to its summary line).
    pub(super) fn end_reasoning(&mut self, ts: u64) {
        if let Some(i) = self.run.reasoning_open.take() {
            self.update_cell(i, |kind| {
                if let CellKind::Reasoning(r) = kind {
                    r.streaming = false;
                    r.ended_ms.get_or_insert(ts);
                }
            });
        }
    }

    /// Nothing more streams into the open cells (the call ended, failed or was cancelled).
    pub(super) fn close_streams(&mut self, ts: Option<u64>) {
        match ts {
            Some(ts) => self.end_reasoning(ts),
            None => {
                if let Some(i) = self.run.reasoning_open.take() {
                    self.update_cell(i, |kind| {
                        if let CellKind::Reasoning(r) = kind {
                            r.streaming = false;
                        }
                    });
                }
            }
        }
        if let Some(i) = self.run.text_open.take() {
            self.run.assistant = Some(i);
        }
        self.run.turn_text.clear();
        self.run.pending_blank.clear();
        self.run.turn_reasoning.clear();
    }
}
