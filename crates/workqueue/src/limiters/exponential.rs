//! client-go's `ItemExponentialFailureRateLimiter`.

use std::hash::Hash;
use std::time::Duration;

use super::failures::{Failures, DEFAULT_MAX_TRACKED_ITEMS};
use super::RateLimiter;

/// Per-item exponential backoff (client-go `ItemExponentialFailureRateLimiter`): the n-th
/// failure of an item (counting from 0) waits `base · 2ⁿ`, capped at `max` (also when the
/// multiplication overflows).
///
/// Memory is bounded: at most [`DEFAULT_MAX_TRACKED_ITEMS`](super::DEFAULT_MAX_TRACKED_ITEMS)
/// items (or [`with_max_tracked`](Self::with_max_tracked)'s) are remembered; a new item beyond
/// that evicts the item whose last failure is the oldest (in its shard, for a memory of 16k items
/// or more), which then starts again from `base`.
pub struct ItemExponentialFailureRateLimiter<T> {
    failures: Failures<T>,
    base: Duration,
    max: Duration,
}

impl<T: Hash + Eq + Clone> ItemExponentialFailureRateLimiter<T> {
    /// Backoff from `base` doubling up to `max`.
    pub fn new(base: Duration, max: Duration) -> Self {
        Self::with_max_tracked(base, max, DEFAULT_MAX_TRACKED_ITEMS)
    }

    /// As [`new`](Self::new), remembering at most `max_tracked` items (at least 1).
    pub fn with_max_tracked(base: Duration, max: Duration, max_tracked: usize) -> Self {
        ItemExponentialFailureRateLimiter {
            failures: Failures::new(max_tracked),
            base,
            max,
        }
    }

    /// How many items are remembered now.
    pub fn tracked_items(&self) -> usize {
        self.failures.tracked()
    }
}

impl<T: Hash + Eq + Clone> Default for ItemExponentialFailureRateLimiter<T> {
    /// client-go's defaults: 5ms doubling up to 1000s.
    fn default() -> Self {
        Self::new(Duration::from_millis(5), Duration::from_secs(1000))
    }
}

impl<T: Hash + Eq + Clone + Send + Sync> RateLimiter<T> for ItemExponentialFailureRateLimiter<T> {
    fn when(&self, item: &T) -> Duration {
        let exp = self.failures.record(item);
        let max = self.max.as_nanos();
        let nanos = 1u128
            .checked_shl(exp)
            .and_then(|factor| self.base.as_nanos().checked_mul(factor))
            .map_or(max, |n| n.min(max));
        Duration::from_nanos(u64::try_from(nanos).unwrap_or(u64::MAX))
    }

    fn forget(&self, item: &T) {
        self.failures.forget(item);
    }

    fn num_requeues(&self, item: &T) -> usize {
        self.failures.count(item) as usize
    }
}
