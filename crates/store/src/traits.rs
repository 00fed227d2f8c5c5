//! The narrow traits of kcache-core: a reflector can write straight into an indexer, and a
//! DeltaFIFO can use it as its known objects.

use std::sync::Arc;

use kcache_core::{Error, KnownObjects, Object, ObjectKey, ReflectorStore};

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
