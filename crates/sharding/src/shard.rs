//! [`Shard`]: what a replica's work gets for one term of holding its shard Lease — its label
//! selector and the shard's half of the drain handshake (label mode), or its hash slices (range
//! and slice modes, where a term lasts one assignment generation).
//!
//! The handshake runs beside the reconcile path. The reconciler wrapper ([`Shard::reconciler`])
//! marks each object busy while its reconcile runs; the drain handler ([`Shard::drain_handler`],
//! on the informer the controller reads) acknowledges a drain as soon as the informer reports it
//! when the object is idle, or right after the running reconcile when it is busy, so a drain
//! does not wait behind the queue's backlog of ordinary reconciles. A reconcile that starts while
//! an acknowledgement is in flight does not reach the user's function, and the wrapper also
//! acknowledges a drained object the queue hands it (the handler's acknowledgement failed, or no
//! handler was registered). Once the shard has seen the drain label, the object in its cache
//! carries it until the watch reports the object gone from the shard's selector, so no later
//! reconcile of it reaches the user's function either.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use kcache_controller::{Action, Controller, ControllerRunnable, ErrorPolicy};
use kcache_core::selector::ShardSelector;
use kcache_core::{DynamicObject, Error, Object, Resource};
use kcache_informer::{FactoryOptions, InformerError, ResourceEventHandlerFuncs};
use kcache_leaderelection::CancellationToken;
use kcache_transport::{Api, Client, Patch, PatchParams};
use serde_json::{json, Map, Value};

use crate::conventions::Ring;
use crate::drains::{busy_key, Busy, DrainAck, Drains};
use crate::key::kind_key;
use crate::ranges::{slices_of, Slices};
use crate::slice_label;

/// A reconcile future, boxed (what [`Shard::reconciler`] returns).
pub type ReconcileFuture<E> = Pin<Box<dyn Future<Output = Result<Action, E>> + Send>>;

/// One term of a replica's membership in the ring.
#[derive(Debug, Clone)]
pub struct Shard {
    client: Client,
    ring: Ring,
    name: String,
    token: CancellationToken,
    /// The objects this term is reconciling or acknowledging.
    drains: Arc<Drains>,
    /// What this term owns.
    part: Part,
}

/// What a term owns, by mode.
#[derive(Debug, Clone)]
enum Part {
    /// Label mode: the objects carrying its shard label.
    Labelled,
    /// Range mode: the objects whose field hash is in these ranges.
    Ranges(ShardSelector),
    /// Slice mode: the objects whose slice label names one of these slices.
    Slices(Arc<Slices>),
}

impl Shard {
    pub(crate) fn new(client: Client, ring: Ring, name: String, token: CancellationToken) -> Self {
        Shard {
            client,
            ring,
            name,
            token,
            drains: Arc::new(Drains::default()),
            part: Part::Labelled,
        }
    }

    /// This term in range mode, owning `ranges` (never empty: an empty selector selects all).
    pub(crate) fn with_ranges(mut self, ranges: ShardSelector) -> Self {
        self.part = Part::Ranges(ranges);
        self
    }

    /// This term in slice mode, owning `slices` (never empty).
    pub(crate) fn with_slices(mut self, slices: Slices) -> Self {
        self.part = Part::Slices(Arc::new(slices));
        self
    }

    /// Range mode: the KEP-5866 hash ranges this term owns (`None` in label and slice modes).
    pub fn ranges(&self) -> Option<&ShardSelector> {
        match &self.part {
            Part::Ranges(ranges) => Some(ranges),
            _ => None,
        }
    }

    /// Range and slice modes: the slices (`0..RANGE_SLICES`) this term owns (`None` in label
    /// mode).
    pub fn slices(&self) -> Option<Slices> {
        match &self.part {
            Part::Labelled => None,
            Part::Ranges(ranges) => Some(slices_of(ranges)),
            Part::Slices(slices) => Some(slices.as_ref().clone()),
        }
    }

    /// The shard's name (the replica's identity).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The ring.
    pub fn ring(&self) -> &Ring {
        &self.ring
    }

    /// Fires when this term ends: the Lease was lost, the replica is shutting down, or (range
    /// and slice modes) the sharder changed the shard's slices. Run the controllers until it fires
    /// (`Manager::run_until(shard.token())`) and return promptly: in range mode the shard
    /// acknowledges its new slices, and the slices it gives up move on, only once this returned.
    pub fn token(&self) -> CancellationToken {
        self.token.clone()
    }

    /// The label selector of this term's objects: `shard.alpha.sharding.timebertt.dev/<ring>=
    /// <name>` in label mode, `slice.sharding.kcache.dev/<ring> in (<slices>)` in slice mode;
    /// `None` in range mode (the server selects by `shardSelector`).
    pub fn label_selector(&self) -> Option<String> {
        match &self.part {
            Part::Labelled => Some(self.ring.shard_selector(&self.name)),
            Part::Ranges(_) => None,
            Part::Slices(slices) => {
                Some(slice_label::selector_of(&self.ring.slice_label(), slices))
            }
        }
    }

