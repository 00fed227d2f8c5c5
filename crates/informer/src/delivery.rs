//! What a handler is given: one notification, with its batch and place in it. Kept apart from
//! the listener's buffers (`notification.rs`) and from the handler trait (`handler.rs`, which
//! implements the calls into handlers), so neither of those needs the other.

use std::sync::Arc;

use kcache_core::DeletedObject;

/// One notification for one handler (client-go's add/update/deleteNotification).
pub(crate) enum Notification<K> {
    Add {
        obj: Arc<K>,
        is_in_initial_list: bool,
    },
    Update {
        old: Arc<K>,
        new: Arc<K>,
    },
    Delete(DeletedObject<K>),
}

impl<K> Notification<K> {
    /// Whether this is an add of the initial list (counted by the listener's sync tracker).
    pub(crate) fn is_initial_add(&self) -> bool {
        matches!(
            self,
            Notification::Add {
                is_in_initial_list: true,
                ..
            }
        )
    }
}

/// The batch a notification is delivered from, as handlers see it: one per batch of
/// notifications the informer popped, handed to every handler of the informer, and alive as long
/// as a handler has notifications of the batch still to take (hold a `Weak` to notice the end).
/// Handler adapters use it to share work per notification between the handlers of one informer
/// (the compact informer's typed handlers decode each object once for all of them).
#[derive(Debug)]
pub struct DeliveryBatch {
    pub(crate) len: usize,
    pub(crate) shared: bool,
}

impl DeliveryBatch {
    /// How many notifications the batch holds ([`Delivery::index`] is below it).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the batch holds no notifications.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether other handlers get the batch too; false for a batch one handler alone gets (a
    /// handler registered late receives the cache's objects as its own initial adds).
    pub fn is_shared(&self) -> bool {
        self.shared
    }
}

/// One notification as the informer hands it to a handler
/// ([`ResourceEventHandler::on_delivery`]): what happened, and where it sits — which batch,
/// which place in it — so that handlers of one informer can share work per notification.
pub struct Delivery<'a, K> {
    note: &'a Notification<K>,
    batch: &'a Arc<DeliveryBatch>,
    index: usize,
}

impl<'a, K> Delivery<'a, K> {
    pub(crate) fn new(
        note: &'a Notification<K>,
        batch: &'a Arc<DeliveryBatch>,
        index: usize,
    ) -> Self {
        Delivery { note, batch, index }
    }

    pub(crate) fn note(&self) -> &'a Notification<K> {
        self.note
    }

    /// The batch the notification comes from.
    pub fn batch(&self) -> &'a Arc<DeliveryBatch> {
        self.batch
    }

    /// The notification's place in its batch.
    pub fn index(&self) -> usize {
        self.index
    }

    /// What the notification says.
    pub fn notified(&self) -> Notified<'a, K> {
        match self.note {
            Notification::Add {
                obj,
                is_in_initial_list,
            } => Notified::Add {
                obj,
                is_in_initial_list: *is_in_initial_list,
            },
            Notification::Update { old, new } => Notified::Update { old, new },
            Notification::Delete(d) => Notified::Delete(d),
        }
    }
}

/// What a notification says, as [`Delivery::notified`] lends it: the arguments of
/// `on_add`, `on_update` or `on_delete`.
pub enum Notified<'a, K> {
    /// An object appeared (`on_add`).
    Add {
        /// The object.
        obj: &'a Arc<K>,
        /// Whether it is part of the initial list.
        is_in_initial_list: bool,
    },
    /// An object changed (`on_update`).
    Update {
        /// The object before.
        old: &'a Arc<K>,
        /// The object after.
        new: &'a Arc<K>,
    },
    /// An object was deleted (`on_delete`).
    Delete(&'a DeletedObject<K>),
}
