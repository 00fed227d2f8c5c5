//! The thread-safe store with indexes: client-go's `cache.Indexer` over a `ThreadSafeStore`.
//!
//! How it is built:
//! - Index and key functions never run under the write lock: a writer computes the key first,
//!   then the index values under the upgradable read lock (readers carry on; writers queue, as
//!   they would for the write lock, and `add_indexers` cannot swap the functions meanwhile), then
//!   upgrades it to the write lock only to move map entries. One lock acquisition per write.
//! - Index sets hold the stored key itself and compare keys by address, so a set probe — and a
//!   set's growth — never reads a key's string; the item map keeps each key's hash, so a write
//!   hashes its key once and growing a shard never re-reads the keys.
//! - Each index set has a small id, and a stored object keeps the ids of its sets (inline for up
//!   to two indexes), not the value strings: an update reaches its sets without hashing a value
//!   or touching a reference count, and compares its new values with the sets' own strings.
//! - Long readers never hold writers back (client-go #130767): `snapshot()` is an O(1) immutable
//!   view (the item map is 256 copy-on-write shards); `list()` builds its `Vec` from a snapshot
//!   after the lock is released. Index reads hold the read lock only while copying out their
//!   result.
//! - `upsert_all(objs)` writes a popped FIFO entry's objects in turn — every object with its own
//!   index maintenance, in one lock hold and one look-up per key (index handles of the writes in
//!   between, which nobody can read, are not touched) — and returns what each write replaced; a
//!   key or index function error rejects the whole call.

use std::borrow::Borrow;
use std::collections::HashMap;
use std::sync::Arc;

use kcache_core::{DeletedFinalStateUnknown, Object, ObjectKey};
use parking_lot::{RwLock, RwLockUpgradableReadGuard, RwLockWriteGuard};

use crate::index::Member;
use crate::items::Snapshot;
use crate::state::{Computed, KeyArg, State};
use crate::{IndexValues, Indexers, KeyFunc, StoreError};

/// A thread-safe, indexed object cache (client-go's `cache.Indexer`, built on its
/// `ThreadSafeStore`): objects by key, plus named indexes from values to objects.
///
/// Objects are shared `Arc<K>`s. Reads run concurrently with each other; a write holds the write
/// lock only to move hash-map entries: key functions run before any lock, index functions under
/// the upgradable read lock (which readers share; writers take it one at a time), and
/// replaced objects are dropped after it releases it.
///
/// What reads cost:
/// - `get`, `get_by_key`: read lock for one hash lookup; no allocation.
/// - `snapshot`: read lock for one reference-count increment; no allocation. The snapshot is then
///   read without any lock for as long as wanted; the writes that follow each copy 1/256 of the
///   items at most once (only while a snapshot is alive).
/// - `list`, `list_keys`: a snapshot, then the `Vec` is built without the lock.
/// - `by_index`, one-value `index`: read lock while the result (one handle per match) is copied
///   out. The first read of a value after its set or one of its objects changed finds each
///   member in the item map by the key's stored hash and address (never hashing or comparing
///   the key's string) and keeps those handles in the set; later reads copy them. A write that
///   drops kept handles releases them after unlocking. Multi-value `index` always looks up;
///   `index_keys` copies keys only.
pub struct Indexer<K> {
    state: RwLock<State<K>>,
    key_func: KeyFunc<K>,
}

impl<K: Object> Default for Indexer<K> {
    fn default() -> Self {
        Self::new(Indexers::new())
    }
}

impl<K: Object> Indexer<K> {
    /// A store keyed by `namespace/name` with these indexes (client-go's
    /// `NewIndexer(MetaNamespaceKeyFunc, indexers)`).
    pub fn new(indexers: Indexers<K>) -> Self {
        Self::with_key_func(KeyFunc::MetaNamespace, indexers)
    }

