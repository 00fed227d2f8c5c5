//! The Foo controller: sample-controller's `syncHandler` as a reconcile function on
//! kcache-controller, which runs what its `controller.go` writes by hand: the informers and
//! their handlers, the rate-limited workqueue, the workers, retries with backoff, shutdown.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use kcache::controller::{
    set_controller_reference, wrote, Action, Controller, DefaultErrorPolicy, Manager,
    ReconcileRequest,
};
use kcache::core::BoxError;
use kcache::events::{EventRecorder, EventType, EventType::*, ObjectReference};
use kcache::informer::CompactInformer;
use kcache::sharding::Shard;
use kcache::transport::{Api, Client, PostParams};
use kcache::Object;
use parking_lot::Mutex;

use super::deployment::{available_replicas, new_deployment, spec_replicas};
use super::foo::{Foo, FooStatus};
use super::SampleError;

/// The controller's name in logs and Events, and the field manager of every write
/// (sample-controller's `controllerAgentName` / `FieldManager`).
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

/// What happened to one Foo so far: what the demo prints and the test waits on.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SyncStats {
    /// Reconciles that succeeded.
    pub synced: u64,
    /// Reconciles that failed (each one retried with the rate limiter's backoff).
    pub failed: u64,
    /// Creates and updates of its Deployment (read your writes: one per change of the Foo).
    pub deployment_writes: u64,
}

/// What the reconcile works with.
pub struct Ctx {
    client: Client,
    /// The Foo cache (the controller's).
    pub foos: CompactInformer<Foo>,
    /// The Deployment cache (the controller's).
    pub deployments: CompactInformer<Deployment>,
    recorder: EventRecorder,
    /// Per Foo, how its reconciles went.
    pub stats: Mutex<BTreeMap<ReconcileRequest, SyncStats>>,
    /// The shard this replica holds, when sharded (`--shard-ring`).
    shard: Option<Shard>,
}

/// Adds the Foo controller to `manager` (sample-controller's `NewController`): changes of a Foo,
/// or of a Deployment a Foo controls, reconcile that Foo, `workers` at a time. With a `shard`,
/// the manager's factory must select the shard's objects (`Shard::factory_options`): drained
/// Foos are acknowledged as soon as the Foo informer sees them (never during their reconcile),
/// the Deployments it creates carry the shard's (or their slice's) label, so its own cache sees
/// them at once, and each reconcile logs its start and end (what `cargo xtask e2e --kind` reads
/// to check no Foo was reconciled by two replicas at once).
pub fn add_to(
    manager: &mut Manager,
    workers: usize,
    shard: Option<Shard>,
) -> Result<Arc<Ctx>, BoxError> {
    let factory = manager.factory().clone();
    // Controller names are unique in a process: several shards may share one (tests).
    let name = match &shard {
        Some(shard) => format!("{CONTROLLER_AGENT_NAME}-{}", shard.name()),
        None => CONTROLLER_AGENT_NAME.to_string(),
    };
    let controller = Controller::for_::<Foo>(&factory)
        .owns::<Deployment>()
        .named(name)
        .concurrency(workers)
        .read_your_writes_timeout(Duration::from_secs(30));
    let ctx = Arc::new(Ctx {
        client: manager.client().clone(),
        foos: factory.compact_informer(),
        deployments: factory.compact_informer(),
        recorder: manager.event_recorder(CONTROLLER_AGENT_NAME)?,
        stats: Mutex::default(),
        shard: shard.clone(),
    });
    let runnable = match shard {
        Some(shard) => {
            shard.into_runnable(controller, reconcile, DefaultErrorPolicy, ctx.clone())?
        }
        None => controller.into_runnable(reconcile, DefaultErrorPolicy, ctx.clone()),
    };
    manager.add(runnable)?;
    Ok(ctx)
}

