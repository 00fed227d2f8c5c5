//! The builder (controller-runtime's `pkg/builder`, kube-runtime's `Controller`) and the run
//! sequence: register every source's handler, start the factory, wait until the caches AND the
//! handlers have synced (controller-runtime v0.23's rule: a worker never sees a half-delivered
//! initial list), start the workers; on shutdown stop taking keys, let reconciles in flight
//! finish up to the shutdown timeout, and return.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use futures_util::Stream;
use kcache_core::{BoxError, Object, Resource};
use kcache_informer::{FactoryOptions, ResourceEventHandlerFuncs, SharedInformerFactory};
use kcache_transport::Client;
use kcache_workqueue::{
    default_controller_rate_limiter, ByPriority, Queue, QueueConfig, RateLimiter, RateLimitingQueue,
};
use parking_lot::Mutex;
use serde::de::DeserializeOwned;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use crate::action::Action;
use crate::cache::{informer_of, ObjectCache, Storage};
use crate::enqueue::Enqueue;
use crate::error::ControllerError;
use crate::error_policy::ErrorPolicy;
use crate::metrics::{self, ControllerMetrics, ControllerMetricsProvider};
use crate::names::NameClaim;
use crate::predicate::{all_accept, Event, Predicate};
use crate::read_your_writes::WriteTracker;
use crate::reconcile_request::ReconcileRequest;
use crate::runner::{GoneObjects, ReconcileFn, Runner};
use crate::source::{
    informer_source, key_source, mapping_handler, owners_of, stream_source, Source, SourceContext,
    SourceOptions, Started,
};
use crate::{BoxFuture, Runnable};

/// The default number of concurrent reconciles: controller-runtime's, bounded (kube-runtime's
/// unbounded default is a known complaint).
pub const DEFAULT_CONCURRENCY: usize = 1;

/// How long shutdown waits for reconciles in flight (controller-runtime's graceful shutdown
/// timeout).
pub const DEFAULT_SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(30);

/// How long a reconcile waits for the controller's own writes to reach the cache before it reads
/// a possibly stale object anyway.
pub const DEFAULT_READ_YOUR_WRITES_TIMEOUT: Duration = Duration::from_secs(10);

struct Config {
    concurrency: usize,
    rate_limiter: Option<Box<dyn RateLimiter<ReconcileRequest>>>,
    priority: bool,
    debounce: Duration,
    reconcile_timeout: Option<Duration>,
    shutdown_timeout: Duration,
    read_your_writes_timeout: Duration,
    needs_leader_election: bool,
    metrics: Option<Arc<dyn ControllerMetricsProvider>>,
    shutdown: CancellationToken,
}

/// A controller of `K`: what triggers it, how it schedules, and — given a reconcile function —
/// how it runs. See the crate docs for a complete example.
///
/// ```no_run
/// # use std::sync::Arc;
/// # use k8s_openapi::api::core::v1::{ConfigMap, Secret};
/// # use kcache_controller::{Action, Controller, DefaultErrorPolicy};
/// # async fn f(client: kcache_transport::Client) {
/// async fn reconcile(cm: Arc<ConfigMap>, _: Arc<()>) -> Result<Action, std::io::Error> {
///     Ok(Action::await_change())
/// }
/// Controller::new::<ConfigMap>(&client)
///     .owns::<Secret>()
///     .concurrency(2)
///     .run(reconcile, DefaultErrorPolicy, Arc::new(()))
///     .await
///     .unwrap();
/// # }
/// ```
pub struct Controller<K> {
    name: String,
    factory: Option<Arc<SharedInformerFactory>>,
    /// The factory [`Controller::new`] made, shut down when the controller stops.
    own_factory: Option<Arc<SharedInformerFactory>>,
    storage: Storage,
    primary: Arc<dyn ObjectCache<K>>,
    predicates: Vec<Predicate<K>>,
    sources: Vec<Source<K>>,
    writes: WriteTracker,
    config: Config,
}