    /// A store with a custom key function (client-go's `NewIndexer(keyFunc, indexers)`).
    pub fn with_key_func(key_func: KeyFunc<K>, indexers: Indexers<K>) -> Self {
        Indexer {
            state: RwLock::new(State::new(Arc::new(indexers))),
            key_func,
        }
    }

    /// The key this store files `obj` under.
    pub fn key_of(&self, obj: &K) -> Result<ObjectKey, StoreError> {
        self.key_func.key_of(obj)
    }

    /// Adds `obj`, or replaces the object with its key.
    ///
    /// If an index function fails, nothing changes and the error names the index and the key.
    pub fn add(&self, obj: Arc<K>) -> Result<(), StoreError> {
        self.upsert(obj).map(drop)
    }

    /// Same as [`Indexer::add`] (client-go's `Update`).
    pub fn update(&self, obj: Arc<K>) -> Result<(), StoreError> {
        self.upsert(obj).map(drop)
    }

    /// Adds or replaces `obj` and returns the object it replaced: one key computation and one
    /// look-up where `get` followed by `add`/`update` takes two (an informer needs the old
    /// object for `on_update(old, new)`).
    pub fn upsert(&self, obj: Arc<K>) -> Result<Option<Arc<K>>, StoreError> {
        match &self.key_func {
            // The default key is looked up from the stack: an update allocates no key.
            KeyFunc::MetaNamespace => {
                ObjectKey::with_str(obj.namespace().unwrap_or(""), obj.name(), |key| {
                    self.put(KeyArg::Str(key), &obj)
                })
            }
            KeyFunc::Custom(_) => {
                let key = self.key_of(&obj)?;
                self.put(KeyArg::Owned(&key), &obj)
            }
        }
    }

    /// Adds or replaces each object in turn and returns what each write replaced: the same
    /// result as [`Indexer::upsert`] on each, but consecutive objects with one key — the deltas
    /// of a popped FIFO entry — are written with one look-up, each with its own index
    /// maintenance, and all of them under one write-lock hold. Key and index functions run for
    /// every object before the write lock is taken; if one fails, nothing changes.
    pub fn upsert_all<O: Borrow<Arc<K>>>(
        &self,
        objs: &[O],
    ) -> Result<Vec<Option<Arc<K>>>, StoreError> {
        let obj = |i: usize| -> &Arc<K> { objs[i].borrow() };
        // Runs of one key: (key, first object). Usually one.
        let mut runs: Vec<(ObjectKey, usize)> = Vec::with_capacity(1);
        for i in 0..objs.len() {
            // The default key function's keys are compared without building them.
            if i > 0 && matches!(self.key_func, KeyFunc::MetaNamespace) {
                let (prev, this) = (obj(i - 1), obj(i));
                if prev.name() == this.name() && prev.namespace() == this.namespace() {
                    continue;
                }
            }
            let key = self.key_of(obj(i))?;
            if runs.last().is_none_or(|(last, _)| *last != key) {
                runs.push((key, i));
            }
        }
        self.write(
            |st| {
                let indexers = &st.indexers;
                // Every object's values in one buffer, `indexers.len()` per object.
                let mut values = Vec::with_capacity(objs.len() * indexers.len());
                for (r, (key, _)) in runs.iter().enumerate() {
                    let range = run_range(&runs, r, objs.len());
                    let mut old = st.replaced(key.as_str());
                    for i in range {
                        indexers.compute_into(key.as_str(), old, obj(i), &mut values)?;
                        old = Some(obj(i));
                    }
                }
                Ok(values)
            },
            |st, values| {
                let mut replaced = Vec::with_capacity(objs.len());
                let per_object = st.indexers.len();
                for (r, (key, _)) in runs.iter().enumerate() {
                    let range = run_range(&runs, r, objs.len());
                    let run_values = &values[range.start * per_object..range.end * per_object];
                    st.put_run(KeyArg::Owned(key), &objs[range], run_values, |old| {
                        replaced.push(old)
                    });
                }
                replaced
            },
        )
    }

