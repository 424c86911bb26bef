//! The trace timeline pane: one row per trace event with its timing on a shared time axis,
//! a filter by kind, and a detail view of the selected event's full payload (opened as an
//! overlay over the pane).

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use ratatui::layout::Rect;
use unicode_width::UnicodeWidthChar;

use crate::config::pricing::Pricing;
use crate::conversation::Message;
use crate::event::{Event, EventData, InputRequest};
use crate::run_model::RunModel;
use crate::tui::overlay::{Effect, Handled};
use crate::tui::theme::Theme;

mod axis;
mod click;
mod detail;
mod earlier;
#[cfg(test)]
mod earlier_tests;
mod ended;
mod filter;
mod follow;
mod label;
mod list;
#[cfg(test)]
mod live_tests;
mod model_row;
#[cfg(test)]
mod nested_tests;
mod rewind;
mod row;
mod row_labels;
#[cfg(test)]
mod scale_tests;
mod store;
#[cfg(test)]
mod tests;

use axis::{MIN_IDLE_MS, RunSpan};
pub use detail::Detail;
use row::{Filter, Kind, Row};
use store::{Payload, Store};

/// What a detail view shows: a row, its event and, for a tool call, its result's event.
struct Shown<'a> {
    row: &'a Row,
    event: &'a Event,
    result: Option<&'a Event>,
}

/// State of the timeline pane: the rows, the filter and the selection.
#[derive(Debug)]
pub struct TimelineState {
    rows: Vec<Row>,
    /// Tool calls still waiting for their result, by call id → row.
    open_calls: HashMap<String, usize>,
    /// Model calls in flight, by run and call number → row (their end takes its place).
    open_models: HashMap<(Arc<str>, u32), usize>,
    /// Rows that pass the filter, in order (indexes into `rows`).
    visible: Vec<usize>,
    filter: Filter,
    /// Position of the selection in `visible`.
    selected: usize,
    /// Whether the selection stays on the newest row.
    follow: bool,
    /// First shown position in `visible`.
    scroll: usize,
    /// Rows per page, from the last render.
    page: usize,
    /// Each run's span and waits for the user, by request id: every row's bar is drawn on
    /// its own run's axis.
    runs: HashMap<Arc<str>, RunSpan>,
    /// The run of the newest row.
    last_run: Option<Arc<str>>,
    /// Every row's event, packed (the rows hold what they draw).
    store: Store,
    /// The call id of the newest row when it is a call's progress (updated in place).
    last_progress: Option<String>,
    /// The conversation rebuilt from `llm_call` events, for "messages sent" in details:
    /// where each message is kept, unpacked only when a model call's detail opens.
    conversation: Vec<Said>,
    /// Each sub-agent's own conversation, by its `delegate` frame id.
    sub_conversations: HashMap<String, Vec<Said>>,
    /// Prices, for the cost of each model call and sub-agent.
    pub(crate) pricing: Pricing,
}

impl Default for TimelineState {
    fn default() -> Self {
        Self::new()
    }
}

impl TimelineState {
    /// The user's conversation as a saved session has it (its `message` lines), so the
    /// messages sent by the next call after a resume show whole.
    pub fn restore_conversation(&mut self, messages: &[Message]) {
        let store = &mut self.store;
        self.conversation = (messages.iter())
            .filter_map(|m| store.push(m).map(Said::Message))
            .collect();
    }

    /// An empty timeline that follows new events.
    pub fn new() -> Self {
        Self {
            rows: Vec::new(),
            open_calls: HashMap::new(),
            open_models: HashMap::new(),
            visible: Vec::new(),
            filter: Filter::All,
            selected: 0,
            follow: true,
            scroll: 0,
            page: 10,
            runs: HashMap::new(),
            last_run: None,
            store: Store::default(),
            last_progress: None,
            conversation: Vec::new(),
            sub_conversations: HashMap::new(),
            pricing: Pricing::default(),
        }
    }

