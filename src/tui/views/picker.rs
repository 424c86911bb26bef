//! A picker: a titled list to choose one row from, typing to filter (every word, in any
//! order, case-insensitive), with rows that say something is loading or failed. Pure state
//! and drawing; what the chosen row means leaves as its [`Pick`] (its keys are in
//! `overlay/picker.rs`).

mod draw;

/// What choosing a row asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pick {
    /// Talk to this provider and model from the next request on.
    Model {
        /// Provider name.
        provider: String,
        /// Model id.
        model: String,
    },
    /// Continue this saved session here.
    Session {
        /// Session id.
        id: String,
    },
    /// The session open here already: nothing to switch to.
    ThisSession,
    /// Rewind to before this run or call (`/rewind`): the rewind overlay opens.
    Rewind(crate::event::RewindPoint),
}

/// What a row is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RowKind {
    /// A choice.
    Item(Pick),
    /// Something still coming (drawn with a spinner).
    Loading,
    /// Something that failed: said in full (it may wrap).
    Error,
}

/// One row: its text, a dim second column, and the group it came with (rows of a group are
/// replaced together when their data arrives).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// Which group it belongs to (e.g. the provider).
    pub group: String,
    /// The main text.
    pub text: String,
    /// The dim second column.
    pub detail: String,
    /// A dim line under it (empty: none).
    pub below: String,
    /// Choice, loading or error.
    pub kind: RowKind,
    /// Greyed out: a choice of little worth (an empty session).
    pub dim: bool,
    /// Marked with a dot: the one in use (the open session).
    pub marked: bool,
}

impl Row {
    /// A row to choose.
    pub fn item(group: &str, text: &str, detail: &str, pick: Pick) -> Self {
        Self::new(group, text, detail, RowKind::Item(pick))
    }

    /// A row that says `text` is on its way.
    pub fn loading(group: &str, text: &str) -> Self {
        Self::new(group, text, "", RowKind::Loading)
    }

    /// A row that says what failed.
    pub fn error(group: &str, text: &str) -> Self {
        Self::new(group, text, "", RowKind::Error)
    }

    fn new(group: &str, text: &str, detail: &str, kind: RowKind) -> Self {
        Self {
            group: group.to_string(),
            text: one_line(text),
            detail: one_line(detail),
            below: String::new(),
            kind,
            dim: false,
            marked: false,
        }
    }

    /// The same row greyed out.
    pub fn dimmed(mut self) -> Self {
        self.dim = true;
        self
    }

    /// The same row marked as the one in use.
    pub fn marked(mut self) -> Self {
        self.marked = true;
        self
    }

    /// The same row with a dim line under it.
    pub fn with_below(mut self, below: &str) -> Self {
        self.below = one_line(below);
        self
    }

    fn pick(&self) -> Option<&Pick> {
        match &self.kind {
            RowKind::Item(pick) => Some(pick),
            _ => None,
        }
    }

    /// Whether every word of `words` (lowercase) is in its text or detail. Loading and
    /// error rows always show: they say why a match may be missing.
    fn matches(&self, words: &[String]) -> bool {
        if self.pick().is_none() || words.is_empty() {
            return true;
        }
        let hay = format!(
            "{} {} {} {}",
            self.text, self.detail, self.below, self.group
        );
        let hay = hay.to_lowercase();
        words.iter().all(|w| hay.contains(w.as_str()))
    }
}

