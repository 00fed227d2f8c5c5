//! The rate-limiting queue, client-go's `rateLimitingType` (`rate_limiting_queue.go`), over any
//! ordering.

use std::fmt;
use std::hash::Hash;
use std::ops::Deref;
use std::sync::Arc;

use tokio::runtime::Handle;

use crate::delaying::DelayingQueue;
use crate::limiters::RateLimiter;
use crate::ordering::{Fifo, QueueOrdering};
use crate::queue::QueueConfig;

/// A [`DelayingQueue`] whose retries are paced by a [`RateLimiter`] (client-go
/// `RateLimitingInterface`). The usual controller loop: `get`; on failure
/// [`add_rate_limited`](Self::add_rate_limited); on success [`forget`](Self::forget); always
/// `done`.
///
/// Works with or without a tokio runtime, like [`DelayingQueue`]. Derefs to [`DelayingQueue`]
/// (and so to [`Queue`](crate::Queue)). Any ordering: [`wrap`](Self::wrap) a
/// [`PriorityQueue`](crate::PriorityQueue) for controller-runtime's priority queue.
pub struct RateLimitingQueue<T, O = Fifo<T>> {
    queue: DelayingQueue<T, O>,
    limiter: Arc<dyn RateLimiter<T>>,
}

impl<T, O> Clone for RateLimitingQueue<T, O>
where
    T: Hash + Eq + Clone + Send + Sync + 'static,
    O: QueueOrdering<T>,
{
    fn clone(&self) -> Self {
        RateLimitingQueue {
            queue: self.queue.clone(),
            limiter: self.limiter.clone(),
        }
    }
}

impl<T, O> fmt::Debug for RateLimitingQueue<T, O>
where
    T: Hash + Eq + Clone + Send + Sync + 'static,
    O: QueueOrdering<T>,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RateLimitingQueue")
            .field("queue", &self.queue)
            .finish_non_exhaustive()
    }
}

impl<T, O> Deref for RateLimitingQueue<T, O>
where
    T: Hash + Eq + Clone + Send + Sync + 'static,
    O: QueueOrdering<T>,
{
    type Target = DelayingQueue<T, O>;
    fn deref(&self) -> &DelayingQueue<T, O> {
        &self.queue
    }
}

impl<T: Hash + Eq + Clone + Send + Sync + 'static> RateLimitingQueue<T> {
    /// An unnamed FIFO queue (client-go `NewRateLimitingQueue`).
    pub fn new(limiter: impl RateLimiter<T> + 'static) -> Self {
        Self::with_config(limiter, QueueConfig::default())
    }

    /// A FIFO queue built from `config` (client-go `NewRateLimitingQueueWithConfig`).
    pub fn with_config(limiter: impl RateLimiter<T> + 'static, config: QueueConfig) -> Self {
        Self::wrap(DelayingQueue::with_config(config), limiter)
    }

    /// A FIFO queue whose delay timer runs on `runtime`.
    pub fn with_handle(
        limiter: impl RateLimiter<T> + 'static,
        config: QueueConfig,
        runtime: &Handle,
    ) -> Self {
        Self::wrap(DelayingQueue::with_handle(config, runtime), limiter)
    }
}

impl<T, O> RateLimitingQueue<T, O>
where
    T: Hash + Eq + Clone + Send + Sync + 'static,
    O: QueueOrdering<T>,
{
    /// Paces the retries of `queue` — a [`DelayingQueue`], or a [`Queue`](crate::Queue) of any
    /// ordering, which gets a timer as [`DelayingQueue::wrap`] does — with `limiter` (client-go
    /// `RateLimitingQueueConfig.DelayingQueue`).
    pub fn wrap(
        queue: impl Into<DelayingQueue<T, O>>,
        limiter: impl RateLimiter<T> + 'static,
    ) -> Self {
        RateLimitingQueue {
            queue: queue.into(),
            limiter: Arc::new(limiter),
        }
    }

    /// Adds `item` after the limiter's delay for it (client-go `AddRateLimited`), with
    /// priority 0; records one more failure of it in the limiter.
    pub fn add_rate_limited(&self, item: T) {
        self.add_rate_limited_with_priority(item, 0);
    }

    /// [`add_rate_limited`](Self::add_rate_limited) with `priority`, which the item keeps while
    /// it waits (controller-runtime `AddWithOpts{RateLimited, Priority}`).
    pub fn add_rate_limited_with_priority(&self, item: T, priority: i32) {
        let delay = self.limiter.when(&item);
        self.queue.add_after_with_priority(item, delay, priority);
    }

    /// Clears the limiter's memory of `item` (client-go `Forget`). It does not remove the item
    /// from the queue.
    pub fn forget(&self, item: &T) {
        self.limiter.forget(item);
    }

    /// How many failures of `item` the limiter remembers (client-go `NumRequeues`).
    pub fn num_requeues(&self, item: &T) -> usize {
        self.limiter.num_requeues(item)
    }

    /// The underlying [`DelayingQueue`].
    pub fn delaying_queue(&self) -> &DelayingQueue<T, O> {
        &self.queue
    }
}
