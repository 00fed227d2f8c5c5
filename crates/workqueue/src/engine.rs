//! The shared engine behind [`Queue`](crate::Queue) and [`PriorityQueue`](crate::PriorityQueue):
//! client-go's dirty/processing rules (`queue.go`), one lock, and wake-ups for both blocking
//! threads and async tasks.
//!
//! Wake-up protocol (no lost wake-ups, no syscall when nobody waits):
//! - a blocking getter first polls a lock-free length for a few microseconds (see `SPINS`), then
//!   increments `blocked` and waits on `cond` under the lock; a notifier that
//!   finds `blocked > 0` decrements it and calls `notify_one` (parking_lot's `Condvar` has no
//!   spurious wake-ups, so the count is exact);
//! - an async getter registers its waker in `async_waiters` under the lock; a notifier pops one;
//!   a getter dropped after being popped, before it took an item, passes the wake-up on;
//! - shutdown wakes every getter of both kinds.

use std::collections::HashMap;
use std::future::poll_fn;
use std::hash::Hash;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use parking_lot::{Condvar, Mutex, MutexGuard};
use tokio::sync::Notify;

use crate::metrics::{CounterMetric, QueueMetrics};

/// The hasher of every per-item map in this crate: fast, DoS-resistant keys.
pub(crate) type Hasher = ahash::RandomState;

/// How long a blocking getter polls for an item before it parks: half busy-spins, half
/// `yield_now`. A producer adding fast then never pays a wake-up syscall, and on a loaded machine
/// the yields hand the core to it; an idle getter parks after a few microseconds.
const SPINS: u32 = 64;

const DIRTY: u8 = 1;
const PROCESSING: u8 = 2;

/// The order in which queued (dirty, not processing) items are handed out.
pub(crate) trait Pending<T>: Send {
    /// Per-add priority; `()` for plain FIFO.
    type Priority: Copy + Ord + Default + Send;
    /// Queues an item that is not queued yet.
    fn push(&mut self, item: T, priority: Self::Priority);
    /// A queued item was added again with a higher priority.
    fn raise(&mut self, item: &T, from: Self::Priority, to: Self::Priority);
    /// Takes the next item.
    fn pop(&mut self) -> Option<T>;
    /// Number of queued items.
    fn len(&self) -> usize;
}

/// Dirty and processing flags plus the priority the item was (or will be) queued with.
#[derive(Clone, Copy)]
struct Entry<P> {
    flags: u8,
    priority: P,
}

struct State<T, P: Pending<T>> {
    pending: P,
    /// Every item that is dirty, processing, or both: client-go's `dirty` and `processing` sets
    /// in one map, so the hot path costs one hash lookup.
    items: HashMap<T, Entry<P::Priority>, Hasher>,
    processing: usize,
    shutting_down: bool,
    drain: bool,
    /// Blocking getters parked on `cond` that nobody has notified yet.
    blocked: usize,
    /// Async getters waiting for an item, oldest first.
    async_waiters: std::collections::VecDeque<(u64, Waker)>,
    next_waiter: u64,
    metrics: Option<QueueMetrics<T>>,
}

/// The queue proper; [`Queue`](crate::Queue) and [`PriorityQueue`](crate::PriorityQueue) are
/// handles to one of these.
pub(crate) struct Engine<T, P: Pending<T>> {
    state: Mutex<State<T, P>>,
    cond: Condvar,
    /// Wakes blocking `shut_down_with_drain` callers.
    drain_cond: Condvar,
    /// Wakes async drain waiters and the delaying queue's timer on shutdown or drain progress.
    events: Notify,
    retries: Option<Arc<dyn CounterMetric>>,
    /// `pending.len()`, readable without the lock by spinning getters.
    queued: AtomicUsize,
}

