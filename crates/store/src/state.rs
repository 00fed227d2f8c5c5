//! What the lock protects: the items and every index, always changed together.

use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::sync::Arc;

use ahash::RandomState;
use kcache_core::ObjectKey;

use crate::index::Index;
use crate::items::{Items, Slot};
use crate::values::{IndexValues, Values};
use crate::{Indexers, StoreError};

/// Values computed (outside the lock) for the index functions being added, per key, with the
/// object they were computed from.
pub(crate) type Computed<K> = HashMap<ObjectKey, (Arc<K>, Vec<IndexValues<'static>>), RandomState>;

pub(crate) struct State<K> {
    pub(crate) items: Items<K>,
    /// One per index function, in `indexers` order.
    indices: Vec<Index<K>>,
    /// Swapped (never mutated) when functions are added, so a writer can tell by pointer whether
    /// the values it computed without the lock are still for the current set.
    pub(crate) indexers: Arc<Indexers<K>>,
    hasher: RandomState,
}

impl<K> State<K> {
    pub(crate) fn new(indexers: Arc<Indexers<K>>) -> Self {
        let hasher = RandomState::new();
        State {
            items: Items::new(hasher.clone()),
            indices: (0..indexers.entries.len())
                .map(|_| Index::new(hasher.clone()))
                .collect(),
            indexers,
            hasher,
        }
    }

    /// Adds or replaces the object at `key`, moving it between index sets as `values` (one per
    /// index function) say. Returns the replaced object, for the caller to drop after unlocking.
    pub(crate) fn put(
        &mut self,
        key: ObjectKey,
        obj: Arc<K>,
        values: &[IndexValues<'_>],
    ) -> Option<Arc<K>> {
        debug_assert_eq!(values.len(), self.indices.len());
        // Index sets are keyed by the stored key itself: the same allocation, so comparing keys
        // there is a pointer comparison rather than a string one.
        match self.items.entry(key) {
            (Entry::Occupied(mut e), _) => {
                let key = e.key().clone();
                let slot = e.get_mut();
                for ((index, old), new) in self
                    .indices
                    .iter_mut()
                    .zip(&mut slot.values[..])
                    .zip(values)
                {
                    index.update(&key, old, new, &obj);
                }
                Some(std::mem::replace(&mut slot.obj, obj))
            }
            (Entry::Vacant(e), len) => {
                let stored = self
                    .indices
                    .iter_mut()
                    .zip(values)
                    .map(|(index, new)| index.insert(e.key(), new, &obj))
                    .collect();
                e.insert(Slot {
                    obj,
                    values: stored,
                });
                *len += 1;
                None
            }
        }
    }

    /// Removes the object at `key` from the items and every index.
    pub(crate) fn remove(&mut self, key: &str) -> Option<Slot<K>> {
        let (key, slot) = self.items.remove(key)?;
        for (index, old) in self.indices.iter_mut().zip(&slot.values[..]) {
            index.remove(&key, old);
        }
        Some(slot)
    }

    /// The index called `name`.
    pub(crate) fn index(&self, name: &str) -> Result<&Index<K>, StoreError> {
        self.indexers
            .position(name)
            .map(|i| &self.indices[i])
            .ok_or_else(|| StoreError::IndexNotFound(name.to_string()))
    }

    /// Whether `computed` holds values for exactly the objects stored now.
    pub(crate) fn covered_by(&self, computed: &Computed<K>) -> bool {
        computed.len() == self.items.len()
            && self.items.iter().all(|(k, slot)| {
                computed
                    .get(k)
                    .is_some_and(|(obj, _)| Arc::ptr_eq(obj, &slot.obj))
            })
    }

    /// Installs `all` (the current functions followed by new ones) and indexes every stored object
    /// with the new ones' `computed` values (which [`State::covered_by`] checked).
    pub(crate) fn add_indexes(&mut self, all: Arc<Indexers<K>>, computed: &Computed<K>) {
        let first_new = self.indices.len();
        self.indices
            .extend((first_new..all.entries.len()).map(|_| Index::new(self.hasher.clone())));
        let new_indices = &mut self.indices[first_new..];
        for (key, slot) in self.items.iter_mut() {
            let Some((_, fresh)) = computed.get(key) else {
                continue;
            };
            let mut values: Vec<Values> = std::mem::take(&mut slot.values).into_vec();
            values.extend(
                new_indices
                    .iter_mut()
                    .zip(fresh)
                    .map(|(index, new)| index.insert(key, new, &slot.obj)),
            );
            slot.values = values.into_boxed_slice();
        }
        self.indexers = all;
    }
}
