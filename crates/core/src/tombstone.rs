//! The tombstone of an object whose deletion was missed.

use std::sync::Arc;

use crate::key::ObjectKey;

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