    fn put(&self, key: KeyArg<'_>, obj: &Arc<K>) -> Result<Option<Arc<K>>, StoreError> {
        self.write(
            |st| st.compute(key.as_str(), obj),
            |st, values| st.put(key, obj.clone(), &values),
        )
    }

    /// A write: `compute` runs the index functions under the upgradable read lock (readers carry
    /// on; other writers and `add_indexers` wait, as they would for the write lock), then `apply`
    /// changes the state under the write lock the upgrade turns it into. One lock acquisition,
    /// and neither the index functions nor the objects `compute` saw can change in between.
    fn write<T, R>(
        &self,
        compute: impl FnOnce(&State<K>) -> Result<T, StoreError>,
        apply: impl FnOnce(&mut State<K>, T) -> R,
    ) -> Result<R, StoreError> {
        let st = self.state.upgradable_read();
        let computed = compute(&st)?;
        let mut st = RwLockUpgradableReadGuard::upgrade(st);
        let result = apply(&mut st, computed);
        unlock(st);
        Ok(result)
    }

    /// Removes the object with `obj`'s key, if present.
    pub fn delete(&self, obj: &K) -> Result<(), StoreError> {
        let key = self.key_of(obj)?;
        self.delete_by_key(key.as_str());
        Ok(())
    }

    /// Removes the object stored under `key` and returns it (client-go's
    /// `ThreadSafeStore.Delete(key)`).
    pub fn delete_by_key(&self, key: &str) -> Option<Arc<K>> {
        let mut st = self.state.write();
        let slot = st.remove(key);
        unlock(st);
        slot.map(|s| s.obj)
    }

    /// Removes the object a tombstone names, by the tombstone's key
    /// ([`crate::deletion_handling_meta_namespace_key_func`]).
    pub fn delete_tombstone(&self, tombstone: &DeletedFinalStateUnknown<K>) -> Option<Arc<K>> {
        self.delete_by_key(crate::deletion_handling_meta_namespace_key_func(tombstone).as_str())
    }

    /// The stored object with `obj`'s key.
    pub fn get(&self, obj: &K) -> Result<Option<Arc<K>>, StoreError> {
        let key = self.key_of(obj)?;
        Ok(self.get_by_key(key.as_str()))
    }

    /// The stored object with this key.
    pub fn get_by_key(&self, key: &str) -> Option<Arc<K>> {
        self.state.read().items.get(key).map(|s| s.obj.clone())
    }

    /// How many objects are stored.
    pub fn len(&self) -> usize {
        self.state.read().items.len()
    }

    /// Whether the store is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// An immutable view of every object now stored, for long iterations that must not hold
    /// writers back (client-go #130767).
    pub fn snapshot(&self) -> Snapshot<K> {
        Snapshot::new(self.state.read().items.clone())
    }

    /// Every stored object, in no particular order.
    pub fn list(&self) -> Vec<Arc<K>> {
        self.snapshot().objects().cloned().collect()
    }

    /// Every stored key, in no particular order.
    pub fn list_keys(&self) -> Vec<ObjectKey> {
        self.snapshot().iter().map(|(k, _)| k.clone()).collect()
    }

    /// Replaces the whole content with `items` and rebuilds every index (a relist). A later item
    /// with the same key as an earlier one wins. If a key or index function fails, nothing
    /// changes. The new content is built under the upgradable read lock (readers carry on); the
    /// write lock is held only to swap it in, and the old content is freed after. An item whose
    /// [`Indexers::with_reuse`] check holds against the object it replaces keeps its values.
    ///
    /// `resource_version` is the list's; a plain store has no use for it.
    pub fn replace(&self, items: Vec<Arc<K>>, resource_version: &str) -> Result<(), StoreError> {
        let _ = resource_version;
        let keyed = items
            .into_iter()
            .map(|obj| Ok((self.key_of(&obj)?, obj)))
            .collect::<Result<Vec<_>, StoreError>>()?;
        let previous = self.write(
            |st| {
                let mut fresh = State::new(st.indexers.clone());
                for (key, obj) in &keyed {
                    // A later item with the key of an earlier one replaces that one.
                    let before = if fresh.items.get(key.as_str()).is_some() {
                        &fresh
                    } else {
                        st
                    };
                    let values = before.values_for(key.as_str(), obj)?;
                    fresh.put(KeyArg::Owned(key), obj.clone(), &values);
                }
                Ok(fresh)
            },
            std::mem::replace,
        )?;
        drop(previous);
        Ok(())
    }

