//! client-go's token-bucket rate limiter (`util/flowcontrol/throttle.go`), on `governor`'s GCRA.
//!
//! governor answers "may one request pass now, and if not, when?" but cannot take a token that
//! only exists in the future, which `golang.org/x/time/rate`'s `Reserve` (and so client-go's
//! workqueue `BucketRateLimiter`) does. [`TokenBucket::reserve`] gets it by asking again with the
//! bucket's clock moved forward to that time: the look-ahead is private to the call because every
//! operation holds the bucket's lock.

use std::fmt;
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use governor::clock::Clock;
use governor::middleware::NoOpMiddleware;
use governor::state::{InMemoryState, NotKeyed};
use governor::Quota;
use parking_lot::Mutex;

use crate::Error;

type Gcra =
    governor::RateLimiter<NotKeyed, InMemoryState, ReservingClock, NoOpMiddleware<Duration>>;

/// tokio time since the bucket was built, plus a look-ahead used to reserve a future token.
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

/// A token bucket: `burst` tokens at once, refilled at `qps` per second (client-go
/// `NewTokenBucketRateLimiter`). Shared by reference (`Arc`) between the users it limits.
///
/// Time is `tokio::time`'s clock, so paused test time drives it; it needs no runtime (outside one
/// it reads the system's monotonic clock).
pub struct TokenBucket {
    limiter: Mutex<Gcra>,
    clock: ReservingClock,
    qps: f64,
    burst: u32,
}

impl fmt::Debug for TokenBucket {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TokenBucket")
            .field("qps", &self.qps)
            .field("burst", &self.burst)
            .finish_non_exhaustive()
    }
}

impl TokenBucket {
    /// A bucket of `burst` tokens refilled at `qps` per second, starting full.
    ///
    /// `qps` must be positive and finite ([`Error::Qps`]), `burst` at least 1 ([`Error::Burst`]).
    /// A token period outside 1ns ..= about two years is clamped into it.
    pub fn new(qps: f64, burst: u32) -> Result<Self, Error> {
        if !(qps.is_finite() && qps > 0.0) {
            return Err(Error::Qps(qps));
        }
        let burst = NonZeroU32::new(burst).ok_or(Error::Burst)?;
        Ok(Self::checked(qps, burst))
    }

    /// A bucket with a whole number of tokens per second: infallible, for rates fixed in code
    /// (`NonZeroU32::MIN.saturating_add(9)` is 10 in a `const`).
    pub fn per_second(qps: NonZeroU32, burst: NonZeroU32) -> Self {
        Self::checked(f64::from(qps.get()), burst)
    }

    fn checked(qps: f64, burst: NonZeroU32) -> Self {
        let longest = Duration::from_nanos(u64::MAX >> 8);
        let period = Duration::try_from_secs_f64(1.0 / qps)
            .unwrap_or(longest)
            .clamp(Duration::from_nanos(1), longest);
        let quota = Quota::with_period(period)
            .unwrap_or_else(|| Quota::per_second(NonZeroU32::MAX))
            .allow_burst(burst);
        let clock = ReservingClock {
            start: tokio::time::Instant::now(),
            ahead_nanos: Arc::new(AtomicU64::new(0)),
        };
        TokenBucket {
            limiter: Mutex::new(governor::RateLimiter::direct_with_clock(
                quota,
                clock.clone(),
            )),
            clock,
            qps,
            burst: burst.get(),
        }
    }

    /// Takes a token if one is there now (client-go `TryAccept`).
    pub fn try_accept(&self) -> bool {
        self.limiter.lock().check().is_ok()
    }

    /// Takes the next token, now or in the future, and returns how long until it exists
    /// (`rate.Limiter.Reserve().Delay()`). A burst of reservations is spread out at `qps`.
    pub fn reserve(&self) -> Duration {
        let limiter = self.limiter.lock();
        match limiter.check() {
            Ok(()) => Duration::ZERO,
            Err(not_until) => {
                let wait = not_until.wait_time_from(self.clock.now());
                // Take the token at the time it exists: check again with the clock moved forward
                // by `wait`, which advances the bucket's state past it.
                let nanos = u64::try_from(wait.as_nanos()).unwrap_or(u64::MAX);
                self.clock.ahead_nanos.store(nanos, Ordering::Relaxed);
                let reserved = limiter.check();
                self.clock.ahead_nanos.store(0, Ordering::Relaxed);
                debug_assert!(reserved.is_ok(), "a token exists at its ready time");
                wait
            }
        }
    }

    /// How long until a token exists if there is none now; takes it if there is.
    fn take_or_wait_time(&self) -> Option<Duration> {
        let limiter = self.limiter.lock();
        limiter
            .check()
            .err()
            .map(|not_until| not_until.wait_time_from(self.clock.now()))
    }

    /// Waits until a token is taken (client-go `Wait`). Cancel-safe: a dropped wait has taken
    /// nothing, so waiters are not strictly first-come first-served.
    pub async fn wait(&self) {
        while let Some(wait) = self.take_or_wait_time() {
            tokio::time::sleep(wait).await;
        }
    }

    /// Blocks the calling thread until a token is taken (client-go `Accept`).
    pub fn accept(&self) {
        let wait = self.reserve();
        if !wait.is_zero() {
            std::thread::sleep(wait);
        }
    }

    /// Tokens added per second (client-go `QPS`).
    pub fn qps(&self) -> f64 {
        self.qps
    }

    /// Most tokens banked at once.
    pub fn burst(&self) -> u32 {
        self.burst
    }
}
