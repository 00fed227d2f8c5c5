#![doc = include_str!("../README.md")]
//!
//! # Modules at a glance
//!
//! - [`Queue`]: client-go's `workqueue.Type` — dedup, dirty/processing rules, drain.
//! - [`DelayingQueue`]: `AddAfter` with one timer task per queue.
//! - [`RateLimitingQueue`] and the [`RateLimiter`]s: `AddRateLimited`, `Forget`, `NumRequeues`.
//! - [`MetricsProvider`]: the seven `workqueue_*` metrics of a named queue
//!   ([`PrometheusMetricsProvider`] with feature `prometheus`).
//! - [`parallelize_until`]: client-go's `ParallelizeUntil`.
//! - [`PriorityQueue`]: controller-runtime's priority queue.

mod delaying;
mod engine;
pub mod limiters;
mod metrics;
mod parallelize;
mod priority;
#[cfg(feature = "prometheus")]
mod prometheus;
mod queue;
mod rate_limiting;

pub use delaying::DelayingQueue;
pub use limiters::{
    default_controller_rate_limiter, BucketRateLimiter, ItemExponentialFailureRateLimiter,
    ItemFastSlowRateLimiter, MaxOfRateLimiter, RateLimiter, WithMaxWaitRateLimiter,
};
pub use metrics::{
    set_provider, CounterMetric, GaugeMetric, HistogramMetric, MetricsProvider,
    NoopMetricsProvider, SettableGaugeMetric, DEFAULT_UNFINISHED_WORK_UPDATE_PERIOD,
};
pub use parallelize::{parallelize_until, ParallelizeError, PiecePanic};
pub use priority::PriorityQueue;
#[cfg(feature = "prometheus")]
pub use prometheus::PrometheusMetricsProvider;
pub use queue::{Queue, QueueConfig};
pub use rate_limiting::RateLimitingQueue;
