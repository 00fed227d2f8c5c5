//! `CompactInformer<K>`: an informer whose whole pipeline carries `Compact<K>` — the reflector
//! decodes the wire straight into the shared tree, the DeltaFIFO and the cache hold it — while
//! user code stays typed: handlers receive `Arc<K>` (or, registered with
//! `add_lazy_event_handler`, a [`LazyTyped<K>`] decoded only if read), `get_by_key`/`list`/
//! `by_index` return `Arc<K>`, index functions can take `&K` ([`typed_index`](crate::typed_index),
//! [`TypedIndexes`](crate::TypedIndexes)).
//!
//! Why a cache would want it: a cached object then costs its unique fields only (a realistic pod
//! about 1.5 KB where a decoded k8s-openapi `Pod` costs about 32 KB), and a relist's new copies share
//! every equal subtree with the cached ones, so a relist does not hold a second copy of the cache.
//! What it costs: a typed read is a decode of `K` from the shared tree (no JSON text; time grows
//! with the object's size), done per read, and once per object of an event for all handlers
//! (the handlers share one typed copy, see `copies`; lazy handlers that read only metadata
//! decode nothing); the typed copy lives as long as the
//! caller keeps it. A controller that reads its whole cache in a tight loop, or wants
//! `Arc::ptr_eq` identity between reads, should use the plain [`SharedIndexInformer<K>`].
//!
//! Objects that do not decode as `K` never enter the pipeline: decoding `Compact<K>` checks them,
//! so the reflector skips such an event with an error naming the object, as it does in plain mode.

use std::marker::PhantomData;
use std::sync::Arc;
use std::time::Duration;

use kcache_compact::Compact;
use kcache_core::{DeletedFinalStateUnknown, DeletedObject, ListerWatcher, StoreError};
use kcache_store::{Indexer, Indexers};
use serde::de::DeserializeOwned;
use tokio_util::sync::CancellationToken;

use super::copies::{typed, At, Cursor, Side, TypedCopies};
use super::lazy::LazyTyped;
use crate::{
    Delivery, InformerError, InformerOptions, Notified, ResourceEventHandler,
    ResourceEventHandlerRegistration, SharedIndexInformer,
};

/// A shared index informer that keeps `K` compactly and hands user code typed `K`s.
///
/// Cloning is cheap; every clone is the same informer. The underlying
/// `SharedIndexInformer<Compact<K>>` is one call away ([`informer`](Self::informer)) for what
/// this type does not forward (stats, transforms over the tree, the raw cache).
pub struct CompactInformer<K> {
    inner: SharedIndexInformer<Compact<K>>,
    copies: Arc<TypedCopies<K>>,
}

impl<K> Clone for CompactInformer<K> {
    fn clone(&self) -> Self {
        CompactInformer {
            inner: self.inner.clone(),
            copies: self.copies.clone(),
        }
    }
}

/// Wraps an informer over `Compact<K>`; typed handlers added through this value (and its
/// clones) share typed copies with each other (handlers added through another wrapper of the
/// same informer decode their own: keep one wrapper per informer, as the factory does).
impl<K: DeserializeOwned + Send + Sync + 'static> From<SharedIndexInformer<Compact<K>>>
    for CompactInformer<K>
{
    fn from(inner: SharedIndexInformer<Compact<K>>) -> Self {
        CompactInformer {
            inner,
            copies: Arc::new(TypedCopies::new()),
        }
    }
}

