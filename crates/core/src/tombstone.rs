//! The tombstone of an object whose deletion was missed, and what a deletion hands on.

use std::sync::Arc;

use crate::key::ObjectKey;
use crate::Object;

/// An object deleted while the watch was down: its final state is unknown, so this carries the
/// last state the cache knew, if any (client-go's `DeletedFinalStateUnknown`).
///
/// DeltaFIFO emits it on relist for every key that vanished; informers pass it to `on_delete`.
#[derive(Debug)]
pub struct DeletedFinalStateUnknown<K> {
    /// The object's key.
    pub key: ObjectKey,
    /// The last state known to the cache, if it was known at all.
    pub obj: Option<Arc<K>>,
}

impl<K> Clone for DeletedFinalStateUnknown<K> {
    fn clone(&self) -> Self {
        DeletedFinalStateUnknown {
            key: self.key.clone(),
            obj: self.obj.clone(),
        }
    }
}

impl<K> PartialEq for DeletedFinalStateUnknown<K> {
    /// Two tombstones are equal when they name the same key and the same object allocation.
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
            && match (&self.obj, &other.obj) {
                (Some(a), Some(b)) => Arc::ptr_eq(a, b),
                (None, None) => true,
                _ => false,
            }
    }
}

/// An object, or the tombstone of one whose deletion was missed: what an informer's `on_delete`
/// receives, and what every DeltaFIFO delta carries (client-go passes either in one
/// `interface{}`; here the two cases are explicit so a consumer cannot forget the tombstone).
///
/// It lives here, not in the FIFO crate, so a handler, a FIFO and any other queue an informer
/// is built over share it, and nothing is converted on the way from the queue to handlers.
#[derive(Debug)]
pub enum DeletedObject<K> {
    /// The object's last state.
    Object(Arc<K>),
    /// A deletion discovered on relist: the key and the last state known, if any. Boxed: it is
    /// rare, and a value holding only a pointer is 16 bytes, which keeps long per-key delta
    /// lists (a consumer far behind its producer) at half the memory.
    Tombstone(Box<DeletedFinalStateUnknown<K>>),
}

impl<K> DeletedObject<K> {
    /// The object, or the tombstone's last known state.
    pub fn object(&self) -> Option<&Arc<K>> {
        match self {
            DeletedObject::Object(o) => Some(o),
            DeletedObject::Tombstone(t) => t.obj.as_ref(),
        }
    }

    /// The tombstone, if this is one.
    pub fn as_tombstone(&self) -> Option<&DeletedFinalStateUnknown<K>> {
        match self {
            DeletedObject::Tombstone(t) => Some(t),
            DeletedObject::Object(_) => None,
        }
    }

    /// Whether this is a tombstone.
    pub fn is_tombstone(&self) -> bool {
        matches!(self, DeletedObject::Tombstone(_))
    }
}

impl<K: Object> DeletedObject<K> {
    /// The key: the tombstone's key, or the object's `namespace/name` (client-go's
    /// `DeletionHandlingMetaNamespaceKeyFunc`).
    pub fn key(&self) -> ObjectKey {
        match self {
            DeletedObject::Object(o) => ObjectKey::of(&**o),
            DeletedObject::Tombstone(t) => t.key.clone(),
        }
    }
}

impl<K> Clone for DeletedObject<K> {
    fn clone(&self) -> Self {
        match self {
            DeletedObject::Object(o) => DeletedObject::Object(o.clone()),
            DeletedObject::Tombstone(t) => DeletedObject::Tombstone(t.clone()),
        }
    }
}

impl<K> PartialEq for DeletedObject<K> {
    /// Equal when both hold the same allocation (objects are shared `Arc`s, never copied).
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (DeletedObject::Object(a), DeletedObject::Object(b)) => Arc::ptr_eq(a, b),
            (DeletedObject::Tombstone(a), DeletedObject::Tombstone(b)) => a == b,
            _ => false,
        }
    }
}