async fn reconcile(foo: Arc<Foo>, ctx: Arc<Ctx>) -> Result<Action, SampleError> {
    let key = ReconcileRequest::of(&*foo);
    if ctx.shard.is_some() {
        tracing::info!("reconcile started {key}");
    }
    let result = sync_handler(&foo, &ctx).await;
    if ctx.shard.is_some() {
        tracing::info!("reconcile finished {key}");
    }
    let mut stats = ctx.stats.lock();
    let s = stats.entry(key).or_default();
    match result {
        Ok(()) => s.synced += 1,
        Err(_) => s.failed += 1,
    }
    result.map(|()| Action::await_change())
}

/// Brings the Foo's Deployment and status in line with its spec (`syncHandler`).
async fn sync_handler(foo: &Foo, ctx: &Ctx) -> Result<(), SampleError> {
    let (key, params) = (ReconcileRequest::of(foo), write_params());
    let (ns, name) = (key.namespace(), foo.spec.deployment_name.as_str());
    if name.is_empty() {
        tracing::error!("Deployment name missing from object reference");
        return Ok(()); // not retried until the Foo changes, as in sample-controller
    }
    let api: Api<Deployment> = Api::namespaced(ctx.client.clone(), ns);
    let mut desired = new_deployment(foo);
    set_controller_reference(foo, &mut desired)?;
    if let Some((label, value)) = ctx.shard.as_ref().and_then(|s| s.child_label(foo)) {
        // Keyed by its controller owner, the Deployment belongs to this shard too.
        let labels = desired.metadata.labels.get_or_insert_with(Default::default);
        labels.insert(label, value);
    }
    let deployment = match ctx.deployments.get_by_key(&format!("{ns}/{name}")) {
        Some(d) => d,
        None => {
            tracing::info!(deployment = name, "creating Deployment");
            let created = api.create(&params, &desired).await?;
            Arc::new(ctx.wrote_deployment(&key, created))
        }
    };
    let owner = deployment.controller_owner(); // `metav1.IsControlledBy`
    if owner.is_none_or(|o| Some(o.uid) != foo.uid()) {
        let msg = message_resource_exists(name);
        ctx.event(foo, Warning, ERR_RESOURCE_EXISTS, &msg);
        return Err(SampleError::ResourceExists(msg));
    }
    let current = spec_replicas(&deployment);
    let deployment = match foo.spec.replicas {
        Some(replicas) if replicas != current => {
            tracing::info!(current, desired = replicas, "Update deployment resource");
            let updated = api.replace(name, &params, &desired).await?;
            Arc::new(ctx.wrote_deployment(&key, updated))
        }
        _ => deployment,
    };
    // `updateFooStatus` with the cached resourceVersion (a stale Foo is a 409, retried); unlike
    // sample-controller's, a write that would change nothing is skipped.
    let available_replicas = available_replicas(&deployment);
    if foo.status.is_none() || foo.available_replicas() != available_replicas {
        let mut copy = foo.clone();
        copy.status = Some(FooStatus { available_replicas });
        let foos = Api::<Foo>::namespaced(ctx.client.clone(), ns);
        let written = foos.replace_status(foo.name(), &params, &copy).await?;
        wrote(&written); // the next reconcile reads at least this Foo
    }
    ctx.event(foo, Normal, SUCCESS_SYNCED, MESSAGE_RESOURCE_SYNCED);
    Ok(())
}

impl Ctx {
    /// Tells the runtime that this reconcile of `key` wrote its Deployment (the next reconcile
    /// waits until the cache holds it), and counts it.
    fn wrote_deployment(&self, key: &ReconcileRequest, written: Deployment) -> Deployment {
        wrote(&written);
        let mut stats = self.stats.lock();
        stats.entry(key.clone()).or_default().deployment_writes += 1;
        written
    }

    /// Records an Event on the Foo, and logs it (client-go's `StartStructuredLogging`).
    fn event(&self, foo: &Foo, type_: EventType, reason: &str, note: &str) {
        tracing::info!(target: "event", reason, "{note}");
        let foo = ObjectReference::of(foo);
        self.recorder
            .eventf(&foo, None, type_, reason, "Reconcile", note);
    }
}

/// Every write names the controller as its field manager.
fn write_params() -> PostParams {
    PostParams {
        field_manager: Some(CONTROLLER_AGENT_NAME.into()),
        ..PostParams::default()
    }
}