    /// Adds the row of a trace event. Deltas and stack events get no row (the stack pane
    /// shows frames); a call's row ends when the run model says the call ended, and its
    /// result's row links to it; a model call's end takes the place of its row in flight,
    /// which its progress and retries renamed meanwhile.
    pub fn on_event(&mut self, event: &Event, run: &RunModel) {
        // Streamed text and a model call's progress end no call.
        if !matches!(
            event.data,
            EventData::Delta { .. } | EventData::LlmProgress(_)
        ) {
            self.follow_calls(run);
        }
        self.follow_models(event, run);
        let Some(mut row) = Row::from_event(event, &self.pricing, run) else {
            return;
        };
        // A sub-agent's result says what its whole subtree of model calls spent.
        if let EventData::ToolResult { id, .. } = &event.data
            && let Some(spent) = run.subtree_usage(id)
            && let Some(spent) = label::spend(&spent, run.subtree_cost(id, &self.pricing))
        {
            row.name = format!("{} · subtree {spent}", row.name).into_boxed_str();
        }
        row.depth = u16::try_from(row_depth(&event.data, run)).unwrap_or(u16::MAX);
        self.follow_run(event, &mut row);
        // A call's progress takes one row, updated in place: a server reporting every
        // millisecond must not flood the timeline (nor its store).
        let progress = match &event.data {
            EventData::ToolProgress { id, .. } => Some(id),
            _ => None,
        };
        if let Some(id) = progress
            && self.last_progress.as_ref() == Some(id)
            && let Some(last) = self.rows.last_mut()
        {
            if let Some(old) = last.payload {
                self.store.forget(old);
            }
            row.payload = self.store.push(event);
            *last = row;
            return;
        }
        self.last_progress = progress.cloned();
        row.payload = self.store.push(event);
        let live = self.take_live(event);
        let index = live.unwrap_or(self.rows.len());
        match &event.data {
            EventData::LlmStarted(started) => {
                let key = (Arc::clone(&event.request_id), started.call);
                self.open_models.insert(key, index);
            }
            EventData::LlmCall(call) => {
                let kept = call.message_count.saturating_sub(call.new_messages.len());
                // A sub-agent talks in its own conversation, not the top-level one.
                let conversation = match &call.parent {
                    Some(parent) => self.sub_conversations.entry(parent.clone()).or_default(),
                    None => &mut self.conversation,
                };
                conversation.truncate(kept);
                if let (Some(payload), Ok(row)) = (row.payload, u32::try_from(index)) {
                    let count = u32::try_from(call.new_messages.len()).unwrap_or(0);
                    conversation.extend((0..count).map(|nth| Said::InCall { payload, row, nth }));
                }
            }
            EventData::ToolCall { id, .. } => {
                self.open_calls.insert(id.clone(), index);
            }
            EventData::ToolResult { id, .. } => {
                if let Some(call) = self.open_calls.remove(id)
                    && let Some(call_row) = self.rows.get_mut(call)
                {
                    // Its span and clock are the run model's, which folded this result.
                    if call_row.pending {
                        let node = run.call(id);
                        let at = node.and_then(|c| c.ended_ms).unwrap_or(event.timestamp);
                        call_row.end_call(at, node.and_then(|c| c.duration_ms));
                    }
                    call_row.link = u32::try_from(index).ok();
                }
            }
            _ => {}
        }
        if let Some(index) = live {
            self.replace(index, row);
            return;
        }
        let shown = row.matches(self.filter);
        self.rows.push(row);
        if shown {
            self.visible.push(index);
            if self.follow {
                self.selected = self.visible.len() - 1;
            }
        }
    }

