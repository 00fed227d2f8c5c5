//! One handler's buffer and delivery (client-go's `processorListener`).
//!
//! Every handler gets its own FIFO buffer, and runs on a thread of the process-wide
//! [`DeliveryPool`] whenever its buffer holds notifications: one job per busy stretch ("deliver
//! until the buffer is empty"), never two at once for one handler, so calls stay sequential and
//! in order. A slow or stuck handler keeps only its own pool thread and delays only itself; an
//! idle handler owns no thread (a process with hundreds of handlers runs as many delivery
//! threads as handlers are busy at once). The informer's processing loop only appends to
//! buffers. Unlike client-go's invisible ring buffer (#121474), the buffer's length and the age
//! of its oldest notification are readable, and it can be bounded (see [`OverflowPolicy`]). A
//! buffer holds pieces of shared batches ([`Batch`]): every listener reads the same
//! notifications, so distributing one costs no reference counting per listener.
//!
//! A listener registered [`DeliveryMode::Inline`] is drained by the informer's processing loop
//! itself right after each batch ([`Listener::deliver_inline`]); a pool job takes large batches
//! (a list) and a late handler's initial adds, and the `scheduled` flag keeps one drainer at a
//! time either way, so calls stay sequential and in order.
//!
//! Appending does not schedule delivery: the informer wakes listeners with pending work in
//! batches ([`Listener::wake`], every few pops and whenever the FIFO runs dry), so a stream of
//! events costs one hand-off per batch, not one per event. The counts behind `pending` are kept
//! as totals, each written by one side only (appended by the informer, delivered by the
//! delivery job) on its own cache line: a notification costs no atomic read-modify-write that
//! both sides fight over.
//!
//! Removal ([`Listener::close`]) stops delivery after the call in flight; [`Listener::wait_stopped`]
//! and [`Listener::wait_stopped_blocking`] return once that call has returned (client-go's
//! `ShutDownEventHandler`).

use std::cell::Cell;
use std::collections::VecDeque;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use parking_lot::{Condvar, Mutex};
use tokio::sync::Notify;
use tokio::time::Instant;

use crate::delivery::Delivery;
use crate::delivery_pool::{DeliveryPool, Lingering};
use crate::handler::ResourceEventHandler;
use crate::handler_options::DeliveryMode;
use crate::latency::LatencyHistogram;
use crate::notification::Batch;
use crate::sync_signal::SyncSignal;

thread_local! {
    /// The listener whose handler this thread is running (its address; 0: none), so that a
    /// handler waiting for its own removal gets an error instead of a deadlock.
    static DELIVERING: Cell<usize> = const { Cell::new(0) };
}

/// What happens when a bounded handler buffer is full.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OverflowPolicy {
    /// Never drop: the buffer grows without bound (client-go's behaviour).
    #[default]
    Unbounded,
    /// At `max_pending` buffered notifications the handler is disconnected: its buffer is
    /// dropped, it receives nothing more, and its registration reports
    /// [`is_overflowed`](crate::ResourceEventHandlerRegistration::is_overflowed). Like the API
    /// server terminating a watcher that cannot keep up, this protects memory and the other
    /// handlers; the owner re-registers (and gets a fresh initial list) when it has recovered.
    Disconnect {
        /// The most notifications buffered at once.
        max_pending: usize,
    },
}

/// Notifications counted so far: all of them, and the initial adds among them.
#[derive(Default)]
struct Totals {
    all: AtomicU64,
    initial: AtomicU64,
}

impl Totals {
    /// Adds to the totals; only one thread writes a given `Totals`, so no read-modify-write.
    fn add(&self, all: u64, initial: u64) {
        self.all
            .store(self.all.load(Ordering::Relaxed) + all, Ordering::Release);
        if initial > 0 {
            self.initial.store(
                self.initial.load(Ordering::Relaxed) + initial,
                Ordering::Release,
            );
        }
    }
}