impl<T, P> Engine<T, P>
where
    T: Hash + Eq + Clone + Send + Sync + 'static,
    P: Pending<T>,
{
    pub(crate) fn new(pending: P, metrics: Option<QueueMetrics<T>>) -> Self {
        let retries = metrics.as_ref().map(|m| m.retries.clone());
        Engine {
            state: Mutex::new(State {
                pending,
                items: HashMap::with_hasher(Hasher::new()),
                processing: 0,
                shutting_down: false,
                drain: false,
                blocked: 0,
                async_waiters: Default::default(),
                next_waiter: 0,
                metrics,
            }),
            cond: Condvar::new(),
            drain_cond: Condvar::new(),
            events: Notify::new(),
            retries,
            queued: AtomicUsize::new(0),
        }
    }

    /// client-go `Add`: see the crate docs for the rules.
    pub(crate) fn add(&self, item: T, priority: P::Priority) {
        let waker = {
            let mut st = self.state.lock();
            if st.shutting_down {
                return;
            }
            let st = &mut *st;
            match st.items.entry(item) {
                std::collections::hash_map::Entry::Occupied(mut e) => {
                    let Entry {
                        flags,
                        priority: old,
                    } = *e.get();
                    if flags & DIRTY != 0 {
                        // Already waiting: only a higher priority changes anything.
                        if priority > old {
                            if flags & PROCESSING == 0 {
                                st.pending.raise(e.key(), old, priority);
                            }
                            e.get_mut().priority = priority;
                        }
                        return;
                    }
                    // Processing and clean: `done` will queue it again.
                    *e.get_mut() = Entry {
                        flags: flags | DIRTY,
                        priority,
                    };
                    if let Some(m) = &mut st.metrics {
                        m.add(e.key());
                    }
                    return;
                }
                std::collections::hash_map::Entry::Vacant(v) => {
                    if let Some(m) = &mut st.metrics {
                        m.add(v.key());
                    }
                    let item = v.key().clone();
                    v.insert(Entry {
                        flags: DIRTY,
                        priority,
                    });
                    st.pending.push(item, priority);
                    self.queued.store(st.pending.len(), Ordering::Relaxed);
                }
            }
            self.wake_one(st)
        };
        if let Some(w) = waker {
            w.wake();
        }
    }

    /// Wakes one getter after an item was queued; an async waker is returned to be woken after
    /// the lock is released.
    fn wake_one(&self, st: &mut State<T, P>) -> Option<Waker> {
        if st.blocked > 0 {
            st.blocked -= 1;
            self.cond.notify_one();
            None
        } else {
            st.async_waiters.pop_front().map(|(_, w)| w)
        }
    }

    /// Moves the next queued item from dirty to processing.
    fn take_next(&self, st: &mut State<T, P>) -> Option<T> {
        let item = st.pending.pop()?;
        self.queued.store(st.pending.len(), Ordering::Relaxed);
        if let Some(e) = st.items.get_mut(&item) {
            e.flags = PROCESSING;
            e.priority = P::Priority::default();
        }
        st.processing += 1;
        if let Some(m) = &mut st.metrics {
            m.get(&item);
        }
        Some(item)
    }

    /// client-go `Get` for plain threads: `None` once shut down and empty.
    pub(crate) fn get_blocking(&self) -> Option<T> {
        let mut st = self.state.lock();
        let mut spins = 0u32;
        loop {
            if let Some(item) = self.take_next(&mut st) {
                return Some(item);
            }
            if st.shutting_down {
                return None;
            }
            if spins < SPINS {
                drop(st);
                while spins < SPINS && self.queued.load(Ordering::Relaxed) == 0 {
                    spins += 1;
                    if spins < SPINS / 2 {
                        std::hint::spin_loop();
                    } else {
                        std::thread::yield_now();
                    }
                }
                spins = SPINS;
                st = self.state.lock();
                continue;
            }
            st.blocked += 1;
            self.cond.wait(&mut st);
        }
    }

    /// client-go `Get` for async code: `None` once shut down and empty. Cancel-safe: a getter
    /// dropped after being woken passes the wake-up on.
    pub(crate) async fn get(&self) -> Option<T> {
        let mut waiter = AsyncGetter {
            engine: self,
            id: None,
        };
        poll_fn(|cx| waiter.poll(cx)).await
    }

    /// client-go `Done`: ends processing; re-queues the item if it was added meanwhile.
    pub(crate) fn done(&self, item: &T) {
        let waker = {
            let mut st = self.state.lock();
            let st = &mut *st;
            if let Some(m) = &mut st.metrics {
                m.done(item);
            }
            let Some(e) = st.items.get_mut(item) else {
                return;
            };
            if e.flags & PROCESSING == 0 {
                return;
            }
            st.processing -= 1;
            let waker = if e.flags & DIRTY != 0 {
                e.flags = DIRTY;
                let priority = e.priority;
                st.pending.push(item.clone(), priority);
                self.queued.store(st.pending.len(), Ordering::Relaxed);
                self.wake_one(st)
            } else {
                st.items.remove(item);
                None
            };
            if st.processing == 0 && st.drain {
                self.drain_cond.notify_all();
                self.events.notify_waiters();
            }
            waker
        };
        if let Some(w) = waker {
            w.wake();
        }
    }

    /// Whether the item is dirty or processing (client-go `Find`, without the shutdown flag).
    pub(crate) fn contains(&self, item: &T) -> bool {
        self.state.lock().items.contains_key(item)
    }

    /// Queued items only.
    pub(crate) fn len(&self) -> usize {
        self.state.lock().pending.len()
    }

    pub(crate) fn shutting_down(&self) -> bool {
        self.state.lock().shutting_down
    }

    /// Sets the drain flag and shuts down; wakes every getter of both kinds and every drain
    /// waiter (a forced shutdown releases them).
    pub(crate) fn shut_down(&self, drain: bool) {
        let wakers: Vec<Waker> = {
            let mut st = self.state.lock();
            st.drain = drain;
            st.shutting_down = true;
            st.blocked = 0;
            self.cond.notify_all();
            if !drain {
                self.drain_cond.notify_all();
            }
            st.async_waiters.drain(..).map(|(_, w)| w).collect()
        };
        self.events.notify_waiters();
        wakers.into_iter().for_each(Waker::wake);
    }

    fn drained(st: &State<T, P>) -> bool {
        st.processing == 0 || !st.drain
    }

    /// Blocks until nothing is processing or a forced shutdown came.
    pub(crate) fn wait_drained_blocking(&self) {
        let mut st = self.state.lock();
        while !Self::drained(&st) {
            self.drain_cond.wait(&mut st);
        }
    }

    /// Waits until nothing is processing or a forced shutdown came.
    pub(crate) async fn wait_drained(&self) {
        loop {
            let notified = self.events.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if Self::drained(&self.state.lock()) {
                return;
            }
            notified.await;
        }
    }

    /// Resolves on the next shutdown or drain event; registered before the caller checks state.
    pub(crate) fn events(&self) -> &Notify {
        &self.events
    }

    /// Counts one retry (client-go's delaying queue counts every `AddAfter`).
    pub(crate) fn record_retry(&self) {
        if let Some(r) = &self.retries {
            r.inc();
        }
    }

    /// Pushes the unfinished-work and longest-running gauges; false once shut down.
    pub(crate) fn update_unfinished_work(&self) -> bool {
        let mut st = self.state.lock();
        if st.shutting_down {
            return false;
        }
        if let Some(m) = &mut st.metrics {
            m.update_unfinished_work();
        }
        true
    }

    fn lock(&self) -> MutexGuard<'_, State<T, P>> {
        self.state.lock()
    }
}

