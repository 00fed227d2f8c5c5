//! The caches a controller reads and watches: the plain one (`SharedIndexInformer<K>`, typed
//! objects) and the compact one (`CompactInformer<K>`, structurally shared trees decoded on read),
//! behind one narrow trait so the runtime is written once.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use kcache_core::{Object, ObjectKey, Resource};

use kcache_informer::{
    CacheResourceVersion, CompactInformer, DeliveryMode, HandlerOptions, InformerError,
    ResourceEventHandler, ResourceEventHandlerFuncs, ResourceEventHandlerRegistration,
    SharedIndexInformer, SharedInformerFactory,
};
use serde::de::DeserializeOwned;

use crate::reconcile_request::ReconcileRequest;

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

/// Where a controller's informers keep their objects.
///
/// The default is [`Storage::Compact`]: a cached object costs its unique fields only, so the
/// controller benchmark's 10k ConfigMaps fit in a fraction of a typed cache's memory, and a
/// reconcile's read (a decode of one object from its shared tree) costs less than
/// controller-runtime's `DeepCopy` on every cached `Get`. Events of the primary kind reach the
/// queue as keys, with no decode, unless predicates or [`run_with_gone`] need the objects, so an
/// object is decoded once per reconcile. Pick [`Storage::Plain`] when reconciles read many
/// objects per call (a typed read is then a reference count).
///
/// [`run_with_gone`]: crate::Controller::run_with_gone
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Storage {
    /// `CompactInformer<K>` (the factory's `compact_informer`).
    #[default]
    Compact,
    /// `SharedIndexInformer<K>` over an `Indexer<K>` (the factory's `informer`).
    Plain,
}

/// What the runtime needs of one informer, whatever its storage.
pub trait ObjectCache<K>: Send + Sync + 'static {
    /// The informer's name.
    fn name(&self) -> &str;
    /// The cached object with this key, typed.
    fn get(&self, key: &str) -> Option<Arc<K>>;
    /// Every cached key (no object is decoded).
    fn keys(&self) -> Vec<ObjectKey>;
    /// Registers `handler`; the registration says when it has seen the initial list.
    fn add_handler(
        &self,
        handler: ResourceEventHandlerFuncs<K>,
    ) -> Result<Box<dyn HandlerRegistration>, InformerError>;
    /// Registers a handler that hears only which keys changed, not the objects: the compact
    /// cache then decodes nothing per event (a typed handler costs one decode per object, which
    /// for the initial list of 10k ConfigMaps was 60–70 ms on the delivery thread, all of it
    /// before the workers may start). `on_key` only enqueues, so it runs inline on the
    /// informer's processing task ([`DeliveryMode::Inline`]): a change reaches the queue with no
    /// hand-off to a delivery thread.
    fn add_key_handler(
        &self,
        on_key: KeyEvents,
    ) -> Result<Box<dyn HandlerRegistration>, InformerError>;
    /// The resourceVersion the cache reflects, to wait on after a write.
    fn cache_resource_version(&self) -> CacheResourceVersion;
}

/// What a key handler hears: the key of an object added, updated or deleted, and whether the
/// event is low priority (an object of the initial list, or a resync).
pub type KeyEvents = Arc<dyn Fn(ReconcileRequest, bool) + Send + Sync>;

/// A handler over any cached type that passes keys to `on_key`.
pub(crate) fn key_handler<T: Object>(on_key: KeyEvents) -> ResourceEventHandlerFuncs<T> {
    let (on_add, on_update, on_delete) = (on_key.clone(), on_key.clone(), on_key);
    ResourceEventHandlerFuncs::new()
        .on_add(move |obj: &Arc<T>, initial| on_add(ReconcileRequest::of(&**obj), initial))
        .on_update(move |old: &Arc<T>, new: &Arc<T>| {
            let resync = old.resource_version() == new.resource_version();
            on_update(ReconcileRequest::of(&**new), resync)
        })
        .on_delete(move |deleted| on_delete(ReconcileRequest::from(deleted.key()), false))
}

/// A registered handler, type-erased.
pub trait HandlerRegistration: Send + Sync {
    /// Waits until the informer synced and the handler received the initial list; false if the
    /// informer stopped first.
    fn wait_for_sync(&self) -> BoxFuture<bool>;
    /// Removes the handler.
    fn remove(&self);
}

