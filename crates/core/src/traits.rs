//! The narrow traits the layers compose through.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use futures_core::Stream;

use crate::{Error, ListParams, ObjectKey, ObjectList, WatchEvent, WatchParams};

/// The stream a watch returns: events until the server ends the watch (clean end of stream) or
/// an error.
pub type WatchStream<K> = Pin<Box<dyn Stream<Item = Result<WatchEvent<K>, Error>> + Send>>;

/// Lists and watches one kind of object (client-go's `cache.ListerWatcher`).
///
/// The transport implements it over HTTP for any resource; tests implement it in memory. Errors
/// are [`Error`]s so the reflector classifies them the same way whatever the source.
pub trait ListerWatcher<K>: Send + Sync {
    /// Lists one page.
    fn list(
        &self,
        params: &ListParams,
    ) -> impl Future<Output = Result<ObjectList<K>, Error>> + Send;

    /// Lists one page with each item in an `Arc`, as a cache keeps it (the reflector lists
    /// through this). A source that decodes items wraps each where it decodes it, so a list
    /// never holds its items twice (the page's `Vec<K>` and the `Arc`s); the default wraps the items of [`list`](Self::list)'s page.
    fn list_shared(
        &self,
        params: &ListParams,
    ) -> impl Future<Output = Result<ObjectList<Arc<K>>, Error>> + Send
    where
        K: Send + Sync,
    {
        let listed = self.list(params);
        async move {
            let page = listed.await?;
            Ok(ObjectList {
                metadata: page.metadata,
                items: page.items.into_iter().map(Arc::new).collect(),
            })
        }
    }

    /// Starts a watch.
    fn watch(
        &self,
        params: &WatchParams,
    ) -> impl Future<Output = Result<WatchStream<K>, Error>> + Send;
}

/// Where a reflector writes what it lists and watches (client-go's `cache.Store`, the part the
/// reflector calls). DeltaFIFO implements it, and so does a plain store.
pub trait ReflectorStore<K>: Send + Sync {
    /// An object was added (watch `ADDED`).
    fn add(&self, obj: Arc<K>) -> Result<(), Error>;
    /// An object changed (watch `MODIFIED`).
    fn update(&self, obj: Arc<K>) -> Result<(), Error>;
    /// An object was deleted (watch `DELETED`): its last state.
    fn delete(&self, obj: Arc<K>) -> Result<(), Error>;
    /// The whole content, from a list at `resource_version`.
    fn replace(&self, items: Vec<Arc<K>>, resource_version: &str) -> Result<(), Error>;
    /// [`ReflectorStore::replace`] with each item's [`ObjectKey::of`] already built, as a
    /// watch-list's temporary store has them: a store keyed the same way (DeltaFIFO) takes them
    /// instead of building 100k keys again. The default drops the keys.
    fn replace_with_keys(
        &self,
        items: Vec<(ObjectKey, Arc<K>)>,
        resource_version: &str,
    ) -> Result<(), Error> {
        let items = items.into_iter().map(|(_, obj)| obj).collect();
        self.replace(items, resource_version)
    }
    /// A periodic resync (a no-op for a plain store).
    fn resync(&self) -> Result<(), Error>;
    /// A watch bookmark reached `resource_version` (nothing changed); the default ignores it.
    fn bookmark(&self, resource_version: &str) {
        let _ = resource_version;
    }
}

/// What DeltaFIFO asks of the cache downstream: its keys, and an object by key (client-go's
/// `KeyListerGetter`), to build tombstones on relist and `Sync` deltas on resync.
pub trait KnownObjects<K>: Send + Sync {
    /// Every key the cache holds.
    fn list_keys(&self) -> Vec<ObjectKey>;
    /// The cached object with this key.
    fn get_by_key(&self, key: &str) -> Option<Arc<K>>;
}

impl<K, T: ReflectorStore<K> + ?Sized> ReflectorStore<K> for Arc<T> {
    fn add(&self, obj: Arc<K>) -> Result<(), Error> {
        (**self).add(obj)
    }
    fn update(&self, obj: Arc<K>) -> Result<(), Error> {
        (**self).update(obj)
    }
    fn delete(&self, obj: Arc<K>) -> Result<(), Error> {
        (**self).delete(obj)
    }
    fn replace(&self, items: Vec<Arc<K>>, resource_version: &str) -> Result<(), Error> {
        (**self).replace(items, resource_version)
    }
    fn replace_with_keys(
        &self,
        items: Vec<(ObjectKey, Arc<K>)>,
        resource_version: &str,
    ) -> Result<(), Error> {
        (**self).replace_with_keys(items, resource_version)
    }
    fn resync(&self) -> Result<(), Error> {
        (**self).resync()
    }
    fn bookmark(&self, resource_version: &str) {
        (**self).bookmark(resource_version)
    }
}

impl<K, T: KnownObjects<K> + ?Sized> KnownObjects<K> for Arc<T> {
    fn list_keys(&self) -> Vec<ObjectKey> {
        (**self).list_keys()
    }
    fn get_by_key(&self, key: &str) -> Option<Arc<K>> {
        (**self).get_by_key(key)
    }
}

impl<K, T: ListerWatcher<K> + ?Sized> ListerWatcher<K> for Arc<T> {
    fn list(
        &self,
        params: &ListParams,
    ) -> impl Future<Output = Result<ObjectList<K>, Error>> + Send {
        (**self).list(params)
    }
    fn list_shared(
        &self,
        params: &ListParams,
    ) -> impl Future<Output = Result<ObjectList<Arc<K>>, Error>> + Send
    where
        K: Send + Sync,
    {
        (**self).list_shared(params)
    }
    fn watch(
        &self,
        params: &WatchParams,
    ) -> impl Future<Output = Result<WatchStream<K>, Error>> + Send {
        (**self).watch(params)
    }
}
