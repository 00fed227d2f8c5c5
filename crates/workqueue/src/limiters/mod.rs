//! Rate limiters, client-go's `default_rate_limiters.go`: how long a failed item waits before
//! it is retried.

mod bucket;
mod exponential;
mod failures;
mod fast_slow;
mod max_of;
mod max_wait;

use std::hash::Hash;
use std::time::Duration;

pub use bucket::BucketRateLimiter;
pub use exponential::ItemExponentialFailureRateLimiter;
pub use failures::DEFAULT_MAX_TRACKED_ITEMS;
pub use fast_slow::ItemFastSlowRateLimiter;
pub use max_of::MaxOfRateLimiter;
pub use max_wait::WithMaxWaitRateLimiter;

/// Decides how long an item waits before it is retried (client-go `TypedRateLimiter`).
pub trait RateLimiter<T>: Send + Sync {
    /// The delay before `item` may be retried; records one more failure of it.
    fn when(&self, item: &T) -> Duration;
    /// Forgets `item`'s failures: the next `when` starts afresh. Call it once an item succeeded.
    fn forget(&self, item: &T);
    /// How many failures of `item` are remembered.
    fn num_requeues(&self, item: &T) -> usize;
}

impl<T, R: RateLimiter<T> + ?Sized> RateLimiter<T> for Box<R> {
    fn when(&self, item: &T) -> Duration {
        (**self).when(item)
    }
    fn forget(&self, item: &T) {
        (**self).forget(item)
    }
    fn num_requeues(&self, item: &T) -> usize {
        (**self).num_requeues(item)
    }
}

/// client-go's `DefaultControllerRateLimiter`: the larger of a per-item exponential backoff
/// (5ms doubling up to 1000s) and an overall token bucket (10 qps, burst 100).
pub fn default_controller_rate_limiter<T>() -> MaxOfRateLimiter<T>
where
    T: Hash + Eq + Clone + Send + Sync + 'static,
{
    MaxOfRateLimiter::new(vec![
        Box::new(ItemExponentialFailureRateLimiter::default()),
        Box::new(BucketRateLimiter::default()),
    ])
}
