//! The engine behind every [`Queue`](crate::Queue), whatever its [`QueueOrdering`]:
//! client-go's dirty/processing rules (`queue.go`) and wake-ups for both blocking threads and
//! async tasks.
//!
//! Layout: client-go keeps the queue, `dirty` and `processing` under one lock. Here the
//! dirty/processing flags of each item live in one of [`SHARDS`] maps, each with its own lock,
//! and only the order of queued items (plus the waiters) sits behind the `order` lock. An add of
//! an already-dirty item — most adds of a busy controller — then takes one shard lock that
//! workers rarely hold, and never the lock they wait on. Lock order: shard → order → metrics.
//!
//! # Where the time of an add goes, and the two speeds
//!
//! With one producer and a few workers (`kcache-bench workqueue`), the queue settles in one of
//! two regimes, and each keeps itself going:
//! - *backlogged*: the workers are behind, every key is queued when it is added again, and an
//!   add is a shard-map look-up that finds the key dirty. The producer never meets the workers
//!   (no `order` lock, no wake-up), so adds run at the speed of that look-up, and most of them
//!   collapse (a few percent to a third of the adds are processed).
//! - *keeping up*: the workers take each item as soon as it is queued, so every add is a new
//!   item: shard insert, `order` lock, push, and — when the workers have parked — a wake-up. Each
//!   such add moves the cache lines of the lock, the queue's ends and the counters between the
//!   producer's core and a worker's, and a `futex` wake is a syscall the producer pays (and, on a
//!   busy core, a context switch to the woken worker, which can preempt the producer).
//!
//! Every hand-over in the keeping-up regime moves cache lines between cores, so its speed is the
//! machine's core-to-core latency. On 2-vCPU VMs that latency is itself bimodal: a line's round
//! trip is about 100 ns or about 500 ns as the host places the vCPUs (`kcache-bench
//! core-round-trip`), and a queue benchmark's slow runs are the 500 ns ones, for client-go's
//! queue as for this one (docs/benchmarks.md). Five costs made the keeping-up regime slower than
//! it needs to be, and all are removed by design:
//! - false sharing: nothing kept the flag every add reads (`shutting_down`) off the cache lines
//!   of counters that workers write per item (`processing`, `queued`) and of the `order` lock
//!   (Rust lays fields out as it likes), so even a collapsed add could miss the cache whenever a
//!   worker had just taken or finished an item. Those now sit on lines of their own
//!   ([`Padded`]), and an add that finds its key dirty reads only lines workers do not write
//!   (plus its shard);
//! - a wake-up per item: an add used to wake a parked worker whenever one was parked, even while
//!   another worker was awake and about to look again. Now pushes wake a parked getter only when
//!   no blocking getter is *searching* (see below), i.e. on an empty → non-empty change with
//!   nobody looking, and a woken getter that leaves items behind passes the turn on. The producer
//!   pays at most one wake-up per burst, not one per item, and every parked worker still gets
//!   work when enough is queued (client-go's parallelism: `a_burst_wakes_every_parked_worker`).
//! - idle getters taking the producer's core: every getter that found the queue empty polled for
//!   a while, half of it in `yield_now`. With more threads than cores (2 or 4 workers and a
//!   producer on 2 cores) the pollers and their `sched_yield` calls took turns on the producer's
//!   core: over 1M adds the slow runs made 10,000–50,000 context switches and the fast ones 500–
//!   4,600, and adds/s fell with them (2 workers: 2.7 M/s at 15,160 against 6.9 M/s at 556;
//!   4 workers: 1.9 M/s at 50,798 against 5.7 M/s at 3,212). Now at most one getter polls at a
//!   time, with `spin_loop` hints only, and the others park at once; the wake-up rules below still
//!   hand every burst to every parked worker.
//! - lock waits that yield the core: a getter that pops an item marks it processing under its
//!   shard lock, which the producer that pushed it still holds for a few dozen nanoseconds, and
//!   parking_lot's `lock` calls `sched_yield` after three short spins; with 4 workers that made
//!   thousands of yields and context switches per run. The engine's locks are taken by [`lock`](crate::lock::lock),
//!   which polls a held lock for a while first.
//! - a map insert and a key clone per processed item: a done, clean item used to leave the map,
//!   so the next add of its key inserted it again, reading control bytes and buckets the worker
//!   had just written. A clean entry now stays for a while ([`Items`]).
//!
//! What is left is a floor, not a cost to remove. A run's time is about `a × collapsed adds +
//! b × new items`; fitted over 20–40 alternated runs per case (`Arc<str>` keys, 10k of them),
//! `b` is ≈ 190–240 ns where a cache line's round trip between the VM's cores is ~100 ns and
//! ≈ 600–640 ns where it is ~500 ns: a few serialized transfers per item (the item's entry, the
//! `order` lock, and the key's own line, since an `Arc` key's count is written by the worker that
//! drops its copy). The information must cross twice per item (queued → worker, done →
//! producer), so no design gets far below that. A lock-free map of per-item state words
//! (papaya, compare-and-swap, no shard locks) was built and measured: `b` fell by 15–25% and
//! collapsed adds cost nothing shared, but adds/s did not follow, because workers that get their
//! items sooner keep up more often, and more adds then become new items. client-go's queue pays
//! the same transfers under ~400–600 ns of its own work per item, so its speed hardly moves with
//! the placement while this queue's does: in the slow placement it stays ahead by 1.8–3×, but its
//! slowest rounds there fall below 2× client-go's median over both placements.
//!
//! Measured with `perf stat` (software events only on the VM: no instruction counters),
//! `strace -c -f` and temporary counters in this file: on a loaded machine the producer found the
//! key dirty in 89–97% of the adds and the workers almost never parked (at most one wake-up in 1M adds); client-go
//! made 718 `futex` calls in 1M adds (its runtime parks goroutines without syscalls).
//!
//! Wake-up protocol (no lost wake-ups, no syscall when nobody waits). All counts live under the
//! `order` lock:
//! - a blocking getter counts itself in `searching` while it looks: if no other getter is polling,
//!   it polls a lock-free length for a few microseconds (see [`SPINS`]), then, finding nothing
//!   under the lock, leaves `searching`, increments `blocked` and waits on `cond`;
//! - a push (add or `done`'s re-queue) notifies one parked getter only if `blocked > 0` and
//!   `searching == 0`, and counts it as searching at once (parking_lot's `Condvar` has no
//!   spurious wake-ups, so the counts are exact). Invariant: items queued and a getter parked
//!   imply a getter searching, so no item waits while a worker sleeps;
//! - a blocking getter that takes an item and leaves others queued with nobody else searching
//!   wakes the next parked getter;
//! - an async getter registers its waker in `async_waiters` under the order lock; a push that
//!   wakes no blocking getter pops one; a getter dropped after being popped, before it took an
//!   item, passes the wake-up on;
//! - shutdown wakes every getter of both kinds.

