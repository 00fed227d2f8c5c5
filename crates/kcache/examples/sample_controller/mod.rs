//! sample-controller (github.com/kubernetes/sample-controller) rebuilt on kcache-controller: the
//! `Foo` type and CRD, the controller, and a simulated deployment controller for servers that
//! run no controllers. Shared by `examples/sample-controller.rs` and
//! `crates/kcache/tests/sample_controller.rs`.

// `foo` is sample-controller's resource, not a placeholder name.
#![allow(clippy::disallowed_names)]

pub mod controller;
pub mod crd;
pub mod deployment;
pub mod foo;
pub mod simulator;
pub mod wait;

use std::sync::Arc;
use std::time::Duration;

use kcache::controller::{Manager, ManagerBuilder};
use kcache::core::BoxError;
use kcache::informer::FactoryOptions;
use kcache::sharding::Shard;
use kcache::transport::Client;

use controller::Ctx;
use simulator::DeploymentStatusSimulator;

/// sample-controller's informer resync period.
pub const RESYNC_PERIOD: Duration = Duration::from_secs(30);

/// A manager on `client` with sample-controller's informers ([`factory_options`]).
pub fn manager(client: Client, namespace: Option<String>) -> ManagerBuilder {
    Manager::builder(client).factory_options(factory_options(namespace))
}

/// sample-controller's informers: every one resyncs every 30 s; `namespace` narrows every watch
/// (`None`: all namespaces).
pub fn factory_options(namespace: Option<String>) -> FactoryOptions {
    FactoryOptions {
        namespace,
        resync_period: RESYNC_PERIOD,
        ..FactoryOptions::default()
    }
}

/// The sample added to a manager (what sample-controller's `main.go` wires up).
pub struct Sample {
    /// The Foo controller's caches and statistics.
    pub ctx: Arc<Ctx>,
    /// The simulated deployment controller, when added.
    pub simulator: Option<Arc<DeploymentStatusSimulator>>,
}

/// Creates the Foo CRD if absent, then [`add_controllers`].
pub async fn add_to(
    manager: &mut Manager,
    workers: usize,
    simulate_deployments: bool,
    shard: Option<Shard>,
) -> Result<Sample, BoxError> {
    crd::ensure_foo_crd(manager.client()).await?;
    add_controllers(manager, workers, simulate_deployments, shard)
}

/// Adds the Foo controller with `workers` workers (for `shard`'s objects only, when sharded)
/// and, with `simulate_deployments`, the simulated deployment controller to `manager`.
pub fn add_controllers(
    manager: &mut Manager,
    workers: usize,
    simulate_deployments: bool,
    shard: Option<Shard>,
) -> Result<Sample, BoxError> {
    let ctx = controller::add_to(manager, workers, shard)?;
    let simulator = match simulate_deployments {
        true => Some(DeploymentStatusSimulator::add_to(manager)?),
        false => None,
    };
    Ok(Sample { ctx, simulator })
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
    /// The Deployment could not be given its controller reference.
    #[error(transparent)]
    Owner(#[from] kcache::controller::OwnerError),
    /// A condition did not hold in time.
    #[error(transparent)]
    Wait(#[from] wait::WaitTimeout),
}
