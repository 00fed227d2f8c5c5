//! The one timer of a delaying queue: a min-heap of waiting items and the driver that moves
//! ready ones into the queue.
//!
//! The driver is a task on a tokio runtime when the queue is built inside one (so paused test
//! time drives it), else an OS thread of its own that keeps real time. Either way it sleeps until
//! the next ready time or a wake-up, which comes when an add becomes the next to fire, when the
//! queue shuts down (a shutdown hook of the engine) or when the last delaying handle is dropped.
//! One driver per queue, not one timer per add (which leaked in client-go issue #701).
//!
//! No lost wake-ups: an add that becomes the next to fire sets `kicked` under the state lock; the
//! driver checks `kicked` and `closed` under that lock before it sleeps, and both drivers'
//! sleeps (`Condvar`, and `Notify`'s stored permit) catch a wake-up sent after that check.

use std::cmp::{Ordering, Reverse};
use std::collections::hash_map::Entry;
use std::collections::{BinaryHeap, HashMap};
use std::hash::Hash;
use std::sync::Arc;

use parking_lot::{Condvar, Mutex};
use tokio::runtime::Handle;
use tokio::sync::Notify;
use tokio::time::Instant;

use crate::engine::{Hasher, Item};
use crate::ordering::QueueOrdering;
use crate::queue::Queue;

/// Waiting items, shared by the delaying handles and the driver.
pub(crate) struct Timer<T> {
    state: Mutex<State<T>>,
    /// The thread driver sleeps here.
    cond: Condvar,
    /// The tokio driver sleeps here.
    notify: Notify,
}

struct State<T> {
    waiting: Waiting<T>,
    /// A new earliest item since the driver last looked.
    kicked: bool,
    /// Shut down, or every handle dropped: the driver ends.
    closed: bool,
}

/// Items waiting for their ready time, each with the priority it will be added with.
struct Waiting<T> {
    heap: BinaryHeap<Reverse<Slot<T>>>,
    /// The live ready time and priority of each waiting item; heap slots with another time are
    /// stale.
    ready_at: HashMap<T, (Instant, i32), Hasher>,
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
    fn new() -> Self {
        Waiting {
            heap: BinaryHeap::new(),
            ready_at: HashMap::with_hasher(Hasher::new()),
            seq: 0,
        }
    }

    /// Inserts `item`, or moves it earlier and raises its priority (client-go: the earliest time
    /// wins; controller-runtime: the highest priority wins); with `reset`, a waiting item moves to
    /// `at` even if later (a debounce). True if it became the next to fire.
    fn insert(&mut self, item: T, at: Instant, priority: i32, reset: bool) -> bool {
        match self.ready_at.get_mut(&item) {
            Some((current, p)) => {
                *p = (*p).max(priority);
                if *current == at || (*current < at && !reset) {
                    return false;
                }
                *current = at;
            }
            None => {
                self.ready_at.insert(item.clone(), (at, priority));
            }
        }
        self.seq += 1;
        let seq = self.seq;
        self.heap.push(Reverse(Slot { at, seq, item }));
        self.heap.peek().is_some_and(|h| h.0.seq == seq)
    }

    /// Pops up to `max` items ready at `now`, in time order, into `ready`; returns the next ready
    /// time if none is left ready.
    fn take_ready(&mut self, now: Instant, max: usize, ready: &mut Vec<(T, i32)>) -> Next {
        while let Some(Reverse(head)) = self.heap.peek() {
            if head.at > now {
                return Next::At(head.at);
            }
            if ready.len() == max {
                return Next::Now;
            }
            let Some(Reverse(slot)) = self.heap.pop() else {
                break;
            };
            if let Entry::Occupied(live) = self.ready_at.entry(slot.item) {
                if live.get().0 == slot.at {
                    let (item, (_, priority)) = live.remove_entry();
                    ready.push((item, priority));
                }
            }
        }
        Next::Idle
    }
}

impl<T> Waiting<T> {
    fn clear(&mut self) {
        self.heap.clear();
        self.ready_at.clear();
    }
}

impl<T> Timer<T> {
    /// Drops every waiting item and ends the driver: on shutdown, or when the last delaying
    /// handle is dropped (nobody could see the items any more).
    pub(crate) fn close(&self) {
        let mut state = self.state.lock();
        state.closed = true;
        state.waiting.clear();
        self.cond.notify_one();
        drop(state);
        self.notify.notify_one();
    }
}

