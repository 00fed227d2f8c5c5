//! What a consumer holds after a pop: one entry ([`Popped`]) or several ([`PoppedBatch`]).

use kcache_core::{Object, ObjectKey};

use crate::{AtomicEvent, Delta, DeltaFifo, Deltas};

/// One popped key — its deltas and how the initial-sync count saw it — or, in atomic mode, one
/// whole relist or resync ([`PoppedEntry::atomic`]).
#[derive(Debug)]
pub struct PoppedEntry<K> {
    pub(crate) key: ObjectKey,
    pub(crate) deltas: Deltas<K>,
    pub(crate) atomic: Option<AtomicEvent<K>>,
    pub(crate) is_in_initial_list: bool,
    pub(crate) counted: bool,
    /// The number of the write that queued the entry (see `progress.rs`).
    pub(crate) seq: u64,
}

impl<K> PoppedEntry<K> {
    /// An entry popped from a queue of another kind than [`DeltaFifo`] (see [`crate::Queue`]).
    pub fn new(key: ObjectKey, deltas: Deltas<K>, is_in_initial_list: bool) -> Self {
        PoppedEntry {
            key,
            deltas,
            atomic: None,
            is_in_initial_list,
            counted: false,
            seq: 0,
        }
    }

    /// An atomic unit popped from a queue of another kind than [`DeltaFifo`].
    pub fn from_atomic(event: AtomicEvent<K>, is_in_initial_list: bool) -> Self {
        PoppedEntry {
            key: ObjectKey::from(""),
            deltas: Deltas::default(),
            atomic: Some(event),
            is_in_initial_list,
            counted: false,
            seq: 0,
        }
    }

    /// The key the deltas belong to (empty for an atomic unit).
    pub fn key(&self) -> &ObjectKey {
        &self.key
    }

    /// The deltas, oldest first (none for an atomic unit).
    pub fn deltas(&self) -> &Deltas<K> {
        &self.deltas
    }

    /// The relist or resync this entry is, in [`crate::FifoMode::Atomic`]; `None` for the
    /// deltas of a key.
    pub fn atomic(&self) -> Option<&AtomicEvent<K>> {
        self.atomic.as_ref()
    }

    /// Whether these deltas belong to the first list and the FIFO had not synced when popped.
    pub fn is_in_initial_list(&self) -> bool {
        self.is_in_initial_list
    }
}

/// How a popped entry's processing ended, for [`DeltaFifo::finish`].
pub(crate) struct Finished<K> {
    pub(crate) key: ObjectKey,
    /// Whether the entry was an atomic unit (it holds no key in processing).
    pub(crate) was_atomic: bool,
    pub(crate) counted: bool,
    pub(crate) seq: u64,
    pub(crate) outcome: Outcome<K>,
}

pub(crate) enum Outcome<K> {
    /// Processed: the emptied list goes back to the queue for reuse.
    Done(Vec<Delta<K>>),
    /// Failed: the deltas go back into the queue.
    Requeue(Deltas<K>),
    /// Failed: the atomic unit goes back to the head of the queue.
    RequeueAtomic(AtomicEvent<K>),
}

impl<K> PoppedEntry<K> {
    /// How its processing ended: done (the deltas are dropped here, outside the FIFO's lock),
    /// or requeue them.
    fn finished(&mut self, requeue: bool) -> Finished<K> {
        let deltas = std::mem::take(&mut self.deltas);
        let atomic = if requeue { self.atomic.take() } else { None };
        Finished {
            key: self.key.clone(),
            was_atomic: self.atomic.is_some() || atomic.is_some(),
            counted: self.counted,
            seq: self.seq,
            outcome: if let Some(event) = atomic {
                Outcome::RequeueAtomic(event)
            } else if requeue {
                Outcome::Requeue(deltas)
            } else {
                let mut emptied = deltas.0;
                emptied.clear();
                Outcome::Done(emptied)
            },
        }
    }
}

/// One popped entry, handed to a consumer (see [`DeltaFifo::pop_guard`]).
///
/// While it lives its key is "processing": producers keep queueing (also for this key), but no
/// other consumer gets this key until the guard is dropped, so per-key order holds. Dropping it
/// (or [`Popped::done`]) ends processing; [`Popped::requeue`] puts the deltas back instead —
/// client-go's `ErrRequeue`.
pub struct Popped<'a, K: Object> {
    pub(crate) fifo: &'a DeltaFifo<K>,
    pub(crate) entry: PoppedEntry<K>,
    pub(crate) finished: bool,
}

impl<K: Object> std::ops::Deref for Popped<'_, K> {
    type Target = PoppedEntry<K>;

    fn deref(&self) -> &PoppedEntry<K> {
        &self.entry
    }
}

impl<K: Object> Popped<'_, K> {
    /// Processing succeeded (the same as dropping the guard).
    pub fn done(self) {}

    /// Processing failed: put the deltas back ahead of any newer deltas of the key; the key keeps
    /// its queue place if it has one, else goes to the back (client-go's `ErrRequeue`, which
    /// dropped the deltas when newer ones had arrived — here nothing is dropped).
    pub fn requeue(mut self) {
        self.end(true);
    }

    fn end(&mut self, requeue: bool) {
        if !std::mem::replace(&mut self.finished, true) {
            self.fifo.finish([self.entry.finished(requeue)]);
        }
    }
}

impl<K: Object> Drop for Popped<'_, K> {
    fn drop(&mut self) {
        self.end(false);
    }
}

impl<K: Object + std::fmt::Debug> std::fmt::Debug for Popped<'_, K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Popped").field(&self.entry).finish()
    }
}

/// Several popped entries, different keys in queue order (see [`DeltaFifo::pop_batch`]).
///
/// Every key is "processing" until the batch is dropped, which ends them all under one lock
/// hold; [`PoppedBatch::requeue`] marks one entry to be put back instead.
pub struct PoppedBatch<'a, K: Object> {
    pub(crate) fifo: &'a DeltaFifo<K>,
    pub(crate) entries: Vec<PoppedEntry<K>>,
    pub(crate) requeue: Vec<bool>,
}

impl<K: Object> PoppedBatch<'_, K> {
    /// The entries, in the order they were queued.
    pub fn entries(&self) -> &[PoppedEntry<K>] {
        &self.entries
    }

    /// Puts entry `i`'s deltas back when the batch is dropped, as [`Popped::requeue`] does.
    /// Out-of-range indexes are ignored.
    pub fn requeue(&mut self, i: usize) {
        if let Some(r) = self.requeue.get_mut(i) {
            *r = true;
        }
    }
}

impl<K: Object> AsRef<[PoppedEntry<K>]> for PoppedBatch<'_, K> {
    fn as_ref(&self) -> &[PoppedEntry<K>] {
        &self.entries
    }
}

impl<K: Object> Drop for PoppedBatch<'_, K> {
    fn drop(&mut self) {
        // Built before the lock is taken: finishing drops the processed deltas.
        let finished: Vec<Finished<K>> = self
            .entries
            .iter_mut()
            .zip(&self.requeue)
            .map(|(e, &r)| e.finished(r))
            .collect();
        self.fifo.finish(finished);
    }
}

impl<K: Object + std::fmt::Debug> std::fmt::Debug for PoppedBatch<'_, K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(&self.entries).finish()
    }
}
