//! The broadcaster's settings, with client-go's defaults.

use std::time::Duration;

use crate::write::WriteRetry;

/// client-go's `maxLruCacheEntries`: the correlator's default cache size.
const DEFAULT_CACHE_SIZE: usize = 4096;

/// How a [`EventBroadcaster`](crate::EventBroadcaster) queues, correlates and writes events.
#[derive(Debug, Clone, PartialEq)]
pub struct BroadcasterOptions {
    /// Events waiting to be written; a recorder finding the queue full drops the event
    /// (counted, logged). client-go's `maxQueuedEvents`: 1000.
    pub queue_capacity: usize,
    /// An isomorphic event not seen for this long ends its series: the final count is written
    /// and the event forgotten, so a later one starts a new event (client-go's `finishTime`:
    /// 6 minutes). Also how often series are checked.
    pub series_finish: Duration,
    /// How often every open series is written again, so a long series stays visible while
    /// the server's event TTL (1 hour) runs (client-go's `refreshTime`: 30 minutes).
    pub series_refresh: Duration,
    /// Spam filter, aggregation and cache sizes.
    pub correlator: CorrelatorOptions,
    /// Retries of a failed write.
    pub retry: WriteRetry,
}

impl Default for BroadcasterOptions {
    fn default() -> Self {
        BroadcasterOptions {
            queue_capacity: 1000,
            series_finish: Duration::from_secs(6 * 60),
            series_refresh: Duration::from_secs(30 * 60),
            correlator: CorrelatorOptions::default(),
            retry: WriteRetry::default(),
        }
    }
}

/// client-go's `CorrelatorOptions`.
#[derive(Debug, Clone, PartialEq)]
pub struct CorrelatorOptions {
    /// Entries per cache (spam buckets, aggregation records, counts); least recently used
    /// evicted. client-go's `maxLruCacheEntries`: 4096.
    pub cache_size: usize,
    /// Events one source may write about one object at once (client-go: 25).
    pub spam_burst: u32,
    /// One more such event allowed per this period (client-go: 1 per 300 s). Zero turns the
    /// spam filter off.
    pub spam_refill: Duration,
    /// Different messages with one reason about one object before they are aggregated
    /// (`core/v1` only; client-go: 10).
    pub aggregate_max_events: usize,
    /// Within this period (client-go: 600 s).
    pub aggregate_interval: Duration,
}

impl Default for CorrelatorOptions {
    fn default() -> Self {
        CorrelatorOptions {
            cache_size: DEFAULT_CACHE_SIZE,
            spam_burst: 25,
            spam_refill: Duration::from_secs(300),
            aggregate_max_events: 10,
            aggregate_interval: Duration::from_secs(600),
        }
    }
}