    /// A relist applied as one swap: afterwards the store holds `objs` and none of the `stale`
    /// keys; other stored objects stay. Returns, per object in order, what it replaced or why
    /// it was not written (a failing key or index function skips only that object, whose key
    /// keeps what it had). The new content is built beside the old under the upgradable read
    /// lock (readers carry on and see the old content); the write lock is held only to swap it
    /// in, so no reader ever sees part of the relist. Kept objects have their index values
    /// computed again (or kept, by a [`Indexers::with_reuse`] check); one whose index function
    /// now fails is dropped. A relisted object whose check holds against the stored one keeps
    /// its values too, so an unchanged relist costs no such index function.
    pub fn replace_all(
        &self,
        objs: &[&Arc<K>],
        stale: &[ObjectKey],
    ) -> Vec<Result<Option<Arc<K>>, StoreError>> {
        let keys: Vec<Result<ObjectKey, StoreError>> =
            objs.iter().map(|obj| self.key_of(obj)).collect();
        let st = self.state.upgradable_read();
        let mut fresh = State::new(st.indexers.clone());
        let mut results = Vec::with_capacity(objs.len());
        for (key, obj) in keys.iter().zip(objs) {
            let written = key.clone().and_then(|key| {
                // A later item with the key of an earlier one replaces that one.
                let before = if fresh.items.get(key.as_str()).is_some() {
                    &fresh
                } else {
                    &*st
                };
                let values = before.values_for(key.as_str(), obj)?;
                let earlier = fresh.put(KeyArg::Owned(&key), Arc::clone(obj), &values);
                Ok(earlier.or_else(|| st.items.get(key.as_str()).map(|s| s.obj.clone())))
            });
            results.push(written);
        }
        let stale: ahash::AHashSet<&str> = stale.iter().map(ObjectKey::as_str).collect();
        for (key, slot) in st.items.iter() {
            if stale.contains(key.as_str()) || fresh.items.get(key.as_str()).is_some() {
                continue;
            }
            if let Ok(values) = st.values_for(key.as_str(), &slot.obj) {
                fresh.put(KeyArg::Owned(key), slot.obj.clone(), &values);
            }
        }
        let mut st = RwLockUpgradableReadGuard::upgrade(st);
        let previous = std::mem::replace(&mut *st, fresh);
        unlock(st);
        drop(previous);
        results
    }

    /// Nothing to do for a plain store (client-go's `Resync`).
    pub fn resync(&self) -> Result<(), StoreError> {
        Ok(())
    }

    /// Adds index functions and indexes every stored object with them at once (allowed on a
    /// non-empty store, as in client-go v0.30+). A name that exists already is a conflict; an index
    /// function failing on a stored object rejects the whole call. The functions run without the
    /// lock; the lock is held to check that no write slipped in meanwhile (otherwise only the
    /// changed objects are computed again) and to fill the new indexes.
    pub fn add_indexers(&self, new: Indexers<K>) -> Result<(), StoreError> {
        let mut computed: Computed<K> = HashMap::default();
        loop {
            let (items, current) = {
                let st = self.state.read();
                (Snapshot::new(st.items.clone()), st.indexers.clone())
            };
            let conflicts = new.conflicts_with(&current);
            if !conflicts.is_empty() {
                return Err(StoreError::IndexerConflict(conflicts));
            }
            let mut next: Computed<K> =
                HashMap::with_capacity_and_hasher(items.len(), Default::default());
            for (key, obj) in items.iter() {
                let entry = match computed.remove(key) {
                    Some(done) if Arc::ptr_eq(&done.0, obj) => done,
                    _ => {
                        let values = new.compute(key.as_str(), None, obj)?;
                        (
                            obj.clone(),
                            values.into_iter().map(IndexValues::into_owned).collect(),
                        )
                    }
                };
                next.insert(key.clone(), entry);
            }
            computed = next;
            drop(items);
            let mut st = self.state.write();
            if Arc::ptr_eq(&st.indexers, &current) && st.covered_by(&computed) {
                st.add_indexes(Arc::new(current.extended(&new)), &computed);
                return Ok(());
            }
        }
    }

