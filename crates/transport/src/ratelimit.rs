//! The client-side rate limit on non-watch requests (client-go's token bucket: 5 qps, burst
//! 10 by default), on governor with a tokio clock so waits follow paused test time.

use std::num::NonZeroU32;
use std::time::Duration;

use governor::clock::Clock;
use governor::{Quota, RateLimiter as Gcra};

/// A clock that reads tokio's (pausable) time.
#[derive(Debug, Clone)]
struct TokioClock(tokio::time::Instant);

impl Clock for TokioClock {
    type Instant = Duration;
    fn now(&self) -> Duration {
        self.0.elapsed()
    }
}

type Limiter = Gcra<
    governor::state::NotKeyed,
    governor::state::InMemoryState,
    TokioClock,
    governor::middleware::NoOpMiddleware<Duration>,
>;

/// A token bucket: `burst` requests at once, then `qps` per second.
#[derive(Debug)]
pub struct RateLimiter {
    limiter: Limiter,
    clock: TokioClock,
}

impl RateLimiter {
    /// A limiter of `qps` requests per second with bursts of `burst`; `None` if `qps` is not
    /// positive (no limit).
    pub fn new(qps: f32, burst: u32) -> Option<RateLimiter> {
        if qps.is_nan() || qps <= 0.0 || !qps.is_finite() {
            return None;
        }
        let period = Duration::from_secs_f64(1.0 / f64::from(qps));
        let burst = NonZeroU32::new(burst).unwrap_or(NonZeroU32::MIN);
        let quota = Quota::with_period(period)?.allow_burst(burst);
        let clock = TokioClock(tokio::time::Instant::now());
        Some(RateLimiter {
            limiter: Gcra::direct_with_clock(quota, clock.clone()),
            clock,
        })
    }

    /// Waits until a request may be sent (client-go's `Wait`).
    pub async fn acquire(&self) {
        while let Err(not_until) = self.limiter.check() {
            tokio::time::sleep(not_until.wait_time_from(self.clock.now())).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn allows_a_burst_then_qps() {
        let l = RateLimiter::new(5.0, 10).unwrap();
        let start = tokio::time::Instant::now();
        for _ in 0..10 {
            l.acquire().await;
        }
        assert_eq!(start.elapsed(), Duration::ZERO);
        for _ in 0..5 {
            l.acquire().await;
        }
        let waited = start.elapsed();
        assert!(
            waited >= Duration::from_millis(999) && waited <= Duration::from_millis(1001),
            "{waited:?}"
        );
        assert!(RateLimiter::new(0.0, 10).is_none());
        assert!(RateLimiter::new(f32::NAN, 10).is_none());
    }
}
