#![doc = include_str!("../README.md")]

mod action;
mod apply;
mod cache;
#[cfg(feature = "k8s-openapi")]
mod child;
#[cfg(feature = "k8s-openapi")]
pub mod conditions;
mod controller;
pub mod create_or_update;
mod enqueue;
mod error;
mod error_policy;
pub mod finalizer;
pub mod manager;
mod metrics;
mod names;
mod owner;
mod predicate;
#[cfg(feature = "prometheus")]
mod prometheus;
mod read_your_writes;
mod reconcile_error;
mod reconcile_request;
mod runnable;
mod runner;
mod source;

pub use action::Action;
pub use apply::{apply, apply_status};
pub use cache::{HandlerRegistration, KeyEvents, ObjectCache, Storage};
#[cfg(feature = "k8s-openapi")]
pub use child::controlled_child;
pub use controller::{
    Controller, ControllerRunnable, DEFAULT_CONCURRENCY, DEFAULT_READ_YOUR_WRITES_TIMEOUT,
    DEFAULT_SHUTDOWN_TIMEOUT,
};
pub use create_or_update::{create_or_patch, create_or_update, OperationResult};
pub use enqueue::LOW_PRIORITY;
pub use error::ControllerError;
pub use error_policy::{is_terminal, DefaultErrorPolicy, ErrorPolicy, TerminalError};
pub use finalizer::{add_finalizer, finalizer, remove_finalizer};
pub use manager::{Manager, ManagerBuilder, ManagerError};
pub use metrics::{
    set_metrics_provider, ControllerMetricsProvider, CounterMetric, GaugeMetric, HistogramMetric,
    NoopControllerMetrics, SettableGaugeMetric,
};
pub use owner::{
    has_controller_reference, owner_reference, remove_owner_reference, set_controller_reference,
    set_controller_reference_with, set_owner_reference, set_owner_reference_with, OwnerError,
};
pub use predicate::{Event, Predicate};
#[cfg(feature = "prometheus")]
pub use prometheus::PrometheusControllerMetrics;
pub use read_your_writes::{wrote, WriteTracker};
pub use reconcile_error::ReconcileError;
pub use reconcile_request::ReconcileRequest;
pub use runnable::{BoxFuture, Runnable};
pub use source::SourceOptions;