/// One async `get` call's registration in the waiter list.
struct AsyncGetter<'a, T, P>
where
    T: Hash + Eq + Clone + Send + Sync + 'static,
    P: Pending<T>,
{
    engine: &'a Engine<T, P>,
    /// Set while registered; cleared when we notice we were popped (woken).
    id: Option<u64>,
}

impl<T, P> AsyncGetter<'_, T, P>
where
    T: Hash + Eq + Clone + Send + Sync + 'static,
    P: Pending<T>,
{
    fn poll(&mut self, cx: &mut Context<'_>) -> Poll<Option<T>> {
        let mut st = self.engine.lock();
        let registered = self
            .id
            .and_then(|id| st.async_waiters.iter().position(|(i, _)| *i == id));
        if self.id.is_some() && registered.is_none() {
            self.id = None; // we were woken and popped
        }
        let got = self.engine.take_next(&mut st);
        if got.is_some() || st.shutting_down {
            if let Some(pos) = registered {
                st.async_waiters.remove(pos);
            }
            self.id = None;
            return Poll::Ready(got);
        }
        match registered {
            Some(pos) => st.async_waiters[pos].1.clone_from(cx.waker()),
            None => {
                let id = st.next_waiter;
                st.next_waiter += 1;
                st.async_waiters.push_back((id, cx.waker().clone()));
                self.id = Some(id);
            }
        }
        Poll::Pending
    }
}

impl<T, P> Drop for AsyncGetter<'_, T, P>
where
    T: Hash + Eq + Clone + Send + Sync + 'static,
    P: Pending<T>,
{
    fn drop(&mut self) {
        let Some(id) = self.id else { return };
        let waker = {
            let mut st = self.engine.lock();
            match st.async_waiters.iter().position(|(i, _)| *i == id) {
                Some(pos) => {
                    st.async_waiters.remove(pos);
                    None
                }
                // Woken but cancelled before taking the item: pass the wake-up on.
                None if st.pending.len() > 0 => self.engine.wake_one(&mut st),
                None => None,
            }
        };
        if let Some(w) = waker {
            w.wake();
        }
    }
}
