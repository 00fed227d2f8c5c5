//! The work queue, client-go's `workqueue.Type` (`queue.go`), over any [`QueueOrdering`].

use std::fmt;
use std::hash::Hash;
use std::sync::{Arc, Weak};
use std::time::Duration;

use crate::engine::{Engine, Item};
use crate::guard::DoneGuard;
use crate::metrics::{self, MetricsProvider, QueueMetrics};
use crate::ordering::{ByPriority, Fifo, QueueOrdering};

/// How a queue is built (client-go `QueueConfig`). Only a named queue has metrics.
#[derive(Clone, Default)]
pub struct QueueConfig {
    /// The queue's name: the `name` label of its metrics. Empty: no metrics.
    pub name: String,
    /// Where the metrics go; `None` uses [`set_provider`](crate::set_provider)'s, if any.
    pub metrics_provider: Option<Arc<dyn MetricsProvider>>,
    /// How often the unfinished-work gauges are refreshed; `None` means
    /// [`DEFAULT_UNFINISHED_WORK_UPDATE_PERIOD`](crate::DEFAULT_UNFINISHED_WORK_UPDATE_PERIOD).
    pub unfinished_work_update_period: Option<Duration>,
}

impl fmt::Debug for QueueConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("QueueConfig")
            .field("name", &self.name)
            .field("metrics_provider", &self.metrics_provider.is_some())
            .field(
                "unfinished_work_update_period",
                &self.unfinished_work_update_period,
            )
            .finish()
    }
}

impl QueueConfig {
    /// A config for a named queue, so it reports metrics.
    pub fn named(name: impl Into<String>) -> Self {
        QueueConfig {
            name: name.into(),
            ..Default::default()
        }
    }

    /// Builds the engine and, for a named queue with a provider, its metrics refresher.
    pub(crate) fn build<T, O>(&self, ordering: O) -> Arc<Engine<T, O>>
    where
        T: Hash + Eq + Clone + Send + Sync + 'static,
        O: QueueOrdering<T>,
    {
        let provider = if self.name.is_empty() {
            None
        } else {
            metrics::provider_for(self.metrics_provider.as_ref())
        };
        let by_priority = ordering.by_priority();
        let queue_metrics = provider.map(|p| QueueMetrics::new(&self.name, &*p, by_priority));
        let has_metrics = queue_metrics.is_some();
        let engine = Arc::new(Engine::new(ordering, queue_metrics));
        if has_metrics {
            let weak: Weak<Engine<T, O>> = Arc::downgrade(&engine);
            let period = self
                .unfinished_work_update_period
                .unwrap_or(metrics::DEFAULT_UNFINISHED_WORK_UPDATE_PERIOD);
            metrics::spawn_periodic(period, move || {
                weak.upgrade().is_some_and(|e| e.update_unfinished_work())
            });
        }
        engine
    }
}

/// A deduplicating work queue, client-go's `workqueue.Type` / `TypedInterface`, handing out
/// queued items in the order of its [`QueueOrdering`] `O`: [`Fifo`] by default (client-go),
/// [`ByPriority`] for a [`PriorityQueue`] (controller-runtime), or one of your own.
///
/// - An item is queued at most once: adding a dirty (queued) item does nothing — except that a
///   higher priority raises it.
/// - An item is never handed to two workers at once: adding it while it is processing marks it
///   dirty, and [`done`](Self::done) queues it again, with the highest priority it was added with
///   meanwhile.
/// - After [`shut_down`](Self::shut_down), adds are dropped but queued items are still handed
///   out; `get` returns `None` once the queue is empty.
///
/// Cloning gives another handle to the same queue. Async code uses [`get`](Self::get), threads
/// [`get_blocking`](Self::get_blocking); both can wait on the same queue. Wrap it in a
/// [`DelayingQueue`](crate::DelayingQueue) for `add_after`, and that in a
/// [`RateLimitingQueue`](crate::RateLimitingQueue) for `add_rate_limited`.
pub struct Queue<T, O = Fifo<T>> {
    engine: Arc<Engine<T, O>>,
}

/// A work queue that hands out higher priorities first, FIFO within a priority:
/// controller-runtime's priority queue (`pkg/controller/priorityqueue`; not in client-go). Build
/// one with `PriorityQueue::default()` or [`Queue::with_ordering`]; add with
/// [`add_with_priority`](Queue::add_with_priority) (`add` uses priority 0).
pub type PriorityQueue<T> = Queue<T, ByPriority<T>>;

impl<T, O> Clone for Queue<T, O>
where
    T: Hash + Eq + Clone + Send + Sync + 'static,
    O: QueueOrdering<T>,
{
    fn clone(&self) -> Self {
        Queue {
            engine: self.engine.clone(),
        }
    }
}

impl<T, O> fmt::Debug for Queue<T, O>
where
    T: Hash + Eq + Clone + Send + Sync + 'static,
    O: QueueOrdering<T>,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Queue").field("len", &self.len()).finish()
    }
}

