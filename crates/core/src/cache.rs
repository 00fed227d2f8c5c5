//! The cache behind an informer: what listers and handlers read from it, and what the informer
//! writes into it (client-go's `Indexer` and `Store` interfaces, narrowed to those uses).
//!
//! kcache-store's `Indexer` implements both; an informer and its listers take any cache that
//! does, so a persistent, compact or differently indexed store plugs in without forking them.

use std::sync::Arc;

use crate::{KnownObjects, ObjectKey, StoreError};

/// What a lister or an event handler reads from a cache: client-go's `Indexer` without the
/// writes and without the index-function management.
///
/// It extends [`KnownObjects`] (keys, and an object by key), which is all a DeltaFIFO asks of
/// the cache downstream, so the cache an informer writes is also the FIFO's known objects.
///
/// Index reads name the index; an index the cache does not have is
/// [`StoreError::IndexNotFound`] (client-go: `Index with name X does not exist`).
pub trait CacheReader<K>: KnownObjects<K> {
    /// Every cached object, in no particular order (client-go's `List`).
    fn list(&self) -> Vec<Arc<K>>;

    /// The cached objects `keep` accepts (a lister's label selector). The default filters
    /// [`CacheReader::list`]; a cache that can iterate without copying every handle overrides it.
    fn list_matching(&self, keep: &mut dyn FnMut(&K) -> bool) -> Vec<Arc<K>> {
        let mut all = self.list();
        all.retain(|o| keep(o));
        all
    }

    /// How many objects are cached.
    fn len(&self) -> usize;

    /// Whether nothing is cached.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The objects indexed under `value` in index `index` (client-go's `ByIndex`).
    fn by_index(&self, index: &str, value: &str) -> Result<Vec<Arc<K>>, StoreError>;

    /// The keys indexed under `value` in index `index` (client-go's `IndexKeys`).
    fn index_keys(&self, index: &str, value: &str) -> Result<Vec<ObjectKey>, StoreError>;

    /// Every value of index `index` that has at least one object (client-go's
    /// `ListIndexFuncValues`); empty for an unknown index, as in client-go.
    fn list_index_func_values(&self, index: &str) -> Vec<Arc<str>>;
}

/// What an informer writes into its cache as it pops deltas (client-go's `processDeltas` calls
/// `Add`, `Update` and `Delete` of its `Store`).
///
/// An informer needs the object each write replaced, for `on_update(old, new)`: a write returns
/// it, so a cache looks a key up once per write.
pub trait CacheWriter<K>: Send + Sync {
    /// Adds `obj`, or replaces the object with its key; returns the replaced object. On error
    /// the cache is left as it was.
    fn upsert(&self, obj: Arc<K>) -> Result<Option<Arc<K>>, StoreError>;

    /// Writes `objs` in order, as [`CacheWriter::upsert`] on each, and calls `written` with each
    /// one's result in the same order (a later write of a key sees the earlier one). An informer
    /// hands over everything it popped at once; a cache may write them under one lock hold. The
    /// default upserts them one by one.
    fn upsert_batch(
        &self,
        objs: &[&Arc<K>],
        written: &mut dyn FnMut(Result<Option<Arc<K>>, StoreError>),
    ) {
        for obj in objs {
            written(self.upsert(Arc::clone(obj)));
        }
    }

    /// A relist applied as one write (client-go's `Store.Replace`, which an informer on an
    /// atomic FIFO calls for a `ReplacedAll`): afterwards the cache holds `objs` and none of the
    /// `stale` keys; other cached objects stay. `written` gets each object's result in order,
    /// as in [`CacheWriter::upsert_batch`] (an object whose write fails is not written and its
    /// key keeps what it had). The informer passes as `stale` every cached key the list lacks.
    ///
    /// A cache that can should override it so that no reader ever sees part of the relist
    /// (kcache-store's `Indexer` builds the new content beside the old and swaps it in). The
    /// default is not atomic: it deletes the stale keys, then upserts `objs` as one batch. An
    /// `Err` means a stale key could not be deleted; nothing after it was written.
    fn replace_all(
        &self,
        objs: &[&Arc<K>],
        stale: &[ObjectKey],
        resource_version: &str,
        written: &mut dyn FnMut(Result<Option<Arc<K>>, StoreError>),
    ) -> Result<(), StoreError> {
        let _ = resource_version;
        for key in stale {
            self.delete_by_key(key.as_str())?;
        }
        self.upsert_batch(objs, written);
        Ok(())
    }

    /// Removes the object with `obj`'s key (as the cache computes keys) and returns it.
    fn delete(&self, obj: &K) -> Result<Option<Arc<K>>, StoreError>;

    /// Removes the object stored under `key` and returns it: how a tombstone, which carries the
    /// key its object was stored under, is deleted.
    fn delete_by_key(&self, key: &str) -> Result<Option<Arc<K>>, StoreError>;
}

impl<K, T: CacheReader<K> + ?Sized> CacheReader<K> for Arc<T> {
    fn list(&self) -> Vec<Arc<K>> {
        (**self).list()
    }
    fn list_matching(&self, keep: &mut dyn FnMut(&K) -> bool) -> Vec<Arc<K>> {
        (**self).list_matching(keep)
    }
    fn len(&self) -> usize {
        (**self).len()
    }
    fn is_empty(&self) -> bool {
        (**self).is_empty()
    }
    fn by_index(&self, index: &str, value: &str) -> Result<Vec<Arc<K>>, StoreError> {
        (**self).by_index(index, value)
    }
    fn index_keys(&self, index: &str, value: &str) -> Result<Vec<ObjectKey>, StoreError> {
        (**self).index_keys(index, value)
    }
    fn list_index_func_values(&self, index: &str) -> Vec<Arc<str>> {
        (**self).list_index_func_values(index)
    }
}

impl<K, T: CacheWriter<K> + ?Sized> CacheWriter<K> for Arc<T> {
    fn upsert(&self, obj: Arc<K>) -> Result<Option<Arc<K>>, StoreError> {
        (**self).upsert(obj)
    }
    fn upsert_batch(
        &self,
        objs: &[&Arc<K>],
        written: &mut dyn FnMut(Result<Option<Arc<K>>, StoreError>),
    ) {
        (**self).upsert_batch(objs, written)
    }
    fn replace_all(
        &self,
        objs: &[&Arc<K>],
        stale: &[ObjectKey],
        resource_version: &str,
        written: &mut dyn FnMut(Result<Option<Arc<K>>, StoreError>),
    ) -> Result<(), StoreError> {
        (**self).replace_all(objs, stale, resource_version, written)
    }
    fn delete(&self, obj: &K) -> Result<Option<Arc<K>>, StoreError> {
        (**self).delete(obj)
    }
    fn delete_by_key(&self, key: &str) -> Result<Option<Arc<K>>, StoreError> {
        (**self).delete_by_key(key)
    }
}
