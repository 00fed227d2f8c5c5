//! The Foo controller: sample-controller's `controller.go` on kcache's informers and workqueue.

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::apps::v1::Deployment;
use kcache_core::{Object, ObjectKey, Resource};
use kcache_informer::{
    DeletedObject, ResourceEventHandler, SharedIndexInformer, SharedInformerFactory,
};
use kcache_store::Indexer;
use kcache_transport::{Api, Client, PostParams};
use kcache_workqueue::{default_controller_rate_limiter, QueueConfig, RateLimitingQueue};
use parking_lot::Mutex;
use tokio_util::sync::CancellationToken;

use super::deployment::{
    available_replicas, controller_of, is_controlled_by, new_deployment, spec_replicas,
};
use super::events::FooEvents;
use super::foo::{Foo, FooStatus};
use super::SampleError;

/// The name in logs and the field manager of every write (sample-controller's
/// `controllerAgentName` / `FieldManager`).
pub const CONTROLLER_AGENT_NAME: &str = "sample-controller";
/// Event reason when a Foo is synced.
pub const SUCCESS_SYNCED: &str = "Synced";
/// Event reason when the Deployment a Foo names exists but is not controlled by it.
pub const ERR_RESOURCE_EXISTS: &str = "ErrResourceExists";
/// Event message when a Foo is synced.
pub const MESSAGE_RESOURCE_SYNCED: &str = "Foo synced successfully";

/// sample-controller's `MessageResourceExists`: `Resource %q already exists and is not managed
/// by Foo`.
pub fn message_resource_exists(name: &str) -> String {
    format!("Resource {name:?} already exists and is not managed by Foo")
}

/// How one sync of a key ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SyncOutcome {
    /// The Deployment and the Foo's status match the spec.
    Synced,
    /// The Foo is not in the cache any more: nothing to do, the key is forgotten.
    Gone,
    /// The Foo cannot be acted on (no `deploymentName`); not retried until it changes.
    Ignored(String),
    /// The sync failed and the key was requeued with rate-limited backoff.
    Failed(String),
}

/// What happened to one key so far; what the demo summarises and the test waits on.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SyncStats {
    /// Syncs that ended [`SyncOutcome::Synced`].
    pub synced: u64,
    /// Syncs that failed (each one requeued the key with backoff).
    pub failed: u64,
    /// Syncs that found the Foo deleted.
    pub gone: u64,
    /// The latest outcome.
    pub last: Option<SyncOutcome>,
}

/// sample-controller's `Controller`: Foo and Deployment informers feed Foo keys into a
/// rate-limited workqueue; workers reconcile each Foo's Deployment and status.
pub struct Controller {
    client: Client,
    foos: SharedIndexInformer<Foo>,
    deployments: SharedIndexInformer<Deployment>,
    queue: RateLimitingQueue<ObjectKey>,
    stats: Mutex<BTreeMap<ObjectKey, SyncStats>>,
    events: FooEvents,
}

impl Controller {
    /// Takes the Foo and Deployment informers from `factory` and registers the handlers
    /// (sample-controller's `NewController`). Start the factory afterwards.
    pub fn new(client: Client, factory: &SharedInformerFactory) -> Result<Arc<Self>, SampleError> {
        let foos = factory.informer::<Foo>();
        let deployments = factory.informer::<Deployment>();
        let queue = RateLimitingQueue::with_config(
            default_controller_rate_limiter(),
            QueueConfig::named("Foos"),
        );

        foos.add_event_handler(EnqueueFoo(queue.clone()))?;
        deployments.add_event_handler(EnqueueOwningFoo {
            foos: foos.indexer().clone(),
            queue: queue.clone(),
        })?;

        Ok(Arc::new(Controller {
            events: FooEvents::start(client.clone()),
            client,
            foos,
            deployments,
            queue,
            stats: Mutex::new(BTreeMap::new()),
        }))
    }

    /// The Foo informer (its indexer is the Foo lister's cache).
    pub fn foos(&self) -> &SharedIndexInformer<Foo> {
        &self.foos
    }

    /// The Deployment informer.
    pub fn deployments(&self) -> &SharedIndexInformer<Deployment> {
        &self.deployments
    }