impl<T: Hash + Eq + Clone + Send + Sync + 'static> Timer<T> {
    fn new() -> Self {
        Timer {
            state: Mutex::new(State {
                waiting: Waiting::new(),
                kicked: false,
                closed: false,
            }),
            cond: Condvar::new(),
            notify: Notify::new(),
        }
    }

    /// A timer for `queue` whose driver runs on `runtime`, or on a thread of its own when there
    /// is none. `None` if the thread could not be started.
    pub(crate) fn start<O>(queue: &Queue<T, O>, runtime: Option<&Handle>) -> Option<Arc<Self>>
    where
        O: QueueOrdering<T>,
    {
        let timer = Arc::new(Timer::new());
        let weak = Arc::downgrade(&timer);
        queue.engine().on_shut_down(Box::new(move || {
            if let Some(timer) = weak.upgrade() {
                timer.close();
            }
        }));
        let (driver, queue) = (timer.clone(), queue.clone());
        match runtime {
            Some(runtime) => {
                runtime.spawn(async move { driver.run_async(&queue).await });
            }
            None => {
                let spawned = std::thread::Builder::new()
                    .name("workqueue-timer".into())
                    .spawn(move || driver.run_blocking(&queue));
                if let Err(e) = spawned {
                    tracing::error!(
                        "workqueue: cannot start the delaying queue's timer thread ({e}); \
                         delayed adds are added at once"
                    );
                    return None;
                }
            }
        }
        Some(timer)
    }

    /// Adds `item` to the waiting set (see [`Waiting::insert`]); wakes the driver if it is now
    /// the next to fire.
    pub(crate) fn insert(&self, item: T, at: Instant, priority: i32, reset: bool) {
        let mut state = self.state.lock();
        if state.closed {
            return;
        }
        if state.waiting.insert(item, at, priority, reset) {
            state.kicked = true;
            self.cond.notify_one();
            drop(state);
            self.notify.notify_one();
        }
    }

    /// Number of waiting items.
    pub(crate) fn len(&self) -> usize {
        self.state.lock().waiting.ready_at.len()
    }

    /// Moves ready items into the queue; the next ready time, or `Err` once closed.
    fn fire<O>(&self, queue: &Queue<T, O>) -> Result<Option<Instant>, Closed>
    where
        O: QueueOrdering<T>,
    {
        let mut ready = Vec::with_capacity(FIRE_BATCH);
        loop {
            let next = {
                let mut state = self.state.lock();
                if queue.shutting_down() {
                    state.closed = true;
                    state.waiting.clear();
                }
                if state.closed {
                    return Err(Closed);
                }
                state.kicked = false;
                state
                    .waiting
                    .take_ready(Instant::now(), FIRE_BATCH, &mut ready)
            };
            for (item, priority) in ready.drain(..) {
                queue.engine().add(Item::Owned(item), priority);
            }
            match next {
                Next::Now => continue,
                Next::At(at) => return Ok(Some(at)),
                Next::Idle => return Ok(None),
            }
        }
    }

    fn run_blocking<O>(&self, queue: &Queue<T, O>)
    where
        O: QueueOrdering<T>,
    {
        while let Ok(next) = self.fire(queue) {
            let mut state = self.state.lock();
            if state.kicked || state.closed {
                continue;
            }
            match next {
                Some(at) => {
                    let wait = at.saturating_duration_since(Instant::now());
                    if !wait.is_zero() {
                        self.cond.wait_for(&mut state, wait);
                    }
                }
                None => self.cond.wait(&mut state),
            }
        }
    }

    async fn run_async<O>(&self, queue: &Queue<T, O>)
    where
        O: QueueOrdering<T>,
    {
        while let Ok(next) = self.fire(queue) {
            match next {
                Some(at) => tokio::select! {
                    _ = self.notify.notified() => {}
                    _ = tokio::time::sleep_until(at) => {}
                },
                None => self.notify.notified().await,
            }
        }
    }
}

/// The timer was closed: the driver ends.
struct Closed;

/// How many ready items the driver moves per hold of the state lock, so that adds waiting for
/// the lock get in between when many items come due at once.
const FIRE_BATCH: usize = 64;

/// When the next waiting item is due, as [`Waiting::take_ready`] leaves it.
#[derive(Debug, PartialEq)]
enum Next {
    /// Items are ready now (more than one batch was).
    Now,
    /// The earliest waiting item is due then.
    At(Instant),
    /// Nothing waits.
    Idle,
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn earlier_time_wins_and_stale_slots_are_skipped() {
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let mut w = Waiting::new();
        assert!(w.insert("a", t0 + ms(50), 0, false), "first item is next");
        assert!(!w.insert("a", t0 + ms(70), 0, false), "later time ignored");
        assert!(
            w.insert("a", t0 + ms(30), 0, false),
            "earlier time moves it"
        );
        assert!(!w.insert("b", t0 + ms(40), 0, false));
        assert_eq!(w.heap.len(), 3, "one stale slot left behind");

        let mut ready = Vec::new();
        let next = w.take_ready(t0 + ms(35), 8, &mut ready);
        assert_eq!(ready, [("a", 0)]);
        assert_eq!(next, Next::At(t0 + ms(40)));
        ready.clear();
        let next = w.take_ready(t0 + ms(100), 8, &mut ready);
        assert_eq!(ready, [("b", 0)], "a's stale 50ms slot does not fire");
        assert_eq!(next, Next::Idle);
        assert!(w.ready_at.is_empty());
    }

    #[test]
    fn a_waiting_item_keeps_its_highest_priority() {
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let mut w = Waiting::new();
        w.insert("a", t0 + ms(10), 5, false);
        w.insert("a", t0 + ms(20), 1, false); // later and lower: changes nothing
        w.insert("b", t0 + ms(10), -1, false);
        w.insert("b", t0 + ms(30), 3, false); // later but higher: raises, keeps 10ms
        let mut ready = Vec::new();
        w.take_ready(t0 + ms(10), 1, &mut ready);
        assert_eq!(ready, [("a", 5)], "one batch of one");
        assert_eq!(w.take_ready(t0 + ms(10), 2, &mut ready), Next::Idle);
        assert_eq!(ready, [("a", 5), ("b", 3)]);
    }

    #[test]
    fn a_reset_moves_a_waiting_item_later_too() {
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let mut w = Waiting::new();
        w.insert("a", t0 + ms(10), 0, true);
        w.insert("a", t0 + ms(25), 0, true); // a debounce: the latest call wins
        w.insert("b", t0 + ms(20), 0, false);
        let mut ready = Vec::new();
        let next = w.take_ready(t0 + ms(20), 8, &mut ready);
        assert_eq!(ready, [("b", 0)], "a's 10ms slot is stale");
        assert_eq!(next, Next::At(t0 + ms(25)));
        assert!(
            w.insert("a", t0 + ms(22), 0, true),
            "earlier again: next to fire"
        );
        ready.clear();
        w.take_ready(t0 + ms(30), 8, &mut ready);
        assert_eq!(ready, [("a", 0)], "fires once");
    }
}
