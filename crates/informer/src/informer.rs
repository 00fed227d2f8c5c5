//! The shared index informer (client-go's `sharedIndexInformer` and `controller.processLoop`).
//!
//! How the pop loop works:
//! - It takes up to 1024 FIFO entries at a time (`Queue::pop_batch`) and writes the batch's
//!   deltas to the cache with one `CacheWriter::upsert_batch` (applied before any deletion in the
//!   batch, so the cache changes in delta order); handlers are still notified per delta, in
//!   order, after the cache write.
//! - Appending to a handler's buffer does not schedule its delivery; the loop wakes handlers with
//!   pending work every 1024 pops and whenever the FIFO runs dry, so a stream of events costs one
//!   wake-up per batch rather than one per event and handler (a busy FIFO delays a notification
//!   by at most those pops, a few milliseconds; an idle one not at all).
//! - Every handler's buffer holds the same reference-counted batch of notifications (each handler
//!   skips the resyncs not meant for it) instead of its own clones: handing a batch to ten
//!   handlers costs ten reference counts, not twenty per notification, and the batch is freed by
//!   the handler that finishes it last.
//! - On an atomic FIFO (`FifoMode::Atomic`) a relist or resync pops alone, as one unit, and goes
//!   to the cache as one write before any handler hears of it (see the `atomic` module).
//! - The loop is generic over the queue and the cache (`Queue`, `CacheReader` + `CacheWriter`):
//!   no dynamic call per pop or per write.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use kcache_core::{
    BoxListerWatcher, CacheReader, CacheWriter, KnownObjects, ListerWatcher, Object,
};
use kcache_delta_fifo::{
    DeltaFifo, DeltaFifoOptions, DeltaType, Deltas, FifoMode, Queue, TransformFunc,
};
use kcache_reflector::{Reflector, ReflectorHandle, ReflectorStats, WatchErrorHandler};
use kcache_store::{Indexer, Indexers};
use parking_lot::Mutex;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::delivery::Notification;
use crate::error::InformerError;
use crate::handler::ResourceEventHandler;
use crate::handler_options::HandlerOptions;
use crate::latency::HandlerLatency;
use crate::listener::{Listener, Resync};
use crate::notification::Batch;
use crate::notifying_store::NotifyingStore;
use crate::options::InformerOptions;
use crate::outbox::{write_notification, Outbox};
use crate::processor::{determine_resync_period, Processor};
use crate::registration::{InformerSync, ResourceEventHandlerRegistration};
use crate::resource_version::{
    CacheResourceVersion, CacheVersionSender, WaitForResourceVersionError,
};
use crate::sync_signal::SyncSignal;

/// Pops between wake-ups of handlers while the FIFO stays busy (it bounds how long a
/// notification can wait in a buffer before its delivery is scheduled); also the most entries taken
/// from the FIFO at once.
const WAKE_BATCH: usize = 1024;

/// Turns given to the producer before an empty FIFO counts as idle.
const IDLE_YIELDS: usize = 4;

/// The smallest resync period a handler can ask for (client-go's `minimumResyncPeriod`).
pub const MINIMUM_RESYNC_PERIOD: Duration = Duration::from_secs(1);

/// A reflector, a DeltaFIFO and a cache feeding any number of handlers
/// (client-go's `SharedIndexInformer`).
///
/// The cache is any `C` that implements kcache-core's [`CacheReader`] and [`CacheWriter`];
/// kcache-store's [`Indexer`] unless said otherwise ([`SharedIndexInformer::new`] builds one,
/// [`SharedIndexInformer::with_cache`] takes yours). The informer writes it through those traits
/// with static dispatch, and hands it to the FIFO as its known objects.
///
/// The cache is always updated before handlers are notified. Each handler has its own buffer
/// and runs on a shared pool of delivery threads, one thread per busy handler, so a slow
/// handler never blocks the FIFO or the other handlers. Cloning is cheap
/// and every clone is the same informer.
pub struct SharedIndexInformer<K, C = Indexer<K>> {
    shared: Arc<Shared<K, C>>,
}

impl<K, C> Clone for SharedIndexInformer<K, C> {
    fn clone(&self) -> Self {
        SharedIndexInformer {
            shared: self.shared.clone(),
        }
    }
}

