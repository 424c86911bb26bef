//! Scrolling back past what a resume loaded (issue 15): the timeline says when its first row
//! is selected, and takes the rows of earlier runs above its own, keeping the selection.

use super::{Said, TimelineState};

impl TimelineState {
    /// Whether the first row is selected (or there is none): moving up shows nothing more.
    pub fn at_top(&self) -> bool {
        self.selected == 0
    }

    /// Whether the selection stays on the newest row.
    pub fn is_following(&self) -> bool {
        self.follow
    }

    /// Takes `fresh`'s rows, store and conversation (the same runs' newest part, rebuilt
    /// from the session file) in place of its own; the filter, prices and page stay, and
    /// it follows the newest row.
    pub fn adopt(&mut self, mut fresh: TimelineState) {
        fresh.filter = self.filter;
        fresh.page = self.page;
        fresh.pricing = std::mem::take(&mut self.pricing);
        fresh.follow = true;
        *self = fresh;
        self.refilter_at(None);
    }

    /// Puts the rows of `earlier` (a timeline built from older runs) above this one's own;
    /// the selected row stays selected.
    pub fn prepend(&mut self, mut earlier: TimelineState) {
        let n = earlier.rows.len();
        let Ok(shift) = u32::try_from(n) else {
            return;
        };
        if n == 0 {
            return;
        }
        let by = self.store.append(std::mem::take(&mut earlier.store));
        for row in &mut earlier.rows {
            row.payload = row.payload.map(|p| p.shifted(by));
        }
        for row in &mut self.rows {
            row.link = row.link.map(|i| i.saturating_add(shift));
        }
        for i in self
            .open_calls
            .values_mut()
            .chain(self.open_models.values_mut())
        {
            *i += n;
        }
        let current = self.visible.get(self.selected).map(|&i| i + n);
        earlier.rows.append(&mut self.rows);
        self.rows = earlier.rows;
        for (id, span) in earlier.runs {
            self.runs.entry(id).or_insert(span);
        }
        // Messages: the earlier ones first, each found where its rows and blocks went.
        let older = earlier.conversation.into_iter().map(|s| s.moved(by, 0));
        let newer = self.conversation.drain(..).map(|s| s.moved(0, shift));
        self.conversation = older.chain(newer).collect();
        for said in self.sub_conversations.values_mut().flatten() {
            *said = said.moved(0, shift);
        }
        for (id, said) in earlier.sub_conversations {
            let said = said.into_iter().map(|s| s.moved(by, 0)).collect();
            self.sub_conversations.entry(id).or_insert(said);
        }
        self.refilter_at(current);
        // The rows above the view do not move it.
        self.scroll += self.visible.iter().take_while(|&&i| i < n).count();
    }
}

impl Said {
    /// The same message once its store's blocks moved `blocks` on and its rows `rows` down.
    fn moved(self, blocks: u32, rows: u32) -> Self {
        match self {
            Self::Message(p) => Self::Message(p.shifted(blocks)),
            Self::InCall { payload, row, nth } => Self::InCall {
                payload: payload.shifted(blocks),
                row: row.saturating_add(rows),
                nth,
            },
        }
    }
}