impl<K: DeserializeOwned + Send + Sync + 'static> CompactInformer<K> {
    /// An informer over `lw` (which lists and watches `Compact<K>`; the transport's
    /// `Api::<Compact<K>>` does) caching into an [`Indexer`] with these indexers.
    pub fn new<L>(lw: L, indexers: Indexers<Compact<K>>, options: InformerOptions) -> Self
    where
        L: ListerWatcher<Compact<K>> + 'static,
    {
        SharedIndexInformer::new(lw, indexers, options).into()
    }

    /// The informer underneath, over `Compact<K>`.
    pub fn informer(&self) -> &SharedIndexInformer<Compact<K>> {
        &self.inner
    }

    /// The cache underneath, holding `Compact<K>`.
    pub fn indexer(&self) -> &Arc<Indexer<Compact<K>>> {
        self.inner.indexer()
    }

    /// The informer's name.
    pub fn name(&self) -> &str {
        self.inner.name()
    }

    /// Adds a handler of typed objects with the informer's default resync period.
    pub fn add_event_handler(
        &self,
        handler: impl ResourceEventHandler<K>,
    ) -> Result<ResourceEventHandlerRegistration<Compact<K>>, InformerError> {
        self.register::<Decoded>(handler, None)
    }

    /// [`SharedIndexInformer::add_event_handler_with_resync_period`] for a typed handler.
    pub fn add_event_handler_with_resync_period(
        &self,
        handler: impl ResourceEventHandler<K>,
        resync_period: Duration,
    ) -> Result<ResourceEventHandlerRegistration<Compact<K>>, InformerError> {
        self.register::<Decoded>(handler, Some(resync_period))
    }

    /// Adds a handler receiving [`LazyTyped<K>`]s: the object's metadata without decoding it,
    /// and `K` (by `Deref`) decoded when first read, once for all handlers. For handlers that
    /// mostly enqueue keys or filter on labels, this is what client-go's pointer costs.
    pub fn add_lazy_event_handler(
        &self,
        handler: impl ResourceEventHandler<LazyTyped<K>>,
    ) -> Result<ResourceEventHandlerRegistration<Compact<K>>, InformerError> {
        self.register::<Lazily>(handler, None)
    }

    /// [`add_lazy_event_handler`](Self::add_lazy_event_handler) with its own resync period.
    pub fn add_lazy_event_handler_with_resync_period(
        &self,
        handler: impl ResourceEventHandler<LazyTyped<K>>,
        resync_period: Duration,
    ) -> Result<ResourceEventHandlerRegistration<Compact<K>>, InformerError> {
        self.register::<Lazily>(handler, Some(resync_period))
    }

    fn register<M: Handing<K>>(
        &self,
        handler: impl ResourceEventHandler<M::Handed>,
        resync_period: Option<Duration>,
    ) -> Result<ResourceEventHandlerRegistration<Compact<K>>, InformerError> {
        let typed = Typed::<K, _, M> {
            handler,
            copies: self.copies.clone(),
            cursor: Cursor::new(),
            handing: PhantomData,
        };
        let registration = match resync_period {
            Some(period) => self
                .inner
                .add_event_handler_with_resync_period(typed, period)?,
            None => self.inner.add_event_handler(typed)?,
        };
        self.copies.handler_added();
        Ok(registration)
    }

    /// Removes a handler.
    pub fn remove_event_handler(
        &self,
        registration: &ResourceEventHandlerRegistration<Compact<K>>,
    ) -> Result<(), InformerError> {
        if self.inner.is_registered(registration) {
            self.copies.handler_removed();
        }
        self.inner.remove_event_handler(registration)
    }

    /// Adds indexes (see [`typed_index`](crate::typed_index) for index functions over `&K`, and
    /// [`same_at`](crate::same_at) to spare them on updates that leave their inputs).
    pub fn add_indexers(&self, indexers: Indexers<Compact<K>>) -> Result<(), InformerError> {
        self.inner.add_indexers(indexers)
    }

    /// The cached object under `key` (`namespace/name`), typed.
    pub fn get_by_key(&self, key: &str) -> Option<Arc<K>> {
        self.inner.indexer().get_by_key(key).and_then(|o| typed(&o))
    }

    /// Every cached object, typed.
    pub fn list(&self) -> Vec<Arc<K>> {
        self.inner
            .indexer()
            .list()
            .into_iter()
            .filter_map(|o| typed(&o))
            .collect()
    }

    /// The cached objects whose index `index` holds `value`, typed.
    pub fn by_index(&self, index: &str, value: &str) -> Result<Vec<Arc<K>>, StoreError> {
        let found = self.inner.indexer().by_index(index, value)?;
        Ok(found.into_iter().filter_map(|o| typed(&o)).collect())
    }

    /// Objects cached.
    pub fn len(&self) -> usize {
        self.inner.indexer().len()
    }

    /// Whether the cache is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// True once the first list has been fully processed into the cache.
    pub fn has_synced(&self) -> bool {
        self.inner.has_synced()
    }

    /// Waits until synced or stopped; returns `has_synced()`.
    pub async fn wait_for_cache_sync(&self) -> bool {
        self.inner.wait_for_cache_sync().await
    }

    /// Lists and watches until `cancel` fires ([`SharedIndexInformer::run`]).
    pub async fn run(&self, cancel: CancellationToken) -> Result<(), InformerError> {
        self.inner.run(cancel).await
    }
}

