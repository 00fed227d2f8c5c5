//! Resource event handlers (client-go's `ResourceEventHandler`, `ResourceEventHandlerFuncs`,
//! `FilteringResourceEventHandler`).

use std::sync::Arc;

use kcache_core::Object;

use crate::delivery::Notification;
pub use crate::delivery::{Delivery, DeliveryBatch, Notified};

/// What `on_delete` receives: the deleted object, or a tombstone
/// ([`DeletedObject::Tombstone`]) when the deletion was missed while the watch was down —
/// client-go passes `DeletedFinalStateUnknown` in the same slot. It is kcache-core's type, which
/// the FIFO's deltas carry too, so nothing is converted on the way to handlers.
pub use kcache_core::DeletedObject;

/// Receives an informer's notifications. Calls for one handler are sequential, in order; a
/// handler that is slow delays only itself.
///
/// Handlers should be quick (typically: enqueue the key into a workqueue). A panic is caught,
/// logged and counted; the notification is skipped and the handler keeps receiving.
pub trait ResourceEventHandler<K>: Send + Sync + 'static {
    /// An object appeared in the cache. `is_in_initial_list` is true for objects of the first
    /// list and for the synthetic adds a handler registered late receives.
    fn on_add(&self, obj: &Arc<K>, is_in_initial_list: bool);
    /// An object changed (or was resynced: then `old` and `new` share a resourceVersion).
    fn on_update(&self, old: &Arc<K>, new: &Arc<K>);
    /// An object was deleted.
    fn on_delete(&self, obj: &DeletedObject<K>);

    /// How the informer delivers each notification: with where it sits in the batch every
    /// handler of the informer gets ([`Delivery`]). The default calls `on_add`, `on_update` or
    /// `on_delete`; an adapter that shares work per notification with the informer's other
    /// handlers overrides it (the compact informer's typed handlers share one decode this way).
    fn on_delivery(&self, delivery: &Delivery<'_, K>) {
        delivery.deliver_to(self)
    }
}

type AddFn<K> = Box<dyn Fn(&Arc<K>, bool) + Send + Sync>;
type UpdateFn<K> = Box<dyn Fn(&Arc<K>, &Arc<K>) + Send + Sync>;
type DeleteFn<K> = Box<dyn Fn(&DeletedObject<K>) + Send + Sync>;

/// A handler built from closures; missing ones do nothing (client-go's
/// `ResourceEventHandlerFuncs`).
///
/// ```
/// use kcache_core::DynamicObject;
/// use kcache_informer::ResourceEventHandlerFuncs;
///
/// let h = ResourceEventHandlerFuncs::<DynamicObject>::new()
///     .on_add(|obj, _initial| println!("added {}", obj.metadata.name))
///     .on_delete(|gone| println!("deleted {}", gone.key()));
/// # let _ = h;
/// ```
pub struct ResourceEventHandlerFuncs<K> {
    add: Option<AddFn<K>>,
    update: Option<UpdateFn<K>>,
    delete: Option<DeleteFn<K>>,
}

impl<K> Default for ResourceEventHandlerFuncs<K> {
    fn default() -> Self {
        ResourceEventHandlerFuncs {
            add: None,
            update: None,
            delete: None,
        }
    }
}

impl<K> ResourceEventHandlerFuncs<K> {
    /// A handler that ignores everything until closures are set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the add closure.
    pub fn on_add(mut self, f: impl Fn(&Arc<K>, bool) + Send + Sync + 'static) -> Self {
        self.add = Some(Box::new(f));
        self
    }

    /// Sets the update closure.
    pub fn on_update(mut self, f: impl Fn(&Arc<K>, &Arc<K>) + Send + Sync + 'static) -> Self {
        self.update = Some(Box::new(f));
        self
    }

    /// Sets the delete closure.
    pub fn on_delete(mut self, f: impl Fn(&DeletedObject<K>) + Send + Sync + 'static) -> Self {
        self.delete = Some(Box::new(f));
        self
    }
}

impl<K: Send + Sync + 'static> ResourceEventHandler<K> for ResourceEventHandlerFuncs<K> {
    fn on_add(&self, obj: &Arc<K>, is_in_initial_list: bool) {
        if let Some(f) = &self.add {
            f(obj, is_in_initial_list)
        }
    }
    fn on_update(&self, old: &Arc<K>, new: &Arc<K>) {
        if let Some(f) = &self.update {
            f(old, new)
        }
    }
    fn on_delete(&self, obj: &DeletedObject<K>) {
        if let Some(f) = &self.delete {
            f(obj)
        }
    }
}

/// Passes on only objects that satisfy a filter, translating transitions like client-go's
/// `FilteringResourceEventHandler`: old and new pass → update; only new → add; only old →
/// delete; neither → nothing.
pub struct FilteringResourceEventHandler<K, H> {
    filter: Box<dyn Fn(&K) -> bool + Send + Sync>,
    handler: H,
}

impl<K, H> FilteringResourceEventHandler<K, H> {
    /// Wraps `handler` behind `filter`.
    pub fn new(filter: impl Fn(&K) -> bool + Send + Sync + 'static, handler: H) -> Self {
        FilteringResourceEventHandler {
            filter: Box::new(filter),
            handler,
        }
    }
}

impl<K: Object, H: ResourceEventHandler<K>> ResourceEventHandler<K>
    for FilteringResourceEventHandler<K, H>
{
    fn on_add(&self, obj: &Arc<K>, is_in_initial_list: bool) {
        if (self.filter)(obj) {
            self.handler.on_add(obj, is_in_initial_list);
        }
    }

    fn on_update(&self, old: &Arc<K>, new: &Arc<K>) {
        match ((self.filter)(old), (self.filter)(new)) {
            (true, true) => self.handler.on_update(old, new),
            (false, true) => self.handler.on_add(new, false),
            (true, false) => self.handler.on_delete(&DeletedObject::Object(old.clone())),
            (false, false) => {}
        }
    }

    fn on_delete(&self, obj: &DeletedObject<K>) {
        // client-go filters a tombstone by its last known object, and drops it if there is none.
        if obj.object().is_some_and(|o| (self.filter)(o)) {
            self.handler.on_delete(obj);
        }
    }
}

/// A shared handler: the same handler value can be registered more than once (each
/// registration is independent, as in client-go).
impl<K, H: ResourceEventHandler<K>> ResourceEventHandler<K> for Arc<H> {
    fn on_add(&self, obj: &Arc<K>, is_in_initial_list: bool) {
        (**self).on_add(obj, is_in_initial_list)
    }
    fn on_update(&self, old: &Arc<K>, new: &Arc<K>) {
        (**self).on_update(old, new)
    }
    fn on_delete(&self, obj: &DeletedObject<K>) {
        (**self).on_delete(obj)
    }
}

impl<K> Notification<K> {
    /// Calls the matching handler method.
    pub(crate) fn deliver<H: ResourceEventHandler<K> + ?Sized>(&self, handler: &H) {
        match self {
            Notification::Add {
                obj,
                is_in_initial_list,
            } => handler.on_add(obj, *is_in_initial_list),
            Notification::Update { old, new } => handler.on_update(old, new),
            Notification::Delete(d) => handler.on_delete(d),
        }
    }
}

impl<K> Delivery<'_, K> {
    /// Calls `handler`'s `on_add`, `on_update` or `on_delete` with the notification.
    pub fn deliver_to<H: ResourceEventHandler<K> + ?Sized>(&self, handler: &H) {
        self.note().deliver(handler)
    }
}