    /// The index functions (client-go's `GetIndexers`).
    pub fn get_indexers(&self) -> Indexers<K> {
        (*self.state.read().indexers).clone()
    }

    /// The objects indexed under `value` in index `name` (client-go's `ByIndex`).
    pub fn by_index(&self, name: &str, value: &str) -> Result<Vec<Arc<K>>, StoreError> {
        self.state.read().by_index(name, value)
    }

    /// The keys indexed under `value` in index `name`, sorted (client-go's `IndexKeys`).
    pub fn index_keys(&self, name: &str, value: &str) -> Result<Vec<ObjectKey>, StoreError> {
        let mut keys: Vec<ObjectKey> = {
            let st = self.state.read();
            let index = st.index(name)?;
            index
                .members(value)
                .map(|m| m.iter().map(|m| m.key.clone()).collect())
                .unwrap_or_default()
        };
        keys.sort_unstable();
        Ok(keys)
    }

    /// The objects that share any of `obj`'s values in index `name`, each once (client-go's
    /// `Index`). The index function runs on `obj` before the lock is taken.
    pub fn index(&self, name: &str, obj: &K) -> Result<Vec<Arc<K>>, StoreError> {
        let indexers = self.state.read().indexers.clone();
        let pos = indexers
            .position(name)
            .ok_or_else(|| StoreError::IndexNotFound(name.to_string()))?;
        let func = &indexers.entries[pos].func;
        let values = func(obj).map_err(|e| StoreError::IndexFunc {
            index: name.to_string(),
            key: self.key_of(obj).map(|k| k.to_string()).unwrap_or_default(),
            message: e.to_string(),
        })?;
        let st = self.state.read();
        if let (1, Some(value)) = (values.len(), values.iter().next()) {
            return st.by_index(name, value);
        }
        let index = st.index(name)?;
        // By key address: one object is one stored key in every set.
        let mut union: HashMap<*const u8, &Member, ahash::RandomState> = HashMap::default();
        for members in values.iter().filter_map(|v| index.members(v)) {
            union.extend(members.iter().map(|m| (m.key.as_str().as_ptr(), m)));
        }
        Ok(union
            .into_values()
            .filter_map(|m| st.object_of(m))
            .collect())
    }

    /// Every value of index `name` that has at least one object (client-go's
    /// `ListIndexFuncValues`); empty for an unknown index, as in client-go.
    pub fn list_index_func_values(&self, name: &str) -> Vec<Arc<str>> {
        let st = self.state.read();
        st.index(name)
            .map(|index| index.values().cloned().collect())
            .unwrap_or_default()
    }
}

/// Releases the write lock, then the kept objects the write dropped: their reference counts are
/// not released under the lock.
fn unlock<K>(mut st: RwLockWriteGuard<'_, State<K>>) {
    let stale = st.take_stale();
    drop(st);
    drop(stale);
}

/// The objects of run `r`: from its start to the next run's (or the end).
fn run_range(runs: &[(ObjectKey, usize)], r: usize, len: usize) -> std::ops::Range<usize> {
    runs[r].1..runs.get(r + 1).map_or(len, |next| next.1)
}