    /// Informer factory options that watch only this shard's objects (give them to
    /// `Manager::builder(..).factory_options(..)`): its label selector in label and slice modes
    /// (every kind the factory serves must be one the sharder labels), its `shardSelector` in
    /// range mode.
    pub fn factory_options(&self) -> FactoryOptions {
        FactoryOptions {
            label_selector: self.label_selector(),
            shard_selector: self.ranges().map(ToString::to_string),
            ..FactoryOptions::default()
        }
    }

    /// Whether this term owns `obj`: in label mode, whether it carries this shard's label; in
    /// range mode, whether its field hash is in the ranges; in slice mode, whether its slice
    /// label names one of the slices.
    pub fn owns<K: Object>(&self, obj: &K) -> bool {
        match &self.part {
            Part::Labelled => obj.label(&self.ring.shard_label()) == Some(self.name.as_str()),
            Part::Ranges(ranges) => ranges.matches(obj),
            Part::Slices(slices) => {
                slice_label::names_one_of(obj.label(&self.ring.slice_label()), slices)
            }
        }
    }

    /// The label a child that this term's controllers create, controlled by `owner`, must
    /// carry so that this shard's cache sees it at once: this shard's label in label mode, the
    /// slice of the child's default key (its owner's `group/Kind/namespace/name`) in slice
    /// mode; `None` in range mode, where nothing is labelled.
    pub fn child_label<K: Object + Resource>(&self, owner: &K) -> Option<(String, String)> {
        match &self.part {
            Part::Labelled => Some((self.ring.shard_label(), self.name.clone())),
            Part::Ranges(_) => None,
            Part::Slices(_) => {
                let namespace = owner.namespace().unwrap_or("");
                let key = kind_key(K::GROUP, K::KIND, namespace, owner.name());
                Some((
                    self.ring.slice_label(),
                    slice_label::slice_of(&key).to_string(),
                ))
            }
        }
    }

    /// Whether the sharder asked this shard to let `obj` go.
    pub fn is_draining<K: Object>(&self, obj: &K) -> bool {
        obj.label(&self.ring.drain_label()).is_some()
    }

    /// Lets `obj` go: removes the shard and drain labels, conditional on the resourceVersion the
    /// shard saw (a conflict means a newer version is on its way; its event retries).
    pub async fn acknowledge_drain<K: Object + Resource>(&self, obj: &K) -> Result<(), Error> {
        self.acknowledge(&DrainAck::of(obj)).await
    }

    async fn acknowledge(&self, ack: &DrainAck) -> Result<(), Error> {
        let api = Api::<DynamicObject>::dynamic(
            self.client.clone(),
            ack.resource.clone(),
            ack.namespace.as_deref(),
        );
        let labels = Map::from_iter([
            (self.ring.shard_label(), Value::Null),
            (self.ring.drain_label(), Value::Null),
        ]);
        let patch = json!({"metadata": {
            "labels": labels,
            "resourceVersion": ack.resource_version,
        }});
        api.patch(&ack.name, &PatchParams::default(), &Patch::Merge(patch))
            .await?;
        tracing::debug!(shard = %self.name, object = %ack.name, "acknowledged drain");
        Ok(())
    }

    /// Acknowledges `ack`: a conflict or a missing object is settled (a newer version's event
    /// retries); any other failure asks for a requeue.
    async fn settle(&self, busy: &Busy, ack: &DrainAck) -> Action {
        match self.acknowledge(ack).await {
            Ok(()) => {
                self.drains.let_go(busy.key());
                Action::await_change()
            }
            Err(e) if e.is_conflict() || e.is_not_found() => Action::await_change(),
            Err(e) => {
                tracing::warn!(shard = %self.name, object = %ack.name, "acknowledging a drain failed: {e}");
                Action::requeue()
            }
        }
    }

    /// An event handler for the cache of `K` the controller reads (`Controller::primary`;
    /// [`into_runnable`](Self::into_runnable) adds it there): it
    /// acknowledges a drain as soon as it is seen, instead of when the controller's queue
    /// reaches the object, but never while a reconcile of the object (through
    /// [`reconciler`](Self::reconciler)) runs, and no reconcile of an object it let go reaches
    /// the user's function until the object is assigned to this shard again. The
    /// acknowledgements run on the runtime this is called in (handlers may be called on threads
    /// of their own); called outside a runtime, the handler leaves drains to the queue.
    pub fn drain_handler<K: Object + Resource>(&self) -> ResourceEventHandlerFuncs<K> {
        let runtime = tokio::runtime::Handle::try_current().ok();
        let (added, updated) = (self.clone(), self.clone());
        let (on_add, on_update) = (runtime.clone(), runtime);
        ResourceEventHandlerFuncs::new()
            .on_add(move |obj: &Arc<K>, _| added.drain_seen(on_add.as_ref(), obj.as_ref()))
            .on_update(move |_, obj: &Arc<K>| updated.drain_seen(on_update.as_ref(), obj.as_ref()))
    }

