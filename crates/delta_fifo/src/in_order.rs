//! Real and Atomic modes: client-go's `RealFIFO` rules — every delta its own entry, in arrival
//! order, handed out from the head only; in Atomic mode a relist or resync is one entry.

use std::collections::VecDeque;
use std::sync::Arc;

use ahash::{AHashMap, AHashSet};
use kcache_core::ObjectKey;

use crate::rules::{KnownView, Processing, QueueRules, Stamp, Taken};
use crate::{AtomicEvent, Delta, DeltaObject, DeltaType, Deltas};

/// The ring's capacity kept once it drains (a relist grows it to the list's length).
const IDLE_CAPACITY: usize = 1024;

/// The ring's capacity for `len` entries after a relist's burst: the ring shrinks to half once a
/// quarter is left, as it drains, so it gives its memory back while the consumer's own
/// structures (the cache, a controller's work queue) fill, not after: its 10k entries would
/// otherwise sit beside a full work queue at the end of an initial list (a copy of what is left
/// each time, O(1) per entry).
fn drained_capacity(len: usize, capacity: usize) -> Option<usize> {
    (capacity > IDLE_CAPACITY && len < capacity / 4).then(|| (2 * len).max(IDLE_CAPACITY))
}

/// One queued entry with its arrival time.
enum Entry<K> {
    /// A delta of one key.
    Delta {
        key: ObjectKey,
        delta: Delta<K>,
        since: Stamp,
    },
    /// A whole relist or resync (Atomic mode).
    Atomic { event: AtomicEvent<K>, since: Stamp },
}

impl<K> Entry<K> {
    fn delta(key: ObjectKey, delta: Delta<K>, stamp: Stamp) -> Self {
        Entry::Delta {
            key,
            delta,
            since: stamp,
        }
    }

    /// The key of a delta; `None` for an atomic unit.
    fn key(&self) -> Option<&ObjectKey> {
        match self {
            Entry::Delta { key, .. } => Some(key),
            Entry::Atomic { .. } => None,
        }
    }

    fn since(&self) -> Stamp {
        match self {
            Entry::Delta { since, .. } | Entry::Atomic { since, .. } => *since,
        }
    }
}

/// Every delta in arrival order; nothing is merged.
pub(crate) struct InOrderQueue<K> {
    items: VecDeque<Entry<K>>,
    /// client-go's `AtomicEvents`: `replace` and `resync` queue one [`AtomicEvent`] each.
    atomic: bool,
}

impl<K> InOrderQueue<K> {
    pub(crate) fn new(atomic: bool) -> Self {
        InOrderQueue {
            items: VecDeque::new(),
            atomic,
        }
    }

    /// The queued deltas, with their keys.
    fn deltas(&self) -> impl Iterator<Item = (&ObjectKey, &Delta<K>)> {
        self.items.iter().filter_map(|e| match e {
            Entry::Delta { key, delta, .. } => Some((key, delta)),
            Entry::Atomic { .. } => None,
        })
    }

    /// Each queued key once, in order of first appearance.
    fn unique_keys(&self) -> impl Iterator<Item = &ObjectKey> {
        let mut seen = AHashSet::new();
        self.deltas()
            .map(|(k, _)| k)
            .filter(move |k| seen.insert(*k))
    }

    fn push_atomic(&mut self, event: AtomicEvent<K>, stamp: Stamp) {
        self.items.push_back(Entry::Atomic {
            event,
            since: stamp,
        });
    }
}