use std::collections::{HashMap, VecDeque};
use std::future::poll_fn;
use std::hash::Hash;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use parking_lot::{Condvar, Mutex, MutexGuard};
use tokio::sync::Notify;

use crate::lock::lock;
use crate::metrics::{CounterMetric, QueueMetrics};
use crate::ordering::QueueOrdering;

/// The hasher of every per-item map in this crate: fast, DoS-resistant keys.
pub(crate) type Hasher = ahash::RandomState;

/// Which of `shards` (a power of two) holds `item`, for sharded maps built with `hasher`: bits
/// 40.. of the hash, as the maps themselves use the low bits for buckets and the top 7 for tags,
/// so the shard choice does not skew them.
pub(crate) fn shard_index<T: Hash>(hasher: &Hasher, item: &T, shards: usize) -> usize {
    (hasher.hash_one(item) >> 40) as usize & (shards - 1)
}

/// How long a blocking getter polls for an item before it parks, in `spin_loop` hints (a few
/// to a few tens of microseconds, about what parking and waking a thread costs). Only one getter
/// polls at a time (see `spinner`): a spinning thread holds a core, and with more threads than
/// cores every extra spinner (or a `yield_now` loop) takes the core from the producer it waits
/// for. A producer adding fast then never pays a wake-up syscall, and an idle getter parks after
/// a few microseconds.
const SPINS: u32 = 1000;

/// Number of dirty/processing shards (a power of two).
const SHARDS: usize = 32;

const DIRTY: u8 = 1;
const PROCESSING: u8 = 2;

/// An item given to `add`: owned (moved into the queue) or borrowed (cloned if queued).
pub(crate) enum Item<'a, T> {
    Owned(T),
    Borrowed(&'a T),
}