    /// `controller` as a runnable of this shard: its reconcile wrapped by
    /// [`reconciler`](Self::reconciler) and the [`drain_handler`](Self::drain_handler) on the
    /// cache the controller reads, so drains are acknowledged as soon as that cache sees them.
    /// Fails if the handler cannot be added (the informer has stopped).
    pub fn into_runnable<K, Ctx, E, F, Fut>(
        &self,
        controller: Controller<K>,
        reconcile: F,
        error_policy: impl ErrorPolicy<K, E, Ctx>,
        ctx: Arc<Ctx>,
    ) -> Result<ControllerRunnable, InformerError>
    where
        K: Object + Resource,
        Ctx: Send + Sync + 'static,
        E: std::error::Error + Send + Sync + 'static,
        F: Fn(Arc<K>, Arc<Ctx>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Action, E>> + Send + 'static,
    {
        controller.primary().add_handler(self.drain_handler())?;
        Ok(controller.into_runnable(self.reconciler(reconcile), error_policy, ctx))
    }

    /// Acknowledges `obj`'s drain now if it is idle; if it is busy, the wrapper does after the
    /// running reconcile.
    fn drain_seen<K: Object + Resource>(&self, runtime: Option<&tokio::runtime::Handle>, obj: &K) {
        let Some(runtime) = runtime else {
            return;
        };
        if !self.is_draining(obj) {
            if self.owns(obj) {
                self.drains.assigned(&busy_key(obj));
            }
            return;
        }
        if self.token.is_cancelled() {
            return;
        }
        let ack = DrainAck::of(obj);
        let Some(mut busy) = self.drains.drain_seen(busy_key(obj), ack.clone()) else {
            return;
        };
        let shard = self.clone();
        runtime.spawn(async move {
            let mut next = Some(ack);
            while let Some(ack) = next {
                shard.settle(&busy, &ack).await;
                next = busy.next_or_release();
            }
        });
    }

    /// Wraps a controller's reconcile function: an object marked for draining is acknowledged
    /// instead of reconciled, an object whose drain is being acknowledged is skipped; any other
    /// object goes to `reconcile`, and a drain seen while it ran is acknowledged right after it.
    /// In range and slice modes an object outside the term's slices is skipped too (the server
    /// filters already; this holds even if a cache were fed otherwise).
    pub fn reconciler<K, Ctx, E, F, Fut>(
        &self,
        reconcile: F,
    ) -> impl Fn(Arc<K>, Arc<Ctx>) -> ReconcileFuture<E> + Send + Sync + 'static
    where
        K: Object + Resource,
        Ctx: Send + Sync + 'static,
        E: Send + 'static,
        F: Fn(Arc<K>, Arc<Ctx>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Action, E>> + Send + 'static,
    {
        let shard = self.clone();
        move |obj: Arc<K>, ctx: Arc<Ctx>| -> ReconcileFuture<E> {
            if !matches!(shard.part, Part::Labelled) && !shard.owns(obj.as_ref()) {
                return Box::pin(async { Ok(Action::await_change()) });
            }
            let Some(mut busy) = shard.drains.begin(busy_key(obj.as_ref())) else {
                // Its drain is being acknowledged (if that fails, the requeue acknowledges it
                // here) or was: the object is leaving or has left this shard.
                return Box::pin(async { Ok(Action::requeue()) });
            };
            let shard = shard.clone();
            let work = (!shard.is_draining(obj.as_ref())).then(|| reconcile(obj.clone(), ctx));
            Box::pin(async move {
                let done = match work {
                    Some(work) => work.await,
                    None => Ok(shard.settle(&busy, &DrainAck::of(obj.as_ref())).await),
                };
                while let Some(ack) = busy.next_or_release() {
                    shard.settle(&busy, &ack).await;
                }
                done
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use k8s_openapi::api::core::v1::ConfigMap;
    use kcache_controller::{Controller, DefaultErrorPolicy, Manager};
    use kcache_informer::SharedInformerFactory;
    use kcache_testing::TestCluster;
    use kcache_transport::{Config, PostParams};
    use tokio::sync::{mpsc, Semaphore};

    use super::*;

    const OBJECTS: usize = 12;

    /// Waits (on the observer's events) until `name` no longer carries a shard label.
    async fn until_acknowledged(events: &mut mpsc::UnboundedReceiver<(String, bool)>, name: &str) {
        let acked = async {
            while let Some((seen, assigned)) = events.recv().await {
                if seen == name && !assigned {
                    return;
                }
            }
            panic!("the observer stopped");
        };
        tokio::time::timeout(Duration::from_secs(30), acked)
            .await
            .unwrap_or_else(|_| panic!("{name}'s drain was not acknowledged"));
    }

    /// With one worker stuck in a reconcile and the rest of the objects queued behind it, a drain
    /// of an idle object is acknowledged at once; a drain of the object being reconciled waits
    /// until that reconcile finished.
    #[tokio::test]
    async fn a_drain_is_acknowledged_ahead_of_the_backlog_but_never_during_a_reconcile() {
        let cluster = TestCluster::start().await.unwrap();
        let ns = cluster.create_namespace("drains").await.unwrap();
        let mut config = Config::from_kubeconfig_file(cluster.kubeconfig_path()).unwrap();
        config.qps = 0.0;
        let client = Client::new(config).unwrap();
        let ring = Ring::new("drains", &ns);
        let cms = Api::<ConfigMap>::namespaced(client.clone(), &ns);
        for i in 0..OBJECTS {
            let mut cm = ConfigMap::default();
            cm.metadata.name = Some(format!("obj-{i}"));
            cm.metadata.labels = Some([(ring.shard_label(), "a".to_string())].into());
            cms.create(&PostParams::default(), &cm).await.unwrap();
        }
        let drain = |name: &str| {
            let (cms, label) = (cms.clone(), ring.drain_label());
            let name = name.to_string();
            async move {
                let patch = json!({"metadata": {"labels": {label: "true"}}});
                cms.patch(&name, &PatchParams::default(), &Patch::Merge(patch))
                    .await
                    .unwrap();
            }
        };

        // An observer of every ConfigMap reports each update's name and whether it is assigned.
        let observer = SharedInformerFactory::new(
            client.clone(),
            FactoryOptions {
                namespace: Some(ns.clone()),
                ..FactoryOptions::default()
            },
        );
        let (seen, mut events) = mpsc::unbounded_channel();
        let shard_label = ring.shard_label();
        observer
            .informer::<ConfigMap>()
            .add_event_handler(ResourceEventHandlerFuncs::new().on_update(
                move |_, cm: &Arc<ConfigMap>| {
                    let _ = seen.send((cm.name().to_string(), cm.label(&shard_label).is_some()));
                },
            ))
            .unwrap();
        observer.start();
        observer.wait_for_cache_sync().await;

        let token = CancellationToken::new();
        let shard = Shard::new(client.clone(), ring.clone(), "a".into(), token.clone());
        let mut manager = Manager::builder(client.clone())
            .factory_options(FactoryOptions {
                namespace: Some(ns.clone()),
                ..shard.factory_options()
            })
            .build()
            .unwrap();
        let gate = Arc::new(Semaphore::new(0));
        let (started, mut starts) = mpsc::unbounded_channel();
        let reconcile = {
            let gate = gate.clone();
            move |cm: Arc<ConfigMap>, _: Arc<()>| {
                let (gate, started) = (gate.clone(), started.clone());
                async move {
                    let _ = started.send(cm.name().to_string());
                    let _ = gate.acquire().await;
                    Ok::<_, std::io::Error>(Action::await_change())
                }
            }
        };
        let controller = Controller::for_::<ConfigMap>(manager.factory())
            .named("drains-a")
            .concurrency(1);
        let controller = shard
            .into_runnable(controller, reconcile, DefaultErrorPolicy, Arc::new(()))
            .unwrap();
        manager.add(controller).unwrap();
        let running = tokio::spawn({
            let token = token.clone();
            async move { manager.run_until(token).await }
        });

        // One reconcile runs and cannot finish; the other objects wait in the queue behind it.
        let busy = starts.recv().await.expect("a reconcile started");
        let idle: Vec<String> = (0..OBJECTS)
            .map(|i| format!("obj-{i}"))
            .filter(|n| *n != busy)
            .collect();

        drain(&idle[0]).await;
        until_acknowledged(&mut events, &idle[0]).await;
        assert!(
            starts.try_recv().is_err(),
            "no other reconcile ran before the ack"
        );

        // The busy object's drain waits for its reconcile; a later drain (handled after it, in
        // the informer's order) is acknowledged meanwhile.
        drain(&busy).await;
        drain(&idle[1]).await;
        until_acknowledged(&mut events, &idle[1]).await;
        let still = cms.get(&busy).await.unwrap();
        assert_eq!(
            still.label(&ring.shard_label()),
            Some("a"),
            "acknowledged during its reconcile"
        );
        gate.close();
        until_acknowledged(&mut events, &busy).await;

        token.cancel();
        running.await.unwrap().unwrap();
        observer.shutdown().await;
    }
}
