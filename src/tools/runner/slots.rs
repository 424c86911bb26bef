//! The session's slots for running processes (`[tools] max_parallel`): a call of a tool that
//! starts a process (`shell`) takes one before it starts and gives it back when it ends, so
//! at most that many run at once across the session, sub-agents included. A call that finds
//! none free is queued (its frame says so) and starts, in order, when one is given back.

use std::sync::Arc;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// The default number of process slots.
pub const DEFAULT_MAX_PARALLEL: usize = 8;

/// The slots of one session (clones share them).
#[derive(Debug, Clone)]
pub struct Slots {
    semaphore: Arc<Semaphore>,
    size: usize,
}

/// A slot taken; given back when dropped.
#[derive(Debug)]
pub struct Slot {
    _permit: OwnedSemaphorePermit,
}

/// How a ready call may start.
#[derive(Debug)]
pub enum Start {
    /// At once: it needs no slot.
    Now,
    /// At once, in the slot it holds.
    Holding(Slot),
    /// When a slot is free: it is queued.
    Queued(Slots),
}

impl Start {
    /// Whether the call waits for a slot.
    pub fn is_queued(&self) -> bool {
        matches!(self, Self::Queued(_))
    }
}

impl Default for Slots {
    fn default() -> Self {
        Self::new(DEFAULT_MAX_PARALLEL)
    }
}

impl Slots {
    /// `size` slots (at least one).
    pub fn new(size: usize) -> Self {
        let size = size.max(1);
        Self {
            semaphore: Arc::new(Semaphore::new(size)),
            size,
        }
    }

    /// How many there are.
    pub fn size(&self) -> usize {
        self.size
    }

    /// How a call that needs a slot (`needs`) may start: in a free slot, or queued.
    pub fn start(&self, needs: bool) -> Start {
        if !needs {
            return Start::Now;
        }
        // The semaphore is fair: a slot given back goes to the first call waiting, so this
        // never takes one past the queue.
        match Arc::clone(&self.semaphore).try_acquire_owned() {
            Ok(permit) => Start::Holding(Slot { _permit: permit }),
            Err(_) => Start::Queued(self.clone()),
        }
    }

    /// Waits for a free slot, in the order calls asked for one.
    pub async fn take(&self) -> Option<Slot> {
        // The semaphore is never closed; `None` would only mean that.
        Arc::clone(&self.semaphore)
            .acquire_owned()
            .await
            .ok()
            .map(|permit| Slot { _permit: permit })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_ninth_call_waits_for_a_slot_given_back() {
        let slots = Slots::new(8);
        let held: Vec<Start> = (0..8).map(|_| slots.start(true)).collect();
        assert!(held.iter().all(|s| matches!(s, Start::Holding(_))));
        assert!(matches!(slots.start(false), Start::Now));
        let Start::Queued(queue) = slots.start(true) else {
            panic!("no slot is free");
        };
        let waiting = tokio::spawn(async move { queue.take().await.is_some() });
        tokio::task::yield_now().await;
        assert!(!waiting.is_finished());
        drop(held);
        assert!(waiting.await.unwrap());
        assert_eq!(Slots::new(0).size(), 1, "at least one");
    }
}
