//! The delaying queue, client-go's `delayingType` (`delaying_queue.go`), over any ordering.

use std::fmt;
use std::hash::Hash;
use std::ops::Deref;
use std::sync::Arc;
use std::time::Duration;

use tokio::runtime::Handle;
use tokio::time::Instant;

use crate::engine::Item;
use crate::ordering::{Fifo, QueueOrdering};
use crate::queue::{Queue, QueueConfig};
use crate::timer::Timer;

/// A [`Queue`] with [`add_after`](Self::add_after), client-go's `DelayingInterface`.
///
/// Waiting items are deduplicated: adding a waiting item again keeps the *earliest* ready time
/// and the *highest* priority (controller-runtime's rule: a delayed item keeps its priority, a
/// re-add raises it). Ready items go through [`Queue::add_with_priority`], so the
/// dirty/processing rules apply. Shutting the queue down drops waiting items. An `add` of a
/// waiting item queues it now and leaves its wait in place (client-go; controller-runtime's
/// priority queue would cancel the wait).
///
/// One timer per queue runs the delays: a task on the tokio runtime current when the queue is
/// built (so paused test time drives it), or a thread of its own when there is none — the queue
/// works in programs with no async runtime at all. [`with_handle`](Self::with_handle) and
/// [`wrap_on`](Self::wrap_on) name a runtime. The timer ends when the queue shuts down or its last
/// `DelayingQueue` handle is dropped. No constructor panics.
///
/// Derefs to [`Queue`] for `add`, `get`, `done` and shutdown.
pub struct DelayingQueue<T, O = Fifo<T>> {
    queue: Queue<T, O>,
    timer: Arc<TimerHandle<T>>,
}

/// Closes the timer when the last delaying handle is dropped. `None`: no timer could be
/// started, so delayed adds are added at once.
struct TimerHandle<T>(Option<Arc<Timer<T>>>);

impl<T> Drop for TimerHandle<T> {
    fn drop(&mut self) {
        if let Some(timer) = &self.0 {
            timer.close();
        }
    }
}

impl<T, O> Clone for DelayingQueue<T, O>
where
    T: Hash + Eq + Clone + Send + Sync + 'static,
    O: QueueOrdering<T>,
{
    fn clone(&self) -> Self {
        DelayingQueue {
            queue: self.queue.clone(),
            timer: self.timer.clone(),
        }
    }
}

impl<T, O> fmt::Debug for DelayingQueue<T, O>
where
    T: Hash + Eq + Clone + Send + Sync + 'static,
    O: QueueOrdering<T>,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DelayingQueue")
            .field("len", &self.queue.len())
            .field("waiting", &self.waiting_len())
            .finish()
    }
}

impl<T, O> Default for DelayingQueue<T, O>
where
    T: Hash + Eq + Clone + Send + Sync + 'static,
    O: QueueOrdering<T> + Default,
{
    /// An unnamed delaying queue in `O`'s default order.
    fn default() -> Self {
        Self::wrap(Queue::default())
    }
}

impl<T, O> Deref for DelayingQueue<T, O>
where
    T: Hash + Eq + Clone + Send + Sync + 'static,
    O: QueueOrdering<T>,
{
    type Target = Queue<T, O>;
    fn deref(&self) -> &Queue<T, O> {
        &self.queue
    }
}

impl<T, O> From<Queue<T, O>> for DelayingQueue<T, O>
where
    T: Hash + Eq + Clone + Send + Sync + 'static,
    O: QueueOrdering<T>,
{
    fn from(queue: Queue<T, O>) -> Self {
        Self::wrap(queue)
    }
}

impl<T: Hash + Eq + Clone + Send + Sync + 'static> DelayingQueue<T> {
    /// An unnamed FIFO delaying queue (client-go `NewDelayingQueue`).
    pub fn new() -> Self {
        Self::with_config(QueueConfig::default())
    }

    /// A FIFO delaying queue built from `config` (client-go `NewDelayingQueueWithConfig`).
    pub fn with_config(config: QueueConfig) -> Self {
        Self::wrap(Queue::with_config(config))
    }

    /// A FIFO delaying queue whose timer runs on `runtime`.
    pub fn with_handle(config: QueueConfig, runtime: &Handle) -> Self {
        let _enter = runtime.enter();
        Self::wrap_on(Queue::with_config(config), runtime)
    }
}

impl<T, O> DelayingQueue<T, O>
where
    T: Hash + Eq + Clone + Send + Sync + 'static,
    O: QueueOrdering<T>,
{
    /// Adds delays to `queue`, of any ordering (client-go `DelayingQueueConfig.Queue`). The
    /// timer runs on the current tokio runtime, or on a thread of its own when there is none.
    pub fn wrap(queue: Queue<T, O>) -> Self {
        match Handle::try_current() {
            Ok(runtime) => Self::wrap_on(queue, &runtime),
            Err(_) => Self::start(queue, None),
        }
    }

    /// [`wrap`](Self::wrap), with the timer on `runtime`.
    pub fn wrap_on(queue: Queue<T, O>, runtime: &Handle) -> Self {
        Self::start(queue, Some(runtime))
    }

    fn start(queue: Queue<T, O>, runtime: Option<&Handle>) -> Self {
        let timer = Timer::start(&queue, runtime);
        DelayingQueue {
            queue,
            timer: Arc::new(TimerHandle(timer)),
        }
    }

    /// Adds `item` once `delay` has passed (client-go `AddAfter`), with priority 0; a
    /// zero delay adds now. A waiting item keeps its earliest ready time. Dropped while shutting
    /// down. Counts a retry in the queue's metrics.
    pub fn add_after(&self, item: T, delay: Duration) {
        self.add_after_with_priority(item, delay, 0);
    }

    /// [`add_after`](Self::add_after) with `priority`, which the item keeps while it waits
    /// (controller-runtime `AddWithOpts{After, Priority}`); adding a waiting item again with a
    /// higher priority raises it.
    pub fn add_after_with_priority(&self, item: T, delay: Duration, priority: i32) {
        self.schedule(item, delay, priority, false);
    }

    /// Adds `item` once `window` has passed since the last call for it (kube-runtime's
    /// trailing-edge debounce): a waiting item moves to now + `window`, later or earlier, so a
    /// burst of calls adds it once, `window` after the last. Calls more often than `window`
    /// postpone it for as long as they go on. Priority as in
    /// [`add_after_with_priority`](Self::add_after_with_priority); a zero window adds now. Not
    /// counted as a retry: a debounced add is an event, not a failure.
    pub fn add_debounced(&self, item: T, window: Duration, priority: i32) {
        self.schedule(item, window, priority, true);
    }

    fn schedule(&self, item: T, delay: Duration, priority: i32, reset: bool) {
        if self.queue.shutting_down() {
            return;
        }
        if !reset {
            self.queue.engine().record_retry();
        }
        match &self.timer.0 {
            Some(timer) if !delay.is_zero() => {
                timer.insert(item, Instant::now() + delay, priority, reset)
            }
            _ => self.queue.engine().add(Item::Owned(item), priority),
        }
    }

    /// Number of items waiting for their ready time.
    pub fn waiting_len(&self) -> usize {
        self.timer.0.as_ref().map_or(0, |t| t.len())
    }

    /// The underlying [`Queue`].
    pub fn queue(&self) -> &Queue<T, O> {
        &self.queue
    }
}