/// Keeps what it holds on a cache line of its own (128 bytes: two lines on x86, where the
/// prefetcher pulls lines in pairs).
#[derive(Default)]
#[repr(align(128))]
struct CacheLine<T>(T);

impl<T> std::ops::Deref for CacheLine<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

/// A batch this listener takes notifications from: all of them, or all but the resyncs.
struct Piece<K> {
    batch: Arc<Batch<K>>,
    syncs: bool,
}

struct Buffer<K> {
    pieces: VecDeque<Piece<K>>,
    /// How many notifications `pieces` hold for this listener.
    len: u64,
    closed: bool,
    /// Whether delivery may run (the informer has started).
    started: bool,
    /// Whether a delivery job is queued or running, or an inline delivery runs: at most one
    /// per listener.
    scheduled: bool,
    /// Whether the delivery job waits on `more` for notifications (see [`LINGER`]).
    lingering: bool,
    /// Whether the pool lists this listener as one that may be lingering.
    listed: bool,
    /// Whether the pool released the lingering job to take its thread.
    released: bool,
}

/// How long a delivery job whose buffer ran empty waits for more before it gives its pool
/// thread back. A stream of events wakes a listener every few milliseconds (every 1024 pops, or
/// whenever the FIFO runs dry), so a busy handler keeps its thread, woken by a condition
/// variable as a dedicated thread would be, instead of handing the thread back and asking the
/// pool for one on every wake; an idle handler holds none for longer than this.
const LINGER: Duration = Duration::from_millis(5);

/// The most notifications an inline listener takes on the informer's task at once. A watch
/// event comes alone or with a few others; a list, relist or resync brings up to a popped
/// batch's worth (1024), which a pool job delivers while the informer goes on with the next
/// batch: 10k initial adds enqueued on the informer's task lengthened its serial work between
/// a list's last byte and the workers' start, while the second core waited.
const INLINE_MAX: u64 = 64;

/// The pool releases a lingering delivery job by waking it; the job sees it was released
/// when it ends its linger.
impl<K: Send + Sync + 'static> Lingering for Listener<K> {
    fn release(&self) -> bool {
        let mut buf = self.buffer.lock();
        buf.listed = false;
        if buf.lingering && !buf.released {
            buf.released = true;
            self.more.notify_one();
            return true;
        }
        false
    }
}

/// Resync bookkeeping (client-go's requestedResyncPeriod / resyncPeriod / nextResync).
pub(crate) struct Resync {
    pub(crate) requested: Duration,
    pub(crate) period: Duration,
    pub(crate) next: Instant,
}

pub(crate) struct Listener<K> {
    pub(crate) id: u64,
    handler: Arc<dyn ResourceEventHandler<K>>,
    buffer: Mutex<Buffer<K>>,
    pub(crate) resync: Mutex<Resync>,
    /// Whether resync notifications go to this listener in the current resync round.
    pub(crate) syncing: AtomicBool,
    policy: OverflowPolicy,
    delivery: DeliveryMode,
    /// Written by whoever appends (under the buffer lock).
    appended: CacheLine<Totals>,
    /// Written by whoever drains the buffer (one at a time: see `scheduled`).
    done: CacheLine<Totals>,
    panics: AtomicU64,
    overflowed: AtomicBool,
    signal: Arc<SyncSignal>,
    /// Mirrors `Buffer::closed`, so the delivery loop checks it without the lock.
    closed: AtomicBool,
    /// Wakes a lingering delivery job.
    more: Condvar,
    /// Signalled (with `stopped_async`) when a delivery job ends, for removal that waits.
    stopped: Condvar,
    stopped_async: Notify,
    /// When the notification being delivered was enqueued, in nanoseconds after `epoch` plus
    /// one (0: none): an atomic, so delivery takes no lock per notification.
    in_flight_since: AtomicU64,
    epoch: Instant,
    /// How long each handler call took.
    latency: LatencyHistogram,
    pool: Arc<DeliveryPool>,
}

