//! The delaying queue, client-go's `delayingType` (`delaying_queue.go`).

use std::cmp::{Ordering, Reverse};
use std::collections::{BinaryHeap, HashMap};
use std::fmt;
use std::hash::Hash;
use std::ops::Deref;
use std::sync::{Arc, Weak};
use std::time::Duration;

use parking_lot::Mutex;
use tokio::runtime::Handle;
use tokio::sync::Notify;
use tokio::time::Instant;

use crate::engine::Hasher;
use crate::queue::{Queue, QueueConfig};

/// A [`Queue`] with [`add_after`](Self::add_after), client-go's `DelayingInterface`.
///
/// Waiting items sit in a min-heap on their ready time, deduplicated: adding a waiting item again
/// keeps the *earliest* time. Ready items go through [`Queue::add`], so the dirty/processing
/// rules apply. Shutting the queue down drops waiting items.
///
/// One tokio task per queue runs the timer (not one timer per add, which leaked in client-go
/// issue #701). It is spawned when the queue is built, so [`new`](Self::new) and
/// [`with_config`](Self::with_config) must be called inside a tokio runtime (they panic
/// otherwise, like `tokio::spawn`); [`with_handle`](Self::with_handle) names the runtime
/// explicitly. The task ends when the queue shuts down or its last handle is dropped. Time is
/// `tokio::time`, so paused test time drives it.
///
/// Derefs to [`Queue`] for `add`, `get`, `done` and shutdown.
pub struct DelayingQueue<T: Hash + Eq + Clone + Send + Sync + 'static> {
    queue: Queue<T>,
    timer: Arc<Timer<T>>,
}

impl<T: Hash + Eq + Clone + Send + Sync + 'static> Clone for DelayingQueue<T> {
    fn clone(&self) -> Self {
        DelayingQueue {
            queue: self.queue.clone(),
            timer: self.timer.clone(),
        }
    }
}

impl<T: Hash + Eq + Clone + Send + Sync + 'static> fmt::Debug for DelayingQueue<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DelayingQueue")
            .field("len", &self.queue.len())
            .field("waiting", &self.waiting_len())
            .finish()
    }
}

impl<T: Hash + Eq + Clone + Send + Sync + 'static> Default for DelayingQueue<T> {
    /// Same as [`DelayingQueue::new`]: panics outside a tokio runtime.
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Hash + Eq + Clone + Send + Sync + 'static> Deref for DelayingQueue<T> {
    type Target = Queue<T>;
    fn deref(&self) -> &Queue<T> {
        &self.queue
    }
}

/// Items waiting for their ready time, shared by the handles and the timer task.
struct Timer<T> {
    waiting: Mutex<Waiting<T>>,
    wake: Arc<Notify>,
}

impl<T> Drop for Timer<T> {
    fn drop(&mut self) {
        // The last handle is gone: let the timer task notice and end.
        self.wake.notify_one();
    }
}

struct Waiting<T> {
    heap: BinaryHeap<Reverse<Slot<T>>>,
    /// The live ready time of each waiting item; heap slots with another time are stale.
    ready_at: HashMap<T, Instant, Hasher>,
    seq: u64,
}

/// A heap entry ordered by ready time, then insertion order.
struct Slot<T> {
    at: Instant,
    seq: u64,
    item: T,
}

impl<T> PartialEq for Slot<T> {
    fn eq(&self, other: &Self) -> bool {
        (self.at, self.seq) == (other.at, other.seq)
    }
}
impl<T> Eq for Slot<T> {}
impl<T> PartialOrd for Slot<T> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<T> Ord for Slot<T> {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.at, self.seq).cmp(&(other.at, other.seq))
    }
}

impl<T: Hash + Eq + Clone> Waiting<T> {
    /// Inserts or moves `item` earlier; returns true if it became the next to fire.
    fn insert(&mut self, item: T, at: Instant) -> bool {
        match self.ready_at.get_mut(&item) {
            Some(current) if *current <= at => return false,
            Some(current) => *current = at,
            None => {
                self.ready_at.insert(item.clone(), at);
            }
        }
        self.seq += 1;
        let seq = self.seq;
        self.heap.push(Reverse(Slot { at, seq, item }));
        self.heap.peek().is_some_and(|h| h.0.seq == seq)
    }

    /// Pops every item ready at `now`, in time order, and the next ready time.
    fn take_ready(&mut self, now: Instant) -> (Vec<T>, Option<Instant>) {
        let mut ready = Vec::new();
        while let Some(Reverse(head)) = self.heap.peek() {
            if head.at > now {
                return (ready, Some(head.at));
            }
            let Reverse(slot) = self.heap.pop().expect("peeked");
            if self.ready_at.get(&slot.item) == Some(&slot.at) {
                self.ready_at.remove(&slot.item);
                ready.push(slot.item);
            }
        }
        (ready, None)
    }