    /// The Events recorded on Foos.
    pub fn events(&self) -> &FooEvents {
        &self.events
    }

    /// The workqueue of Foo keys.
    pub fn queue(&self) -> &RateLimitingQueue<ObjectKey> {
        &self.queue
    }

    /// Per Foo key, how its syncs ended so far.
    pub fn sync_stats(&self) -> BTreeMap<ObjectKey, SyncStats> {
        self.stats.lock().clone()
    }

    /// Waits for both caches, runs `workers` workers until `cancel`, then shuts the queue down
    /// and waits for the workers to finish the items in hand (sample-controller's `Run`).
    pub async fn run(
        self: Arc<Self>,
        workers: usize,
        cancel: CancellationToken,
    ) -> Result<(), SampleError> {
        tracing::info!("Starting Foo controller; waiting for informer caches to sync");
        let caches = async {
            self.foos.wait_for_cache_sync().await && self.deployments.wait_for_cache_sync().await
        };
        let synced = tokio::select! {
            synced = caches => synced,
            () = cancel.cancelled() => {
                self.queue.shut_down();
                return Ok(());
            }
        };
        if !synced {
            self.queue.shut_down();
            return Err(SampleError::CacheSync);
        }
        tracing::info!(workers, "Starting workers");
        let handles: Vec<_> = (0..workers)
            .map(|id| tokio::spawn(self.clone().run_worker(id)))
            .collect();
        cancel.cancelled().await;
        tracing::info!("Shutting down workers");
        self.queue.shut_down();
        for h in handles {
            if let Err(e) = h.await {
                tracing::error!("a worker task failed: {e}");
            }
        }
        Ok(())
    }

    /// Processes keys until the queue is shut down and empty (`runWorker` +
    /// `processNextWorkItem`): success forgets the key's failures, failure requeues it with
    /// the rate limiter's backoff, and the key is always marked done.
    async fn run_worker(self: Arc<Self>, id: usize) {
        while let Some(key) = self.queue.get().await {
            let outcome = match self.sync_handler(&key).await {
                Ok(outcome) => {
                    self.queue.forget(&key);
                    outcome
                }
                Err(e) => {
                    self.queue.add_rate_limited(key.clone());
                    let key = key.as_str();
                    let e = kcache_core::ErrorChain(&e).to_string();
                    tracing::error!(worker = id, key, "error syncing; requeuing: {e}");
                    SyncOutcome::Failed(e)
                }
            };
            self.record(&key, outcome);
            self.queue.done(&key);
        }
    }

    fn record(&self, key: &ObjectKey, outcome: SyncOutcome) {
        let mut stats = self.stats.lock();
        let s = stats.entry(key.clone()).or_default();
        match &outcome {
            SyncOutcome::Synced => s.synced += 1,
            SyncOutcome::Gone => s.gone += 1,
            SyncOutcome::Failed(_) => s.failed += 1,
            SyncOutcome::Ignored(_) => {}
        }
        s.last = Some(outcome);
    }

    /// Brings the Foo's Deployment and status in line with its spec (`syncHandler`).
    async fn sync_handler(&self, key: &ObjectKey) -> Result<SyncOutcome, SampleError> {
        let Some(foo) = self.foos.indexer().get_by_key(key.as_str()) else {
            let key = key.as_str();
            tracing::info!(key, "Foo referenced by item in work queue no longer exists");
            return Ok(SyncOutcome::Gone);
        };
        let name = foo.spec.deployment_name.as_str();
        if name.is_empty() {
            let why = "Deployment name missing from object reference".to_string();
            tracing::error!(key = key.as_str(), "{why}");
            return Ok(SyncOutcome::Ignored(why));
        }
        let api: Api<Deployment> = Api::namespaced(self.client.clone(), key.namespace());
        let cached = self
            .deployments
            .indexer()
            .get_by_key(ObjectKey::new(key.namespace(), name).as_str());
        let deployment = match cached {
            Some(d) => d,
            None => {
                tracing::info!(key = key.as_str(), deployment = name, "creating Deployment");
                Arc::new(api.create(&write_params(), &new_deployment(&foo)).await?)
            }
        };
        if !is_controlled_by(&deployment, &foo) {
            let msg = message_resource_exists(name);
            self.events.resource_exists(&foo, &msg);
            return Err(SampleError::ResourceExists(msg));
        }
        let deployment = match foo.spec.replicas {
            Some(desired) if desired != spec_replicas(&deployment) => {
                let current = spec_replicas(&deployment);
                tracing::info!(
                    key = key.as_str(),
                    current,
                    desired,
                    "Update deployment resource"
                );
                Arc::new(
                    api.replace(name, &write_params(), &new_deployment(&foo))
                        .await?,
                )
            }
            _ => deployment,
        };
        self.update_foo_status(&foo, &deployment).await?;
        self.events.synced(&foo);
        Ok(SyncOutcome::Synced)
    }

