//! The basic work queue, client-go's `workqueue.Type` (`queue.go`).

use std::collections::VecDeque;
use std::fmt;
use std::hash::Hash;
use std::sync::{Arc, Weak};
use std::time::Duration;

use crate::engine::{Engine, Item, Pending};
use crate::metrics::{self, MetricsProvider, QueueMetrics};

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
    pub(crate) fn build<T, P>(&self, pending: P) -> Arc<Engine<T, P>>
    where
        T: Hash + Eq + Clone + Send + Sync + 'static,
        P: Pending<T> + 'static,
    {
        let provider = if self.name.is_empty() {
            None
        } else {
            metrics::provider_for(self.metrics_provider.as_ref())
        };
        let queue_metrics = provider.map(|p| QueueMetrics::new(&self.name, &*p));
        let has_metrics = queue_metrics.is_some();
        let engine = Arc::new(Engine::new(pending, queue_metrics));
        if has_metrics {
            let weak: Weak<Engine<T, P>> = Arc::downgrade(&engine);
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

/// Plain FIFO order of queued items.
pub(crate) struct Fifo<T>(VecDeque<T>);

impl<T: Send> Pending<T> for Fifo<T> {
    type Priority = ();
    fn push(&mut self, item: T, _: ()) {
        self.0.push_back(item);
    }
    fn raise(&mut self, _: &T, _: (), _: ()) {}
    fn pop(&mut self) -> Option<T> {
        self.0.pop_front()
    }
    fn len(&self) -> usize {
        self.0.len()
    }
}

/// A deduplicating FIFO work queue, client-go's `workqueue.Type` / `TypedInterface`.
///
/// - An item is queued at most once: adding a dirty (queued) item does nothing.
/// - An item is never handed to two workers at once: adding it while it is processing marks it
///   dirty, and [`done`](Self::done) queues it again.
/// - After [`shut_down`](Self::shut_down), adds are dropped but queued items are still handed
///   out; `get` returns `None` once the queue is empty.
///
/// Cloning gives another handle to the same queue. Async code uses [`get`](Self::get), threads
/// [`get_blocking`](Self::get_blocking); both can wait on the same queue.
pub struct Queue<T: Hash + Eq + Clone + Send + Sync + 'static> {
    engine: Arc<Engine<T, Fifo<T>>>,
}

impl<T: Hash + Eq + Clone + Send + Sync + 'static> Clone for Queue<T> {
    fn clone(&self) -> Self {
        Queue {
            engine: self.engine.clone(),
        }
    }
}

impl<T: Hash + Eq + Clone + Send + Sync + 'static> fmt::Debug for Queue<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Queue").field("len", &self.len()).finish()
    }
}

impl<T: Hash + Eq + Clone + Send + Sync + 'static> Default for Queue<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Hash + Eq + Clone + Send + Sync + 'static> Queue<T> {
    /// An unnamed queue without metrics (client-go `New`).
    pub fn new() -> Self {
        Self::with_config(QueueConfig::default())
    }

    /// A queue built from `config` (client-go `NewWithConfig`). A named queue with a metrics
    /// provider refreshes its unfinished-work gauges on the current tokio runtime, or on a small
    /// thread when there is none.
    pub fn with_config(config: QueueConfig) -> Self {
        Queue {
            engine: config.build(Fifo(VecDeque::new())),
        }
    }

    /// Marks `item` as needing processing (client-go `Add`). Dropped while shutting down; a
    /// no-op if the item is already queued; deferred to [`done`](Self::done) if it is processing.
    pub fn add(&self, item: T) {
        self.engine.add(Item::Owned(item), ());
    }

    /// [`add`](Self::add) for an item the caller keeps: it is cloned only if it becomes queued,
    /// so an add that collapses into a waiting item copies (and allocates) nothing.
    pub fn add_ref(&self, item: &T) {
        self.engine.add(Item::Borrowed(item), ());
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

    pub(crate) fn engine(&self) -> &Engine<T, Fifo<T>> {
        &self.engine
    }
}
