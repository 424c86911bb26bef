//! What the timeline keeps of each event's payload (issue 15): its JSON, appended to blocks
//! of 64 KiB that are deflated once full, so a row holds what it draws and a long session
//! costs a fraction of its events' size, not a clone of every message and tool output.
//! Events of a session repeat their field names and much of their text, so a block shrinks
//! several times more than each payload alone would. Expanding a row inflates one block.

use serde::Serialize;
use serde::de::DeserializeOwned;

/// Raw JSON bytes gathered before a block is deflated.
const BLOCK: usize = 64 << 10;
/// Level 1, the fastest: blocks are deflated as events arrive, on the UI thread.
const LEVEL: u8 = 1;
/// The most a block may inflate to (a block holds one event at most past `BLOCK`, and
/// events are bounded far below this).
const MAX_INFLATED: usize = 256 << 20;

/// Where one payload is: its block, and its bytes in the block's JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Payload {
    block: u32,
    start: u32,
    len: u32,
}

impl Payload {
    /// The same payload once its store's blocks were appended `by` blocks further on.
    pub(super) fn shifted(self, by: u32) -> Self {
        Self {
            block: self.block.saturating_add(by),
            ..self
        }
    }
}

/// The payloads of a timeline: deflated blocks, and the newest payloads still raw.
#[derive(Debug, Default)]
pub(super) struct Store {
    sealed: Vec<Box<[u8]>>,
    open: Vec<u8>,
}

impl Store {
    /// Keeps `value`'s JSON; `None` if it cannot be serialized (never for events) or the
    /// store outgrew its 4 GiB offsets.
    pub(super) fn push<T: Serialize>(&mut self, value: &T) -> Option<Payload> {
        let start = self.open.len();
        if serde_json::to_writer(&mut self.open, value).is_err() {
            self.open.truncate(start);
            return None;
        }
        let payload = Payload {
            block: u32::try_from(self.sealed.len()).ok()?,
            start: u32::try_from(start).ok()?,
            len: u32::try_from(self.open.len() - start).ok()?,
        };
        if self.open.len() >= BLOCK {
            self.seal();
        }
        Some(payload)
    }

    /// Drops `payload` if it is the newest and its block is still open (a row replaced in
    /// place, like a call's progress, then costs nothing).
    pub(super) fn forget(&mut self, payload: Payload) {
        let end = payload.start as usize + payload.len as usize;
        if payload.block as usize == self.sealed.len() && end == self.open.len() {
            self.open.truncate(payload.start as usize);
        }
    }

    /// Takes in `other`'s payloads after this store's own; each of `other`'s payloads is then
    /// found [`Payload::shifted`] by the number returned.
    pub(super) fn append(&mut self, mut other: Store) -> u32 {
        // Sealing early is safe: the open block's payloads already name the next block.
        if !self.open.is_empty() {
            self.seal();
        }
        if !other.open.is_empty() {
            other.seal();
        }
        let by = u32::try_from(self.sealed.len()).unwrap_or(u32::MAX);
        self.sealed.append(&mut other.sealed);
        by
    }

    fn seal(&mut self) {
        let deflated = miniz_oxide::deflate::compress_to_vec(&self.open, LEVEL);
        self.sealed.push(deflated.into_boxed_slice());
        self.open.clear();
        // One huge event must not keep its buffer for good.
        self.open.shrink_to(2 * BLOCK);
    }

    /// A reader that keeps the last block it inflated.
    pub(super) fn reader(&self) -> Reader<'_> {
        Reader {
            store: self,
            inflated: None,
        }
    }

    /// Bytes held, deflated and raw (tests check the store stays small).
    #[cfg(test)]
    pub(super) fn held(&self) -> usize {
        self.sealed.iter().map(|b| b.len()).sum::<usize>() + self.open.len()
    }
}

/// Reads payloads back, inflating each block once while it reads from it.
pub(super) struct Reader<'a> {
    store: &'a Store,
    inflated: Option<(u32, Vec<u8>)>,
}