impl<T: Clone> Item<'_, T> {
    fn as_ref(&self) -> &T {
        match self {
            Item::Owned(t) => t,
            Item::Borrowed(t) => t,
        }
    }

    fn into_owned(self) -> T {
        match self {
            Item::Owned(t) => t,
            Item::Borrowed(t) => t.clone(),
        }
    }
}

/// A value on cache lines of its own, so that threads writing it do not slow down threads
/// reading its neighbours (128 bytes: adjacent-line prefetch pairs lines).
#[repr(align(128))]
struct Padded<T>(T);

impl<T> std::ops::Deref for Padded<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

/// Dirty and processing flags plus the priority the item was (or will be) queued with.
#[derive(Clone, Copy)]
struct Entry {
    flags: u8,
    priority: i32,
}

/// client-go's `dirty` and `processing` sets for one shard of items, in one map so an operation
/// costs one lookup; aligned so shards do not share cache lines.
#[repr(align(128))]
struct Shard<T>(Mutex<Items<T>>);

/// One shard's items. An item that is done and clean keeps its entry (flags 0) for a while, so
/// adding it again marks it dirty in place instead of inserting it anew: the map's control bytes
/// and the key's clone stay untouched by workers, which made two of the producer's cache misses
/// per processed item (`perf annotate` of `add`: the probe's control-byte and key loads were a
/// third of its time). Clean entries are swept once they outnumber both [`CLEAN_KEPT`] and the
/// shard's live ones, so memory stays within the live items plus `SHARDS × CLEAN_KEPT`, and a
/// sweep's cost is spread over at least as many `done`s as it visits entries.
struct Items<T> {
    map: HashMap<T, Entry, Hasher>,
    clean: usize,
}

/// Clean entries a shard may keep before a sweep (see [`Items`]).
const CLEAN_KEPT: usize = 512;

impl<T: Hash + Eq> Items<T> {
    /// Counts one more entry done and clean (flags 0); sweeps if clean entries pile up.
    fn cleaned(&mut self) {
        self.clean += 1;
        let live = self.map.len() - self.clean;
        if self.clean > CLEAN_KEPT.max(live) {
            self.map.retain(|_, e| e.flags != 0);
            self.clean = 0;
        }
    }
}

/// What the order lock protects: queued items and the getters waiting for one.
struct Order<P> {
    pending: P,
    drain: bool,
    /// Blocking getters parked on `cond` that nobody has notified yet.
    blocked: usize,
    /// Blocking getters awake and looking for an item: polling before they park, or notified and
    /// not yet running. While one is, pushes wake nobody.
    searching: usize,
    /// Async getters waiting for an item, oldest first.
    async_waiters: VecDeque<(u64, Waker)>,
    next_waiter: u64,
}

/// The queue proper; every [`Queue`](crate::Queue) handle points to one of these.
pub(crate) struct Engine<T, P> {
    shards: Box<[Shard<T>]>,
    hasher: Hasher,
    order: Padded<Mutex<Order<P>>>,
    cond: Condvar,
    /// Wakes blocking `shut_down_with_drain` callers.
    drain_cond: Condvar,
    /// Wakes async drain waiters on shutdown or drain progress.
    events: Notify,
    /// Written under the order lock; read without it on the add fast path.
    shutting_down: AtomicBool,
    /// `drain`, readable without the lock by `done`.
    draining: AtomicBool,
    /// Items handed out and not done yet.
    processing: Padded<AtomicUsize>,
    /// `pending.len()`, readable without the lock by spinning getters.
    queued: Padded<AtomicUsize>,
    /// A blocking getter is polling `queued` before it parks (at most one at a time).
    spinner: Padded<AtomicBool>,
    metrics: Option<Mutex<QueueMetrics<T>>>,
    retries: Option<Arc<dyn CounterMetric>>,
    /// Run once by the first shutdown: how a wrapping delaying queue stops its timer.
    shut_down_hooks: Mutex<Vec<ShutDownHook>>,
}

/// A callback run once when the queue shuts down.
pub(crate) type ShutDownHook = Box<dyn FnOnce() + Send>;