/// Text on one line: controls and line breaks become spaces.
fn one_line(text: &str) -> String {
    let flat: String = (text.chars())
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    flat.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Error rows wrap to at most this many lines.
const ERROR_LINES: usize = 3;
/// The widest the picker gets.
const MAX_WIDTH: u16 = 100;

/// The picker's state.
#[derive(Debug)]
pub struct Picker {
    /// What it lists, for whoever fills it later (e.g. `"models"`).
    topic: &'static str,
    title: String,
    rows: Vec<Row>,
    filter: String,
    /// The selected row (an index into `rows`; always a shown item, when there is one).
    selected: Option<usize>,
    /// The first shown row, as a position among the shown rows.
    offset: usize,
    /// List rows of the last draw (PgUp/PgDn move this many).
    page: usize,
    /// Said when there is nothing to choose (and no filter typed).
    empty: String,
    /// Closed by a key: the overlay stack drops it.
    pub(crate) closed: bool,
}

impl Picker {
    /// A picker of `topic` titled `title` over `rows`, saying `empty` when there are none.
    pub fn new(topic: &'static str, title: &str, rows: Vec<Row>, empty: &str) -> Self {
        let mut picker = Self {
            topic,
            title: title.to_string(),
            rows,
            filter: String::new(),
            selected: None,
            offset: 0,
            page: 10,
            empty: empty.to_string(),
            closed: false,
        };
        picker.select_first();
        picker
    }

    /// What it lists.
    pub fn topic(&self) -> &'static str {
        self.topic
    }

    /// The title.
    pub fn title(&self) -> &str {
        &self.title
    }

    /// The filter typed so far.
    pub fn filter(&self) -> &str {
        &self.filter
    }

    /// The selected row's choice.
    pub fn selected(&self) -> Option<&Pick> {
        self.rows.get(self.selected?)?.pick()
    }

    /// The rows shown now (after the filter), in order.
    pub fn shown(&self) -> Vec<&Row> {
        self.shown_indexes()
            .into_iter()
            .filter_map(|i| self.rows.get(i))
            .collect()
    }

    /// Selects the first row whose choice is `pick`, if one shows.
    pub fn select(&mut self, pick: &Pick) {
        let found = (self.shown_indexes().into_iter())
            .find(|&i| self.rows.get(i).and_then(Row::pick) == Some(pick));
        if found.is_some() {
            self.selected = found;
        }
    }

    /// Replaces the rows of `group` with `rows`, where the group was (else at the end); the
    /// selection stays on its choice.
    pub fn set_group(&mut self, group: &str, rows: Vec<Row>) {
        let keep = self.selected().cloned();
        let at = self.rows.iter().position(|r| r.group == group);
        self.rows.retain(|r| r.group != group);
        let at = at.unwrap_or(self.rows.len()).min(self.rows.len());
        self.rows.splice(at..at, rows);
        self.selected = None;
        if let Some(pick) = keep {
            self.select(&pick);
        }
        if self.selected.is_none() {
            self.select_first();
        }
    }

    /// Types `text` into the filter (the first matching row is selected).
    pub fn type_text(&mut self, text: &str) {
        let text = text.chars().map(|c| if c.is_control() { ' ' } else { c });
        self.filter.extend(text);
        self.refilter();
    }

    /// Deletes the filter's last character.
    pub fn backspace(&mut self) {
        self.filter.pop();
        self.refilter();
    }

    /// Empties the filter.
    pub fn clear_filter(&mut self) {
        self.filter.clear();
        self.refilter();
    }

    fn refilter(&mut self) {
        self.offset = 0;
        self.select_first();
    }

    fn select_first(&mut self) {
        self.selected = (self.shown_indexes().into_iter())
            .find(|&i| self.rows.get(i).and_then(Row::pick).is_some());
    }

    fn words(&self) -> Vec<String> {
        (self.filter.split_whitespace())
            .map(str::to_lowercase)
            .collect()
    }

    fn shown_indexes(&self) -> Vec<usize> {
        let words = self.words();
        (self.rows.iter().enumerate())
            .filter(|(_, r)| r.matches(&words))
            .map(|(i, _)| i)
            .collect()
    }

    /// Moves the selection `by` choices (negative: up), stopping at the ends.
    pub fn move_by(&mut self, by: isize) {
        let items: Vec<usize> = (self.shown_indexes().into_iter())
            .filter(|&i| self.rows.get(i).and_then(Row::pick).is_some())
            .collect();
        let Some(last) = items.len().checked_sub(1) else {
            return;
        };
        let now = (self.selected)
            .and_then(|s| items.iter().position(|&i| i == s))
            .unwrap_or(0);
        let to = now.saturating_add_signed(by).min(last);
        self.selected = items.get(to).copied();
    }

    /// Moves a page up (`-1`) or down (`1`).
    pub fn page_by(&mut self, pages: isize) {
        self.move_by(pages * self.page.max(1) as isize);
    }

    /// Moves to the first (`false`) or last (`true`) choice.
    pub fn jump(&mut self, end: bool) {
        self.move_by(if end { isize::MAX } else { isize::MIN });
    }
}

/// "3 h ago": how long ago `then` was at `now` (both Unix ms).
pub use crate::text::ago as age;

#[cfg(test)]
mod tests;