/// What a handler registered through [`CompactInformer`] receives for each object of a
/// notification: a decoded `K` ([`Decoded`]) or a [`LazyTyped<K>`] ([`Lazily`]).
trait Handing<K>: 'static {
    type Handed: Send + Sync + 'static;
    fn hand(
        copies: &TypedCopies<K>,
        cursor: &Cursor<K>,
        obj: &Arc<Compact<K>>,
        side: Side,
        at: Option<At<'_>>,
    ) -> Option<Arc<Self::Handed>>;
}

struct Decoded;

impl<K: DeserializeOwned + Send + Sync + 'static> Handing<K> for Decoded {
    type Handed = K;
    fn hand(
        copies: &TypedCopies<K>,
        cursor: &Cursor<K>,
        obj: &Arc<Compact<K>>,
        side: Side,
        at: Option<At<'_>>,
    ) -> Option<Arc<K>> {
        copies.get(cursor, obj, side, at)
    }
}

struct Lazily;

impl<K: DeserializeOwned + Send + Sync + 'static> Handing<K> for Lazily {
    type Handed = LazyTyped<K>;
    fn hand(
        copies: &TypedCopies<K>,
        cursor: &Cursor<K>,
        obj: &Arc<Compact<K>>,
        side: Side,
        at: Option<At<'_>>,
    ) -> Option<Arc<LazyTyped<K>>> {
        Some(copies.get_lazy(cursor, obj, side, at))
    }
}

/// A typed handler registered on the informer over `Compact<K>`: each notification's objects
/// are handed to it as `M` makes them, shared with the informer's other typed handlers by the
/// notification's place ([`Delivery`]).
struct Typed<K, H, M> {
    handler: H,
    copies: Arc<TypedCopies<K>>,
    cursor: Cursor<K>,
    handing: PhantomData<fn() -> M>,
}

impl<K, H, M> Typed<K, H, M>
where
    K: DeserializeOwned + Send + Sync + 'static,
    M: Handing<K>,
    H: ResourceEventHandler<M::Handed>,
{
    fn hand(
        &self,
        obj: &Arc<Compact<K>>,
        side: Side,
        at: Option<At<'_>>,
    ) -> Option<Arc<M::Handed>> {
        M::hand(&self.copies, &self.cursor, obj, side, at)
    }

    fn add(&self, obj: &Arc<Compact<K>>, is_in_initial_list: bool, at: Option<At<'_>>) {
        if let Some(obj) = self.hand(obj, Side::New, at) {
            self.handler.on_add(&obj, is_in_initial_list);
        }
    }

    fn update(&self, old: &Arc<Compact<K>>, new: &Arc<Compact<K>>, at: Option<At<'_>>) {
        let old = self.hand(old, Side::Old, at);
        if let (Some(old), Some(new)) = (old, self.hand(new, Side::New, at)) {
            self.handler.on_update(&old, &new);
        }
    }

    fn delete(&self, obj: &DeletedObject<Compact<K>>, at: Option<At<'_>>) {
        let deleted = match obj {
            DeletedObject::Object(o) => match self.hand(o, Side::Old, at) {
                Some(o) => DeletedObject::Object(o),
                None => return,
            },
            DeletedObject::Tombstone(t) => {
                DeletedObject::Tombstone(Box::new(DeletedFinalStateUnknown {
                    key: t.key.clone(),
                    obj: t.obj.as_ref().and_then(|o| self.hand(o, Side::Old, at)),
                }))
            }
        };
        self.handler.on_delete(&deleted);
    }
}

/// Called directly (outside an informer's delivery), each object is decoded for this handler
/// alone; the informer delivers through `on_delivery`, where the copies are shared.
impl<K, H, M> ResourceEventHandler<Compact<K>> for Typed<K, H, M>
where
    K: DeserializeOwned + Send + Sync + 'static,
    M: Handing<K>,
    H: ResourceEventHandler<M::Handed>,
{
    fn on_add(&self, obj: &Arc<Compact<K>>, is_in_initial_list: bool) {
        self.add(obj, is_in_initial_list, None)
    }

    fn on_update(&self, old: &Arc<Compact<K>>, new: &Arc<Compact<K>>) {
        self.update(old, new, None)
    }

    fn on_delete(&self, obj: &DeletedObject<Compact<K>>) {
        self.delete(obj, None)
    }

    fn on_delivery(&self, delivery: &Delivery<'_, Compact<K>>) {
        let at = Some((delivery.batch(), delivery.index()));
        match delivery.notified() {
            Notified::Add {
                obj,
                is_in_initial_list,
            } => self.add(obj, is_in_initial_list, at),
            Notified::Update { old, new } => self.update(old, new, at),
            Notified::Delete(obj) => self.delete(obj, at),
        }
    }
}
