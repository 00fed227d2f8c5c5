//! `EventSourceObjectSpamFilter`: each source+object pair has a token bucket (client-go: burst
//! 25, one token back every 5 minutes); an event that finds its bucket empty is not written.

use std::time::Duration;

use tokio::time::Instant;

use super::Lru;

/// A passive token bucket per key.
///
/// Written as a few lines of arithmetic on `tokio::time::Instant` rather than reusing the
/// workspace's rate limiters (the workqueue's and the transport's buckets): those are single
/// shared limiters that make callers wait; this one needs thousands of independent,
/// never-waiting buckets (one per object, kept in an LRU) that paused-time tests can drive.
#[derive(Debug)]
pub(crate) struct SpamFilter {
    buckets: Lru<Bucket>,
    burst: f64,
    refill: Duration,
}

#[derive(Debug)]
struct Bucket {
    tokens: f64,
    last: Instant,
}

impl SpamFilter {
    /// `burst` tokens per key, one more every `refill` (zero: no filtering).
    pub(crate) fn new(capacity: usize, burst: u32, refill: Duration) -> Self {
        SpamFilter {
            buckets: Lru::new(capacity),
            burst: f64::from(burst),
            refill,
        }
    }

    /// Takes a token for `key`: `false` means the event is spam and is dropped.
    pub(crate) fn allow(&mut self, key: &str, now: Instant) -> bool {
        if self.refill.is_zero() {
            return true;
        }
        let burst = self.burst;
        let b = self.buckets.get_or_insert_with(key, || Bucket {
            tokens: burst,
            last: now,
        });
        let earned =
            now.saturating_duration_since(b.last).as_secs_f64() / self.refill.as_secs_f64();
        b.tokens = (b.tokens + earned).min(burst);
        b.last = now;
        if b.tokens >= 1.0 {
            b.tokens -= 1.0;
            true
        } else {
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// client-go `TestEventCorrelator` "events-from-same-source-and-object-within-burst" and the
    /// filter's refill: 25 pass, the 26th is spam, one more passes every 5 minutes.
    #[tokio::test(start_paused = true)]
    async fn burst_then_one_every_five_minutes_per_key() {
        let mut f = SpamFilter::new(16, 25, Duration::from_secs(300));
        let t0 = Instant::now();
        assert!((0..25).all(|_| f.allow("obj-a", t0)));
        assert!(!f.allow("obj-a", t0));
        assert!(f.allow("obj-b", t0), "another object has its own bucket");
        assert!(!f.allow("obj-a", t0 + Duration::from_secs(299)));
        assert!(f.allow("obj-a", t0 + Duration::from_secs(300 + 299)));
        assert!(!f.allow("obj-a", t0 + Duration::from_secs(600)));
        // a long quiet spell refills at most to the burst
        let later = t0 + Duration::from_secs(300 * 1000);
        assert!((0..25).all(|_| f.allow("obj-a", later)));
        assert!(!f.allow("obj-a", later));
    }
}
