//! client-go's `WithMaxWaitRateLimiter`.

use std::time::Duration;

use super::RateLimiter;

/// Caps another limiter's delay at `max_wait` (client-go `WithMaxWaitRateLimiter`).
pub struct WithMaxWaitRateLimiter<T> {
    limiter: Box<dyn RateLimiter<T>>,
    max_wait: Duration,
}

impl<T> WithMaxWaitRateLimiter<T> {
    /// `limiter`'s delays, never longer than `max_wait`.
    pub fn new(limiter: Box<dyn RateLimiter<T>>, max_wait: Duration) -> Self {
        WithMaxWaitRateLimiter { limiter, max_wait }
    }
}

impl<T> RateLimiter<T> for WithMaxWaitRateLimiter<T> {
    fn when(&self, item: &T) -> Duration {
        self.limiter.when(item).min(self.max_wait)
    }

    fn forget(&self, item: &T) {
        self.limiter.forget(item);
    }

    fn num_requeues(&self, item: &T) -> usize {
        self.limiter.num_requeues(item)
    }
}
