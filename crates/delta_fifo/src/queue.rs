//! The queue between a reflector and an informer's cache, as the informer's processing loop
//! sees it (client-go's `cache.Queue`).

use std::future::Future;

use kcache_core::{Object, ReflectorStore};

use crate::{DeltaFifo, Error, PoppedBatch, PoppedEntry};

/// What an informer asks of the queue its reflector writes into: the reflector's writes
/// ([`ReflectorStore`]), a batched pop, and whether the first list has been processed
/// (client-go's `Queue`: `Store` plus `Pop`, `HasSynced` and `Close`).
///
/// [`DeltaFifo`] implements it in both of its modes; another queue plugs into the same loop by
/// implementing it. The loop is generic over it (no dynamic call per pop).
pub trait Queue<K>: ReflectorStore<K> {
    /// Popped entries, processing until dropped (a key is not handed out again meanwhile).
    type Batch<'a>: AsRef<[PoppedEntry<K>]> + Send
    where
        Self: 'a;

    /// Waits for at least one entry, then takes up to `max` (at least one), different keys in
    /// queue order; [`Error::Closed`] once closed and drained.
    fn pop_batch(&self, max: usize) -> impl Future<Output = Result<Self::Batch<'_>, Error>> + Send;

    /// Entries waiting to be popped.
    fn len(&self) -> usize;

    /// Whether nothing waits to be popped.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// True once every entry of the first list has been popped and processed (or writes came
    /// before any list).
    fn has_synced(&self) -> bool;

    /// Ends pops once the queue is drained; producers may still write.
    fn close(&self);
}

impl<K: Object> Queue<K> for DeltaFifo<K> {
    type Batch<'a> = PoppedBatch<'a, K>;

    fn pop_batch(
        &self,
        max: usize,
    ) -> impl Future<Output = Result<PoppedBatch<'_, K>, Error>> + Send {
        DeltaFifo::pop_batch(self, max)
    }
    fn len(&self) -> usize {
        DeltaFifo::len(self)
    }
    fn is_empty(&self) -> bool {
        DeltaFifo::is_empty(self)
    }
    fn has_synced(&self) -> bool {
        DeltaFifo::has_synced(self)
    }
    fn close(&self) {
        DeltaFifo::close(self)
    }
}
