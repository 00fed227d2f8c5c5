//! The Foo controller: sample-controller's `controller.go` on kcache's informers and workqueue.

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use kcache_core::{compare_resource_versions, Object, ObjectKey, Resource};
use kcache_informer::{
    CacheResourceVersion, DeletedObject, ResourceEventHandler, SharedIndexInformer,
    SharedInformerFactory,
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

/// How long a sync waits for a cache to catch up with the controller's own last write of its
/// key before it gives up and retries the key with backoff.
pub const READ_YOUR_WRITES_TIMEOUT: Duration = Duration::from_secs(30);

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
    /// Syncs that started with a cache behind the controller's own last write of the key (the
    /// Foo's status, or its Deployment) and waited until it caught up (read your writes).
    pub cache_waits: u64,
    /// Syncs that found the key's own last write in the caches (at once or after waiting).
    pub writes_seen: u64,
    /// Syncs that read a Foo older than the controller's own last write of its status. Read
    /// your writes keeps this at zero.
    pub stale_reads: u64,
    /// The latest outcome.
    pub last: Option<SyncOutcome>,
}

/// sample-controller's `Controller`: Foo and Deployment informers feed Foo keys into a
/// rate-limited workqueue; workers reconcile each Foo's Deployment and status.
pub struct Controller {
    client: Client,
    foos: SharedIndexInformer<Foo>,
    deployments: SharedIndexInformer<Deployment>,
    /// The resourceVersions the two caches reflect, to wait on after our own writes.
    foos_version: CacheResourceVersion,
    deployments_version: CacheResourceVersion,
    /// Per Foo key, the resourceVersions of the controller's last writes of it.
    written: Mutex<BTreeMap<ObjectKey, Written>>,
    queue: RateLimitingQueue<ObjectKey>,
    stats: Mutex<BTreeMap<ObjectKey, SyncStats>>,
    events: FooEvents,
}

/// What the controller last wrote for one Foo key (controller-runtime PR #3473's idea: remember
/// the resourceVersion each write returned, and wait for it before reconciling the key again).
#[derive(Debug, Clone, Default)]
struct Written {
    /// The Foo, by its status update.
    foo: Option<String>,
    /// Its Deployment, by a create or an update.
    deployment: Option<String>,
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
            foos_version: foos.cache_resource_version(),
            deployments_version: deployments.cache_resource_version(),
            foos,
            deployments,
            written: Mutex::new(BTreeMap::new()),
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
            SyncOutcome::Gone => {
                s.gone += 1;
                self.written.lock().remove(key);
            }
            SyncOutcome::Failed(_) => s.failed += 1,
            SyncOutcome::Ignored(_) => {}
        }
        s.last = Some(outcome);
    }

    /// Read your writes: before reconciling `key` again, waits until both caches reflect the
    /// controller's own last writes of it (up to [`READ_YOUR_WRITES_TIMEOUT`]; a timeout fails
    /// the sync, which retries the key). Without it, a sync that starts before the watch
    /// delivered the last write reads the older object and acts on it again: a second
    /// Deployment update, or a status update that conflicts or — worse — is skipped because
    /// the stale status looked right (kubernetes#59848).
    async fn wait_for_own_writes(&self, key: &ObjectKey) -> Result<(), SampleError> {
        let Some(written) = self.written.lock().get(key).cloned() else {
            return Ok(());
        };
        let mut waited = false;
        for (cache, rv) in [
            (&self.foos_version, written.foo),
            (&self.deployments_version, written.deployment),
        ] {
            let Some(rv) = rv else { continue };
            match cache.has_reached(&rv) {
                Ok(true) => {}
                Ok(false) => {
                    tracing::info!(
                        key = key.as_str(),
                        rv,
                        cache = cache.last_store_sync_resource_version(),
                        "waiting for the cache to catch up with our own write"
                    );
                    waited = true;
                    cache
                        .wait_for_resource_version_timeout(&rv, READ_YOUR_WRITES_TIMEOUT)
                        .await?;
                }
                // An opaque resourceVersion cannot be waited for: reconcile as before.
                Err(e) => tracing::warn!(key = key.as_str(), "not waiting for our write: {e}"),
            }
        }
        let mut stats = self.stats.lock();
        let s = stats.entry(key.clone()).or_default();
        s.writes_seen += 1;
        s.cache_waits += u64::from(waited);
        Ok(())
    }

    /// Records the resourceVersion a write of `key`'s Foo or Deployment returned.
    fn wrote(&self, key: &ObjectKey, update: impl FnOnce(&mut Written)) {
        update(self.written.lock().entry(key.clone()).or_default());
    }

    /// Counts a read of a Foo older than our own last write of it (never, with the wait).
    fn check_not_stale(&self, key: &ObjectKey, foo: &Foo) {
        let written = self.written.lock().get(key).and_then(|w| w.foo.clone());
        let (Some(written), Some(read)) = (written, foo.resource_version()) else {
            return;
        };
        if compare_resource_versions(read, &written) == Ok(Ordering::Less) {
            tracing::error!(
                key = key.as_str(),
                read,
                written,
                "read a Foo older than our own write"
            );
            self.stats
                .lock()
                .entry(key.clone())
                .or_default()
                .stale_reads += 1;
        }
    }

    /// Brings the Foo's Deployment and status in line with its spec (`syncHandler`).
    async fn sync_handler(&self, key: &ObjectKey) -> Result<SyncOutcome, SampleError> {
        self.wait_for_own_writes(key).await?;
        let Some(foo) = self.foos.indexer().get_by_key(key.as_str()) else {
            let key = key.as_str();
            tracing::info!(key, "Foo referenced by item in work queue no longer exists");
            return Ok(SyncOutcome::Gone);
        };
        self.check_not_stale(key, &foo);
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
                let created = api.create(&write_params(), &new_deployment(&foo)).await?;
                self.wrote(key, |w| {
                    w.deployment = created.resource_version().map(Into::into)
                });
                Arc::new(created)
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
                let updated = api
                    .replace(name, &write_params(), &new_deployment(&foo))
                    .await?;
                self.wrote(key, |w| {
                    w.deployment = updated.resource_version().map(Into::into)
                });
                Arc::new(updated)
            }
            _ => deployment,
        };
        if let Some(written) = self.update_foo_status(&foo, &deployment).await? {
            self.wrote(key, |w| w.foo = written.resource_version().map(Into::into));
        }
        self.events.synced(&foo);
        Ok(SyncOutcome::Synced)
    }

    /// Copies the Deployment's available replicas into the Foo's status through the `status`
    /// subresource (`updateFooStatus`). The cached Foo's resourceVersion goes with it, so a
    /// stale cache answers 409 and the key is retried. Unlike sample-controller, a write that
    /// would change nothing is skipped. Returns the Foo as written, if it was.
    async fn update_foo_status(
        &self,
        foo: &Foo,
        deployment: &Deployment,
    ) -> Result<Option<Foo>, SampleError> {
        let available = available_replicas(deployment);
        if foo.status.is_some() && foo.available_replicas() == available {
            return Ok(None);
        }
        let mut copy = foo.clone();
        copy.status = Some(FooStatus {
            available_replicas: available,
        });
        let ns = foo.namespace().unwrap_or_default();
        let written = Api::<Foo>::namespaced(self.client.clone(), ns)
            .replace_status(foo.name(), &write_params(), &copy)
            .await?;
        Ok(Some(written))
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
