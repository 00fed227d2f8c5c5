//! The reflector's view of the FIFO: every write passes through, and until the informer has
//! synced, each one wakes `wait_for_cache_sync` waiters (a first list with no items makes the
//! informer synced without a single pop).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use kcache_core::{Error, ObjectKey, ReflectorStore};
use kcache_delta_fifo::Queue;

use crate::sync_signal::SyncSignal;

pub(crate) struct NotifyingStore<Q> {
    fifo: Arc<Q>,
    signal: Arc<SyncSignal>,
    /// Synced once is synced for good: after that, writes skip the check.
    synced: AtomicBool,
}

impl<Q> NotifyingStore<Q> {
    pub(crate) fn new(fifo: Arc<Q>, signal: Arc<SyncSignal>) -> Self {
        NotifyingStore {
            fifo,
            signal,
            synced: AtomicBool::new(false),
        }
    }

    fn after<K>(&self, r: Result<(), Error>) -> Result<(), Error>
    where
        Q: Queue<K>,
    {
        if !self.synced.load(Ordering::Acquire) && self.fifo.has_synced() {
            self.synced.store(true, Ordering::Release);
            self.signal.notify();
        }
        r
    }
}

impl<K, Q: Queue<K>> ReflectorStore<K> for NotifyingStore<Q> {
    fn add(&self, obj: Arc<K>) -> Result<(), Error> {
        let r = ReflectorStore::add(&*self.fifo, obj);
        self.after::<K>(r)
    }
    fn update(&self, obj: Arc<K>) -> Result<(), Error> {
        let r = ReflectorStore::update(&*self.fifo, obj);
        self.after::<K>(r)
    }
    fn delete(&self, obj: Arc<K>) -> Result<(), Error> {
        let r = ReflectorStore::delete(&*self.fifo, obj);
        self.after::<K>(r)
    }
    fn replace(&self, items: Vec<Arc<K>>, resource_version: &str) -> Result<(), Error> {
        let r = ReflectorStore::replace(&*self.fifo, items, resource_version);
        self.after::<K>(r)
    }
    fn replace_with_keys(
        &self,
        items: Vec<(ObjectKey, Arc<K>)>,
        resource_version: &str,
    ) -> Result<(), Error> {
        let r = ReflectorStore::replace_with_keys(&*self.fifo, items, resource_version);
        self.after::<K>(r)
    }
    fn resync(&self) -> Result<(), Error> {
        ReflectorStore::resync(&*self.fifo)
    }
    fn bookmark(&self, resource_version: &str) {
        ReflectorStore::bookmark(&*self.fifo, resource_version)
    }
}
