//! What a processor listener buffers for its handler.

use std::sync::Arc;

use tokio::time::Instant;

use crate::delivery::{DeliveryBatch, Notification};

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
    /// What handlers see of the batch ([`Delivery::batch`](crate::Delivery::batch)).
    pub(crate) seen_as: Arc<DeliveryBatch>,
}

impl<K> Batch<K> {
    pub(crate) fn new(notes: Vec<(Notification<K>, bool)>, enqueued: Instant) -> Self {
        Self::seen_as(notes, enqueued, true)
    }

    /// A batch one listener alone gets (a late handler's initial adds): there is nothing to
    /// share ([`DeliveryBatch::is_shared`]).
    pub(crate) fn for_one_listener(notes: Vec<(Notification<K>, bool)>, enqueued: Instant) -> Self {
        Self::seen_as(notes, enqueued, false)
    }

    fn seen_as(notes: Vec<(Notification<K>, bool)>, enqueued: Instant, shared: bool) -> Self {
        let plain = notes.iter().filter(|(_, sync)| !sync).count() as u64;
        let initial = notes.iter().filter(|(n, _)| n.is_initial_add()).count() as u64;
        let seen_as = Arc::new(DeliveryBatch {
            len: notes.len(),
            shared,
        });
        Batch {
            notes,
            enqueued,
            plain,
            initial,
            seen_as,
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
