//! sample-controller (github.com/kubernetes/sample-controller) rebuilt on kcache: the `Foo`
//! type and CRD, the controller, and a simulated deployment controller for servers that run no
//! controllers. Shared by `examples/sample-controller.rs` and
//! `crates/kcache/tests/sample_controller.rs`.

// `foo` is sample-controller's resource, not a placeholder name.
#![allow(clippy::disallowed_names)]

pub mod controller;
pub mod crd;
pub mod deployment;
pub mod events;
pub mod foo;
pub mod running;
pub mod simulator;
pub mod wait;

use std::time::Duration;

use kcache_informer::FactoryOptions;

/// sample-controller's informer resync period.
pub const RESYNC_PERIOD: Duration = Duration::from_secs(30);

/// The factory options of sample-controller: every informer resyncs every 30 s; `namespace`
/// narrows every watch (`None`: all namespaces).
pub fn factory_options(namespace: Option<String>) -> FactoryOptions {
    FactoryOptions {
        namespace,
        resync_period: RESYNC_PERIOD,
        ..FactoryOptions::default()
    }
}

/// What can go wrong in the sample.
#[derive(Debug, thiserror::Error)]
pub enum SampleError {
    /// The Deployment a Foo names exists and is controlled by something else.
    #[error("{0}")]
    ResourceExists(String),
    /// An API request failed.
    #[error(transparent)]
    Api(#[from] kcache_core::Error),
    /// A handler could not be registered.
    #[error(transparent)]
    Informer(#[from] kcache_informer::InformerError),
    /// The informers stopped before their caches synced.
    #[error("failed to wait for caches to sync")]
    CacheSync,
    /// A task of the sample panicked or was aborted.
    #[error("task failed: {0}")]
    Task(String),
    /// A condition did not hold in time.
    #[error(transparent)]
    Wait(#[from] wait::WaitTimeout),
    /// A cache did not catch up with the controller's own write in time (read your writes).
    #[error(transparent)]
    CacheBehind(#[from] kcache_informer::WaitForResourceVersionError),
}