pub(crate) struct Shared<K, C> {
    lw: BoxListerWatcher<K>,
    cache: Arc<C>,
    processor: Processor<K>,
    state: Mutex<State<K>>,
    /// Held while deltas are applied and while a late handler joins, so that it sees every
    /// object exactly once (client-go's `blockDeltas`).
    block_deltas: Mutex<()>,
    pub(crate) signal: Arc<SyncSignal>,
    next_listener: AtomicU64,
    stopped: AtomicBool,
    /// Set once the informer has been seen synced, so the pop loop stops waking waiters.
    synced_once: AtomicBool,
    /// The resourceVersion the cache reflects, published as the FIFO moves it.
    cache_version: CacheVersionSender,
    options: InformerOptions,
}

struct State<K> {
    started: bool,
    resync_check_period: Duration,
    default_handler_resync: Duration,
    transform: Option<TransformFunc<K>>,
    watch_error_handler: Option<Arc<WatchErrorHandler>>,
    fifo: Option<Arc<DeltaFifo<K>>>,
    reflector: Option<ReflectorHandle>,
}

/// A snapshot of an informer's state for metrics.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InformerStats {
    /// The informer's name.
    pub name: String,
    /// Objects in the cache.
    pub objects: usize,
    /// The reflector's counters (lists, relists, watches, watch restarts).
    pub reflector: ReflectorStats,
    /// The last resourceVersion the reflector synced to.
    pub last_sync_resource_version: String,
    /// Entries waiting in the FIFO.
    pub fifo_depth: usize,
    /// Per handler: (registration id, pending notifications, oldest pending age in seconds).
    pub handlers: Vec<HandlerStats>,
    /// Whether the informer has synced.
    pub synced: bool,
}

/// One handler's queue, for metrics.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HandlerStats {
    /// The registration's id (stable for its life).
    pub id: u64,
    /// Notifications waiting.
    pub pending: usize,
    /// Age of the oldest waiting notification.
    pub oldest_pending_age: Option<Duration>,
    /// Notifications delivered.
    pub delivered: u64,
    /// Handler calls that panicked.
    pub panics: u64,
    /// How long the handler's calls took.
    pub latency: HandlerLatency,
}

impl Eq for HandlerStats {}

impl<K: Object> SharedIndexInformer<K> {
    /// An informer over `lw` caching into an [`Indexer`] with these indexers (client-go's
    /// `NewSharedIndexInformer`).
    pub fn new<L>(lw: L, indexers: Indexers<K>, options: InformerOptions) -> Self
    where
        L: ListerWatcher<K> + 'static,
    {
        Self::with_cache(lw, Arc::new(Indexer::new(indexers)), options)
    }

    /// Adds indexes; allowed at any time, existing objects are indexed at once (client-go 0.30+).
    pub fn add_indexers(&self, indexers: Indexers<K>) -> Result<(), InformerError> {
        Ok(self.shared.cache.add_indexers(indexers)?)
    }
}