impl<T, O> Default for Queue<T, O>
where
    T: Hash + Eq + Clone + Send + Sync + 'static,
    O: QueueOrdering<T> + Default,
{
    /// An unnamed queue without metrics, in `O`'s default order.
    fn default() -> Self {
        Self::with_ordering(O::default(), QueueConfig::default())
    }
}

impl<T: Hash + Eq + Clone + Send + Sync + 'static> Queue<T> {
    /// An unnamed FIFO queue without metrics (client-go `New`).
    pub fn new() -> Self {
        Self::with_config(QueueConfig::default())
    }

    /// A FIFO queue built from `config` (client-go `NewWithConfig`). A named queue with a
    /// metrics provider refreshes its unfinished-work gauges on the current tokio runtime, or on
    /// a small thread when there is none.
    pub fn with_config(config: QueueConfig) -> Self {
        Self::with_ordering(Fifo::default(), config)
    }
}

impl<T, O> Queue<T, O>
where
    T: Hash + Eq + Clone + Send + Sync + 'static,
    O: QueueOrdering<T>,
{
    /// A queue that hands out items in `ordering`'s order, built from `config` (client-go
    /// `NewWithConfig(QueueConfig{Queue: ordering})`).
    pub fn with_ordering(ordering: O, config: QueueConfig) -> Self {
        Queue {
            engine: config.build(ordering),
        }
    }

    /// Marks `item` as needing processing (client-go `Add`), with priority 0. Dropped
    /// while shutting down; a no-op if the item is already queued; deferred to
    /// [`done`](Self::done) if it is processing.
    pub fn add(&self, item: T) {
        self.engine.add(Item::Owned(item), 0);
    }

    /// [`add`](Self::add) for an item the caller keeps: it is cloned only if it becomes queued,
    /// so an add that collapses into a waiting item copies (and allocates) nothing.
    pub fn add_ref(&self, item: &T) {
        self.engine.add(Item::Borrowed(item), 0);
    }

    /// [`add`](Self::add) with `priority` (controller-runtime `AddWithOpts{Priority}`): an item
    /// already queued with a lower priority is raised; a lower priority changes nothing.
    pub fn add_with_priority(&self, item: T, priority: i32) {
        self.engine.add(Item::Owned(item), priority);
    }

    /// Waits for the next item and marks it processing (client-go `Get`); `None` once the queue
    /// is shut down and empty. Call [`done`](Self::done) when finished with it. Cancel-safe.
    pub async fn get(&self) -> Option<T> {
        self.engine.get().await
    }

    /// [`get`](Self::get) for plain threads: blocks the calling thread.
    pub fn get_blocking(&self) -> Option<T> {
        self.engine.get_blocking()
    }

    /// [`get`](Self::get), with a guard that calls [`done`](Self::done) when dropped — also when
    /// the worker returns early or unwinds.
    pub async fn get_guarded(&self) -> Option<DoneGuard<T, O>> {
        let item = self.engine.get().await?;
        Some(DoneGuard::new(self.engine.clone(), item))
    }

    /// [`get_guarded`](Self::get_guarded) for plain threads.
    pub fn get_guarded_blocking(&self) -> Option<DoneGuard<T, O>> {
        let item = self.engine.get_blocking()?;
        Some(DoneGuard::new(self.engine.clone(), item))
    }

    /// Ends processing of `item` (client-go `Done`); queues it again if it was added meanwhile.
    pub fn done(&self, item: &T) {
        self.engine.done(item);
    }

    /// Number of queued items, not counting those being processed (client-go `Len`).
    pub fn len(&self) -> usize {
        self.engine.len()
    }

    /// Whether no item is queued.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether `item` is queued or being processed (client-go `Find`'s `found`).
    pub fn contains(&self, item: &T) -> bool {
        self.engine.contains(item)
    }

    /// Getters (async or blocking) parked waiting for an item: idle workers. A getter that has
    /// been woken, or is still polling briefly before it parks, is not counted.
    pub fn waiting_getters(&self) -> usize {
        self.engine.waiting_getters()
    }

    /// Stops accepting items and wakes every waiting getter (client-go `ShutDown`). Also releases
    /// a pending [`shut_down_with_drain`](Self::shut_down_with_drain).
    pub fn shut_down(&self) {
        self.engine.shut_down(false);
    }

    /// Shuts down, then waits until no item is processing — not until the queue is empty
    /// (client-go `ShutDownWithDrain`). Workers must keep calling `done`; a later
    /// [`shut_down`](Self::shut_down) ends the wait.
    pub async fn shut_down_with_drain(&self) {
        self.engine.shut_down(true);
        self.engine.wait_drained().await;
    }

    /// [`shut_down_with_drain`](Self::shut_down_with_drain) for plain threads.
    pub fn shut_down_with_drain_blocking(&self) {
        self.engine.shut_down(true);
        self.engine.wait_drained_blocking();
    }

    /// Whether the queue is shutting down (client-go `ShuttingDown`).
    pub fn shutting_down(&self) -> bool {
        self.engine.shutting_down()
    }

    pub(crate) fn engine(&self) -> &Engine<T, O> {
        &self.engine
    }
}