impl<K: Send + Sync + 'static> Listener<K> {
    pub(crate) fn new(
        id: u64,
        handler: Arc<dyn ResourceEventHandler<K>>,
        resync: Resync,
        policy: OverflowPolicy,
        delivery: DeliveryMode,
        signal: Arc<SyncSignal>,
    ) -> Arc<Self> {
        Arc::new(Listener {
            id,
            handler,
            buffer: Mutex::new(Buffer {
                pieces: VecDeque::new(),
                len: 0,
                closed: false,
                started: false,
                scheduled: false,
                lingering: false,
                listed: false,
                released: false,
            }),
            resync: Mutex::new(resync),
            syncing: AtomicBool::new(true),
            policy,
            delivery,
            appended: CacheLine::default(),
            done: CacheLine::default(),
            panics: AtomicU64::new(0),
            overflowed: AtomicBool::new(false),
            signal,
            closed: AtomicBool::new(false),
            more: Condvar::new(),
            stopped: Condvar::new(),
            stopped_async: Notify::new(),
            in_flight_since: AtomicU64::new(0),
            epoch: Instant::now(),
            latency: LatencyHistogram::default(),
            pool: DeliveryPool::global().clone(),
        })
    }

    /// Appends a batch's notifications — without its resyncs unless `syncs` — without
    /// scheduling delivery (see [`Listener::wake`]). A closed listener takes none; one whose
    /// buffer would pass its bound is closed instead, and its buffer dropped.
    pub(crate) fn add_batch(&self, batch: &Arc<Batch<K>>, syncs: bool) {
        let count = batch.count_for(syncs);
        if count == 0 {
            return;
        }
        let mut buf = self.buffer.lock();
        if buf.closed {
            return;
        }
        if let OverflowPolicy::Disconnect { max_pending } = self.policy {
            if buf.len + count > max_pending as u64 {
                self.overflow(&mut buf);
                return;
            }
        }
        self.appended.add(count, batch.initial);
        buf.len += count;
        buf.pieces.push_back(Piece {
            batch: batch.clone(),
            syncs,
        });
    }

    /// Schedules delivery if notifications wait: wakes the lingering delivery job, or submits
    /// one if none is scheduled. Cheap when delivery is under way or nothing waits.
    pub(crate) fn wake(self: &Arc<Self>) {
        if self.claim().is_some() {
            self.spawn_drain();
        }
    }

    /// Delivers what is buffered on the calling thread, for a [`DeliveryMode::Inline`]
    /// listener: the informer's processing loop calls it after each batch, holding no lock. If
    /// a pool job is delivering already, it is woken instead; more than [`INLINE_MAX`]
    /// notifications go to a pool job too.
    pub(crate) fn deliver_inline(self: &Arc<Self>) {
        match self.claim() {
            Some(buffered) if buffered > INLINE_MAX => self.spawn_drain(),
            Some(_) => self.drain(false),
            None => {}
        }
    }

    /// Takes the right to deliver what is buffered: sets `scheduled` and returns how many
    /// notifications wait, or `None` when nothing waits, delivery may not run, or a drainer
    /// has it already (a lingering one is woken).
    fn claim(&self) -> Option<u64> {
        let mut buf = self.buffer.lock();
        if buf.len == 0 || buf.closed || !buf.started {
            return None;
        }
        if buf.scheduled {
            if buf.lingering {
                self.more.notify_one();
            }
            return None;
        }
        buf.scheduled = true;
        Some(buf.len)
    }

    /// Submits a delivery job to the pool; the caller has set `scheduled`. An inline listener's
    /// job does not linger: once it has caught up, the informer's task delivers again.
    fn spawn_drain(self: &Arc<Self>) {
        let me = self.clone();
        let linger = !self.is_inline();
        self.pool.spawn(Box::new(move || me.drain(linger)));
    }

    pub(crate) fn is_inline(&self) -> bool {
        self.delivery == DeliveryMode::Inline
    }

    fn overflow(&self, buf: &mut Buffer<K>) {
        tracing::error!(
            listener = self.id,
            buffered = buf.len,
            "event handler cannot keep up; disconnecting it (OverflowPolicy::Disconnect)"
        );
        // Nothing more will be delivered: the initial list can no longer hold sync back.
        self.overflowed.store(true, Ordering::Release);
        self.mark_closed(buf);
        self.signal.notify();
    }

    fn mark_closed(&self, buf: &mut Buffer<K>) {
        buf.closed = true;
        buf.pieces.clear();
        buf.len = 0;
        self.closed.store(true, Ordering::Release);
        if !buf.scheduled {
            self.notify_stopped();
        } else if buf.lingering {
            self.more.notify_one();
        }
    }

    fn notify_stopped(&self) {
        self.stopped.notify_all();
        self.stopped_async.notify_waiters();
    }

    /// Lets delivery run (once the informer runs) and schedules what is buffered already.
    pub(crate) fn start(self: &Arc<Self>) {
        self.buffer.lock().started = true;
        self.wake();
    }

    /// Stops accepting notifications; delivery ends after the call in flight.
    pub(crate) fn close(&self) {
        self.mark_closed(&mut self.buffer.lock());
    }

    /// Whether this thread is running this listener's handler right now.
    pub(crate) fn is_delivering_here(&self) -> bool {
        DELIVERING.get() == self as *const Self as usize
    }

    /// Waits until a closed listener's last handler call has returned. Call after `close`,
    /// never from the listener's own handler (see [`Listener::is_delivering_here`]).
    pub(crate) async fn wait_stopped(&self) {
        loop {
            let notified = self.stopped_async.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if !self.buffer.lock().scheduled {
                return;
            }
            notified.await;
        }
    }

    /// [`Listener::wait_stopped`], blocking the calling thread.
    pub(crate) fn wait_stopped_blocking(&self) {
        let mut buf = self.buffer.lock();
        while buf.scheduled {
            self.stopped.wait(&mut buf);
        }
    }

    /// Delivers until the buffer is empty or the listener is closed; with `linger` (a pooled
    /// listener's job), until the buffer has stayed empty for [`LINGER`] or the pool wants the
    /// thread for another job. The caller has set `scheduled`.
    fn drain(self: &Arc<Self>, linger: bool) {
        // The buffer and this queue swap places each round, so both keep their capacity while
        // the job runs.
        let mut pieces = VecDeque::new();
        // Restored when done: a pool job has a thread of its own, an inline drain borrows the
        // informer's.
        let outer = DELIVERING.replace(Arc::as_ptr(self) as usize);
        loop {
            {
                let mut buf = self.buffer.lock();
                if linger && buf.len == 0 && !buf.closed {
                    buf.lingering = true;
                    if !buf.listed {
                        buf.listed = true;
                        self.pool
                            .linger_start(Arc::downgrade(self) as Weak<dyn Lingering>);
                    }
                    self.more.wait_for(&mut buf, LINGER);
                    buf.lingering = false;
                    if std::mem::take(&mut buf.released) && buf.len > 0 && !buf.closed {
                        // Released for another handler's job with notifications come
                        // meanwhile: delivery stays scheduled, on the pool's next thread.
                        drop(buf);
                        DELIVERING.set(outer);
                        self.spawn_drain();
                        return;
                    }
                }
                if buf.len == 0 || buf.closed {
                    buf.scheduled = false;
                    DELIVERING.set(outer);
                    self.notify_stopped();
                    return;
                }
                std::mem::swap(&mut buf.pieces, &mut pieces);
                buf.len = 0;
            }
            self.deliver_pieces(&mut pieces);
            self.in_flight_since.store(0, Ordering::Release);
        }
    }

    fn deliver_pieces(&self, pieces: &mut VecDeque<Piece<K>>) {
        let mut started = std::time::Instant::now();
        'pieces: for piece in pieces.drain(..) {
            let since = piece
                .batch
                .enqueued
                .saturating_duration_since(self.epoch)
                .as_nanos() as u64;
            self.in_flight_since.store(since + 1, Ordering::Release);
            for (i, (n, sync)) in piece.batch.notes.iter().enumerate() {
                if *sync && !piece.syncs {
                    continue;
                }
                if self.closed.load(Ordering::Acquire) {
                    break 'pieces;
                }
                started = self.deliver(&Delivery::new(n, &piece.batch.seen_as, i), started);
            }
        }
    }

    /// Calls the handler with `n` (begun at `started`), records the call's latency before the
    /// call counts as delivered (so whoever waits on the count sees the observation too), and
    /// returns when it ended: one clock read per call, each call's end the next one's start.
    fn deliver(&self, d: &Delivery<'_, K>, started: std::time::Instant) -> std::time::Instant {
        let result = catch_unwind(AssertUnwindSafe(|| self.handler.on_delivery(d)));
        let ended = std::time::Instant::now();
        self.latency.observe(ended - started);
        if let Err(panic) = result {
            self.panics.fetch_add(1, Ordering::AcqRel);
            let msg = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "non-string panic".into());
            tracing::error!(
                listener = self.id,
                "event handler panicked; notification skipped: {msg}"
            );
        }
        // Counted even after a panic, so a panicking handler cannot wedge has_synced
        // (client-go #129024).
        let initial = d.note().is_initial_add();
        self.done.add(1, u64::from(initial));
        if initial && self.initial_pending() == 0 {
            self.signal.notify();
        }
        ended
    }

    /// How long this handler's calls took.
    pub(crate) fn latency(&self) -> &LatencyHistogram {
        &self.latency
    }

    /// Initial adds appended but not yet delivered; 0 once overflowed (nothing more will be).
    pub(crate) fn initial_pending(&self) -> usize {
        if self.overflowed.load(Ordering::Acquire) {
            return 0;
        }
        // Delivered first: both totals only grow and delivered never passes appended, so
        // reading appended second can only overstate what is pending, never understate it.
        let done = self.done.initial.load(Ordering::Acquire);
        let appended = self.appended.initial.load(Ordering::Acquire);
        appended.saturating_sub(done) as usize
    }

    /// Buffered plus in-delivery notifications; 0 once closed (the buffer was dropped).
    pub(crate) fn pending(&self) -> usize {
        if self.closed.load(Ordering::Acquire) {
            return 0;
        }
        let done = self.done.all.load(Ordering::Acquire);
        let appended = self.appended.all.load(Ordering::Acquire);
        appended.saturating_sub(done) as usize
    }

    pub(crate) fn delivered(&self) -> u64 {
        self.done.all.load(Ordering::Acquire)
    }

    pub(crate) fn panics(&self) -> u64 {
        self.panics.load(Ordering::Acquire)
    }

    pub(crate) fn is_overflowed(&self) -> bool {
        self.overflowed.load(Ordering::Acquire)
    }

    /// How long the oldest undelivered notification has waited: the one in delivery, else the
    /// head of the buffer.
    pub(crate) fn oldest_pending_age(&self) -> Option<Duration> {
        let in_flight = self.in_flight_since.load(Ordering::Acquire);
        let oldest = if in_flight > 0 {
            self.epoch + Duration::from_nanos(in_flight - 1)
        } else {
            self.buffer
                .lock()
                .pieces
                .front()
                .map(|p| p.batch.enqueued)?
        };
        Some(Instant::now().saturating_duration_since(oldest))
    }

    /// Whether this listener's resync period is due (client-go `shouldResync`).
    pub(crate) fn should_resync(&self, now: Instant) -> bool {
        let r = self.resync.lock();
        !r.period.is_zero() && now >= r.next
    }

    pub(crate) fn determine_next_resync(&self, now: Instant) {
        let mut r = self.resync.lock();
        r.next = now + r.period;
    }
}
