//! Real mode: client-go's `RealFIFO` rules — every delta its own entry, in arrival order.

use std::collections::VecDeque;
use std::sync::Arc;

use crate::rules::{KnownView, Processing, QueueRules, Stamp};
use crate::{Delta, DeltaObject, DeltaType, Deltas};
use ahash::{AHashMap, AHashSet};
use kcache_core::ObjectKey;

/// One queued delta with its key and arrival time.
struct Entry<K> {
    key: ObjectKey,
    delta: Delta<K>,
    since: Stamp,
}

/// Every delta in arrival order; nothing is merged.
pub(crate) struct InOrderQueue<K> {
    items: VecDeque<Entry<K>>,
}

impl<K> InOrderQueue<K> {
    pub(crate) fn new() -> Self {
        InOrderQueue {
            items: VecDeque::new(),
        }
    }

    fn entry(key: ObjectKey, delta: Delta<K>, since: Stamp) -> Entry<K> {
        Entry { key, delta, since }
    }

    /// Each queued key once, in order of first appearance.
    fn unique_keys(&self) -> impl Iterator<Item = &Entry<K>> {
        let mut seen = AHashSet::new();
        self.items.iter().filter(move |e| seen.insert(&e.key))
    }
}

impl<K: Send + Sync + 'static> QueueRules<K> for InOrderQueue<K> {
    fn push(&mut self, key: ObjectKey, delta: Delta<K>, stamp: Stamp) {
        self.items.push_back(Self::entry(key, delta, stamp));
    }

    fn delete(&mut self, key: ObjectKey, obj: Arc<K>, _known: &KnownView<'_, K>, stamp: Stamp) {
        // RealFIFO queues every deletion: the consumer ignores one of an unknown key.
        self.items
            .push_back(Self::entry(key, Delta::new(DeltaType::Deleted, obj), stamp));
    }

    fn replace(
        &mut self,
        items: Vec<(ObjectKey, Arc<K>)>,
        _replaced: DeltaType,
        known: &KnownView<'_, K>,
        stamp: Stamp,
    ) -> usize {
        let listed: AHashSet<&ObjectKey> = items.iter().map(|(k, _)| k).collect();
        // The last queued state of each queued key (None after a deletion), in first-seen order.
        let mut order = Vec::new();
        let mut last: AHashMap<&ObjectKey, Option<Arc<K>>> = AHashMap::new();
        for e in &self.items {
            if last.insert(&e.key, e.delta.resulting_object()).is_none() {
                order.push(&e.key);
            }
        }
        // Tombstones first: a queued key whose last delta is not a deletion, then a cached key
        // with nothing queued, when the list lacks it.
        let mut vanished: Vec<(ObjectKey, Option<Arc<K>>)> = order
            .iter()
            .filter(|k| !listed.contains(*k))
            .filter_map(|k| Some(((*k).clone(), Some(last.get(*k)?.clone()?))))
            .collect();
        for k in known.keys() {
            if listed.contains(&k) || last.contains_key(&k) {
                continue;
            }
            let obj = known.get(&k);
            vanished.push((k, obj));
        }
        for (k, obj) in vanished {
            self.items
                .push_back(Self::entry(k.clone(), Delta::tombstone(k, obj), stamp));
        }
        for (key, obj) in items {
            self.items.push_back(Self::entry(
                key,
                Delta::new(DeltaType::Replaced, obj),
                stamp,
            ));
        }
        self.items.len()
    }

    fn resync(&mut self, known: &KnownView<'_, K>, stamp: Stamp) {
        if !known.is_present() {
            return;
        }
        let queued: AHashSet<ObjectKey> = self.items.iter().map(|e| e.key.clone()).collect();
        for k in known.keys() {
            if queued.contains(&k) {
                continue;
            }
            if let Some(obj) = known.get(&k) {
                self.items
                    .push_back(Self::entry(k, Delta::new(DeltaType::Sync, obj), stamp));
            }
        }
    }

    fn take(&mut self, processing: &Processing<K>) -> Option<(ObjectKey, Deltas<K>, Stamp)> {
        let i = if processing.is_empty() {
            0
        } else {
            self.items
                .iter()
                .position(|e| !processing.contains_key(&e.key))?
        };
        let e = self.items.remove(i)?;
        Some((e.key, Deltas(vec![e.delta]), e.since))
    }

    fn requeue(&mut self, key: ObjectKey, deltas: Deltas<K>, stamp: Stamp) {
        let at = self
            .items
            .iter()
            .position(|e| e.key == key)
            .unwrap_or(self.items.len());
        for (i, d) in deltas.into_iter().enumerate() {
            self.items
                .insert(at + i, Self::entry(key.clone(), d, stamp));
        }
    }

    fn depth(&self) -> usize {
        self.items.len()
    }

    fn oldest(&self) -> Option<Stamp> {
        self.items.front().map(|e| e.since)
    }

    fn keys(&self) -> Vec<ObjectKey> {
        self.unique_keys().map(|e| e.key.clone()).collect()
    }

    fn deltas_of(&self, key: &str) -> Option<Deltas<K>> {
        let v: Vec<Delta<K>> = self
            .items
            .iter()
            .filter(|e| e.key.as_str() == key)
            .map(|e| e.delta.clone())
            .collect();
        (!v.is_empty()).then_some(Deltas(v))
    }

    fn newest_objects(&self) -> Vec<DeltaObject<K>> {
        let mut newest: AHashMap<&ObjectKey, &DeltaObject<K>> = AHashMap::new();
        for e in &self.items {
            newest.insert(&e.key, &e.delta.object);
        }
        self.unique_keys()
            .filter_map(|e| newest.get(&e.key).map(|o| (*o).clone()))
            .collect()
    }
}
