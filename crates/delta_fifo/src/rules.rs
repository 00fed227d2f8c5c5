//! What the two queueing modes share: the operations the FIFO shell calls under its lock, and
//! the view of the downstream cache they decide with.

use std::sync::Arc;

use ahash::AHashMap;
use kcache_core::{KnownObjects, ObjectKey};
use tokio::time::Instant;

use crate::{AtomicEvent, Delta, DeltaObject, DeltaType, Deltas};

/// Keys whose deltas a consumer is processing right now, each with what the cache will hold for
/// it once they are applied (`None` after a deletion).
pub(crate) type Processing<K> = AHashMap<ObjectKey, Option<Arc<K>>>;

/// What a pop takes from the queue: the deltas of one key, or an atomic unit.
pub(crate) enum Taken<K> {
    Key(ObjectKey, Deltas<K>, Stamp),
    Atomic(AtomicEvent<K>, Stamp),
}

/// The downstream cache as the FIFO must see it.
///
/// client-go processes a pop while holding the FIFO lock, so a relist or resync never observes a
/// popped key that the cache does not have yet. kcache releases the lock while the consumer works;
/// to decide the same way, a key being processed counts as already applied to the cache.
pub(crate) struct KnownView<'a, K> {
    pub(crate) known: Option<&'a dyn KnownObjects<K>>,
    pub(crate) processing: &'a Processing<K>,
}

impl<K> KnownView<'_, K> {
    /// Whether there is a cache at all.
    pub(crate) fn is_present(&self) -> bool {
        self.known.is_some()
    }

    /// The keys the cache holds once the deltas being processed are applied.
    pub(crate) fn keys(&self) -> Vec<ObjectKey> {
        let Some(known) = self.known else {
            return Vec::new();
        };
        let mut keys = known.list_keys();
        if !self.processing.is_empty() {
            keys.retain(|k| !matches!(self.processing.get(k), Some(None)));
            for (k, v) in self.processing {
                if v.is_some() && known.get_by_key(k.as_str()).is_none() {
                    keys.push(k.clone());
                }
            }
        }
        keys
    }

    /// The object the cache holds for `key` once the deltas being processed are applied.
    pub(crate) fn get(&self, key: &ObjectKey) -> Option<Arc<K>> {
        let known = self.known?;
        match self.processing.get(key) {
            Some(v) => v.clone(),
            None => known.get_by_key(key.as_str()),
        }
    }
}

/// When an entry was queued, and by which write: the FIFO numbers its writes in order, and an
/// entry keeps the number of the write that queued it (deltas merged into it later do not change
/// it), so the head of the queue holds the oldest write still waiting (see `progress.rs`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Stamp {
    pub(crate) at: Instant,
    pub(crate) seq: u64,
}

impl Stamp {
    /// Write number `seq`, now.
    pub(crate) fn now(seq: u64) -> Self {
        Stamp {
            at: Instant::now(),
            seq,
        }
    }
}

/// The queueing rules of one mode; the shell holds the lock while calling them.
pub(crate) trait QueueRules<K>: Send {
    /// Queues an `Added`/`Updated` delta pushed by the write `stamp`.
    fn push(&mut self, key: ObjectKey, delta: Delta<K>, stamp: Stamp);
    /// Queues a `Deleted` delta, unless the mode's rules say the deletion is of nothing.
    fn delete(&mut self, key: ObjectKey, obj: Arc<K>, known: &KnownView<'_, K>, stamp: Stamp);
    /// Applies a relist; returns the initial population count it implies.
    fn replace(
        &mut self,
        items: Vec<(ObjectKey, Arc<K>)>,
        resource_version: &str,
        replaced: DeltaType,
        known: &KnownView<'_, K>,
        stamp: Stamp,
    ) -> usize;
    /// Queues `Sync` deltas for cached keys with nothing queued.
    fn resync(&mut self, known: &KnownView<'_, K>, stamp: Stamp);
    /// Takes the next deltas whose key is not being processed, or the next atomic unit, with
    /// their entry's stamp.
    fn take(&mut self, processing: &Processing<K>) -> Option<Taken<K>>;
    /// Puts popped deltas back ahead of any newer deltas of the same key (`stamp`: theirs).
    fn requeue(&mut self, key: ObjectKey, deltas: Deltas<K>, stamp: Stamp);
    /// Puts a popped atomic unit back at the head, with its stamp (only a mode that queues
    /// units gets one).
    fn requeue_atomic(&mut self, event: AtomicEvent<K>, stamp: Stamp) {
        let _ = (event, stamp);
    }
    /// Takes back the emptied list of a processed entry, for a later key to reuse.
    fn recycle(&mut self, emptied: Vec<Delta<K>>) {
        let _ = emptied;
    }
    /// How many entries wait to be popped (keys in Delta mode, deltas in Real mode).
    fn depth(&self) -> usize;
    /// The stamp of the entry at the head of the queue.
    fn oldest(&self) -> Option<Stamp>;
    /// The queued keys, in queue order, each once.
    fn keys(&self) -> Vec<ObjectKey>;
    /// The queued deltas of one key, oldest first.
    fn deltas_of(&self, key: &str) -> Option<Deltas<K>>;
    /// The newest queued object of each key, in queue order.
    fn newest_objects(&self) -> Vec<DeltaObject<K>>;
}
