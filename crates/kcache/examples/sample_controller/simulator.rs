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
use kcache_core::{Object, ObjectKey};
use kcache_informer::{ResourceEventHandlerFuncs, SharedIndexInformer, SharedInformerFactory};
use kcache_transport::{Api, Client, Patch, PatchParams};
use kcache_workqueue::{default_controller_rate_limiter, QueueConfig, RateLimitingQueue};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::deployment::{available_replicas, spec_replicas};
use super::SampleError;

/// The log target of everything the simulation does, so it cannot be mistaken for the sample.
const SIMULATED: &str = "simulated-kube-controller-manager";

/// The simulated deployment controller.
pub struct DeploymentStatusSimulator {
    client: Client,
    deployments: SharedIndexInformer<Deployment>,
    queue: RateLimitingQueue<ObjectKey>,
    updates: AtomicU64,
}

impl DeploymentStatusSimulator {
    /// Shares the factory's Deployment informer (one watch for the controller and the
    /// simulator) and queues every Deployment that is added or changes.
    pub fn new(client: Client, factory: &SharedInformerFactory) -> Result<Arc<Self>, SampleError> {
        let deployments = factory.informer::<Deployment>();
        let queue = RateLimitingQueue::with_config(
            default_controller_rate_limiter(),
            QueueConfig::named("simulated-deployment-controller"),
        );
        let (q_add, q_update) = (queue.clone(), queue.clone());
        deployments.add_event_handler(
            ResourceEventHandlerFuncs::new()
                .on_add(move |d: &Arc<Deployment>, _| q_add.add(ObjectKey::of(&**d)))
                .on_update(move |_, d: &Arc<Deployment>| q_update.add(ObjectKey::of(&**d))),
        )?;
        Ok(Arc::new(DeploymentStatusSimulator {
            client,
            deployments,
            queue,
            updates: AtomicU64::new(0),
        }))
    }

    /// How many Deployment statuses it has written.
    pub fn updates(&self) -> u64 {
        self.updates.load(Ordering::Relaxed)
    }

    /// Rolls Deployments out until `cancel`.
    pub async fn run(self: Arc<Self>, cancel: CancellationToken) {
        let queue = self.queue.clone();
        tokio::spawn(async move {
            cancel.cancelled().await;
            queue.shut_down();
        });
        while let Some(key) = self.queue.get().await {
            match self.roll_out(&key).await {
                Ok(()) => self.queue.forget(&key),
                Err(e) => {
                    self.queue.add_rate_limited(key.clone());
                    let key = key.as_str();
                    let e = kcache_core::ErrorChain(&e);
                    tracing::warn!(target: SIMULATED, key, "status update failed; retrying: {e}");
                }
            }
            self.queue.done(&key);
        }
    }

    async fn roll_out(&self, key: &ObjectKey) -> Result<(), SampleError> {
        let Some(d) = self.deployments.indexer().get_by_key(key.as_str()) else {
            return Ok(());
        };
        let want = spec_replicas(&d);
        let generation = d.metadata.generation;
        let status = d.status.as_ref();
        if available_replicas(&d) == want
            && status.and_then(|s| s.replicas).unwrap_or(0) == want
            && status.and_then(|s| s.observed_generation) == generation
        {
            return Ok(());
        }
        let patch = json!({"status": {
            "observedGeneration": generation,
            "replicas": want,
            "updatedReplicas": want,
            "readyReplicas": want,
            "availableReplicas": want,
        }});
        Api::<Deployment>::namespaced(self.client.clone(), key.namespace())
            .patch_status(d.name(), &PatchParams::default(), &Patch::Merge(patch))
            .await?;
        self.updates.fetch_add(1, Ordering::Relaxed);
        let deployment = key.as_str();
        tracing::info!(target: SIMULATED, deployment, available = want, "rolled out (simulated)");
        Ok(())
    }
}
