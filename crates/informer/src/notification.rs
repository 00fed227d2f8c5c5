//! What a processor listener buffers for its handler.

use std::sync::Arc;

use tokio::time::Instant;

use crate::handler::{DeletedObject, ResourceEventHandler};

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

impl<K: 'static> Notification<K> {
    /// Calls the matching handler method.
    pub(crate) fn deliver(&self, handler: &dyn ResourceEventHandler<K>) {
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

/// The notifications made from one popped FIFO batch (with whether each is a resync), shared by
/// every listener: a listener buffers a handle to the batch, not its own copies, so handing a
/// batch to ten handlers costs ten reference counts instead of two per notification per handler.
/// The batch, and the objects only it still holds, are freed by whichever handler finishes it last.
pub(crate) struct Batch<K> {
    pub(crate) notes: Vec<(Notification<K>, bool)>,
    pub(crate) enqueued: Instant,
    /// How many notifications are not resyncs.
    pub(crate) plain: u64,
    /// How many are initial adds (never resyncs).
    pub(crate) initial: u64,
}

impl<K> Batch<K> {
    pub(crate) fn new(notes: Vec<(Notification<K>, bool)>, enqueued: Instant) -> Self {
        let plain = notes.iter().filter(|(_, sync)| !sync).count() as u64;
        let initial = notes.iter().filter(|(n, _)| n.is_initial_add()).count() as u64;
        Batch {
            notes,
            enqueued,
            plain,
            initial,
        }
    }

    /// How many notifications a listener gets from this batch: all, or all but the resyncs.
    pub(crate) fn count_for(&self, syncs: bool) -> u64 {
        if syncs {
            self.notes.len() as u64
        } else {
            self.plain
        }
    }
}
