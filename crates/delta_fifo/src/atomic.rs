//! What atomic mode queues for a relist or a resync: one unit for the whole queue (client-go's
//! AtomicFIFO, `ReplacedAll` and `SyncAll` deltas).

use std::fmt;
use std::sync::Arc;

use kcache_core::ObjectKey;

/// A relist or resync queued as one entry by [`crate::FifoMode::Atomic`]. The consumer applies
/// it to its cache as one write and notifies handlers after, so the cache never shows part of a
/// relist. It is popped alone, after every entry queued before it has been processed, and
/// nothing after it is popped until it has been processed.
pub enum AtomicEvent<K> {
    /// A relist (client-go's `ReplacedAll` with its `ReplacedAllInfo`): the list as the
    /// transformer left it, in list order. The consumer works out what it deletes by comparing
    /// with its cache: every cached key the list lacks.
    ReplacedAll {
        /// The list's resourceVersion.
        resource_version: String,
        /// The listed objects with their keys.
        objects: Vec<(ObjectKey, Arc<K>)>,
    },
    /// A resync (client-go's `SyncAll`): every cached object goes to the handlers again as an
    /// update of itself.
    SyncAll,
}

impl<K> Clone for AtomicEvent<K> {
    fn clone(&self) -> Self {
        match self {
            AtomicEvent::ReplacedAll {
                resource_version,
                objects,
            } => AtomicEvent::ReplacedAll {
                resource_version: resource_version.clone(),
                objects: objects.clone(),
            },
            AtomicEvent::SyncAll => AtomicEvent::SyncAll,
        }
    }
}

impl<K> fmt::Debug for AtomicEvent<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AtomicEvent::ReplacedAll {
                resource_version,
                objects,
            } => f
                .debug_struct("ReplacedAll")
                .field("resource_version", resource_version)
                .field("objects", &objects.len())
                .finish(),
            AtomicEvent::SyncAll => f.write_str("SyncAll"),
        }
    }
}