impl<T, P> Engine<T, P>
where
    T: Hash + Eq + Clone + Send + Sync + 'static,
    P: QueueOrdering<T>,
{
    pub(crate) fn new(pending: P, metrics: Option<QueueMetrics<T>>) -> Self {
        let hasher = Hasher::new();
        Engine {
            shards: (0..SHARDS)
                .map(|_| {
                    Shard(Mutex::new(Items {
                        map: HashMap::with_hasher(hasher.clone()),
                        clean: 0,
                    }))
                })
                .collect(),
            hasher,
            order: Padded(Mutex::new(Order {
                pending,
                drain: false,
                blocked: 0,
                searching: 0,
                async_waiters: VecDeque::new(),
                next_waiter: 0,
            })),
            cond: Condvar::new(),
            drain_cond: Condvar::new(),
            events: Notify::new(),
            shutting_down: AtomicBool::new(false),
            draining: AtomicBool::new(false),
            processing: Padded(AtomicUsize::new(0)),
            queued: Padded(AtomicUsize::new(0)),
            spinner: Padded(AtomicBool::new(false)),
            retries: metrics.as_ref().map(|m| m.retries.clone()),
            metrics: metrics.map(Mutex::new),
            shut_down_hooks: Mutex::new(Vec::new()),
        }
    }

    /// The shard of `item` ([`shard_index`]).
    fn shard(&self, item: &T) -> MutexGuard<'_, Items<T>> {
        lock(&self.shards[shard_index(&self.hasher, item, SHARDS)].0)
    }

    fn metric(&self, f: impl FnOnce(&mut QueueMetrics<T>)) {
        if let Some(m) = &self.metrics {
            f(&mut m.lock());
        }
    }

    /// client-go `Add`: see [`Queue::add`](crate::Queue::add) for the rules. A borrowed item is
    /// cloned only when it becomes queued, so collapsed adds copy nothing.
    pub(crate) fn add(&self, item: Item<'_, T>, priority: i32) {
        if self.shutting_down.load(Ordering::Acquire) {
            return;
        }
        let mut shard = self.shard(item.as_ref());
        let items = &mut *shard;
        if let Some(e) = items.map.get_mut(item.as_ref()) {
            let Entry {
                flags,
                priority: old,
            } = *e;
            if flags == 0 {
                // Done and clean, entry kept: queue it again in place.
                let waker = {
                    let mut order = lock(&self.order);
                    if self.shutting_down.load(Ordering::Relaxed) {
                        return;
                    }
                    *e = Entry {
                        flags: DIRTY,
                        priority,
                    };
                    items.clean -= 1;
                    self.metric(|m| m.add(item.as_ref(), priority));
                    self.push(&mut order, item.into_owned(), priority)
                };
                drop(shard);
                if let Some(w) = waker {
                    w.wake();
                }
                return;
            }
            if flags & DIRTY != 0 {
                // Already waiting: only a higher priority changes anything.
                if priority > old {
                    e.priority = priority;
                    if flags & PROCESSING == 0 {
                        lock(&self.order)
                            .pending
                            .raise(item.as_ref(), old, priority);
                    }
                    self.metric(|m| m.raise(item.as_ref(), priority));
                }
                return;
            }
            // Processing and clean: `done` will queue it again.
            *e = Entry {
                flags: flags | DIRTY,
                priority,
            };
            self.metric(|m| m.add(item.as_ref(), priority));
            return;
        }
        let waker = {
            let mut order = lock(&self.order);
            // Exact under the order lock, where shutdown sets it.
            if self.shutting_down.load(Ordering::Relaxed) {
                return;
            }
            self.metric(|m| m.add(item.as_ref(), priority));
            self.push(&mut order, item.as_ref().clone(), priority)
        };
        // A getter that pops the item waits for this shard lock to mark it processing.
        shard.map.insert(
            item.into_owned(),
            Entry {
                flags: DIRTY,
                priority,
            },
        );
        drop(shard);
        if let Some(w) = waker {
            w.wake();
        }
    }

    /// Queues an item and wakes one getter; an async waker is returned to be woken after the
    /// locks are released.
    fn push(&self, order: &mut Order<P>, item: T, priority: i32) -> Option<Waker> {
        order.pending.push(item, priority);
        self.queued.store(order.pending.len(), Ordering::Relaxed);
        self.wake_one(order)
    }

    /// Wakes one getter if an item may otherwise wait: a parked blocking getter only when none
    /// is searching (a searcher takes the item, and passes the turn on if more are queued), else
    /// one async getter. The async waker is returned to be woken after the locks are released.
    fn wake_one(&self, order: &mut Order<P>) -> Option<Waker> {
        if order.blocked > 0 && order.searching == 0 {
            order.blocked -= 1;
            order.searching += 1;
            self.cond.notify_one();
            None
        } else {
            order.async_waiters.pop_front().map(|(_, w)| w)
        }
    }

    /// Pops the next queued item and counts it as processing; the caller then calls
    /// [`start_processing`](Self::start_processing) once the order lock is released.
    fn take_next(&self, order: &mut Order<P>) -> Option<T> {
        let item = order.pending.pop()?;
        self.queued.store(order.pending.len(), Ordering::Relaxed);
        self.processing.fetch_add(1, Ordering::SeqCst);
        self.metric(|m| m.get(&item));
        Some(item)
    }

    /// Moves a popped item from dirty to processing.
    fn start_processing(&self, item: &T) {
        if let Some(e) = self.shard(item).map.get_mut(item) {
            *e = Entry {
                flags: PROCESSING,
                priority: 0,
            };
        }
    }

    /// client-go `Get` for plain threads: `None` once shut down and empty.
    pub(crate) fn get_blocking(&self) -> Option<T> {
        let mut order = lock(&self.order);
        order.searching += 1;
        let mut polled = false;
        loop {
            if let Some(item) = self.take_next(&mut order) {
                order.searching -= 1;
                // Items left and nobody else looking: pass the turn on.
                let waker = if order.pending.len() > 0 && order.searching == 0 {
                    self.wake_one(&mut order)
                } else {
                    None
                };
                drop(order);
                if let Some(w) = waker {
                    w.wake();
                }
                self.start_processing(&item);
                return Some(item);
            }
            if self.shutting_down.load(Ordering::Relaxed) {
                order.searching -= 1;
                return None;
            }
            // One poll per get, by one getter at a time; the others park at once.
            if !polled && !self.spinner.swap(true, Ordering::Acquire) {
                drop(order);
                let mut spins = 0;
                while spins < SPINS
                    && self.queued.load(Ordering::Relaxed) == 0
                    && !self.shutting_down.load(Ordering::Relaxed)
                {
                    spins += 1;
                    std::hint::spin_loop();
                }
                self.spinner.store(false, Ordering::Release);
                polled = true;
                order = lock(&self.order);
                continue;
            }
            order.searching -= 1;
            order.blocked += 1;
            self.cond.wait(&mut order);
            // Whoever notified us counted us as searching again.
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
        let mut items = self.shard(item);
        let Some(e) = items.map.get_mut(item) else {
            return;
        };
        if e.flags & PROCESSING == 0 {
            return;
        }
        self.metric(|m| m.done(item));
        let waker = if e.flags & DIRTY != 0 {
            e.flags = DIRTY;
            let priority = e.priority;
            self.push(&mut lock(&self.order), item.clone(), priority)
        } else {
            e.flags = 0;
            items.cleaned();
            None
        };
        drop(items);
        // SeqCst pairs with `shut_down`'s store of `draining` and the drain waiter's load of
        // `processing`: one of the two sides sees the other.
        if self.processing.fetch_sub(1, Ordering::SeqCst) == 1
            && self.draining.load(Ordering::SeqCst)
        {
            drop(self.order.lock()); // a drain waiter is parked or has not checked yet
            self.drain_cond.notify_all();
            self.events.notify_waiters();
        }
        if let Some(w) = waker {
            w.wake();
        }
    }

    /// Whether the item is dirty or processing (client-go `Find`, without the shutdown flag).
    pub(crate) fn contains(&self, item: &T) -> bool {
        self.shard(item).map.get(item).is_some_and(|e| e.flags != 0)
    }

    /// Queued items only.
    pub(crate) fn len(&self) -> usize {
        self.order.lock().pending.len()
    }

    pub(crate) fn shutting_down(&self) -> bool {
        self.shutting_down.load(Ordering::Acquire)
    }

    /// Sets the drain flag and shuts down; wakes every getter of both kinds and, for a forced
    /// shutdown, every drain waiter.
    pub(crate) fn shut_down(&self, drain: bool) {
        let wakers: Vec<Waker> = {
            let mut order = lock(&self.order);
            order.drain = drain;
            self.draining.store(drain, Ordering::SeqCst);
            self.shutting_down.store(true, Ordering::SeqCst);
            order.searching += order.blocked;
            order.blocked = 0;
            self.cond.notify_all();
            if !drain {
                self.drain_cond.notify_all();
            }
            order.async_waiters.drain(..).map(|(_, w)| w).collect()
        };
        self.events.notify_waiters();
        wakers.into_iter().for_each(Waker::wake);
        // After the flag is set: a hook registered from now on runs at once instead.
        let hooks = std::mem::take(&mut *self.shut_down_hooks.lock());
        hooks.into_iter().for_each(|hook| hook());
    }

    /// Runs `hook` on the first shutdown, or now if the queue is already shutting down.
    pub(crate) fn on_shut_down(&self, hook: ShutDownHook) {
        let mut hooks = self.shut_down_hooks.lock();
        if self.shutting_down() {
            drop(hooks);
            hook();
        } else {
            hooks.push(hook);
        }
    }

    /// Getters parked waiting for an item, blocking and async.
    pub(crate) fn waiting_getters(&self) -> usize {
        let order = lock(&self.order);
        order.blocked + order.async_waiters.len()
    }

    fn drained(&self, order: &Order<P>) -> bool {
        !order.drain || self.processing.load(Ordering::SeqCst) == 0
    }

    /// Blocks until nothing is processing or a forced shutdown came.
    pub(crate) fn wait_drained_blocking(&self) {
        let mut order = lock(&self.order);
        while !self.drained(&order) {
            self.drain_cond.wait(&mut order);
        }
    }

    /// Waits until nothing is processing or a forced shutdown came.
    pub(crate) async fn wait_drained(&self) {
        loop {
            let notified = self.events.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.drained(&self.order.lock()) {
                return;
            }
            notified.await;
        }
    }

    /// Counts one retry (client-go's delaying queue counts every `AddAfter`).
    pub(crate) fn record_retry(&self) {
        if let Some(r) = &self.retries {
            r.inc();
        }
    }

    /// Pushes the unfinished-work and longest-running gauges; false once shut down.
    pub(crate) fn update_unfinished_work(&self) -> bool {
        if self.shutting_down() {
            return false;
        }
        self.metric(|m| m.update_unfinished_work());
        true
    }
}