    /// Handles a key of the focused pane. Enter opens the selected row's detail view (an
    /// overlay for the app to push), `r` rewinds to before it; Esc is not used, so the app can
    /// give it a meaning.
    pub fn on_key(&mut self, key: KeyEvent) -> Handled {
        if key.kind == KeyEventKind::Release
            || !key.modifiers.difference(KeyModifiers::SHIFT).is_empty()
        {
            return Handled::NotConsumed;
        }
        let page = self.page.max(1) as isize;
        match key.code {
            KeyCode::Up | KeyCode::Char('k') => self.move_by(-1),
            KeyCode::Down | KeyCode::Char('j') => self.move_by(1),
            KeyCode::PageUp => self.move_by(-page),
            KeyCode::PageDown => self.move_by(page),
            KeyCode::Home | KeyCode::Char('g') => {
                self.selected = 0;
                self.follow = false;
            }
            KeyCode::End | KeyCode::Char('G') => {
                self.selected = self.visible.len().saturating_sub(1);
                self.follow = true;
            }
            KeyCode::Enter => {
                let Some(detail) = self.detail() else {
                    return Handled::NotConsumed;
                };
                return Handled::effect(Effect::Open(Box::new(detail)));
            }
            KeyCode::Char('f') => {
                self.filter = self.filter.next();
                self.refilter();
            }
            // Rewind to before the selected row (the app opens the overlay, or says why not).
            KeyCode::Char('r') => {
                if let Some(point) = self.rewind_point() {
                    return Handled::effect(Effect::PreviewRewind(point));
                }
            }
            _ => return Handled::NotConsumed,
        }
        Handled::Consumed
    }

    /// The detail view of the selected row: its event unpacked, with its call's result and,
    /// for a model call, the messages it was sent.
    fn detail(&self) -> Option<Detail> {
        let index = *self.visible.get(self.selected)?;
        let row = self.rows.get(index)?;
        let mut reader = self.store.reader();
        let event: Event = reader.get(row.payload?)?;
        let result: Option<Event> = (row.link.and_then(|i| self.rows.get(i as usize)))
            .and_then(|r| r.payload)
            .and_then(|p| reader.get(p));
        let conversation = match &event.data {
            EventData::LlmCall(call) => {
                let said = match call.parent.as_deref() {
                    Some(p) => self.sub_conversations.get(p).map_or(&[][..], Vec::as_slice),
                    None => self.conversation.as_slice(),
                };
                // Only the messages this call was sent; later ones are not unpacked.
                unpack_messages(&mut reader, &said[..call.message_count.min(said.len())])
            }
            _ => Vec::new(),
        };
        let origin = self.runs.get(&row.run).map_or(0, |r| r.origin);
        let shown = Shown {
            row,
            event: &event,
            result: result.as_ref(),
        };
        Some(Detail::new(&shown, origin, &conversation))
    }

    /// The rows of the last frame (from the top of the pane) that showed call `id`'s row
    /// and its result's row, each if it was in view: tests read what the timeline shows of
    /// a call there.
    pub fn call_rows(&self, id: &str) -> (Option<usize>, Option<usize>) {
        let mut reader = self.store.reader();
        let call = self.rows.iter().rposition(|row| {
            row.kind == Kind::ToolCall
                && (row.payload.and_then(|p| reader.get::<Event>(p))).is_some_and(
                    |e| matches!(&e.data, EventData::ToolCall { id: i, .. } if i == id),
                )
        });
        let result = (call.and_then(|i| self.rows.get(i)))
            .and_then(|row| row.link)
            .map(|link| link as usize);
        let shown = |index: usize| {
            let at = self.visible.iter().position(|&v| v == index)?;
            let row = at.checked_sub(self.scroll)?;
            (row < self.page).then_some(row)
        };
        (call.and_then(shown), result.and_then(shown))
    }

    /// The current filter, for the pane title.
    pub fn filter_label(&self) -> &'static str {
        self.filter.label()
    }

    /// Number of rows, before filtering.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Whether there are no rows at all.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Forgets every row (the filter stays) and follows again.
    pub fn clear(&mut self) {
        let filter = self.filter;
        let pricing = std::mem::take(&mut self.pricing);
        *self = Self::new();
        self.filter = filter;
        self.pricing = pricing;
    }

    /// Draws the list into `area`; `now_ms` (the events' clock, while a run is in progress)
    /// gives the elapsed time of a model call in flight.
    pub fn render(
        &mut self,
        area: Rect,
        buf: &mut Buffer,
        theme: &Theme,
        focused: bool,
        now_ms: Option<u64>,
    ) {
        let area = area.intersection(buf.area);
        if area.is_empty() {
            return;
        }
        self.render_list(area, buf, theme, focused, now_ms);
    }

    /// Moves the selection; reaching the newest row with ↓ resumes following, like End.
    fn move_by(&mut self, delta: isize) {
        let last = self.visible.len().saturating_sub(1);
        self.selected = self.selected.saturating_add_signed(delta).min(last);
        self.follow = delta > 0 && self.selected == last;
    }

    /// Rebuilds the filtered list, keeping the selected row or the nearest one before it.
    fn refilter(&mut self) {
        self.refilter_at(self.visible.get(self.selected).copied());
    }

    /// Rebuilds the filtered list, keeping row `current` selected or the nearest before it.
    fn refilter_at(&mut self, current: Option<usize>) {
        let filter = self.filter;
        self.visible = (self.rows.iter().enumerate())
            .filter(|(_, row)| row.matches(filter))
            .map(|(i, _)| i)
            .collect();
        self.selected = match current {
            Some(current) if !self.follow => self
                .visible
                .partition_point(|&i| i <= current)
                .saturating_sub(1),
            _ => self.visible.len().saturating_sub(1),
        };
    }
}

