//! The integration tests, one module per file, linked as one binary (`autotests = false`; a new
//! `tests/*.rs` must be named here).

mod helpers;
mod support;

mod apply;
mod cluster;
#[cfg(feature = "k8s-openapi")]
mod conditions;
mod create_or_update;
#[cfg(feature = "k8s-openapi")]
mod example_controller;
mod finalizer;
mod manager;
mod manager_cluster;
mod manager_controller;
#[cfg(feature = "prometheus")]
mod metrics;
mod owner;
mod scheduling;
