//! client-go's token-bucket rate limiter (`util/flowcontrol/throttle.go`), as a GCRA (generic
//! cell rate algorithm): one instant, the time at which the bucket would be empty of every token
//! taken so far, stands for the whole bucket.
//!
//! A token taken at `now` moves that instant to `max(tat, now) + period`; the token exists once
//! the instant is at most `burst` periods ahead of `now`. `golang.org/x/time/rate`'s `Reserve`
//! (and so client-go's workqueue `BucketRateLimiter`) takes a token that only exists in the
//! future: [`TokenBucket::reserve`] moves the instant all the same and returns the wait.

use std::fmt;
use std::num::NonZeroU32;
use std::time::Duration;

use parking_lot::Mutex;

use crate::Error;

/// A token bucket: `burst` tokens at once, refilled at `qps` per second (client-go
/// `NewTokenBucketRateLimiter`). Shared by reference (`Arc`) between the users it limits.
///
/// Time is `tokio::time`'s clock, so paused test time drives it; it needs no runtime (outside one
/// it reads the system's monotonic clock).
pub struct TokenBucket {
    /// The theoretical arrival time: since `start`, when every token taken so far is paid for.
    tat: Mutex<Duration>,
    start: tokio::time::Instant,
    /// Time between two tokens.
    period: Duration,
    /// `burst` periods: how far ahead of now `tat` may run.
    tolerance: Duration,
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
        TokenBucket {
            tat: Mutex::new(Duration::ZERO),
            start: tokio::time::Instant::now(),
            period,
            tolerance: period.saturating_mul(burst.get()),
            qps,
            burst: burst.get(),
        }
    }

    /// Where `tat` goes if a token is taken now, and how long until that token exists.
    fn next(&self, tat: Duration) -> (Duration, Duration) {
        let now = self.start.elapsed();
        let next = tat.max(now).saturating_add(self.period);
        (
            next,
            next.saturating_sub(self.tolerance).saturating_sub(now),
        )
    }

    /// Takes a token if one is there now (client-go `TryAccept`).
    pub fn try_accept(&self) -> bool {
        self.take_or_wait_time().is_none()
    }

    /// Takes the next token, now or in the future, and returns how long until it exists
    /// (`rate.Limiter.Reserve().Delay()`). A burst of reservations is spread out at `qps`.
    pub fn reserve(&self) -> Duration {
        let mut tat = self.tat.lock();
        let (next, wait) = self.next(*tat);
        *tat = next;
        wait
    }

    /// How long until a token exists if there is none now; takes it if there is.
    fn take_or_wait_time(&self) -> Option<Duration> {
        let mut tat = self.tat.lock();
        let (next, wait) = self.next(*tat);
        if wait.is_zero() {
            *tat = next;
            None
        } else {
            Some(wait)
        }
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
