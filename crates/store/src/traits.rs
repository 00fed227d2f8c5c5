//! The narrow traits of kcache-core: an informer reads and writes an indexer as its cache
//! (`CacheReader`, `CacheWriter`), a reflector can write straight into one (`ReflectorStore`),
//! and a DeltaFIFO uses one as its known objects (`KnownObjects`).

use std::sync::Arc;

use kcache_core::{
    CacheReader, CacheWriter, Error, KnownObjects, Object, ObjectKey, ReflectorStore, StoreError,
};

use crate::Indexer;

impl<K: Object> ReflectorStore<K> for Indexer<K> {
    fn add(&self, obj: Arc<K>) -> Result<(), Error> {
        Ok(Indexer::add(self, obj)?)
    }
    fn update(&self, obj: Arc<K>) -> Result<(), Error> {
        Ok(Indexer::update(self, obj)?)
    }
    fn delete(&self, obj: Arc<K>) -> Result<(), Error> {
        Ok(Indexer::delete(self, &obj)?)
    }
    fn replace(&self, items: Vec<Arc<K>>, resource_version: &str) -> Result<(), Error> {
        Ok(Indexer::replace(self, items, resource_version)?)
    }
    fn resync(&self) -> Result<(), Error> {
        Ok(Indexer::resync(self)?)
    }
}

impl<K: Object> KnownObjects<K> for Indexer<K> {
    fn list_keys(&self) -> Vec<ObjectKey> {
        Indexer::list_keys(self)
    }
    fn get_by_key(&self, key: &str) -> Option<Arc<K>> {
        Indexer::get_by_key(self, key)
    }
}

impl<K: Object> CacheReader<K> for Indexer<K> {
    fn list(&self) -> Vec<Arc<K>> {
        Indexer::list(self)
    }
    /// Filters a [`crate::Snapshot`]: only the kept objects' handles are copied.
    fn list_matching(&self, keep: &mut dyn FnMut(&K) -> bool) -> Vec<Arc<K>> {
        self.snapshot()
            .objects()
            .filter(|o| keep(o))
            .cloned()
            .collect()
    }
    fn len(&self) -> usize {
        Indexer::len(self)
    }
    fn by_index(&self, index: &str, value: &str) -> Result<Vec<Arc<K>>, StoreError> {
        Indexer::by_index(self, index, value)
    }
    fn index_keys(&self, index: &str, value: &str) -> Result<Vec<ObjectKey>, StoreError> {
        Indexer::index_keys(self, index, value)
    }
    fn list_index_func_values(&self, index: &str) -> Vec<Arc<str>> {
        Indexer::list_index_func_values(self, index)
    }
}

impl<K: Object> CacheWriter<K> for Indexer<K> {
    fn upsert(&self, obj: Arc<K>) -> Result<Option<Arc<K>>, StoreError> {
        Indexer::upsert(self, obj)
    }
    /// One [`Indexer::upsert_all`] (one lock hold; all or nothing); if a key or index function
    /// fails on one of them, they are written one at a time, so only the failing ones fail.
    fn upsert_batch(
        &self,
        objs: &[&Arc<K>],
        written: &mut dyn FnMut(Result<Option<Arc<K>>, StoreError>),
    ) {
        match self.upsert_all(objs) {
            Ok(replaced) => replaced.into_iter().for_each(|old| written(Ok(old))),
            Err(_) => {
                for obj in objs {
                    written(Indexer::upsert(self, Arc::clone(obj)));
                }
            }
        }
    }
    /// [`Indexer::replace_all`]: one swap, no reader sees part of the relist.
    fn replace_all(
        &self,
        objs: &[&Arc<K>],
        stale: &[ObjectKey],
        resource_version: &str,
        written: &mut dyn FnMut(Result<Option<Arc<K>>, StoreError>),
    ) -> Result<(), StoreError> {
        let _ = resource_version;
        Indexer::replace_all(self, objs, stale)
            .into_iter()
            .for_each(written);
        Ok(())
    }
    fn delete(&self, obj: &K) -> Result<Option<Arc<K>>, StoreError> {
        let key = self.key_of(obj)?;
        Ok(self.delete_by_key(key.as_str()))
    }
    fn delete_by_key(&self, key: &str) -> Result<Option<Arc<K>>, StoreError> {
        Ok(Indexer::delete_by_key(self, key))
    }
}