/// Where one message of a rebuilt conversation is kept.
#[derive(Debug, Clone, Copy)]
enum Said {
    /// A message of its own (restored from a session file).
    Message(Payload),
    /// The `nth` new message of the `llm_call` event at `row`, kept in `payload`: messages
    /// are not kept twice.
    InCall {
        payload: Payload,
        row: u32,
        nth: u32,
    },
}

/// The messages `said` points at, each event unpacked once for its run of messages.
fn unpack_messages(reader: &mut store::Reader, said: &[Said]) -> Vec<Message> {
    let mut out = Vec::with_capacity(said.len());
    let mut call: Option<(u32, Vec<Message>)> = None;
    for said in said {
        match *said {
            Said::Message(payload) => out.extend(reader.get::<Message>(payload)),
            Said::InCall { payload, row, nth } => {
                if call.as_ref().map(|(r, _)| *r) != Some(row) {
                    let messages = match reader.get::<Event>(payload).map(|e| e.data) {
                        Some(EventData::LlmCall(c)) => c.new_messages,
                        _ => Vec::new(),
                    };
                    call = Some((row, messages));
                }
                if let Some(message) = (call.as_ref()).and_then(|(_, m)| m.get(nth as usize)) {
                    out.push(message.clone());
                }
            }
        }
    }
    out
}

/// `+1.25s`, `+16m40s`, `+2h05m`: a start offset from the start of the run.
fn offset_label(ms: u64) -> String {
    let secs = ms / 1000;
    if secs < 1000 {
        format!("+{:.2}s", ms as f64 / 1000.0)
    } else if secs < 6000 {
        format!("+{}m{:02}s", secs / 60, secs % 60)
    } else {
        format!("+{}h{:02}m", secs / 3600, (secs % 3600) / 60)
    }
}

/// `text` cut to `width` cells, with `…` as its last cell when it was cut.
fn clip(text: &str, width: usize) -> Cow<'_, str> {
    let mut used = 0;
    let mut cut = None;
    for (i, c) in text.char_indices() {
        let w = c.width().unwrap_or(0);
        if used + w > width.saturating_sub(1) && cut.is_none() {
            cut = Some(i);
        }
        used += w;
        if used > width {
            let end = cut.unwrap_or(i);
            return if width == 0 {
                Cow::Borrowed("")
            } else {
                Cow::Owned(format!("{}…", &text[..end]))
            };
        }
    }
    Cow::Borrowed(text)
}

/// The nesting level of an event's row, from the run model (which has seen the event).
fn row_depth(data: &EventData, run: &RunModel) -> usize {
    match data {
        EventData::ToolCall { id, .. }
        | EventData::ToolResult { id, .. }
        | EventData::ToolProgress { id, .. }
        | EventData::ApprovalRequested { id, .. }
        | EventData::ApprovalDecided { id, .. } => run.depth(id),
        EventData::LlmCall(call) => run.depth_under(call.parent.as_deref()),
        // A hook is drawn under the call it guarded.
        EventData::Hook(hook) => run.depth_under(hook.call.as_deref()),
        EventData::LlmStarted(started) => run.depth_under(started.parent.as_deref()),
        EventData::InputRequested(InputRequest { id, .. })
        | EventData::InputAnswered { id, .. } => run.question_depth(id),
        _ => 0,
    }
}
