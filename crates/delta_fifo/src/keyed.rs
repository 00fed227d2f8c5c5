//! Delta mode: client-go's `DeltaFIFO` rules — deltas grouped per key, each key queued once.

use std::collections::hash_map::Entry;
use std::collections::VecDeque;
use std::sync::Arc;

use crate::rules::{KnownView, Processing, QueueRules, Stamp, Taken};
use crate::{Delta, DeltaObject, DeltaType, Deltas};
use ahash::{AHashMap, AHashSet};
use kcache_core::ObjectKey;

/// Emptied delta lists kept for reuse, at most this many...
const SPARE_LISTS: usize = 1024;
/// ...and none longer than this, so a burst of long lists is not kept forever.
const SPARE_CAPACITY: usize = 64;

/// Per-key delta lists plus the order their keys were queued in.
///
/// Invariant: a key is in `queue` iff it is in `items`, exactly once; its list is never empty.
pub(crate) struct KeyedQueue<K> {
    items: AHashMap<ObjectKey, Vec<Delta<K>>>,
    queue: VecDeque<(ObjectKey, Stamp)>,
    /// Lists of processed entries, handed back by consumers: a producer reuses one for a newly
    /// queued key instead of allocating (and growing) a fresh list that a consumer thread
    /// frees again — a steady producer/consumer pair then recycles the same few buffers.
    spare: Vec<Vec<Delta<K>>>,
}

impl<K> KeyedQueue<K> {
    pub(crate) fn new() -> Self {
        KeyedQueue {
            items: AHashMap::new(),
            queue: VecDeque::new(),
            spare: Vec::new(),
        }
    }

    /// Appends a delta of the write `at`; a key already queued keeps its place (and stamp).
    fn append_at(&mut self, key: ObjectKey, delta: Delta<K>, at: Stamp) {
        match self.items.entry(key) {
            Entry::Occupied(mut e) => push_deduped(e.get_mut(), delta),
            Entry::Vacant(e) => {
                self.queue.push_back((e.key().clone(), at));
                let mut list = self.spare.pop().unwrap_or_default();
                list.push(delta);
                e.insert(list);
            }
        }
    }
}

/// Appends `d`, collapsing two consecutive deletions into one: the newer if the older is a
/// tombstone (the newer knows more), else the older (client-go's `dedupDeltas`).
fn push_deduped<K>(deltas: &mut Vec<Delta<K>>, d: Delta<K>) {
    if let Some(last) = deltas.last_mut() {
        if last.type_ == DeltaType::Deleted && d.type_ == DeltaType::Deleted {
            if last.object.is_tombstone() {
                *last = d;
            }
            return;
        }
    }
    deltas.push(d);
}

