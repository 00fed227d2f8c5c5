#![doc = include_str!("../README.md")]
//!
//! # Modules at a glance
//!
//! - [`Queue`]: client-go's `workqueue.Type` — dedup, dirty/processing rules, drain — over a
//!   pluggable [`QueueOrdering`] (client-go's `QueueConfig.Queue`): [`Fifo`] by default,
//!   [`ByPriority`] for a [`PriorityQueue`] (controller-runtime's), or your own.
//! - [`DoneGuard`]: a processing item that calls `done` when dropped.
//! - [`DelayingQueue`]: `AddAfter` over any queue, with one timer per queue (a tokio task, or a
//!   thread of its own without a runtime).
//! - [`RateLimitingQueue`] and the [`RateLimiter`]s: `AddRateLimited`, `Forget`, `NumRequeues`,
//!   over any delaying queue.
//! - [`MetricsProvider`]: the seven `workqueue_*` metrics of a named queue
//!   ([`PrometheusMetricsProvider`] with feature `prometheus`); a priority queue reports its depth
//!   per priority to a provider that offers [`DepthMetricWithPriority`] (controller-runtime's).
//! - [`parallelize_until`]: client-go's `ParallelizeUntil`.
//! - [`PriorityQueue`]: controller-runtime's priority queue.

mod delaying;
mod engine;
mod guard;
pub mod limiters;
mod lock;
mod metrics;
mod ordering;
mod parallelize;
#[cfg(feature = "prometheus")]
mod prometheus;
mod queue;
mod rate_limiting;
mod timer;

pub use delaying::DelayingQueue;
pub use guard::DoneGuard;
pub use limiters::{
    default_controller_rate_limiter, BucketRateLimiter, ItemExponentialFailureRateLimiter,
    ItemFastSlowRateLimiter, MaxOfRateLimiter, RateLimiter, WithMaxWaitRateLimiter,
};
pub use metrics::{
    set_provider, CounterMetric, DepthMetricWithPriority, GaugeMetric, HistogramMetric,
    MetricsProvider, NoopMetricsProvider, SettableGaugeMetric,
    DEFAULT_UNFINISHED_WORK_UPDATE_PERIOD,
};
pub use ordering::{ByPriority, Fifo, QueueOrdering};
pub use parallelize::{parallelize_until, ParallelizeError, PiecePanic};
#[cfg(feature = "prometheus")]
pub use prometheus::{PrometheusMetricsBuilder, PrometheusMetricsProvider};
pub use queue::{PriorityQueue, Queue, QueueConfig};
pub use rate_limiting::RateLimitingQueue;