impl<K, C> SharedIndexInformer<K, C>
where
    K: Object,
    C: CacheReader<K> + CacheWriter<K> + 'static,
{
    /// An informer over `lw` caching into `cache`, a store of your own (client-go's informers
    /// take any `Store`). The cache should start empty: the first list adds every object to it.
    pub fn with_cache<L>(lw: L, cache: Arc<C>, options: InformerOptions) -> Self
    where
        L: ListerWatcher<K> + 'static,
    {
        SharedIndexInformer {
            shared: Arc::new(Shared {
                lw: BoxListerWatcher::new(lw),
                cache,
                processor: Processor::new(),
                state: Mutex::new(State {
                    started: false,
                    resync_check_period: options.resync_period,
                    default_handler_resync: options.resync_period,
                    transform: None,
                    watch_error_handler: None,
                    fifo: None,
                    reflector: None,
                }),
                block_deltas: Mutex::new(()),
                signal: Arc::new(SyncSignal::default()),
                next_listener: AtomicU64::new(1),
                stopped: AtomicBool::new(false),
                synced_once: AtomicBool::new(false),
                cache_version: CacheVersionSender::new(),
                options,
            }),
        }
    }

    /// The informer's name.
    pub fn name(&self) -> &str {
        &self.shared.options.name
    }

    /// The cache (client-go's `GetIndexer`; `GetStore` is the same object here).
    pub fn indexer(&self) -> &Arc<C> {
        &self.shared.cache
    }

    /// Transforms each object once as it enters the FIFO, e.g. to drop managedFields before
    /// caching. Only before `run`.
    pub fn set_transform(
        &self,
        f: impl Fn(Arc<K>) -> Result<Arc<K>, kcache_core::BoxError> + Send + Sync + 'static,
    ) -> Result<(), InformerError> {
        let mut st = self.shared.state.lock();
        if st.started {
            return Err(InformerError::AlreadyStarted(
                self.shared.options.name.clone(),
                "the transform",
            ));
        }
        st.transform = Some(Arc::new(f));
        Ok(())
    }

    /// Called whenever list-and-watch fails. Only before `run`.
    pub fn set_watch_error_handler(
        &self,
        f: impl Fn(&ReflectorHandle, &kcache_reflector::ReflectorError) + Send + Sync + 'static,
    ) -> Result<(), InformerError> {
        let mut st = self.shared.state.lock();
        if st.started {
            return Err(InformerError::AlreadyStarted(
                self.shared.options.name.clone(),
                "the watch error handler",
            ));
        }
        st.watch_error_handler = Some(Arc::new(f));
        Ok(())
    }

    /// Adds a handler with the informer's default resync period.
    pub fn add_event_handler(
        &self,
        handler: impl ResourceEventHandler<K>,
    ) -> Result<ResourceEventHandlerRegistration<K>, InformerError> {
        self.add_event_handler_with_options(handler, HandlerOptions::default())
    }

    /// Adds a handler that also receives a resync of every cached object each `resync_period`
    /// (zero: never). Periods under 1 s are raised to 1 s. Before `run`, a period shorter than
    /// the check period lowers the check period; after, it is raised to the check period.
    /// A handler added after `run` first receives `on_add(obj, true)` for every cached object.
    pub fn add_event_handler_with_resync_period(
        &self,
        handler: impl ResourceEventHandler<K>,
        resync_period: Duration,
    ) -> Result<ResourceEventHandlerRegistration<K>, InformerError> {
        let options = HandlerOptions {
            resync_period: Some(resync_period),
            ..Default::default()
        };
        self.add_event_handler_with_options(handler, options)
    }

    /// Adds a handler as `options` say (client-go's `AddEventHandlerWithOptions`): its resync
    /// period (as [`add_event_handler_with_resync_period`](Self::add_event_handler_with_resync_period),
    /// the informer's default when `None`) and which thread calls it ([`DeliveryMode`](crate::DeliveryMode)).
    pub fn add_event_handler_with_options(
        &self,
        handler: impl ResourceEventHandler<K>,
        options: HandlerOptions,
    ) -> Result<ResourceEventHandlerRegistration<K>, InformerError> {
        let sh = &self.shared;
        let mut st = sh.state.lock();
        if sh.stopped.load(Ordering::Acquire) {
            return Err(InformerError::Stopped(sh.options.name.clone()));
        }
        let mut requested = options.resync_period.unwrap_or(st.default_handler_resync);
        if !requested.is_zero() {
            if requested < MINIMUM_RESYNC_PERIOD {
                tracing::warn!(?requested, "resync period too small; using 1s");
                requested = MINIMUM_RESYNC_PERIOD;
            }
            if requested < st.resync_check_period {
                if st.started {
                    tracing::warn!(
                        ?requested,
                        check = ?st.resync_check_period,
                        "informer already started; resync period raised to its check period"
                    );
                    requested = st.resync_check_period;
                } else {
                    st.resync_check_period = requested;
                    sh.processor.resync_check_period_changed(requested);
                }
            }
        }
        let period = determine_resync_period(requested, st.resync_check_period);
        let id = sh.next_listener.fetch_add(1, Ordering::Relaxed);
        let now = Instant::now();
        let listener = Listener::new(
            id,
            Arc::new(handler),
            Resync {
                requested,
                period,
                next: now + period,
            },
            sh.options.overflow,
            options.delivery,
            sh.signal.clone(),
        );
        let registration = ResourceEventHandlerRegistration {
            listener: listener.clone(),
            informer: sh.clone() as Arc<dyn InformerSync>,
        };
        if !st.started {
            sh.processor.add_listener(listener);
            return Ok(registration);
        }
        let _block = sh.block_deltas.lock();
        sh.processor.add_listener(listener.clone());
        let adds = sh.cache.list().into_iter().map(|obj| {
            let add = Notification::Add {
                obj,
                is_in_initial_list: true,
            };
            (add, false)
        });
        let batch = Batch::for_one_listener(adds.collect(), now);
        listener.add_batch(&Arc::new(batch), false);
        listener.wake();
        Ok(registration)
    }

    /// Removes a handler (client-go's `RemoveEventHandler`): it receives nothing more, and at
    /// most the call in flight right now completes after this returns — use
    /// [`shut_down_event_handler`](Self::shut_down_event_handler) to wait for that call too.
    /// Removing one twice is fine; a registration issued by another informer is an error
    /// ([`InformerError::ForeignRegistration`]) and removes nothing.
    pub fn remove_event_handler(
        &self,
        registration: &ResourceEventHandlerRegistration<K>,
    ) -> Result<(), InformerError> {
        let sh = &self.shared;
        let mine = Arc::as_ptr(sh) as *const ();
        if Arc::as_ptr(&registration.informer) as *const () != mine {
            return Err(InformerError::ForeignRegistration {
                informer: sh.options.name.clone(),
                owner: registration.informer.name().to_string(),
                registration: registration.listener.id,
            });
        }
        let _block = sh.block_deltas.lock();
        sh.processor.remove_listener(registration.listener.id);
        Ok(())
    }

    /// Removes a handler and waits until it has stopped: its last call has returned and no
    /// call will follow (client-go's `ShutDownEventHandler`), so whatever the handler uses can
    /// be released afterwards. Idempotent; errors as
    /// [`remove_event_handler`](Self::remove_event_handler) does, and, instead of waiting for
    /// ever, when called from inside the handler's own call
    /// ([`InformerError::ShutDownFromOwnHandler`], nothing removed).
    pub async fn shut_down_event_handler(
        &self,
        registration: &ResourceEventHandlerRegistration<K>,
    ) -> Result<(), InformerError> {
        self.remove_before_wait(registration)?;
        registration.listener.wait_stopped().await;
        Ok(())
    }

    /// [`shut_down_event_handler`](Self::shut_down_event_handler) for synchronous code: blocks
    /// the calling thread (not for an async task's thread; await the async form there).
    pub fn shut_down_event_handler_blocking(
        &self,
        registration: &ResourceEventHandlerRegistration<K>,
    ) -> Result<(), InformerError> {
        self.remove_before_wait(registration)?;
        registration.listener.wait_stopped_blocking();
        Ok(())
    }

    /// Removes the handler unless the caller is that handler's own call.
    fn remove_before_wait(
        &self,
        registration: &ResourceEventHandlerRegistration<K>,
    ) -> Result<(), InformerError> {
        if registration.listener.is_delivering_here() {
            return Err(InformerError::ShutDownFromOwnHandler {
                informer: self.shared.options.name.clone(),
                registration: registration.listener.id,
            });
        }
        self.remove_event_handler(registration)
    }

    /// Whether the registration is active on this informer.
    pub fn is_registered(&self, registration: &ResourceEventHandlerRegistration<K>) -> bool {
        self.shared.processor.contains(registration.listener.id)
    }

    /// How many handlers are registered.
    pub fn handler_count(&self) -> usize {
        self.shared.processor.len()
    }

    /// The period at which the reflector asks whether any handler is due a resync.
    pub fn resync_check_period(&self) -> Duration {
        self.shared.state.lock().resync_check_period
    }

    /// True once the first list has been fully processed into the cache.
    pub fn has_synced(&self) -> bool {
        self.shared.has_synced()
    }

    /// Waits (event-driven, no polling) until synced or stopped; returns `has_synced()`.
    pub async fn wait_for_cache_sync(&self) -> bool {
        let sh = &self.shared;
        sh.signal
            .wait_until(|| sh.has_synced() || sh.is_stopped())
            .await;
        sh.has_synced()
    }

    /// Whether `run` has been called.
    pub fn has_started(&self) -> bool {
        self.shared.state.lock().started
    }

    /// Whether `run` has returned (no handler can be added any more).
    pub fn is_stopped(&self) -> bool {
        self.shared.is_stopped()
    }

    /// The resourceVersion the reflector last synced to ("" before the first list).
    pub fn last_sync_resource_version(&self) -> String {
        let st = self.shared.state.lock();
        st.reflector
            .as_ref()
            .map(|r| r.last_sync_resource_version())
            .unwrap_or_default()
    }

    /// The resourceVersion the cache reflects: the newest watch event, relist or bookmark that
    /// has been applied to the cache together with everything the reflector delivered before
    /// it ("" before the first). client-go's `LastStoreSyncResourceVersion` (KEP-5647); unlike
    /// [`SharedIndexInformer::last_sync_resource_version`], which the reflector moves as soon
    /// as it queues a change, this one moves only once the cache holds it.
    pub fn last_store_sync_resource_version(&self) -> String {
        self.cache_resource_version()
            .last_store_sync_resource_version()
    }

    /// A handle on the cache's resourceVersion to keep beside a lister: read it, or wait for a
    /// version written through the API (see the README's "Read your writes").
    pub fn cache_resource_version(&self) -> CacheResourceVersion {
        self.shared.cache_version.handle(&self.shared.options.name)
    }

    /// Waits until the cache reflects `rv` or later (read your writes, KEP-5647): after writing
    /// an object at `rv`, the cache then holds that write or a newer state. Errors when `rv` is
    /// not a comparable resourceVersion (the server's are opaque) and when the informer stops
    /// first. See [`CacheResourceVersion::wait_for_resource_version`].
    pub async fn wait_for_resource_version(
        &self,
        rv: &str,
    ) -> Result<(), WaitForResourceVersionError> {
        self.cache_resource_version()
            .wait_for_resource_version(rv)
            .await
    }

    /// [`SharedIndexInformer::wait_for_resource_version`], giving up after `timeout`.
    pub async fn wait_for_resource_version_timeout(
        &self,
        rv: &str,
        timeout: Duration,
    ) -> Result<(), WaitForResourceVersionError> {
        self.cache_resource_version()
            .wait_for_resource_version_timeout(rv, timeout)
            .await
    }

    /// [`SharedIndexInformer::wait_for_resource_version`], giving up when `cancel` fires.
    pub async fn wait_for_resource_version_until(
        &self,
        rv: &str,
        cancel: &CancellationToken,
    ) -> Result<(), WaitForResourceVersionError> {
        self.cache_resource_version()
            .wait_for_resource_version_until(rv, cancel)
            .await
    }

    /// A snapshot for metrics.
    pub fn stats(&self) -> InformerStats {
        let sh = &self.shared;
        let (fifo, reflector) = {
            let st = sh.state.lock();
            (st.fifo.clone(), st.reflector.clone())
        };
        InformerStats {
            name: sh.options.name.clone(),
            objects: sh.cache.len(),
            reflector: reflector.as_ref().map(|r| r.stats()).unwrap_or_default(),
            last_sync_resource_version: reflector
                .map(|r| r.last_sync_resource_version())
                .unwrap_or_default(),
            fifo_depth: fifo.map(|f| f.len()).unwrap_or(0),
            handlers: sh
                .processor
                .listeners()
                .iter()
                .map(|l| HandlerStats {
                    id: l.id,
                    pending: l.pending(),
                    oldest_pending_age: l.oldest_pending_age(),
                    delivered: l.delivered(),
                    panics: l.panics(),
                    latency: l.latency().snapshot(),
                })
                .collect(),
            synced: sh.has_synced(),
        }
    }

    /// Lists and watches until `cancel` fires, keeping the cache and handlers up to date.
    /// Runs once; returns after every handler's last call has returned (no handler runs after).
    pub async fn run(&self, cancel: CancellationToken) -> Result<(), InformerError> {
        let sh = &self.shared;
        let (fifo, reflector) = {
            let mut st = sh.state.lock();
            if st.started {
                return Err(InformerError::RunTwice(sh.options.name.clone()));
            }
            st.started = true;
            // An atomic FIFO compares a relist with the cache when it is applied, not queued
            // (client-go gives it no known objects).
            let known = (sh.options.fifo_mode != FifoMode::Atomic)
                .then(|| sh.cache.clone() as Arc<dyn KnownObjects<K>>);
            let fifo = Arc::new(DeltaFifo::new(DeltaFifoOptions {
                known_objects: known,
                emit_delta_type_replaced: true,
                transformer: st.transform.clone(),
                mode: sh.options.fifo_mode,
            }));
            fifo.set_resource_version_observer(sh.cache_version.observer());
            let mut ropts = sh.options.reflector.clone();
            ropts.name = sh.options.name.clone();
            ropts.resync_period = st.resync_check_period;
            let store = NotifyingStore::new(fifo.clone(), sh.signal.clone());
            let mut reflector = Reflector::new(sh.lw.clone(), store, ropts);
            let me = sh.clone();
            reflector.set_should_resync(move || me.processor.should_resync());
            if let Some(h) = st.watch_error_handler.clone() {
                reflector.set_watch_error_handler(move |r, e| h(r, e));
            }
            st.fifo = Some(fifo.clone());
            st.reflector = Some(reflector.handle());
            (fifo, reflector)
        };
        sh.processor.run();
        let reflector_cancel = cancel.child_token();
        let reflector_task = tokio::spawn(reflector.run(reflector_cancel.clone()));
        sh.process_loop(&*fifo, &cancel).await;
        reflector_cancel.cancel();
        fifo.close();
        if let Err(e) = reflector_task.await {
            tracing::error!(informer = %sh.options.name, "reflector task failed: {e}");
        }
        {
            let _st = sh.state.lock();
            sh.stopped.store(true, Ordering::Release);
        }
        sh.cache_version.stopped();
        sh.processor.stop().await;
        sh.signal.notify();
        Ok(())
    }
}

