//! The rate-limiting queue, client-go's `rateLimitingType` (`rate_limiting_queue.go`).

use std::fmt;
use std::hash::Hash;
use std::ops::Deref;
use std::sync::Arc;

use tokio::runtime::Handle;

use crate::delaying::DelayingQueue;
use crate::limiters::RateLimiter;
use crate::queue::QueueConfig;

/// A [`DelayingQueue`] whose retries are paced by a [`RateLimiter`] (client-go
/// `RateLimitingInterface`). The usual controller loop: `get`; on failure
/// [`add_rate_limited`](Self::add_rate_limited); on success [`forget`](Self::forget); always
/// `done`.
///
/// Needs a tokio runtime like [`DelayingQueue`]. Derefs to [`DelayingQueue`] (and so to
/// [`Queue`](crate::Queue)).
pub struct RateLimitingQueue<T: Hash + Eq + Clone + Send + Sync + 'static> {
    queue: DelayingQueue<T>,
    limiter: Arc<dyn RateLimiter<T>>,
}

impl<T: Hash + Eq + Clone + Send + Sync + 'static> Clone for RateLimitingQueue<T> {
    fn clone(&self) -> Self {
        RateLimitingQueue {
            queue: self.queue.clone(),
            limiter: self.limiter.clone(),
        }
    }
}

impl<T: Hash + Eq + Clone + Send + Sync + 'static> fmt::Debug for RateLimitingQueue<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RateLimitingQueue")
            .field("queue", &self.queue)
            .finish_non_exhaustive()
    }
}

impl<T: Hash + Eq + Clone + Send + Sync + 'static> Deref for RateLimitingQueue<T> {
    type Target = DelayingQueue<T>;
    fn deref(&self) -> &DelayingQueue<T> {
        &self.queue
    }
}

impl<T: Hash + Eq + Clone + Send + Sync + 'static> RateLimitingQueue<T> {
    /// An unnamed queue on the current tokio runtime (client-go `NewRateLimitingQueue`).
    /// Panics outside a tokio runtime.
    pub fn new(limiter: impl RateLimiter<T> + 'static) -> Self {
        Self::with_config(limiter, QueueConfig::default())
    }

    /// A queue built from `config` on the current tokio runtime
    /// (client-go `NewRateLimitingQueueWithConfig`). Panics outside a tokio runtime.
    pub fn with_config(limiter: impl RateLimiter<T> + 'static, config: QueueConfig) -> Self {
        Self::with_handle(limiter, config, &Handle::current())
    }

    /// A queue whose delay timer runs on `runtime`.
    pub fn with_handle(
        limiter: impl RateLimiter<T> + 'static,
        config: QueueConfig,
        runtime: &Handle,
    ) -> Self {
        RateLimitingQueue {
            queue: DelayingQueue::with_handle(config, runtime),
            limiter: Arc::new(limiter),
        }
    }

    /// Adds `item` after the limiter's delay for it (client-go `AddRateLimited`); records one
    /// more failure of it in the limiter.
    pub fn add_rate_limited(&self, item: T) {
        let delay = self.limiter.when(&item);
        self.queue.add_after(item, delay);
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
    pub fn delaying_queue(&self) -> &DelayingQueue<T> {
        &self.queue
    }
}
