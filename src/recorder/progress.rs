//! Progress reports kept to a few a second in the session file (issue 28.1): a server that
//! reports 100,000 times a second wrote 38.8 MB in 1.1 s. Per call, a report goes to the file
//! at most every [`EVERY_MS`] (by the events' own clock); the latest one held back is written
//! before the next event of any other kind, so the file still ends each call with where it
//! got, in order. The screen still gets every report.

use std::collections::HashMap;

use crate::event::{Event, EventData};

/// Least time between two reports of one call in the file.
pub const EVERY_MS: u64 = 250;

/// Most calls whose reports are held at once (a batch is rarely larger); past it, reports are
/// written as they come.
const MAX_HELD: usize = 256;

/// Which progress reports go to the file now, and which wait.
#[derive(Debug, Default)]
pub struct Coalescer {
    /// Per call: when its last report was written.
    written: HashMap<String, u64>,
    /// Per call: the latest report held back, in the order first held.
    held: Vec<(String, Event)>,
}

impl Coalescer {
    /// The events to write for `event`, in order: held reports first (before any other
    /// kind), then the event itself unless it is a report held back.
    pub fn take(&mut self, event: &Event) -> Vec<Event> {
        let EventData::ToolProgress { id, .. } = &event.data else {
            let mut out: Vec<Event> = self.held.drain(..).map(|(_, e)| e).collect();
            out.push(event.clone());
            return out;
        };
        let due = self
            .written
            .get(id)
            .is_none_or(|at| event.timestamp.saturating_sub(*at) >= EVERY_MS);
        if due || (self.written.len() >= MAX_HELD && !self.written.contains_key(id)) {
            self.held.retain(|(held, _)| held != id);
            if self.written.len() < MAX_HELD || self.written.contains_key(id) {
                self.written.insert(id.clone(), event.timestamp);
            }
            return vec![event.clone()];
        }
        match self.held.iter_mut().find(|(held, _)| held == id) {
            Some((_, latest)) => *latest = event.clone(),
            None => self.held.push((id.clone(), event.clone())),
        }
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn at(ts: u64, data: EventData) -> Event {
        Event {
            timestamp: ts,
            request_id: Arc::from("r"),
            data,
        }
    }

    fn progress(id: &str, n: u32) -> EventData {
        EventData::ToolProgress {
            id: id.into(),
            progress: f64::from(n),
            total: Some(100_000.0),
            message: None,
        }
    }

    #[test]
    fn a_flood_is_a_few_lines_a_second_and_the_last_report_is_kept() {
        let mut c = Coalescer::default();
        let mut written = Vec::new();
        // 100,000 reports over 1.1 s (the issue's flood), two calls interleaved.
        for n in 0..100_000u32 {
            let ts = u64::from(n) * 11 / 1000;
            let id = if n % 2 == 0 { "a" } else { "b" };
            written.extend(c.take(&at(ts, progress(id, n))));
        }
        let result = EventData::Final {
            content: String::new(),
            turns: 1,
            usage: Default::default(),
        };
        written.extend(c.take(&at(1_100, result)));
        // At most one per call per 250 ms (5 windows in 1.1 s), the last of each, the end.
        assert!(written.len() <= 2 * 5 + 2 + 1, "{}", written.len());
        let last_of = |id: &str| {
            written.iter().rev().find_map(|e| match &e.data {
                EventData::ToolProgress {
                    id: i, progress, ..
                } if i == id => Some(*progress),
                _ => None,
            })
        };
        assert_eq!(last_of("a"), Some(99_998.0));
        assert_eq!(last_of("b"), Some(99_999.0));
        assert!(matches!(
            written.last().map(|e| &e.data),
            Some(EventData::Final { .. })
        ));
        // In time order.
        assert!(written.windows(2).all(|w| w[0].timestamp <= w[1].timestamp));
    }

    #[test]
    fn reports_slower_than_the_bound_are_all_written() {
        let mut c = Coalescer::default();
        let written: usize = (0..10u32)
            .map(|n| c.take(&at(u64::from(n) * 300, progress("a", n))).len())
            .sum();
        assert_eq!(written, 10);
    }
}