impl Controller<()> {
    /// A controller of `K` with an informer factory of its own over `client`, watching every
    /// namespace (kube-runtime's `Controller::new(api, config)`): for a controller that shares
    /// no informers, so the caller neither makes the factory nor shuts it down — the controller
    /// stops its informers when it stops. Controllers that should share informers take one
    /// factory through [`for_`](Self::for_).
    pub fn new<K>(client: &Client) -> Controller<K>
    where
        K: Resource + Object + DeserializeOwned + Clone,
    {
        let options = FactoryOptions::default();
        let factory = Arc::new(SharedInformerFactory::new(client.clone(), options));
        let mut c = Controller::for_(&factory);
        c.own_factory = Some(factory);
        c
    }

    /// A controller of `K` over the factory's informer of `K`, in the default storage
    /// ([`Storage::Compact`]). Owned and watched kinds come from the same factory, so several
    /// controllers (and a manager) share one factory, one client and one informer per kind.
    pub fn for_<K>(factory: &Arc<SharedInformerFactory>) -> Controller<K>
    where
        K: Resource + Object + DeserializeOwned + Clone,
    {
        Controller::for_with_storage(factory, Storage::default())
    }

    /// [`for_`](Self::for_) with the storage of the controller's informers.
    pub fn for_with_storage<K>(
        factory: &Arc<SharedInformerFactory>,
        storage: Storage,
    ) -> Controller<K>
    where
        K: Resource + Object + DeserializeOwned + Clone,
    {
        let mut c = Controller::for_informer(informer_of::<K>(factory, storage));
        c.factory = Some(factory.clone());
        c.storage = storage;
        c
    }

    /// A controller of `K` over an informer you already have (a `SharedIndexInformer<K>` or a
    /// `CompactInformer<K>`, in an `Arc`). It is not started by the controller unless it came
    /// from the factory given to [`with_factory`](Controller::with_factory); owned and watched
    /// kinds need that factory.
    pub fn for_informer<K>(informer: Arc<dyn ObjectCache<K>>) -> Controller<K>
    where
        K: Resource + Object,
    {
        let writes = WriteTracker::default();
        writes.watch::<K>(informer.cache_resource_version());
        Controller {
            name: K::KIND.to_lowercase(),
            factory: None,
            own_factory: None,
            storage: Storage::default(),
            primary: informer,
            predicates: Vec::new(),
            sources: Vec::new(),
            writes,
            config: Config {
                concurrency: DEFAULT_CONCURRENCY,
                rate_limiter: None,
                priority: true,
                debounce: Duration::ZERO,
                reconcile_timeout: None,
                shutdown_timeout: DEFAULT_SHUTDOWN_TIMEOUT,
                read_your_writes_timeout: DEFAULT_READ_YOUR_WRITES_TIMEOUT,
                needs_leader_election: true,
                metrics: None,
                shutdown: CancellationToken::new(),
            },
        }
    }
}

impl<K: Resource + Object> Controller<K> {
    /// The factory owned and watched kinds come from (and that `run` starts).
    pub fn with_factory(mut self, factory: &Arc<SharedInformerFactory>) -> Self {
        self.factory = Some(factory.clone());
        self
    }

