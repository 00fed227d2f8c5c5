//! client-go's `ItemFastSlowRateLimiter`.

use std::hash::Hash;
use std::time::Duration;

use super::failures::{Failures, DEFAULT_MAX_TRACKED_ITEMS};
use super::RateLimiter;

/// Retries an item quickly a few times, then slowly (client-go `ItemFastSlowRateLimiter`):
/// failure n (counting from 1) waits `fast` while n ≤ `max_fast_attempts`, else `slow`.
///
/// Memory is bounded like [`ItemExponentialFailureRateLimiter`](super::ItemExponentialFailureRateLimiter)'s:
/// at most `max_tracked` items, evicting the least recently failed one.
pub struct ItemFastSlowRateLimiter<T> {
    failures: Failures<T>,
    fast: Duration,
    slow: Duration,
    max_fast_attempts: u32,
}

impl<T: Hash + Eq + Clone> ItemFastSlowRateLimiter<T> {
    /// `fast` for the first `max_fast_attempts` failures of an item, `slow` after.
    pub fn new(fast: Duration, slow: Duration, max_fast_attempts: u32) -> Self {
        Self::with_max_tracked(fast, slow, max_fast_attempts, DEFAULT_MAX_TRACKED_ITEMS)
    }

    /// As [`new`](Self::new), remembering at most `max_tracked` items (at least 1).
    pub fn with_max_tracked(
        fast: Duration,
        slow: Duration,
        max_fast_attempts: u32,
        max_tracked: usize,
    ) -> Self {
        ItemFastSlowRateLimiter {
            failures: Failures::new(max_tracked),
            fast,
            slow,
            max_fast_attempts,
        }
    }

    /// How many items are remembered now.
    pub fn tracked_items(&self) -> usize {
        self.failures.tracked()
    }
}

impl<T: Hash + Eq + Clone + Send + Sync> RateLimiter<T> for ItemFastSlowRateLimiter<T> {
    fn when(&self, item: &T) -> Duration {
        let failures = self.failures.record(item).saturating_add(1);
        if failures <= self.max_fast_attempts {
            self.fast
        } else {
            self.slow
        }
    }

    fn forget(&self, item: &T) {
        self.failures.forget(item);
    }

    fn num_requeues(&self, item: &T) -> usize {
        self.failures.count(item) as usize
    }
}
