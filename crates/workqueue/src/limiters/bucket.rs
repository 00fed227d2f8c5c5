//! client-go's `BucketRateLimiter`, on kcache-flowcontrol's token bucket.

use std::num::NonZeroU32;
use std::time::Duration;

use kcache_flowcontrol::{Error, TokenBucket};

use super::RateLimiter;

/// One token bucket shared by all items (client-go `BucketRateLimiter`, default 10 qps, burst
/// 100): every `when` takes a token and returns how long until that token exists. Like
/// `rate.Limiter.Reserve`, a token is reserved even when it is in the future, so a burst of
/// failures is spread out at `qps`. `forget` and `num_requeues` do nothing: it has no per-item
/// memory.
///
/// Time is `tokio::time`, so paused test time drives it.
#[derive(Debug)]
pub struct BucketRateLimiter {
    bucket: TokenBucket,
}

impl BucketRateLimiter {
    /// `qps` tokens per second, at most `burst` banked; an [`Error`] names a `qps` that is not
    /// positive and finite, or a `burst` of 0.
    pub fn new(qps: f64, burst: u32) -> Result<Self, Error> {
        TokenBucket::new(qps, burst).map(Self::from)
    }
}

impl From<TokenBucket> for BucketRateLimiter {
    /// A limiter over `bucket` (client-go `BucketRateLimiter{Limiter: ...}`).
    fn from(bucket: TokenBucket) -> Self {
        BucketRateLimiter { bucket }
    }
}

impl Default for BucketRateLimiter {
    /// client-go's default: 10 qps, burst 100.
    fn default() -> Self {
        const QPS: NonZeroU32 = NonZeroU32::MIN.saturating_add(9);
        const BURST: NonZeroU32 = NonZeroU32::MIN.saturating_add(99);
        Self::from(TokenBucket::per_second(QPS, BURST))
    }
}

impl<T> RateLimiter<T> for BucketRateLimiter {
    fn when(&self, _: &T) -> Duration {
        self.bucket.reserve()
    }

    fn forget(&self, _: &T) {}

    fn num_requeues(&self, _: &T) -> usize {
        0
    }
}
