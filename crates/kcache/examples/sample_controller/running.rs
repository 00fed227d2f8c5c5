//! Starting and stopping the whole sample: CRD, factory, controller and (optionally) the
//! simulated deployment controller — what sample-controller's `main.go` wires up.

use std::sync::Arc;

use kcache_informer::SharedInformerFactory;
use kcache_transport::Client;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::controller::Controller;
use super::crd::ensure_foo_crd;
use super::factory_options;
use super::simulator::DeploymentStatusSimulator;
use super::SampleError;

/// A running sample-controller.
pub struct Running {
    /// The controller (its caches, queue and sync statistics).
    pub controller: Arc<Controller>,
    /// The simulated deployment controller, when started.
    pub simulator: Option<Arc<DeploymentStatusSimulator>>,
    factory: SharedInformerFactory,
    cancel: CancellationToken,
    controller_task: JoinHandle<Result<(), SampleError>>,
    simulator_task: Option<JoinHandle<()>>,
}

impl Running {
    /// Creates the Foo CRD if absent, then starts the informers (all namespaces, or only
    /// `namespace`), `workers` workers and, with `simulate_deployments`, the simulated
    /// deployment controller.
    pub async fn start(
        client: Client,
        namespace: Option<String>,
        workers: usize,
        simulate_deployments: bool,
    ) -> Result<Running, SampleError> {
        ensure_foo_crd(&client).await?;
        let factory = SharedInformerFactory::new(client.clone(), factory_options(namespace));
        let controller = Controller::new(client.clone(), &factory)?;
        let simulator = match simulate_deployments {
            true => Some(DeploymentStatusSimulator::new(client, &factory)?),
            false => None,
        };
        factory.start();
        let cancel = CancellationToken::new();
        let controller_task = tokio::spawn(controller.clone().run(workers, cancel.child_token()));
        let simulator_task = simulator
            .clone()
            .map(|s| tokio::spawn(s.run(cancel.child_token())));
        Ok(Running {
            controller,
            simulator,
            factory,
            cancel,
            controller_task,
            simulator_task,
        })
    }

    /// Stops the workers (each finishes the key in hand), the simulator and the informers, and
    /// returns the controller's result.
    pub async fn shutdown(self) -> Result<(), SampleError> {
        self.cancel.cancel();
        let result = self
            .controller_task
            .await
            .unwrap_or_else(|e| Err(SampleError::Task(e.to_string())));
        self.controller.events().shutdown().await;
        if let Some(t) = self.simulator_task {
            if let Err(e) = t.await {
                tracing::error!("the simulated deployment controller failed: {e}");
            }
        }
        self.factory.shutdown().await;
        result
    }
}