struct Registered<K, F> {
    registration: ResourceEventHandlerRegistration<K>,
    remove: F,
}

impl<K: Object, F> HandlerRegistration for Registered<K, F>
where
    F: Fn(&ResourceEventHandlerRegistration<K>) + Send + Sync,
{
    fn wait_for_sync(&self) -> BoxFuture<bool> {
        let r = self.registration.clone();
        Box::pin(async move { r.wait_for_sync().await })
    }
    fn remove(&self) {
        (self.remove)(&self.registration)
    }
}

/// Registers `handler` on `informer` as `options` say, type-erased.
fn register<K: Object>(
    informer: &SharedIndexInformer<K>,
    handler: impl ResourceEventHandler<K>,
    options: HandlerOptions,
) -> Result<Box<dyn HandlerRegistration>, InformerError> {
    let registration = informer.add_event_handler_with_options(handler, options)?;
    let me = informer.clone();
    Ok(Box::new(Registered {
        registration,
        remove: move |r: &ResourceEventHandlerRegistration<K>| {
            let _ = me.remove_event_handler(r);
        },
    }))
}

/// How key handlers are registered: inline (see [`ObjectCache::add_key_handler`]).
const KEY_HANDLER: HandlerOptions = HandlerOptions {
    resync_period: None,
    delivery: DeliveryMode::Inline,
};

impl<K: Object> ObjectCache<K> for SharedIndexInformer<K> {
    fn name(&self) -> &str {
        SharedIndexInformer::name(self)
    }
    fn get(&self, key: &str) -> Option<Arc<K>> {
        self.indexer().get_by_key(key)
    }
    fn keys(&self) -> Vec<ObjectKey> {
        self.indexer().list_keys()
    }
    fn add_handler(
        &self,
        handler: ResourceEventHandlerFuncs<K>,
    ) -> Result<Box<dyn HandlerRegistration>, InformerError> {
        register(self, handler, HandlerOptions::default())
    }
    fn add_key_handler(
        &self,
        on_key: KeyEvents,
    ) -> Result<Box<dyn HandlerRegistration>, InformerError> {
        register(self, key_handler(on_key), KEY_HANDLER)
    }
    fn cache_resource_version(&self) -> CacheResourceVersion {
        SharedIndexInformer::cache_resource_version(self)
    }
}

impl<K: Object + DeserializeOwned> ObjectCache<K> for CompactInformer<K> {
    fn name(&self) -> &str {
        CompactInformer::name(self)
    }
    fn get(&self, key: &str) -> Option<Arc<K>> {
        self.get_by_key(key)
    }
    fn keys(&self) -> Vec<ObjectKey> {
        self.indexer().list_keys()
    }
    fn add_handler(
        &self,
        handler: ResourceEventHandlerFuncs<K>,
    ) -> Result<Box<dyn HandlerRegistration>, InformerError> {
        let registration = self.add_event_handler(handler)?;
        let me = self.informer().clone();
        Ok(Box::new(Registered {
            registration,
            remove: move |r: &ResourceEventHandlerRegistration<_>| {
                let _ = me.remove_event_handler(r);
            },
        }))
    }
    fn add_key_handler(
        &self,
        on_key: KeyEvents,
    ) -> Result<Box<dyn HandlerRegistration>, InformerError> {
        // On the cache underneath: its handlers get `Compact<K>`, which knows its key and
        // resourceVersion without a decode.
        register(self.informer(), key_handler(on_key), KEY_HANDLER)
    }
    fn cache_resource_version(&self) -> CacheResourceVersion {
        self.informer().cache_resource_version()
    }
}

/// The factory's informer of `K` in `storage`.
pub(crate) fn informer_of<K>(
    factory: &SharedInformerFactory,
    storage: Storage,
) -> Arc<dyn ObjectCache<K>>
where
    K: Resource + Object + DeserializeOwned + Clone,
{
    match storage {
        Storage::Compact => Arc::new(factory.compact_informer::<K>()),
        Storage::Plain => Arc::new(factory.informer::<K>()),
    }
}
