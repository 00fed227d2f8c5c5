//! The guard of one popped entry.

use kcache_core::{Object, ObjectKey};

use crate::{DeltaFifo, Deltas};

/// One popped entry, handed to a consumer (see [`DeltaFifo::pop_guard`]).
///
/// While it lives its key is "processing": producers keep queueing (also for this key), but no
/// other consumer gets this key until the guard is dropped, so per-key order holds. Dropping it
/// (or [`Popped::done`]) ends processing; [`Popped::requeue`] puts the deltas back instead —
/// client-go's `ErrRequeue`.
pub struct Popped<'a, K: Object> {
    pub(crate) fifo: &'a DeltaFifo<K>,
    pub(crate) key: ObjectKey,
    pub(crate) deltas: Deltas<K>,
    pub(crate) is_in_initial_list: bool,
    pub(crate) counted: bool,
    pub(crate) finished: bool,
}

impl<K: Object> Popped<'_, K> {
    /// The key the deltas belong to.
    pub fn key(&self) -> &ObjectKey {
        &self.key
    }

    /// The deltas, oldest first.
    pub fn deltas(&self) -> &Deltas<K> {
        &self.deltas
    }

    /// Whether these deltas belong to the first list and the FIFO had not synced when popped.
    pub fn is_in_initial_list(&self) -> bool {
        self.is_in_initial_list
    }

    /// Processing succeeded (the same as dropping the guard).
    pub fn done(self) {}

    /// Processing failed: put the deltas back ahead of any newer deltas of the key; the key keeps
    /// its queue place if it has one, else goes to the back (client-go's `ErrRequeue`, which
    /// dropped the deltas when newer ones had arrived — here nothing is dropped).
    pub fn requeue(mut self) {
        let deltas = std::mem::take(&mut self.deltas);
        self.finished = true;
        self.fifo.finish(&self.key, self.counted, Some(deltas));
    }
}

impl<K: Object> Drop for Popped<'_, K> {
    fn drop(&mut self) {
        if !self.finished {
            self.fifo.finish(&self.key, self.counted, None);
        }
    }
}

impl<K: Object + std::fmt::Debug> std::fmt::Debug for Popped<'_, K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Popped")
            .field("key", &self.key)
            .field("deltas", &self.deltas)
            .field("is_in_initial_list", &self.is_in_initial_list)
            .finish()
    }
}
