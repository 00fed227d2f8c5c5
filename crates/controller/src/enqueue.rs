//! How events reach the controller's queue: priority for the initial list and resyncs, and the
//! debounce window.

use std::time::Duration;

use kcache_workqueue::{ByPriority, RateLimitingQueue};

use crate::reconcile_request::ReconcileRequest;

/// The controller's queue: rate-limited, delayed, ordered by priority (all adds use priority 0
/// when the priority option is off, which makes it FIFO).
pub(crate) type WorkQueue = RateLimitingQueue<ReconcileRequest, ByPriority<ReconcileRequest>>;

/// The priority of objects of the initial list and of resyncs (controller-runtime's
/// `handler.LowPriority`): after a restart, real changes go before the relisted backlog.
pub const LOW_PRIORITY: i32 = -100;

/// A cheap handle every source enqueues through.
#[derive(Clone)]
pub(crate) struct Enqueue {
    pub queue: WorkQueue,
    pub debounce: Duration,
    pub priority: bool,
}

impl Enqueue {
    /// Queues `request` for an event; `low`: it comes from the initial list or a resync.
    pub fn event(&self, request: ReconcileRequest, low: bool) {
        let priority = if low && self.priority {
            LOW_PRIORITY
        } else {
            0
        };
        if self.debounce.is_zero() {
            self.queue.add_with_priority(request, priority);
        } else {
            self.queue.add_debounced(request, self.debounce, priority);
        }
    }
}