    /// The controller's name: the `controller` label of its metrics, its log span, its
    /// workqueue's name. Unique among the controllers running in this process (checked when it
    /// starts). Default: the kind, lower-case.
    pub fn named(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// The name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Only events of `K` that pass `predicate` reconcile (and-ed with the others).
    pub fn predicate(mut self, predicate: Predicate<K>) -> Self {
        self.predicates.push(predicate);
        self
    }

    /// Changes of a `C` whose controller owner reference points at a `K` reconcile that `K`
    /// (controller-runtime's `Owns`).
    pub fn owns<C>(self) -> Self
    where
        C: Resource + Object + DeserializeOwned + Clone,
    {
        self.owns_with(SourceOptions::<C>::new())
    }

    /// [`owns`](Self::owns) with predicates, or with every owner reference of kind `K` counting
    /// ([`SourceOptions::every_owner`], kube-runtime's rule).
    pub fn owns_with<C>(self, options: SourceOptions<C>) -> Self
    where
        C: Resource + Object + DeserializeOwned + Clone,
    {
        let every = options.every_owner;
        self.watches_with(options, move |c: &C| owners_of::<K, C>(c, every))
    }

    /// Changes of any `W` reconcile the keys `map` returns (kube-runtime's `watches`,
    /// controller-runtime's `EnqueueRequestsFromMapFunc`).
    pub fn watches<W>(
        self,
        map: impl Fn(&W) -> Vec<ReconcileRequest> + Send + Sync + 'static,
    ) -> Self
    where
        W: Resource + Object + DeserializeOwned + Clone,
    {
        self.watches_with(SourceOptions::<W>::new(), map)
    }

    /// [`watches`](Self::watches) with predicates.
    pub fn watches_with<W>(
        mut self,
        options: SourceOptions<W>,
        map: impl Fn(&W) -> Vec<ReconcileRequest> + Send + Sync + 'static,
    ) -> Self
    where
        W: Resource + Object + DeserializeOwned + Clone,
    {
        let Some(factory) = &self.factory else {
            let reason = format!(
                "watching {} needs an informer factory: build with for_ or call with_factory first",
                W::KIND
            );
            self.sources.push(Box::new(move |_: &SourceContext<K>| {
                Err(reason_error(reason))
            }));
            return self;
        };
        let cache = informer_of::<W>(factory, self.storage);
        self.watches_informer_with(cache, options, map)
    }

    /// [`owns_with`](Self::owns_with) over an informer of `C` you already have (not started by
    /// the controller unless it came from its factory).
    pub fn owns_informer_with<C>(
        self,
        informer: Arc<dyn ObjectCache<C>>,
        options: SourceOptions<C>,
    ) -> Self
    where
        C: Object,
    {
        let every = options.every_owner;
        self.watches_informer_with(informer, options, move |c: &C| owners_of::<K, C>(c, every))
    }

    /// [`watches_with`](Self::watches_with) over an informer of `W` you already have.
    pub fn watches_informer_with<W>(
        mut self,
        informer: Arc<dyn ObjectCache<W>>,
        options: SourceOptions<W>,
        map: impl Fn(&W) -> Vec<ReconcileRequest> + Send + Sync + 'static,
    ) -> Self
    where
        W: Object,
    {
        self.writes.watch::<W>(informer.cache_resource_version());
        let predicates = options.predicates;
        self.sources.push(informer_source(
            informer,
            self.name.clone(),
            move |enqueue| mapping_handler(enqueue, predicates, map),
        ));
        self
    }

    /// Each request `stream` yields is reconciled (kube-runtime's `reconcile_on`, a custom
    /// trigger).
    pub fn watches_stream(
        mut self,
        stream: impl Stream<Item = ReconcileRequest> + Send + 'static,
    ) -> Self
    where
        K: Send + Sync,
    {
        self.sources
            .push(stream_source(stream, |request, _| vec![request]));
        self
    }

    /// Each item `trigger` yields reconciles every cached `K` (kube-runtime's
    /// `reconcile_all_on`).
    pub fn reconcile_all_on<T: Send + 'static>(
        mut self,
        trigger: impl Stream<Item = T> + Send + 'static,
    ) -> Self
    where
        K: Send + Sync,
    {
        self.sources.push(stream_source(trigger, |_, cx| {
            cx.primary
                .keys()
                .into_iter()
                .map(ReconcileRequest::from)
                .collect()
        }));
        self
    }

    /// Reconciles at most `n` keys at once (default [`DEFAULT_CONCURRENCY`]; 0 is taken as 1).
    pub fn concurrency(mut self, n: usize) -> Self {
        self.config.concurrency = n.max(1);
        self
    }

    /// The rate limiter of [`Action::requeue`] and of retries after errors and panics (default:
    /// client-go's `DefaultControllerRateLimiter`). Any of kcache-workqueue's limiters.
    pub fn rate_limiter(mut self, limiter: impl RateLimiter<ReconcileRequest> + 'static) -> Self {
        self.config.rate_limiter = Some(Box::new(limiter));
        self
    }

    /// Whether objects of the initial list and resyncs go behind real changes (on by default, as
    /// in controller-runtime v0.23's priority queue). Off: one FIFO.
    pub fn priority_queue(mut self, on: bool) -> Self {
        self.config.priority = on;
        self
    }

    /// kube-runtime's trailing-edge debounce: an event queues its key `window` after the last
    /// event of that key, so a burst of changes is reconciled once, after it ends (zero, the
    /// default: at once). Events of one key more often than `window` postpone it for as long as
    /// they go on, as in kube-runtime; requeues and retries are not debounced.
    pub fn debounce(mut self, window: Duration) -> Self {
        self.config.debounce = window;
        self
    }