/// Whether the FIFO is still empty after yielding to other tasks (the reflector) a few times.
async fn fifo_stays_empty<K, Q: Queue<K>>(fifo: &Q) -> bool {
    for _ in 0..IDLE_YIELDS {
        if !fifo.is_empty() {
            return false;
        }
        tokio::task::yield_now().await;
    }
    fifo.is_empty()
}

impl<K, C> InformerSync for Shared<K, C>
where
    K: Object,
    C: CacheReader<K> + CacheWriter<K> + 'static,
{
    fn has_synced(&self) -> bool {
        Shared::has_synced(self)
    }
    fn is_stopped(&self) -> bool {
        Shared::is_stopped(self)
    }
    fn signal(&self) -> &SyncSignal {
        &self.signal
    }
    fn name(&self) -> &str {
        &self.options.name
    }
}

impl<K, C> Shared<K, C>
where
    K: Object,
    C: CacheReader<K> + CacheWriter<K> + 'static,
{
    pub(crate) fn has_synced(&self) -> bool {
        self.state
            .lock()
            .fifo
            .as_ref()
            .is_some_and(|f| Queue::has_synced(&**f))
    }

    pub(crate) fn is_stopped(&self) -> bool {
        self.stopped.load(Ordering::Acquire)
    }

    /// Pops until `cancel` fires or the queue closes (client-go's `controller.processLoop`):
    /// each batch goes to the cache, then to the handlers. Generic over the queue, so a pop
    /// costs no dynamic call.
    async fn process_loop<Q: Queue<K>>(&self, fifo: &Q, cancel: &CancellationToken) {
        let sh = self;
        let mut pops: usize = 0;
        let mut outbox = Vec::new();
        loop {
            tokio::select! {
                biased;
                _ = cancel.cancelled() => break,
                batch = fifo.pop_batch(WAKE_BATCH) => {
                    let Ok(batch) = batch else {
                        break;
                    };
                    let entries = batch.as_ref();
                    {
                        // One hold of the late-handler lock for the whole batch: the cache
                        // writes and the notifications they cause reach listeners together.
                        let _block = sh.block_deltas.lock();
                        let mut writes = Writes::with_capacity(entries.len());
                        for entry in entries {
                            if let Some(event) = entry.atomic() {
                                sh.flush(&mut writes, &mut outbox);
                                crate::atomic::apply(&*sh.cache, &sh.options.name, event, entry.is_in_initial_list(), &mut outbox);
                                continue;
                            }
                            sh.handle_deltas(entry.deltas(), entry.is_in_initial_list(), &mut writes, &mut outbox);
                        }
                        sh.flush(&mut writes, &mut outbox);
                        let capacity = outbox.len();
                        sh.processor
                            .distribute_all(std::mem::replace(&mut outbox, Vec::with_capacity(capacity)));
                    }
                    // Inline handlers now, with no lock held: they may read the cache.
                    sh.processor.deliver_inline();
                    let popped = entries.len();
                    drop(batch);
                    // Handlers are woken in batches: every WAKE_BATCH pops, and when the
                    // FIFO stays empty after giving the producer a few turns (a stream of events
                    // keeps it busy; an idle one is noticed at once, with no timer).
                    pops += popped;
                    if pops >= WAKE_BATCH || fifo_stays_empty::<K, Q>(fifo).await {
                        pops = 0;
                        sh.processor.wake_all();
                    }
                    if !sh.synced_once.load(Ordering::Acquire) {
                        if sh.has_synced() {
                            sh.synced_once.store(true, Ordering::Release);
                        }
                        sh.signal.notify();
                    }
                }
            }
        }
    }

    /// Applies one key's deltas to the cache and notifies handlers (client-go's
    /// `processDeltas`): the cache first, then the notification. Writes (adds, updates,
    /// resyncs, replacements) are gathered in `writes` across the entries of a popped batch and
    /// applied together before the next deletion and at the end of the batch (see
    /// [`Writes`]), so the cache changes, and the notifications follow, in delta order.
    ///
    /// Notifications go to `outbox` (with whether each is a resync), for the caller to hand to
    /// every listener at once; the caller holds `block_deltas`.
    fn handle_deltas<'a>(
        &self,
        deltas: &'a Deltas<K>,
        is_in_initial_list: bool,
        writes: &mut Writes<'a, K>,
        outbox: &mut Outbox<K>,
    ) {
        for d in deltas.iter() {
            match d.type_ {
                DeltaType::Deleted => {
                    self.flush(writes, outbox);
                    // A tombstone is deleted by the key its object was stored under.
                    let deleted = match d.object.as_tombstone() {
                        Some(t) => self.cache.delete_by_key(t.key.as_str()),
                        None => match d.object.object() {
                            Some(o) => self.cache.delete(o),
                            None => Ok(None),
                        },
                    };
                    if let Err(e) = deleted {
                        tracing::error!(informer = %self.options.name, "cache delete failed: {e}");
                    }
                    outbox.push((Notification::Delete(d.object.clone()), false));
                }
                DeltaType::Sync | DeltaType::Replaced | DeltaType::Added | DeltaType::Updated => {
                    if let Some(obj) = d.object.object() {
                        writes.objs.push(obj);
                        writes.initial.push(is_in_initial_list);
                    }
                }
            }
        }
    }

    /// Applies the gathered writes to the cache, then notifies an update for each that
    /// replaced an object and an add for each that did not. A write the cache rejects (an
    /// index function failed) is skipped and logged; the others go ahead.
    fn flush(&self, writes: &mut Writes<'_, K>, outbox: &mut Outbox<K>) {
        if writes.objs.is_empty() {
            return;
        }
        let mut objs = writes.objs.iter().zip(&writes.initial);
        self.cache.upsert_batch(&writes.objs, &mut |written| {
            let Some((obj, initial)) = objs.next() else {
                return;
            };
            match written {
                Ok(old) => outbox.push(write_notification(obj, old, *initial)),
                Err(e) => {
                    tracing::error!(informer = %self.options.name, "cache write failed: {e}");
                }
            }
        });
        writes.objs.clear();
        writes.initial.clear();
    }
}

/// Cache writes of a popped batch not yet applied, with whether each came from an entry of
/// the initial list. They go to the cache as one `upsert_batch` — for an `Indexer`, one lock
/// hold, and the index functions of the whole batch run back to back, so their cache misses
/// overlap — instead of one per entry. It writes them in order (a key's later write sees its earlier one);
/// a deletion has the writes before it applied first, so the cache and the notifications follow
/// delta order.
struct Writes<'a, K> {
    objs: Vec<&'a Arc<K>>,
    initial: Vec<bool>,
}

impl<K> Writes<'_, K> {
    fn with_capacity(n: usize) -> Self {
        Writes {
            objs: Vec::with_capacity(n),
            initial: Vec::with_capacity(n),
        }
    }
}
