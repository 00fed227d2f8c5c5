//! client-go's `BucketRateLimiter`, on `governor`'s GCRA token bucket.

use std::num::NonZeroU32;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use governor::clock::Clock;
use governor::middleware::NoOpMiddleware;
use governor::state::{InMemoryState, NotKeyed};
use governor::Quota;
use parking_lot::Mutex;

use super::RateLimiter;

/// One token bucket shared by all items (client-go `BucketRateLimiter`, default 10 qps, burst
/// 100): every `when` takes a token and returns how long until that token exists. Like
/// `rate.Limiter.Reserve`, a token is reserved even when it is in the future, so a burst of
/// failures is spread out at `qps`. `forget` and `num_requeues` do nothing: it has no per-item
/// memory.
///
/// Time is `tokio::time`, so paused test time drives it.
pub struct BucketRateLimiter {
    limiter: Mutex<Gcra>,
    clock: ReservingClock,
}

type Gcra =
    governor::RateLimiter<NotKeyed, InMemoryState, ReservingClock, NoOpMiddleware<Duration>>;

/// tokio time since the limiter was built, plus a look-ahead used to reserve a future token.
#[derive(Clone)]
struct ReservingClock {
    start: tokio::time::Instant,
    ahead_nanos: Arc<AtomicU64>,
}

impl Clock for ReservingClock {
    type Instant = Duration;
    fn now(&self) -> Duration {
        self.start.elapsed() + Duration::from_nanos(self.ahead_nanos.load(Ordering::Relaxed))
    }
}

impl BucketRateLimiter {
    /// `qps` tokens per second, at most `burst` (at least 1) banked. The token period is kept
    /// within 1ns ..= about two years.
    ///
    /// # Panics
    /// If `qps` is not a positive number.
    pub fn new(qps: f64, burst: u32) -> Self {
        assert!(qps > 0.0, "BucketRateLimiter needs qps > 0, got {qps}");
        let longest = Duration::from_nanos(u64::MAX >> 8);
        let period = Duration::try_from_secs_f64(1.0 / qps)
            .unwrap_or(longest)
            .clamp(Duration::from_nanos(1), longest);
        let quota = Quota::with_period(period)
            .expect("period is at least 1ns")
            .allow_burst(NonZeroU32::new(burst.max(1)).expect("at least 1"));
        let clock = ReservingClock {
            start: tokio::time::Instant::now(),
            ahead_nanos: Arc::new(AtomicU64::new(0)),
        };
        BucketRateLimiter {
            limiter: Mutex::new(governor::RateLimiter::direct_with_clock(
                quota,
                clock.clone(),
            )),
            clock,
        }
    }
}

impl Default for BucketRateLimiter {
    /// client-go's default: 10 qps, burst 100.
    fn default() -> Self {
        Self::new(10.0, 100)
    }
}

impl<T> RateLimiter<T> for BucketRateLimiter {
    fn when(&self, _: &T) -> Duration {
        // The lock makes the look-ahead private to this call.
        let limiter = self.limiter.lock();
        match limiter.check() {
            Ok(()) => Duration::ZERO,
            Err(not_until) => {
                let wait = not_until.wait_time_from(self.clock.now());
                // Take the token at the time it becomes available: check again with the clock
                // moved forward by `wait`, which advances the bucket's state past it.
                let nanos = u64::try_from(wait.as_nanos()).unwrap_or(u64::MAX);
                self.clock.ahead_nanos.store(nanos, Ordering::Relaxed);
                let reserved = limiter.check();
                self.clock.ahead_nanos.store(0, Ordering::Relaxed);
                debug_assert!(reserved.is_ok(), "a token exists at its ready time");
                wait
            }
        }
    }

    fn forget(&self, _: &T) {}

    fn num_requeues(&self, _: &T) -> usize {
        0
    }
}
