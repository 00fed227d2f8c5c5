//! SIMULATION of kube-controller-manager's deployment controller — not part of
//! sample-controller.
//!
//! kcache-testserver (like envtest's bare kube-apiserver) runs no controllers, so nothing would
//! ever create pods or report a Deployment's replicas as available. This stand-in marks every
//! Deployment fully rolled out: `status.{replicas, updatedReplicas, readyReplicas,
//! availableReplicas} = spec.replicas` and `observedGeneration = metadata.generation`, written
//! through the `status` subresource. Against a real cluster with kube-controller-manager, leave
//! it off.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use k8s_openapi::api::apps::v1::Deployment;
use kcache::controller::{Action, Controller, DefaultErrorPolicy, Manager, ManagerError};
use kcache::transport::{Api, Client, Patch, PatchParams};
use kcache::{Object, ObjectKey};
use serde_json::json;

use super::deployment::{available_replicas, spec_replicas};

/// The name of the simulation (its controller, and the log target of what it does), so it
/// cannot be mistaken for the sample.
const SIMULATED: &str = "simulated-kube-controller-manager";

/// The simulated deployment controller.
pub struct DeploymentStatusSimulator {
    client: Client,
    updates: AtomicU64,
}

impl DeploymentStatusSimulator {
    /// Adds the simulation to `manager`: a controller of Deployments on the factory's Deployment
    /// informer (one watch for the sample and the simulation), running where the sample runs.
    pub fn add_to(manager: &mut Manager) -> Result<Arc<Self>, ManagerError> {
        let simulator = Arc::new(DeploymentStatusSimulator {
            client: manager.client().clone(),
            updates: AtomicU64::new(0),
        });
        let controller = Controller::for_::<Deployment>(manager.factory()).named(SIMULATED);
        manager.add(controller.into_runnable(roll_out, DefaultErrorPolicy, simulator.clone()))?;
        Ok(simulator)
    }

    /// How many Deployment statuses it has written.
    pub fn updates(&self) -> u64 {
        self.updates.load(Ordering::Relaxed)
    }
}

async fn roll_out(
    d: Arc<Deployment>,
    simulator: Arc<DeploymentStatusSimulator>,
) -> Result<Action, kcache::core::Error> {
    let want = spec_replicas(&d);
    let generation = d.metadata.generation;
    let status = d.status.as_ref();
    if available_replicas(&d) == want
        && status.and_then(|s| s.replicas).unwrap_or(0) == want
        && status.and_then(|s| s.observed_generation) == generation
    {
        return Ok(Action::await_change());
    }
    let patch = json!({"status": {
        "observedGeneration": generation,
        "replicas": want,
        "updatedReplicas": want,
        "readyReplicas": want,
        "availableReplicas": want,
    }});
    let namespace = d.namespace().unwrap_or_default();
    Api::<Deployment>::namespaced(simulator.client.clone(), namespace)
        .patch_status(d.name(), &PatchParams::default(), &Patch::Merge(patch))
        .await?;
    simulator.updates.fetch_add(1, Ordering::Relaxed);
    let deployment = ObjectKey::of(&*d);
    let deployment = deployment.as_str();
    tracing::info!(target: SIMULATED, deployment, available = want, "rolled out (simulated)");
    Ok(Action::await_change())
}