impl Reader<'_> {
    /// The value `payload` holds; `None` if it cannot be read (a store bug, not input).
    pub(super) fn get<T: DeserializeOwned>(&mut self, payload: Payload) -> Option<T> {
        let range = payload.start as usize..payload.start as usize + payload.len as usize;
        let block = payload.block as usize;
        let bytes = if block == self.store.sealed.len() {
            self.store.open.get(range)?
        } else {
            if self.inflated.as_ref().map(|(b, _)| *b) != Some(payload.block) {
                let deflated = self.store.sealed.get(block)?;
                let json =
                    miniz_oxide::inflate::decompress_to_vec_with_limit(deflated, MAX_INFLATED)
                        .ok()?;
                self.inflated = Some((payload.block, json));
            }
            self.inflated.as_ref()?.1.get(range)?
        };
        serde_json::from_slice(bytes).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conversation::Message;

    #[test]
    fn values_come_back_from_open_and_sealed_blocks() {
        let mut store = Store::default();
        let messages: Vec<Message> = (0..2_000)
            .map(|i| Message::user(format!("message {i}: the same words in every message")))
            .collect();
        let payloads: Vec<Payload> = (messages.iter()).map(|m| store.push(m).unwrap()).collect();
        assert!(!store.sealed.is_empty(), "some blocks are sealed");
        assert!(!store.open.is_empty(), "the newest are still raw");
        let mut reader = store.reader();
        // Out of order too: the reader inflates whichever block it needs.
        for i in [1_999, 0, 1_000, 1] {
            assert_eq!(
                reader.get::<Message>(payloads[i]).as_ref(),
                Some(&messages[i])
            );
        }
        let raw: usize = messages
            .iter()
            .map(|m| serde_json::to_vec(m).unwrap().len())
            .sum();
        // Repeated field names and words shrink many times over.
        assert!(store.held() * 5 < raw, "held {} of {raw}", store.held());
    }

    #[test]
    fn the_newest_payload_can_be_forgotten_and_others_cannot() {
        let mut store = Store::default();
        let first = store.push(&"first").unwrap();
        let second = store.push(&"second").unwrap();
        store.forget(first);
        assert_eq!(
            store.reader().get::<String>(second).as_deref(),
            Some("second")
        );
        store.forget(second);
        let third = store.push(&"third").unwrap();
        assert_eq!(third.start, second.start, "its bytes were reused");
        let mut reader = store.reader();
        assert_eq!(reader.get::<String>(first).as_deref(), Some("first"));
        assert_eq!(reader.get::<String>(third).as_deref(), Some("third"));
    }

    #[test]
    fn an_appended_store_keeps_both_stores_payloads() {
        let mut newer = Store::default();
        let mine = newer.push(&"newer, still open").unwrap();
        let mut older = Store::default();
        let sealed = older.push(&"x".repeat(BLOCK)).unwrap();
        let open = older.push(&"older, open").unwrap();
        let by = newer.append(older);
        let mine_after = newer.push(&"after").unwrap();
        let mut reader = newer.reader();
        assert_eq!(
            reader.get::<String>(mine).as_deref(),
            Some("newer, still open")
        );
        assert_eq!(
            reader.get::<String>(sealed.shifted(by)),
            Some("x".repeat(BLOCK))
        );
        assert_eq!(
            reader.get::<String>(open.shifted(by)).as_deref(),
            Some("older, open")
        );
        assert_eq!(reader.get::<String>(mine_after).as_deref(), Some("after"));
    }

    #[test]
    fn a_huge_value_seals_its_block_and_damage_reads_as_none() {
        let mut store = Store::default();
        let huge = "x".repeat(3 * BLOCK);
        let payload = store.push(&huge).unwrap();
        assert_eq!(store.sealed.len(), 1);
        assert!(
            store.open.capacity() <= 2 * BLOCK,
            "the big buffer is given back"
        );
        assert_eq!(store.reader().get::<String>(payload), Some(huge));
        store.sealed[0] = Box::new([1, 2, 3]);
        assert_eq!(store.reader().get::<String>(payload), None);
        let beyond = Payload {
            block: 9,
            start: 0,
            len: 1,
        };
        assert_eq!(store.reader().get::<String>(beyond), None);
    }
}
