#![doc = include_str!("../README.md")]

mod action;
mod cache;
mod controller;
mod enqueue;
mod error;
mod error_policy;
mod metrics;
mod names;
mod predicate;
#[cfg(feature = "prometheus")]
mod prometheus;
mod read_your_writes;
mod reconcile_request;
mod runnable;
mod runner;
mod source;

pub use action::Action;
pub use cache::{HandlerRegistration, ObjectCache, Storage};
pub use controller::{
    Controller, ControllerRunnable, DEFAULT_CONCURRENCY, DEFAULT_READ_YOUR_WRITES_TIMEOUT,
    DEFAULT_SHUTDOWN_TIMEOUT,
};
pub use enqueue::LOW_PRIORITY;
pub use error::ControllerError;
pub use error_policy::{is_terminal, DefaultErrorPolicy, ErrorPolicy, TerminalError};
pub use metrics::{
    set_metrics_provider, ControllerMetricsProvider, CounterMetric, GaugeMetric, HistogramMetric,
    NoopControllerMetrics, SettableGaugeMetric,
};
pub use predicate::{Event, Predicate};
#[cfg(feature = "prometheus")]
pub use prometheus::PrometheusControllerMetrics;
pub use read_your_writes::WriteTracker;
pub use reconcile_request::ReconcileRequest;
pub use runnable::{BoxFuture, Runnable};
pub use source::SourceOptions;