    /// A reconcile running longer than `limit` is cancelled, counted
    /// (`controller_runtime_reconcile_timeouts_total`) and retried with backoff.
    pub fn reconcile_timeout(mut self, limit: Duration) -> Self {
        self.config.reconcile_timeout = Some(limit);
        self
    }

    /// How long shutdown waits for reconciles in flight (default [`DEFAULT_SHUTDOWN_TIMEOUT`]).
    pub fn shutdown_timeout(mut self, limit: Duration) -> Self {
        self.config.shutdown_timeout = limit;
        self
    }

    /// How long a reconcile waits for the controller's recorded writes to reach the cache
    /// (default [`DEFAULT_READ_YOUR_WRITES_TIMEOUT`]).
    pub fn read_your_writes_timeout(mut self, limit: Duration) -> Self {
        self.config.read_your_writes_timeout = limit;
        self
    }

    /// Whether the controller runs only while its manager leads (default true).
    pub fn needs_leader_election(mut self, needs: bool) -> Self {
        self.config.needs_leader_election = needs;
        self
    }

    /// Where this controller's metrics go (default: the provider given to
    /// [`set_metrics_provider`](crate::set_metrics_provider), else nowhere).
    pub fn metrics_provider(mut self, provider: Arc<dyn ControllerMetricsProvider>) -> Self {
        self.config.metrics = Some(provider);
        self
    }

    /// [`run`](Self::run) returns (gracefully) once `token` is cancelled.
    pub fn shutdown_on(mut self, token: CancellationToken) -> Self {
        self.config.shutdown = token;
        self
    }

    /// The cache the controller reads its `K`s from (and queues their changes from): where a
    /// handler that must see exactly what the controller sees belongs.
    pub fn primary(&self) -> &Arc<dyn ObjectCache<K>> {
        &self.primary
    }

    /// Where reconciles report their writes, for read-your-writes: keep a clone in your context.
    pub fn writes(&self) -> WriteTracker {
        self.writes.clone()
    }

