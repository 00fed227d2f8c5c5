//! What the lock protects: the items and every index, always changed together.

use std::borrow::Borrow;
use std::collections::HashMap;
use std::sync::Arc;

use ahash::RandomState;
use kcache_core::ObjectKey;

use crate::index::{Index, Member, Objects};
use crate::items::{Items, Slot};
use crate::values::IndexValues;
use crate::{Indexers, StoreError};

/// Values computed (outside the lock) for the index functions being added, per key, with the
/// object they were computed from.
pub(crate) type Computed<K> = HashMap<ObjectKey, (Arc<K>, Vec<IndexValues<'static>>), RandomState>;

/// The key a write goes under: a look-up needs only the string; a new entry needs an owned
/// key, which an `Owned` one provides without another allocation.
#[derive(Clone, Copy)]
pub(crate) enum KeyArg<'a> {
    Str(&'a str),
    Owned(&'a ObjectKey),
}

impl KeyArg<'_> {
    pub(crate) fn as_str(&self) -> &str {
        match self {
            KeyArg::Str(s) => s,
            KeyArg::Owned(k) => k.as_str(),
        }
    }

    fn to_key(self) -> ObjectKey {
        match self {
            KeyArg::Str(s) => ObjectKey::from(s),
            KeyArg::Owned(k) => k.clone(),
        }
    }
}

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

    /// The object a write at `key` replaces, where an index function needs it to tell whether
    /// it can keep its values ([`Indexers::with_reuse`]); `None` when none does (one look-up
    /// saved).
    pub(crate) fn replaced(&self, key: &str) -> Option<&K> {
        if !self.indexers.reuses() {
            return None;
        }
        self.items.get(key).map(|slot| &*slot.obj)
    }

    /// The values (one per index function) for `obj` written at `key`: [`IndexValues::kept`]
    /// where a [`Indexers::with_reuse`] check holds against the object it replaces.
    pub(crate) fn compute<'a>(
        &self,
        key: &str,
        obj: &'a K,
    ) -> Result<Vec<IndexValues<'a>>, StoreError> {
        self.indexers.compute(key, self.replaced(key), obj)
    }

    /// [`State::compute`] with kept values read back from the replaced object's sets: what a
    /// relist puts in the new state it builds beside this one, where there is no stored object
    /// to keep values from.
    pub(crate) fn values_for<'a>(
        &self,
        key: &str,
        obj: &'a K,
    ) -> Result<Vec<IndexValues<'a>>, StoreError> {
        let mut values = self.compute(key, obj)?;
        if let Some(slot) = self.items.get(key) {
            for ((value, index), stored) in
                values.iter_mut().zip(&self.indices).zip(&slot.values[..])
            {
                if value.is_kept() {
                    *value = index.values_of(stored);
                }
            }
        }
        Ok(values)
    }

    /// Adds or replaces the object at `key`, moving it between index sets as `values` (one per
    /// index function) say. Returns the replaced object, for the caller to drop after unlocking.
    pub(crate) fn put(
        &mut self,
        key: KeyArg<'_>,
        obj: Arc<K>,
        values: &[IndexValues<'_>],
    ) -> Option<Arc<K>> {
        let mut replaced = None;
        self.put_run(key, &[obj], values, |old| replaced = old);
        replaced
    }

    /// Writes `objs` (all filed under `key`) in turn with one look-up, each moved between index
    /// sets as its values say (`values` holds one per index function for each object, in
    /// order); `replaced` gets what each write replaced, in order.
    pub(crate) fn put_run<O: Borrow<Arc<K>>>(
        &mut self,
        key: KeyArg<'_>,
        objs: &[O],
        values: &[IndexValues<'_>],
        mut replaced: impl FnMut(Option<Arc<K>>),
    ) {
        let per_object = self.indices.len();
        debug_assert_eq!(values.len(), objs.len() * per_object);
        let values_of = |i: usize| &values[i * per_object..(i + 1) * per_object];
        let Some(first) = objs.first().map(Borrow::borrow) else {
            return;
        };
        let indices = &mut self.indices;
        let found = self.items.upsert_slot(
            key.as_str(),
            || key.to_key(),
            |key, hash| {
                let member = Member::new(key.clone(), hash);
                Slot {
                    obj: Arc::clone(first),
                    values: indices
                        .iter_mut()
                        .zip(values_of(0))
                        .map(|(index, new)| index.insert(&member, new))
                        .collect(),
                }
            },
        );
        let updates_from = if found.inserted {
            replaced(None);
            1
        } else {
            0
        };
        for (i, obj) in objs.iter().enumerate().skip(updates_from) {
            for ((index, old), new) in self
                .indices
                .iter_mut()
                .zip(&mut found.slot.values[..])
                .zip(values_of(i))
            {
                index.update(found.key, found.hash, old, new);
            }
            replaced(Some(std::mem::replace(
                &mut found.slot.obj,
                Arc::clone(obj.borrow()),
            )));
        }
    }

    /// Removes the object at `key` from the items and every index.
    pub(crate) fn remove(&mut self, key: &str) -> Option<Slot<K>> {
        let (member, slot) = self.items.remove(key)?;
        for (index, old) in self.indices.iter_mut().zip(&slot.values[..]) {
            index.remove(&member, old);
        }
        Some(slot)
    }

    /// The object of an index set's member.
    pub(crate) fn object_of(&self, member: &Member) -> Option<Arc<K>> {
        self.items.member_slot(member).map(|slot| slot.obj.clone())
    }

    /// The objects indexed under `value` in index `name` (see [`Index::objects`]).
    pub(crate) fn by_index(&self, name: &str, value: &str) -> Result<Vec<Arc<K>>, StoreError> {
        Ok(self
            .index(name)?
            .objects(value, |m| self.object_of(m))
            .map(<[_]>::to_vec)
            .unwrap_or_default())
    }

    /// The objects the indexes kept for reads and the writes since the last call dropped, for
    /// the writer to release once it has unlocked.
    pub(crate) fn take_stale(&mut self) -> Vec<Objects<K>> {
        self.indices
            .iter_mut()
            .flat_map(Index::take_stale)
            .collect()
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
        for (key, hash, slot) in self.items.iter_mut() {
            let Some((_, fresh)) = computed.get(key) else {
                continue;
            };
            let member = Member::new(key.clone(), hash);
            slot.values.extend(
                new_indices
                    .iter_mut()
                    .zip(fresh)
                    .map(|(index, new)| index.insert(&member, new)),
            );
        }
        self.indexers = all;
    }
}