impl<K: Send + Sync + 'static> QueueRules<K> for InOrderQueue<K> {
    fn push(&mut self, key: ObjectKey, delta: Delta<K>, stamp: Stamp) {
        self.items.push_back(Entry::Delta {
            key,
            delta,
            since: stamp,
        });
    }

    fn delete(&mut self, key: ObjectKey, obj: Arc<K>, _known: &KnownView<'_, K>, stamp: Stamp) {
        // RealFIFO queues every deletion: the consumer ignores one of an unknown key.
        self.items.push_back(Entry::delta(
            key,
            Delta::new(DeltaType::Deleted, obj),
            stamp,
        ));
    }

    fn replace(
        &mut self,
        items: Vec<(ObjectKey, Arc<K>)>,
        resource_version: &str,
        _replaced: DeltaType,
        known: &KnownView<'_, K>,
        stamp: Stamp,
    ) -> usize {
        if self.atomic {
            // The consumer compares the list with its cache when it applies it.
            self.push_atomic(
                AtomicEvent::ReplacedAll {
                    resource_version: resource_version.to_string(),
                    objects: items,
                },
                stamp,
            );
            return self.items.len();
        }
        // The last queued state of each queued key (None after a deletion), in first-seen order.
        let mut order = Vec::new();
        let mut last: AHashMap<&ObjectKey, Option<Arc<K>>> = AHashMap::new();
        for (key, delta) in self.deltas() {
            if last.insert(key, delta.resulting_object()).is_none() {
                order.push(key);
            }
        }
        // The listed keys, hashed only when something could vanish: an informer's first list
        // meets an empty queue and an empty cache.
        let known_keys = known.keys();
        let listed: AHashSet<&ObjectKey> = if order.is_empty() && known_keys.is_empty() {
            AHashSet::new()
        } else {
            items.iter().map(|(k, _)| k).collect()
        };
        // Tombstones first: a queued key whose last delta is not a deletion, then a cached key
        // with nothing queued, when the list lacks it.
        let mut vanished: Vec<(ObjectKey, Option<Arc<K>>)> = order
            .iter()
            .filter(|k| !listed.contains(*k))
            .filter_map(|k| Some(((*k).clone(), Some(last.get(*k)?.clone()?))))
            .collect();
        for k in known_keys {
            if listed.contains(&k) || last.contains_key(&k) {
                continue;
            }
            let obj = known.get(&k);
            vanished.push((k, obj));
        }
        self.items.reserve(vanished.len() + items.len());
        for (k, obj) in vanished {
            self.items
                .push_back(Entry::delta(k.clone(), Delta::tombstone(k, obj), stamp));
        }
        for (key, obj) in items {
            self.items.push_back(Entry::delta(
                key,
                Delta::new(DeltaType::Replaced, obj),
                stamp,
            ));
        }
        self.items.len()
    }

    fn resync(&mut self, known: &KnownView<'_, K>, stamp: Stamp) {
        if self.atomic {
            self.push_atomic(AtomicEvent::SyncAll, stamp);
            return;
        }
        if !known.is_present() {
            return;
        }
        let queued: AHashSet<ObjectKey> = self.unique_keys().cloned().collect();
        for k in known.keys() {
            if queued.contains(&k) {
                continue;
            }
            if let Some(obj) = known.get(&k) {
                self.items
                    .push_back(Entry::delta(k, Delta::new(DeltaType::Sync, obj), stamp));
            }
        }
    }

    /// Only the head is handed out, so consumers see the deltas in arrival order (client-go's
    /// `PopBatch` closes a batch at a key already in it). A delta whose key is being processed,
    /// or an atomic unit while anything is, waits.
    fn take(&mut self, processing: &Processing<K>) -> Option<Taken<K>> {
        let ready = match self.items.front()? {
            Entry::Delta { key, .. } => !processing.contains_key(key),
            Entry::Atomic { .. } => processing.is_empty(),
        };
        if !ready {
            return None;
        }
        let taken = match self.items.pop_front()? {
            Entry::Delta { key, delta, since } => Taken::Key(key, Deltas(vec![delta]), since),
            Entry::Atomic { event, since } => Taken::Atomic(event, since),
        };
        if let Some(capacity) = drained_capacity(self.items.len(), self.items.capacity()) {
            self.items.shrink_to(capacity);
        }
        Some(taken)
    }

    fn requeue(&mut self, key: ObjectKey, deltas: Deltas<K>, stamp: Stamp) {
        let at = self
            .items
            .iter()
            .position(|e| e.key() == Some(&key))
            .unwrap_or(self.items.len());
        for (i, d) in deltas.into_iter().enumerate() {
            self.items
                .insert(at + i, Entry::delta(key.clone(), d, stamp));
        }
    }

    fn requeue_atomic(&mut self, event: AtomicEvent<K>, stamp: Stamp) {
        // Nothing after it was handed out meanwhile: it goes back to the head.
        self.items.push_front(Entry::Atomic {
            event,
            since: stamp,
        });
    }

    fn depth(&self) -> usize {
        self.items.len()
    }

    fn oldest(&self) -> Option<Stamp> {
        self.items.front().map(Entry::since)
    }

    fn keys(&self) -> Vec<ObjectKey> {
        self.unique_keys().cloned().collect()
    }

    fn deltas_of(&self, key: &str) -> Option<Deltas<K>> {
        let v: Vec<Delta<K>> = self
            .deltas()
            .filter(|(k, _)| k.as_str() == key)
            .map(|(_, d)| d.clone())
            .collect();
        (!v.is_empty()).then_some(Deltas(v))
    }

    fn newest_objects(&self) -> Vec<DeltaObject<K>> {
        let mut newest: AHashMap<&ObjectKey, &DeltaObject<K>> = AHashMap::new();
        for (key, delta) in self.deltas() {
            newest.insert(key, &delta.object);
        }
        self.unique_keys()
            .filter_map(|k| newest.get(k).map(|o| (*o).clone()))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::{drained_capacity, IDLE_CAPACITY};

    #[test]
    fn a_draining_ring_halves_at_a_quarter_down_to_the_idle_capacity() {
        assert_eq!(drained_capacity(2500, 10_000), None);
        assert_eq!(drained_capacity(2499, 10_000), Some(4998));
        assert_eq!(drained_capacity(0, 10_000), Some(IDLE_CAPACITY));
        assert_eq!(drained_capacity(0, IDLE_CAPACITY), None);
        // Draining a relist of 10k one entry at a time copies fewer entries than it holds.
        let (mut capacity, mut copied) = (16_384, 0);
        for len in (0..10_000).rev() {
            if let Some(c) = drained_capacity(len, capacity) {
                copied += len;
                capacity = c;
            }
        }
        assert!(copied < 10_000, "{copied}");
        assert_eq!(capacity, IDLE_CAPACITY);
    }
}