    /// Copies the Deployment's available replicas into the Foo's status through the `status`
    /// subresource (`updateFooStatus`). The cached Foo's resourceVersion goes with it, so a
    /// stale cache answers 409 and the key is retried. Unlike sample-controller, a write that
    /// would change nothing is skipped.
    async fn update_foo_status(
        &self,
        foo: &Foo,
        deployment: &Deployment,
    ) -> Result<(), SampleError> {
        let available = available_replicas(deployment);
        if foo.status.is_some() && foo.available_replicas() == available {
            return Ok(());
        }
        let mut copy = foo.clone();
        copy.status = Some(FooStatus {
            available_replicas: available,
        });
        let ns = foo.namespace().unwrap_or_default();
        Api::<Foo>::namespaced(self.client.clone(), ns)
            .replace_status(foo.name(), &write_params(), &copy)
            .await?;
        Ok(())
    }
}

/// The Foo handler: every add and update enqueues the Foo's key (`enqueueFoo`).
///
/// sample-controller registers no delete handler (the garbage collector removes the
/// Deployment); enqueueing the key of a deleted Foo lets a worker see it gone and forget it,
/// which keeps the queue's bookkeeping observable.
struct EnqueueFoo(RateLimitingQueue<ObjectKey>);

impl ResourceEventHandler<Foo> for EnqueueFoo {
    fn on_add(&self, foo: &Arc<Foo>, _: bool) {
        self.0.add(ObjectKey::of(&**foo));
    }
    fn on_update(&self, _: &Arc<Foo>, foo: &Arc<Foo>) {
        self.0.add(ObjectKey::of(&**foo));
    }
    fn on_delete(&self, gone: &DeletedObject<Foo>) {
        self.0.add(gone.key());
    }
}

/// The Deployment handler, sample-controller's `handleObject`: a Deployment controlled by a Foo
/// that still exists enqueues that Foo; anything else is ignored.
struct EnqueueOwningFoo {
    foos: Arc<Indexer<Foo>>,
    queue: RateLimitingQueue<ObjectKey>,
}

impl EnqueueOwningFoo {
    fn handle_object(&self, d: &Deployment) {
        let Some(owner) = controller_of(&d.metadata).filter(|o| o.kind == Foo::KIND) else {
            return;
        };
        let key = ObjectKey::new(d.namespace().unwrap_or_default(), &owner.name);
        if self.foos.get_by_key(key.as_str()).is_none() {
            tracing::debug!(
                deployment = d.name(),
                foo = key.as_str(),
                "Ignore orphaned object"
            );
            return;
        }
        self.queue.add(key);
    }
}

impl ResourceEventHandler<Deployment> for EnqueueOwningFoo {
    fn on_add(&self, d: &Arc<Deployment>, _: bool) {
        self.handle_object(d);
    }
    fn on_update(&self, old: &Arc<Deployment>, new: &Arc<Deployment>) {
        // A periodic resync sends the same version again: nothing changed.
        if old.resource_version() != new.resource_version() {
            self.handle_object(new);
        }
    }
    fn on_delete(&self, gone: &DeletedObject<Deployment>) {
        // A tombstone without a last known state has no owner to enqueue.
        if let Some(d) = gone.object() {
            self.handle_object(d);
        }
    }
}

/// Every write names the controller as its field manager.
fn write_params() -> PostParams {
    PostParams {
        field_manager: Some(CONTROLLER_AGENT_NAME.into()),
        ..PostParams::default()
    }
}