impl<K: Send + Sync + 'static> QueueRules<K> for KeyedQueue<K> {
    fn push(&mut self, key: ObjectKey, delta: Delta<K>, stamp: Stamp) {
        self.append_at(key, delta, stamp);
    }

    fn delete(&mut self, key: ObjectKey, obj: Arc<K>, known: &KnownView<'_, K>, stamp: Stamp) {
        // Without a cache, only a queued key can be deleted; with one, a key absent from both
        // the queue and the cache was already deleted.
        if !self.items.contains_key(&key) && (!known.is_present() || known.get(&key).is_none()) {
            return;
        }
        self.append_at(key, Delta::new(DeltaType::Deleted, obj), stamp);
    }

    fn replace(
        &mut self,
        items: Vec<(ObjectKey, Arc<K>)>,
        _resource_version: &str,
        replaced: DeltaType,
        known: &KnownView<'_, K>,
        now: Stamp,
    ) -> usize {
        // Keys already queued keep their place at the front; listed keys new to the queue go
        // after them. Only the keys queued before the list can have vanished from it, so only
        // they are checked against it — a first list (nothing queued) builds no set of keys.
        let queued_before = self.queue.len();
        let mut relisted = AHashSet::new();
        // At least this many listed keys are new to the queue (exact on a first list). Reserving
        // the whole list would, over a backlog of the same keys, double the map for nothing.
        let growth = items.len().saturating_sub(queued_before);
        self.items.reserve(growth);
        self.queue.reserve(growth);
        for (key, obj) in items {
            if queued_before > 0 && self.items.contains_key(&key) {
                relisted.insert(key.clone());
            }
            self.append_at(key, Delta::new(replaced, obj), now);
        }
        // Queued keys missing from the list vanished: tombstone them with their newest state
        // (client-go #115658 — without this they stay in the cache as ghosts).
        let vanished: Vec<(ObjectKey, Option<Arc<K>>)> = self
            .queue
            .iter()
            .take(queued_before)
            .filter(|(k, _)| !relisted.contains(k))
            .map(|(k, _)| {
                let newest = self.items.get(k).and_then(|d| d.last());
                (k.clone(), newest.and_then(|d| d.object.object().cloned()))
            })
            .collect();
        for (k, obj) in vanished {
            self.append_at(k.clone(), Delta::tombstone(k, obj), now);
        }
        // Every listed key is queued now, so a cached key that is not queued was not listed.
        for k in known.keys() {
            if self.items.contains_key(&k) {
                continue;
            }
            let obj = known.get(&k);
            self.append_at(k.clone(), Delta::tombstone(k, obj), now);
        }
        // client-go's count — distinct listed keys plus queued deletions — is every queued key:
        // each key queued before was either listed again or tombstoned.
        self.queue.len()
    }

    fn resync(&mut self, known: &KnownView<'_, K>, stamp: Stamp) {
        for k in known.keys() {
            if self.items.contains_key(&k) {
                continue;
            }
            if let Some(obj) = known.get(&k) {
                self.append_at(k, Delta::new(DeltaType::Sync, obj), stamp);
            }
        }
    }

    fn take(&mut self, processing: &Processing<K>) -> Option<Taken<K>> {
        let i = if processing.is_empty() {
            0
        } else {
            self.queue
                .iter()
                .position(|(k, _)| !processing.contains_key(k))?
        };
        let (key, stamp) = self.queue.remove(i)?;
        let deltas = self.items.remove(&key)?;
        Some(Taken::Key(key, Deltas(deltas), stamp))
    }

    fn requeue(&mut self, key: ObjectKey, deltas: Deltas<K>, stamp: Stamp) {
        match self.items.entry(key) {
            Entry::Occupied(mut e) => {
                // The entry now holds older deltas than its stamp says: it takes theirs.
                if let Some(queued) = self.queue.iter_mut().find(|(k, _)| k == e.key()) {
                    queued.1.seq = queued.1.seq.min(stamp.seq);
                }
                let newer = std::mem::replace(e.get_mut(), deltas.0);
                for d in newer {
                    push_deduped(e.get_mut(), d);
                }
            }
            Entry::Vacant(e) => {
                self.queue.push_back((e.key().clone(), stamp));
                e.insert(deltas.0);
            }
        }
    }

    fn recycle(&mut self, emptied: Vec<Delta<K>>) {
        debug_assert!(emptied.is_empty());
        if self.spare.len() < SPARE_LISTS && emptied.capacity() <= SPARE_CAPACITY {
            self.spare.push(emptied);
        }
    }

    fn depth(&self) -> usize {
        self.queue.len()
    }

    fn oldest(&self) -> Option<Stamp> {
        self.queue.front().map(|(_, t)| *t)
    }

    fn keys(&self) -> Vec<ObjectKey> {
        self.queue.iter().map(|(k, _)| k.clone()).collect()
    }

    fn deltas_of(&self, key: &str) -> Option<Deltas<K>> {
        self.items.get(key).map(|d| Deltas(d.clone()))
    }

    fn newest_objects(&self) -> Vec<DeltaObject<K>> {
        self.queue
            .iter()
            .filter_map(|(k, _)| self.items.get(k)?.last())
            .map(|d| d.object.clone())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kcache_core::DynamicObject;

    fn listed(n: usize) -> Vec<(ObjectKey, Arc<DynamicObject>)> {
        (0..n)
            .map(|i| {
                let name = format!("cm-{i}");
                (
                    ObjectKey::new("ns", &name),
                    Arc::new(DynamicObject::new(&name).within("ns")),
                )
            })
            .collect()
    }

    /// client-go #1377: a relist over a backlog of the same keys must not double the queue's
    /// memory. The listed keys are all queued already, so nothing grows.
    #[test]
    fn relist_over_a_backlog_of_the_same_keys_does_not_grow_the_queue() {
        let mut q = KeyedQueue::new();
        let processing = Processing::default();
        let known = KnownView {
            known: None,
            processing: &processing,
        };
        let first = q.replace(
            listed(1000),
            "1",
            DeltaType::Replaced,
            &known,
            Stamp::now(1),
        );
        let (items, queue) = (q.items.capacity(), q.queue.capacity());
        let again = q.replace(
            listed(1000),
            "2",
            DeltaType::Replaced,
            &known,
            Stamp::now(2),
        );
        assert_eq!((first, again), (1000, 1000));
        assert_eq!(q.items.capacity(), items);
        assert_eq!(q.queue.capacity(), queue);
        // Each key holds both lists' deltas (only deletions collapse), queued once.
        assert!(q.items.values().all(|deltas| deltas.len() == 2));
    }
}
