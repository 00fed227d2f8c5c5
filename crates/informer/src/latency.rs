//! How long a handler's calls take: a fixed-bucket histogram its delivery job writes and
//! metrics read.
//!
//! The buckets are client-go's `informer_processing_latency_seconds` buckets (component-base
//! `metrics/prometheus/clientgo/fifo`), so dashboards built for one read the other. Only a
//! listener's delivery job writes its histogram, and never two jobs at once (the listener's lock
//! hands the job over), so an observation is plain loads and stores, no read-modify-write.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Upper bounds of the buckets, in seconds (a last, unbounded bucket follows).
pub const LATENCY_BUCKETS: [f64; 12] = [
    0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

/// Upper bounds in nanoseconds, for the comparison on the delivery path.
const BOUNDS_NANOS: [u64; 12] = [
    1_000_000,
    5_000_000,
    10_000_000,
    25_000_000,
    50_000_000,
    100_000_000,
    250_000_000,
    500_000_000,
    1_000_000_000,
    2_500_000_000,
    5_000_000_000,
    10_000_000_000,
];

#[derive(Default)]
pub(crate) struct LatencyHistogram {
    /// Per bucket (not cumulative), the last one unbounded.
    counts: [AtomicU64; 13],
    sum_nanos: AtomicU64,
}

impl LatencyHistogram {
    /// Records one call. One writer at a time (see the module docs).
    pub(crate) fn observe(&self, took: Duration) {
        let nanos = u64::try_from(took.as_nanos()).unwrap_or(u64::MAX);
        let bucket = BOUNDS_NANOS
            .iter()
            .position(|&b| nanos <= b)
            .unwrap_or(BOUNDS_NANOS.len());
        let c = &self.counts[bucket];
        c.store(c.load(Ordering::Relaxed) + 1, Ordering::Release);
        self.sum_nanos.store(
            self.sum_nanos.load(Ordering::Relaxed).saturating_add(nanos),
            Ordering::Release,
        );
    }

    /// The histogram now.
    pub(crate) fn snapshot(&self) -> HandlerLatency {
        let mut cumulative = [0u64; 12];
        let mut total = 0;
        for (i, c) in self.counts.iter().enumerate() {
            total += c.load(Ordering::Acquire);
            if i < cumulative.len() {
                cumulative[i] = total;
            }
        }
        HandlerLatency {
            cumulative,
            count: total,
            sum: Duration::from_nanos(self.sum_nanos.load(Ordering::Acquire)),
        }
    }
}

/// How long a handler's calls took: a histogram over [`LATENCY_BUCKETS`], as Prometheus
/// reports one (cumulative counts).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HandlerLatency {
    /// Calls that took at most `LATENCY_BUCKETS[i]` seconds.
    pub cumulative: [u64; 12],
    /// All calls, panicked ones included.
    pub count: u64,
    /// Time spent in all calls.
    pub sum: Duration,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_land_in_client_go_buckets() {
        let h = LatencyHistogram::default();
        h.observe(Duration::from_micros(200)); // ≤ 1 ms
        h.observe(Duration::from_millis(1)); // ≤ 1 ms (bounds are inclusive, as Prometheus')
        h.observe(Duration::from_millis(30)); // ≤ 50 ms
        h.observe(Duration::from_secs(11)); // +Inf only
        let s = h.snapshot();
        assert_eq!(s.count, 4);
        assert_eq!(
            s.cumulative,
            [2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3],
            "cumulative per bucket"
        );
        assert_eq!(s.sum, Duration::from_micros(11_031_200));
        for (b, n) in LATENCY_BUCKETS.iter().zip(BOUNDS_NANOS) {
            assert_eq!((b * 1e9).round() as u64, n);
        }
    }
}