    /// Runs until the [`shutdown_on`](Self::shutdown_on) token fires: reconciles every `K` of
    /// the cache, then every change. `reconcile(obj, ctx)` gets the newest cached object; a
    /// deleted object is not reconciled (see [`run_with_gone`](Self::run_with_gone)).
    pub async fn run<Ctx, E, F, Fut>(
        self,
        reconcile: F,
        error_policy: impl ErrorPolicy<K, E, Ctx>,
        ctx: Arc<Ctx>,
    ) -> Result<(), ControllerError>
    where
        Ctx: Send + Sync + 'static,
        E: std::error::Error + Send + Sync + 'static,
        F: Fn(Arc<K>, Arc<Ctx>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Action, E>> + Send + 'static,
    {
        let shutdown = self.config.shutdown.clone();
        self.run_until(
            boxed(reconcile),
            None,
            Arc::new(error_policy),
            ctx,
            shutdown,
        )
        .await
    }

    /// [`run`](Self::run), where a deleted object is reconciled too: `gone(last, ctx)` gets the
    /// last state the cache knew (also for a deletion discovered on relist), through the same
    /// queue, so it never overlaps a reconcile of the same key and its errors are retried by the
    /// error policy. If the object comes back before `gone` runs, `reconcile` runs instead.
    pub async fn run_with_gone<Ctx, E, F, Fut, G, GFut>(
        self,
        reconcile: F,
        gone: G,
        error_policy: impl ErrorPolicy<K, E, Ctx>,
        ctx: Arc<Ctx>,
    ) -> Result<(), ControllerError>
    where
        Ctx: Send + Sync + 'static,
        E: std::error::Error + Send + Sync + 'static,
        F: Fn(Arc<K>, Arc<Ctx>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Action, E>> + Send + 'static,
        G: Fn(Arc<K>, Arc<Ctx>) -> GFut + Send + Sync + 'static,
        GFut: Future<Output = Result<Action, E>> + Send + 'static,
    {
        let shutdown = self.config.shutdown.clone();
        let gone = Some(boxed(gone));
        self.run_until(
            boxed(reconcile),
            gone,
            Arc::new(error_policy),
            ctx,
            shutdown,
        )
        .await
    }

    /// The controller as a [`Runnable`] for a manager, which starts it with its shutdown token.
    pub fn into_runnable<Ctx, E, F, Fut>(
        self,
        reconcile: F,
        error_policy: impl ErrorPolicy<K, E, Ctx>,
        ctx: Arc<Ctx>,
    ) -> ControllerRunnable
    where
        Ctx: Send + Sync + 'static,
        E: std::error::Error + Send + Sync + 'static,
        F: Fn(Arc<K>, Arc<Ctx>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Action, E>> + Send + 'static,
    {
        self.runnable(boxed(reconcile), None, Arc::new(error_policy), ctx)
    }

    /// [`into_runnable`](Self::into_runnable) where a deleted object is reconciled too, as in
    /// [`run_with_gone`](Self::run_with_gone).
    pub fn into_runnable_with_gone<Ctx, E, F, Fut, G, GFut>(
        self,
        reconcile: F,
        gone: G,
        error_policy: impl ErrorPolicy<K, E, Ctx>,
        ctx: Arc<Ctx>,
    ) -> ControllerRunnable
    where
        Ctx: Send + Sync + 'static,
        E: std::error::Error + Send + Sync + 'static,
        F: Fn(Arc<K>, Arc<Ctx>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Action, E>> + Send + 'static,
        G: Fn(Arc<K>, Arc<Ctx>) -> GFut + Send + Sync + 'static,
        GFut: Future<Output = Result<Action, E>> + Send + 'static,
    {
        let gone = Some(boxed(gone));
        self.runnable(boxed(reconcile), gone, Arc::new(error_policy), ctx)
    }

    fn runnable<Ctx, E>(
        self,
        reconcile: ReconcileFn<K, Ctx, E>,
        gone: Option<ReconcileFn<K, Ctx, E>>,
        policy: Arc<dyn ErrorPolicy<K, E, Ctx>>,
        ctx: Arc<Ctx>,
    ) -> ControllerRunnable
    where
        Ctx: Send + Sync + 'static,
        E: std::error::Error + Send + Sync + 'static,
    {
        let name = self.name.clone();
        let needs_leader_election = self.config.needs_leader_election;
        ControllerRunnable {
            name,
            needs_leader_election,
            start: Box::new(move |shutdown| {
                Box::pin(async move {
                    self.run_until(reconcile, gone, policy, ctx, shutdown)
                        .await
                        .map_err(BoxError::from)
                })
            }),
        }
    }

    /// Runs the controller, then shuts down the factory it made itself, whichever way it
    /// returned.
    async fn run_until<Ctx, E>(
        mut self,
        reconcile: ReconcileFn<K, Ctx, E>,
        gone: Option<ReconcileFn<K, Ctx, E>>,
        policy: Arc<dyn ErrorPolicy<K, E, Ctx>>,
        ctx: Arc<Ctx>,
        shutdown: CancellationToken,
    ) -> Result<(), ControllerError>
    where
        Ctx: Send + Sync + 'static,
        E: std::error::Error + Send + Sync + 'static,
    {
        let own_factory = self.own_factory.take();
        let result = self
            .run_controller(reconcile, gone, policy, ctx, shutdown)
            .await;
        if let Some(factory) = own_factory {
            factory.shutdown().await;
        }
        result
    }

    async fn run_controller<Ctx, E>(
        self,
        reconcile: ReconcileFn<K, Ctx, E>,
        gone: Option<ReconcileFn<K, Ctx, E>>,
        policy: Arc<dyn ErrorPolicy<K, E, Ctx>>,
        ctx: Arc<Ctx>,
        shutdown: CancellationToken,
    ) -> Result<(), ControllerError>
    where
        Ctx: Send + Sync + 'static,
        E: std::error::Error + Send + Sync + 'static,
    {
        let Controller {
            name,
            factory,
            own_factory: _,
            storage: _,
            primary,
            predicates,
            sources,
            writes,
            mut config,
        } = self;
        let _claim = NameClaim::claim(&name)?;
        let limiter = config
            .rate_limiter
            .take()
            .unwrap_or_else(|| Box::new(default_controller_rate_limiter()));
        let metrics = metrics::provider_for(config.metrics.as_ref());
        let queue_config = QueueConfig {
            metrics_provider: metrics.workqueue_metrics(&name),
            ..QueueConfig::named(&name)
        };
        let queue = RateLimitingQueue::wrap(
            Queue::with_ordering(ByPriority::default(), queue_config),
            limiter,
        );
        let cx = SourceContext {
            enqueue: Enqueue {
                queue: queue.clone(),
                debounce: config.debounce,
                priority: config.priority,
            },
            primary: primary.clone(),
            cancel: shutdown.child_token(),
        };
        let gone_objects: GoneObjects<K> = Arc::new(Mutex::new(HashMap::new()));
        let tracked = gone.is_some().then(|| gone_objects.clone());
        let primary_source = if predicates.is_empty() && tracked.is_none() {
            key_source(primary.clone(), name.clone())
        } else {
            informer_source(primary.clone(), name.clone(), move |enqueue| {
                primary_handler(enqueue, predicates, tracked)
            })
        };

        let mut started: Vec<Started> = Vec::new();
        let stop_all = |started: &[Started]| started.iter().for_each(Started::stop);
        for source in std::iter::once(primary_source).chain(sources) {
            match source(&cx) {
                Ok(s) => started.push(s),
                Err(e) => {
                    stop_all(&started);
                    return Err(match e {
                        ControllerError::Config { reason, .. } => ControllerError::Config {
                            controller: name,
                            reason,
                        },
                        e => e,
                    });
                }
            }
        }
        if let Some(factory) = &factory {
            factory.start();
        }
        for s in &started {
            let Some(registration) = &s.registration else {
                continue;
            };
            let synced = tokio::select! {
                () = shutdown.cancelled() => {
                    stop_all(&started);
                    queue.shut_down();
                    return Ok(());
                }
                synced = registration.wait_for_sync() => synced,
            };
            if !synced {
                stop_all(&started);
                queue.shut_down();
                return Err(ControllerError::NotSynced {
                    controller: name,
                    informer: s.name.clone(),
                });
            }
        }

        tracing::info!(controller = %name, workers = config.concurrency, "caches synced; starting workers");
        let runner = Arc::new(Runner {
            metrics: ControllerMetrics::new(&name, &*metrics, config.concurrency),
            name: name.as_str().into(),
            cache: primary,
            queue: queue.clone(),
            reconcile,
            gone,
            gone_objects,
            policy,
            ctx,
            writes,
            reconcile_timeout: config.reconcile_timeout,
            read_your_writes_timeout: config.read_your_writes_timeout,
        });
        let mut workers = JoinSet::new();
        for _ in 0..config.concurrency {
            workers.spawn(runner.clone().worker(shutdown.clone()));
        }
        shutdown.cancelled().await;

        tracing::info!(controller = %name, "shutting down: waiting for reconciles in flight");
        stop_all(&started);
        let drained = tokio::time::timeout(config.shutdown_timeout, async {
            while workers.join_next().await.is_some() {}
        })
        .await;
        if drained.is_err() {
            tracing::warn!(controller = %name, timeout = ?config.shutdown_timeout, "reconciles still running at the shutdown timeout: abandoned");
            workers.abort_all();
        }
        queue.shut_down();
        Ok(())
    }
}

fn reason_error(reason: String) -> ControllerError {
    ControllerError::Config {
        controller: String::new(),
        reason,
    }
}

fn boxed<K, Ctx, E, F, Fut>(f: F) -> ReconcileFn<K, Ctx, E>
where
    F: Fn(Arc<K>, Arc<Ctx>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Action, E>> + Send + 'static,
{
    Arc::new(move |obj, ctx| -> BoxFuture<Result<Action, E>> { Box::pin(f(obj, ctx)) })
}

/// The primary kind's handler: its own key, at low priority for the initial list and resyncs;
/// deleted objects remembered for the "gone" reconcile when `tracked`.
fn primary_handler<K: Object>(
    enqueue: Enqueue,
    predicates: Vec<Predicate<K>>,
    tracked: Option<GoneObjects<K>>,
) -> ResourceEventHandlerFuncs<K> {
    let predicates = Arc::new(predicates);
    let (e1, e2, e3) = (enqueue.clone(), enqueue.clone(), enqueue);
    let (p1, p2, p3) = (predicates.clone(), predicates.clone(), predicates);
    let (t1, t3) = (tracked.clone(), tracked);
    ResourceEventHandlerFuncs::new()
        .on_add(move |obj: &Arc<K>, initial| {
            let request = ReconcileRequest::of(&**obj);
            if let Some(t) = &t1 {
                t.lock().remove(&request);
            }
            if all_accept(&p1, &Event::Create(&**obj)) {
                e1.event(request, initial);
            }
        })
        .on_update(move |old: &Arc<K>, new: &Arc<K>| {
            if all_accept(&p2, &Event::Update { old, new }) {
                let resync = old.resource_version() == new.resource_version();
                e2.event(ReconcileRequest::of(&**new), resync);
            }
        })
        .on_delete(move |deleted| {
            let request = ReconcileRequest::from(deleted.key());
            let passes = deleted
                .object()
                .is_none_or(|o| all_accept(&p3, &Event::Delete(&**o)));
            if let (Some(t), Some(last)) = (&t3, deleted.object()) {
                t.lock().insert(request.clone(), last.clone());
            }
            if passes {
                e3.event(request, false);
            }
        })
}

/// A controller ready to be started by a manager (see [`Controller::into_runnable`]).
pub struct ControllerRunnable {
    name: String,
    needs_leader_election: bool,
    start: Box<dyn FnOnce(CancellationToken) -> BoxFuture<Result<(), BoxError>> + Send>,
}

impl std::fmt::Debug for ControllerRunnable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ControllerRunnable")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl Runnable for ControllerRunnable {
    fn name(&self) -> &str {
        &self.name
    }
    fn needs_leader_election(&self) -> bool {
        self.needs_leader_election
    }
    fn start(self: Box<Self>, shutdown: CancellationToken) -> BoxFuture<Result<(), BoxError>> {
        (self.start)(shutdown)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kcache_core::{DynamicObject, ObjectMeta};
    use kcache_informer::ResourceEventHandler;
    use kcache_workqueue::BucketRateLimiter;

    fn obj(name: &str, rv: &str) -> Arc<DynamicObject> {
        Arc::new(DynamicObject {
            metadata: ObjectMeta {
                name: name.into(),
                namespace: Some("ns".into()),
                resource_version: Some(rv.into()),
                ..Default::default()
            },
            ..Default::default()
        })
    }

    /// The order in which events leave the queue, through the key-only handler (`keys_only`, what
    /// a controller without predicates registers) or the typed one.
    async fn order(priority: bool, keys_only: bool) -> Vec<String> {
        let queue = RateLimitingQueue::wrap(
            Queue::with_ordering(ByPriority::default(), QueueConfig::default()),
            BucketRateLimiter::default(),
        );
        let enqueue = Enqueue {
            queue: queue.clone(),
            debounce: Duration::ZERO,
            priority,
        };
        let h = if keys_only {
            crate::cache::key_handler::<DynamicObject>(Arc::new(move |r, low| {
                enqueue.event(r, low)
            }))
        } else {
            let all = Predicate::from_object(|_: &DynamicObject| true);
            primary_handler::<DynamicObject>(enqueue, vec![all], None)
        };
        ResourceEventHandler::on_add(&h, &obj("initial-1", "1"), true);
        ResourceEventHandler::on_add(&h, &obj("initial-2", "1"), true);
        ResourceEventHandler::on_update(&h, &obj("resync", "1"), &obj("resync", "1"));
        ResourceEventHandler::on_add(&h, &obj("created", "2"), false);
        ResourceEventHandler::on_update(&h, &obj("changed", "1"), &obj("changed", "3"));
        let mut out = Vec::new();
        while !queue.is_empty() {
            let r = queue.get().await.unwrap();
            out.push(r.name().to_string());
            queue.done(&r);
        }
        out
    }

    #[tokio::test]
    async fn initial_list_and_resyncs_go_behind_real_changes() {
        for keys_only in [true, false] {
            assert_eq!(
                order(true, keys_only).await,
                ["created", "changed", "initial-1", "initial-2", "resync"],
                "keys only: {keys_only}"
            );
            assert_eq!(
                order(false, keys_only).await,
                ["initial-1", "initial-2", "resync", "created", "changed"],
                "priority off: one FIFO (keys only: {keys_only})"
            );
        }
    }
}