/// One async `get` call's registration in the waiter list.
struct AsyncGetter<'a, T, P>
where
    T: Hash + Eq + Clone + Send + Sync + 'static,
    P: QueueOrdering<T>,
{
    engine: &'a Engine<T, P>,
    /// Set while registered; cleared when we notice we were popped (woken).
    id: Option<u64>,
}

impl<T, P> AsyncGetter<'_, T, P>
where
    T: Hash + Eq + Clone + Send + Sync + 'static,
    P: QueueOrdering<T>,
{
    fn poll(&mut self, cx: &mut Context<'_>) -> Poll<Option<T>> {
        let engine = self.engine;
        let mut order = lock(&engine.order);
        let registered = self
            .id
            .and_then(|id| order.async_waiters.iter().position(|(i, _)| *i == id));
        if self.id.is_some() && registered.is_none() {
            self.id = None; // we were woken and popped
        }
        let got = engine.take_next(&mut order);
        if got.is_some() || engine.shutting_down.load(Ordering::Relaxed) {
            if let Some(pos) = registered {
                order.async_waiters.remove(pos);
            }
            self.id = None;
            drop(order);
            if let Some(item) = &got {
                engine.start_processing(item);
            }
            return Poll::Ready(got);
        }
        match registered {
            Some(pos) => order.async_waiters[pos].1.clone_from(cx.waker()),
            None => {
                let id = order.next_waiter;
                order.next_waiter += 1;
                order.async_waiters.push_back((id, cx.waker().clone()));
                self.id = Some(id);
            }
        }
        Poll::Pending
    }
}

impl<T, P> Drop for AsyncGetter<'_, T, P>
where
    T: Hash + Eq + Clone + Send + Sync + 'static,
    P: QueueOrdering<T>,
{
    fn drop(&mut self) {
        let Some(id) = self.id else { return };
        let waker = {
            let mut order = self.engine.order.lock();
            match order.async_waiters.iter().position(|(i, _)| *i == id) {
                Some(pos) => {
                    order.async_waiters.remove(pos);
                    None
                }
                // Woken but cancelled before taking the item: pass the wake-up on.
                None if order.pending.len() > 0 => self.engine.wake_one(&mut order),
                None => None,
            }
        };
        if let Some(w) = waker {
            w.wake();
        }
    }
}