    fn clear(&mut self) {
        self.heap.clear();
        self.ready_at.clear();
    }
}

impl<T: Hash + Eq + Clone + Send + Sync + 'static> DelayingQueue<T> {
    /// An unnamed delaying queue on the current tokio runtime (client-go `NewDelayingQueue`).
    /// Panics outside a tokio runtime.
    pub fn new() -> Self {
        Self::with_config(QueueConfig::default())
    }

    /// A delaying queue built from `config` on the current tokio runtime
    /// (client-go `NewDelayingQueueWithConfig`). Panics outside a tokio runtime.
    pub fn with_config(config: QueueConfig) -> Self {
        Self::with_handle(config, &Handle::current())
    }

    /// A delaying queue whose timer task runs on `runtime`.
    pub fn with_handle(config: QueueConfig, runtime: &Handle) -> Self {
        let _enter = runtime.enter();
        let queue = Queue::with_config(config);
        let wake = Arc::new(Notify::new());
        let timer = Arc::new(Timer {
            waiting: Mutex::new(Waiting {
                heap: BinaryHeap::new(),
                ready_at: HashMap::with_hasher(Hasher::new()),
                seq: 0,
            }),
            wake: wake.clone(),
        });
        runtime.spawn(run_timer(queue.clone(), Arc::downgrade(&timer), wake));
        DelayingQueue { queue, timer }
    }

    /// Adds `item` once `delay` has passed (client-go `AddAfter`); a zero delay adds now. A
    /// waiting item keeps its earliest ready time. Dropped while shutting down. Counts a retry in
    /// the queue's metrics.
    pub fn add_after(&self, item: T, delay: Duration) {
        if self.queue.shutting_down() {
            return;
        }
        self.queue.engine().record_retry();
        if delay.is_zero() {
            self.queue.add(item);
            return;
        }
        let at = Instant::now() + delay;
        let first = self.timer.waiting.lock().insert(item, at);
        if first {
            self.timer.wake.notify_one();
        }
    }

    /// Number of items waiting for their ready time.
    pub fn waiting_len(&self) -> usize {
        self.timer.waiting.lock().ready_at.len()
    }

    /// The underlying [`Queue`].
    pub fn queue(&self) -> &Queue<T> {
        &self.queue
    }
}

/// The one timer task of a delaying queue: moves ready items into the queue, sleeps until the
/// next ready time or a wake-up, ends on shutdown or when the last handle is dropped.
async fn run_timer<T>(queue: Queue<T>, timer: Weak<Timer<T>>, wake: Arc<Notify>)
where
    T: Hash + Eq + Clone + Send + Sync + 'static,
{
    loop {
        let shutdown = queue.engine().events().notified();
        tokio::pin!(shutdown);
        shutdown.as_mut().enable();
        let (ready, next) = {
            let Some(timer) = timer.upgrade() else { return };
            let mut waiting = timer.waiting.lock();
            if queue.shutting_down() {
                waiting.clear();
                return;
            }
            waiting.take_ready(Instant::now())
        };
        for item in ready {
            queue.add(item);
        }
        match next {
            Some(at) => tokio::select! {
                _ = &mut shutdown => {}
                _ = wake.notified() => {}
                _ = tokio::time::sleep_until(at) => {}
            },
            None => tokio::select! {
                _ = &mut shutdown => {}
                _ = wake.notified() => {}
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn waiting() -> Waiting<&'static str> {
        Waiting {
            heap: BinaryHeap::new(),
            ready_at: HashMap::with_hasher(Hasher::new()),
            seq: 0,
        }
    }

    #[test]
    fn earlier_time_wins_and_stale_slots_are_skipped() {
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let mut w = waiting();
        assert!(w.insert("a", t0 + ms(50)), "first item is next");
        assert!(!w.insert("a", t0 + ms(70)), "later time ignored");
        assert!(w.insert("a", t0 + ms(30)), "earlier time moves it");
        assert!(!w.insert("b", t0 + ms(40)));
        assert_eq!(w.heap.len(), 3, "one stale slot left behind");

        let (ready, next) = w.take_ready(t0 + ms(35));
        assert_eq!(ready, ["a"]);
        assert_eq!(next, Some(t0 + ms(40)));
        let (ready, next) = w.take_ready(t0 + ms(100));
        assert_eq!(ready, ["b"], "a's stale 50ms slot does not fire");
        assert_eq!(next, None);
        assert!(w.ready_at.is_empty());
    }
}
