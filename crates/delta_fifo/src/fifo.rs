//! The FIFO itself: one lock around the queue, waiting consumers, and the initial-sync count;
//! in front of it, an inbox where adds and updates wait for the next lock holder.

use std::pin::pin;
use std::sync::Arc;
use std::time::Duration;

use kcache_core::{KnownObjects, Object, ObjectKey, ReflectorStore};
use parking_lot::{Condvar, Mutex, MutexGuard};
use tokio::sync::Notify;

use crate::in_order::InOrderQueue;
use crate::initial_sync::InitialSync;
use crate::keyed::KeyedQueue;
use crate::popped::{Finished, Outcome};
use crate::progress::Progress;
use crate::rules::{KnownView, Processing, QueueRules, Stamp, Taken};
use crate::{
    Delta, DeltaFifoOptions, DeltaObject, DeltaType, Deltas, Error, FifoMode, Popped, PoppedBatch,
    PoppedEntry, ResourceVersionObserver, TransformFunc,
};

/// client-go's `DeltaFIFO` (and, with [`FifoMode::Real`] or [`FifoMode::Atomic`], its `RealFIFO`):
/// the queue between a reflector and an informer's cache.
///
/// Producers (the reflector, through [`ReflectorStore`]) never wait for consumers: a consumer's
/// processing runs without the lock (client-go #103789). Deltas of a key being processed wait
/// until that processing ends, so each key's deltas are applied in order even with several
/// consumers.
///
/// `add` and `update` do not even take the queue's lock: they append to an inbox (a vector
/// behind its own lock, held for one push), and whoever takes the queue's lock next — a pop,
/// any read, any other write — first moves the inbox into the queue, in order. A reflector
/// never contends with a consumer's pops, and a consumer that fell behind finds more deltas
/// per key when it pops (client-go's producer and consumer share one lock).
pub struct DeltaFifo<K> {
    state: Mutex<State<K>>,
    inbox: Mutex<Inbox<K>>,
    known_objects: Option<Arc<dyn KnownObjects<K>>>,
    transformer: Option<TransformFunc<K>>,
    replaced: DeltaType,
    wake_async: Notify,
    wake_blocking: Condvar,
}

/// Adds and updates not yet moved into the queue.
struct Inbox<K> {
    pushed: Vec<(ObjectKey, Delta<K>, Stamp)>,
    /// The number the next write gets (see `progress.rs`); pushes take theirs here, under this
    /// lock, so the inbox is in write order.
    next_seq: u64,
    /// Set by a consumer that found nothing to pop and is about to wait; the next push wakes it.
    consumer_waiting: bool,
}

/// An inbox vector keeps its capacity between rounds up to this many entries.
const INBOX_KEPT_CAPACITY: usize = 4096;

struct State<K> {
    /// The emptied inbox vector of the last round, swapped in at the next.
    spare_inbox: Vec<(ObjectKey, Delta<K>, Stamp)>,
    rules: Box<dyn QueueRules<K>>,
    processing: Processing<K>,
    /// An atomic unit is being processed: nothing else is handed out until it is done.
    atomic_processing: bool,
    sync: InitialSync,
    /// The resourceVersion the consumer's cache reflects, and the marks that move it.
    progress: Progress,
    closed: bool,
    /// Consumers waiting in `pop` (async) and `pop_blocking`; producers wake them only if any.
    waiting_async: usize,
    waiting_blocking: usize,
}

/// A snapshot of the queue for metrics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueMetrics {
    /// Entries waiting to be popped: keys in Delta mode, deltas in Real mode (client-go's depth).
    pub depth: usize,
    /// Keys whose deltas consumers are processing now.
    pub processing: usize,
    /// How long the entry at the head of the queue has waited; `None` when empty.
    pub oldest_age: Option<Duration>,
}

impl<K: Object> DeltaFifo<K> {
    /// A FIFO with these options.
    pub fn new(options: DeltaFifoOptions<K>) -> Self {
        let rules: Box<dyn QueueRules<K>> = match options.mode {
            FifoMode::Delta => Box::new(KeyedQueue::new()),
            FifoMode::Real => Box::new(InOrderQueue::new(false)),
            FifoMode::Atomic => Box::new(InOrderQueue::new(true)),
        };
        let replaced = if options.emit_delta_type_replaced || options.mode != FifoMode::Delta {
            DeltaType::Replaced
        } else {
            DeltaType::Sync
        };
        DeltaFifo {
            inbox: Mutex::new(Inbox {
                pushed: Vec::new(),
                next_seq: 0,
                consumer_waiting: false,
            }),
            state: Mutex::new(State {
                spare_inbox: Vec::new(),
                rules,
                processing: Processing::default(),
                atomic_processing: false,
                sync: InitialSync::default(),
                progress: Progress::default(),
                closed: false,
                waiting_async: 0,
                waiting_blocking: 0,
            }),
            known_objects: options.known_objects,
            transformer: options.transformer,
            replaced,
            wake_async: Notify::new(),
            wake_blocking: Condvar::new(),
        }
    }

    /// Queues an `Added` delta.
    pub fn add(&self, obj: Arc<K>) -> Result<(), Error> {
        self.push(DeltaType::Added, obj)
    }

    /// Queues an `Updated` delta.
    pub fn update(&self, obj: Arc<K>) -> Result<(), Error> {
        self.push(DeltaType::Updated, obj)
    }

    /// Queues a `Deleted` delta. Delta mode ignores it when the key is neither queued nor in the
    /// known objects (without known objects: when it is not queued); Real mode always queues it.
    pub fn delete(&self, obj: Arc<K>) -> Result<(), Error> {
        let key = ObjectKey::of(&*obj);
        let obj = self.transform(&key, obj)?;
        let mut st = self.locked();
        st.sync.populate();
        let seq = self.write_seq(&mut st);
        st.progress
            .mark(seq, obj.resource_version().unwrap_or_default());
        let st_ref = &mut *st;
        let known = KnownView {
            known: self.known_objects.as_deref(),
            processing: &st_ref.processing,
        };
        st_ref.rules.delete(key, obj, &known, Stamp::now(seq));
        self.unlock_and_wake(st);
        Ok(())
    }

    /// A relist: `Replaced` (or `Sync` when `emit_delta_type_replaced` is off, in Delta mode)
    /// for every item, and a `Deleted` tombstone for every queued or known key the list lacks.
    /// All items are transformed first, so a transformer error leaves the queue unchanged.
    /// Once every entry it queued is processed, the consumer's cache reflects `resource_version`
    /// (see [`DeltaFifo::last_store_sync_resource_version`]).
    ///
    /// In [`FifoMode::Atomic`] the whole list is queued as one [`crate::AtomicEvent::ReplacedAll`]
    /// instead, and the consumer works out the deletions against its cache.
    pub fn replace(&self, items: Vec<Arc<K>>, resource_version: &str) -> Result<(), Error> {
        self.replace_keyed(
            items.into_iter().map(|obj| (ObjectKey::of(&*obj), obj)),
            resource_version,
        )
    }

    /// [`DeltaFifo::replace`] with each item's key ([`ObjectKey::of`] the item) already built.
    pub fn replace_with_keys(
        &self,
        items: Vec<(ObjectKey, Arc<K>)>,
        resource_version: &str,
    ) -> Result<(), Error> {
        self.replace_keyed(items.into_iter(), resource_version)
    }

    /// Both replaces: the keyed items are transformed and collected in one pass.
    fn replace_keyed(
        &self,
        items: impl Iterator<Item = (ObjectKey, Arc<K>)>,
        resource_version: &str,
    ) -> Result<(), Error> {
        let items = items
            .map(|(key, obj)| {
                let obj = self.transform(&key, obj)?;
                Ok((key, obj))
            })
            .collect::<Result<Vec<_>, Error>>()?;
        let mut st = self.locked();
        let seq = self.write_seq(&mut st);
        st.progress.mark(seq, resource_version);
        let st_ref = &mut *st;
        let known = KnownView {
            known: self.known_objects.as_deref(),
            processing: &st_ref.processing,
        };
        let count = st_ref.rules.replace(
            items,
            resource_version,
            self.replaced,
            &known,
            Stamp::now(seq),
        );
        st_ref.sync.replaced(count);
        self.unlock_and_wake(st);
        Ok(())
    }

    /// Queues a `Sync` delta for every known object with nothing queued; a no-op without known
    /// objects. In [`FifoMode::Atomic`], queues one [`crate::AtomicEvent::SyncAll`] instead.
    pub fn resync(&self) -> Result<(), Error> {
        let mut st = self.locked();
        let seq = self.write_seq(&mut st);
        let st_ref = &mut *st;
        let known = KnownView {
            known: self.known_objects.as_deref(),
            processing: &st_ref.processing,
        };
        st_ref.rules.resync(&known, Stamp::now(seq));
        self.unlock_and_wake(st);
        Ok(())
    }

    /// A watch bookmark: nothing changed up to `resource_version`. Once everything queued before
    /// it is processed, the consumer's cache reflects it (client-go's `Bookmark` delta, carried
    /// in order in both modes; see [`DeltaFifo::last_store_sync_resource_version`]).
    pub fn bookmark(&self, resource_version: &str) {
        let mut st = self.locked();
        let seq = self.write_seq(&mut st);
        st.progress.mark(seq, resource_version);
        self.unlock_and_wake(st);
    }

    /// The resourceVersion the consumer's cache reflects: that of the newest event, relist or
    /// bookmark such that it and every write before it have been popped and processed ("" until
    /// then). client-go's `LastStoreSyncResourceVersion`; it moves in write order in both modes.
    pub fn last_store_sync_resource_version(&self) -> String {
        self.locked().progress.reached().to_owned()
    }

    /// Calls `observer` with the new resourceVersion each time
    /// [`DeltaFifo::last_store_sync_resource_version`] moves (replacing an earlier observer). It
    /// runs under the FIFO's lock: keep it short and do not call the FIFO from it.
    pub fn set_resource_version_observer(&self, observer: ResourceVersionObserver) {
        self.locked().progress.set_observer(observer);
    }

    /// Waits for the next entry, runs `process(deltas, is_in_initial_list)` without holding the
    /// lock, and returns its result. [`Error::Closed`] once closed and drained. An atomic unit
    /// ([`FifoMode::Atomic`]) comes with no deltas: pop with [`DeltaFifo::pop_guard`] or
    /// [`DeltaFifo::pop_batch`] to read it ([`PoppedEntry::atomic`]).
    pub async fn pop<R>(&self, process: impl FnOnce(&Deltas<K>, bool) -> R) -> Result<R, Error> {
        let popped = self.pop_guard().await?;
        Ok(process(popped.deltas(), popped.is_in_initial_list()))
    }

    /// [`DeltaFifo::pop`] for threads outside an async runtime: blocks the thread while waiting.
    pub fn pop_blocking<R>(&self, process: impl FnOnce(&Deltas<K>, bool) -> R) -> Result<R, Error> {
        let mut st = self.locked();
        let entry = loop {
            if let Some(r) = self.try_take(&mut st) {
                break r?;
            }
            if !self.wait_for_push() {
                drop(st);
                st = self.locked();
                continue;
            }
            st.waiting_blocking += 1;
            self.wake_blocking.wait(&mut st);
            drop(st);
            st = self.locked();
        };
        drop(st);
        let popped = self.guard(entry);
        Ok(process(popped.deltas(), popped.is_in_initial_list()))
    }

    /// Waits for the next entry and hands it out as a guard: processing lasts until the guard
    /// is dropped, may `.await`, and may end in [`Popped::requeue`].
    pub async fn pop_guard(&self) -> Result<Popped<'_, K>, Error> {
        let entry = self.wait_for(|st| self.try_take(st)).await?;
        Ok(self.guard(entry))
    }

    /// Waits for at least one entry, then pops up to `max` (at least one) under the same lock
    /// hold, different keys in queue order. A consumer that keeps up with a busy producer takes
    /// the FIFO's lock twice per batch instead of twice per key, which is most of what a pop
    /// costs when the producer is writing at the same time. Each key stays processing until the
    /// batch is dropped.
    pub async fn pop_batch(&self, max: usize) -> Result<PoppedBatch<'_, K>, Error> {
        let entries = self
            .wait_for(|st| {
                let first = match self.try_take(st)? {
                    Ok(entry) => entry,
                    Err(e) => return Some(Err(e)),
                };
                let mut entries = vec![first];
                while entries.len() < max {
                    match self.try_take(st) {
                        Some(Ok(entry)) => entries.push(entry),
                        _ => break,
                    }
                }
                Some(Ok(entries))
            })
            .await?;
        Ok(PoppedBatch {
            fifo: self,
            requeue: vec![false; entries.len()],
            entries,
        })
    }

    /// Takes with `take` under the queue lock, waiting for producers while it finds nothing.
    async fn wait_for<R>(&self, mut take: impl FnMut(&mut State<K>) -> Option<R>) -> R {
        if let Some(r) = take(&mut self.locked()) {
            return r;
        }
        loop {
            let mut notified = pin!(self.wake_async.notified());
            notified.as_mut().enable();
            {
                let mut st = self.locked();
                if let Some(r) = take(&mut st) {
                    return r;
                }
                if !self.wait_for_push() {
                    continue;
                }
                st.waiting_async += 1;
            }
            notified.await;
        }
    }

    fn guard(&self, entry: PoppedEntry<K>) -> Popped<'_, K> {
        Popped {
            fifo: self,
            entry,
            finished: false,
        }
    }

    /// Closes the FIFO: waiting and future pops return [`Error::Closed`] once the queue is
    /// drained. Producers may still write.
    pub fn close(&self) {
        let mut st = self.locked();
        st.closed = true;
        self.unlock_and_wake(st);
    }

    /// Whether [`DeltaFifo::close`] was called.
    pub fn is_closed(&self) -> bool {
        self.locked().closed
    }

    /// True once add/update/delete came before any replace, or once every entry of the first
    /// replace has been popped and processed.
    pub fn has_synced(&self) -> bool {
        self.locked().sync.has_synced()
    }

    /// The newest queued object (or tombstone) of each queued key, in queue order.
    pub fn list(&self) -> Vec<DeltaObject<K>> {
        self.locked().rules.newest_objects()
    }

    /// The queued keys, in queue order, each once.
    pub fn list_keys(&self) -> Vec<ObjectKey> {
        self.locked().rules.keys()
    }

    /// The queued deltas of this object's key.
    pub fn get(&self, obj: &K) -> Option<Deltas<K>> {
        self.get_by_key(ObjectKey::of(obj).as_str())
    }

    /// The queued deltas of a key, oldest first.
    pub fn get_by_key(&self, key: &str) -> Option<Deltas<K>> {
        self.locked().rules.deltas_of(key)
    }

    /// How many entries wait to be popped (see [`QueueMetrics::depth`]).
    pub fn len(&self) -> usize {
        self.locked().rules.depth()
    }

    /// Whether nothing waits to be popped.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Queue depth, keys in processing, and the age of the oldest queued entry.
    pub fn metrics(&self) -> QueueMetrics {
        let st = self.locked();
        QueueMetrics {
            depth: st.rules.depth(),
            processing: st.processing.len(),
            oldest_age: st.rules.oldest().map(|t| t.at.elapsed()),
        }
    }

    fn push(&self, type_: DeltaType, obj: Arc<K>) -> Result<(), Error> {
        let key = ObjectKey::of(&*obj);
        let obj = self.transform(&key, obj)?;
        let delta = Delta::new(type_, obj);
        let wake = {
            let mut inbox = self.inbox.lock();
            let stamp = Stamp::now(inbox.next_seq);
            inbox.next_seq += 1;
            inbox.pushed.push((key, delta, stamp));
            std::mem::take(&mut inbox.consumer_waiting)
        };
        if wake {
            // A blocking consumer sets the flag holding the queue's lock, which it keeps until
            // it waits: taking that lock here makes sure the wake-up cannot come before the wait.
            drop(self.state.lock());
            self.wake_async.notify_waiters();
            self.wake_blocking.notify_all();
        }
        Ok(())
    }

    /// Runs the transformer (outside the lock: it is user code).
    fn transform(&self, key: &ObjectKey, obj: Arc<K>) -> Result<Arc<K>, Error> {
        match &self.transformer {
            None => Ok(obj),
            Some(t) => t(obj).map_err(|source| Error::Transform {
                key: key.clone(),
                source,
            }),
        }
    }

    /// The next poppable entry, `Err(Closed)` when closed and drained, `None` to wait.
    fn try_take(&self, st: &mut State<K>) -> Option<Result<PoppedEntry<K>, Error>> {
        let taken = if st.atomic_processing {
            None
        } else {
            st.rules.take(&st.processing)
        };
        match taken {
            Some(Taken::Key(key, deltas, stamp)) => {
                let after = deltas.newest().and_then(Delta::resulting_object);
                st.processing.insert(key.clone(), after);
                st.progress.taken(stamp.seq);
                let (is_in_initial_list, counted) = st.sync.popped();
                Some(Ok(PoppedEntry {
                    key,
                    deltas,
                    atomic: None,
                    is_in_initial_list,
                    counted,
                    seq: stamp.seq,
                }))
            }
            Some(Taken::Atomic(event, stamp)) => {
                st.atomic_processing = true;
                st.progress.taken(stamp.seq);
                let (is_in_initial_list, counted) = st.sync.popped();
                let mut entry = PoppedEntry::from_atomic(event, is_in_initial_list);
                entry.counted = counted;
                entry.seq = stamp.seq;
                Some(Ok(entry))
            }
            None if st.closed && st.rules.depth() == 0 => Some(Err(Error::Closed)),
            None => None,
        }
    }

    /// Ends popped entries' processing, requeueing the deltas of those that ask for it.
    pub(crate) fn finish(&self, finished: impl IntoIterator<Item = Finished<K>>) {
        let mut st = self.locked();
        for f in finished {
            if f.was_atomic {
                st.atomic_processing = false;
            } else {
                st.processing.remove(&f.key);
            }
            let requeued = matches!(f.outcome, Outcome::Requeue(_) | Outcome::RequeueAtomic(_));
            st.progress.finished(f.seq, requeued);
            match f.outcome {
                Outcome::Requeue(deltas) => {
                    st.rules.requeue(f.key, deltas, Stamp::now(f.seq));
                    st.sync.requeued(f.counted);
                }
                Outcome::RequeueAtomic(event) => {
                    st.rules.requeue_atomic(event, Stamp::now(f.seq));
                    st.sync.requeued(f.counted);
                }
                Outcome::Done(emptied) => {
                    st.rules.recycle(emptied);
                    st.sync.finished(f.counted);
                }
            }
        }
        self.unlock_and_wake(st);
    }

    /// Moves the cache's resourceVersion past the marks now reached, releases the lock, then
    /// wakes waiting consumers if there are any.
    fn unlock_and_wake(&self, mut st: MutexGuard<'_, State<K>>) {
        let head = st.rules.oldest().map(|s| s.seq);
        st.progress.advance(head);
        let waiting_async = std::mem::take(&mut st.waiting_async);
        let waiting_blocking = std::mem::take(&mut st.waiting_blocking);
        drop(st);
        if waiting_async > 0 {
            self.wake_async.notify_waiters();
        }
        if waiting_blocking > 0 {
            self.wake_blocking.notify_all();
        }
    }

    /// Locks the queue, first moving the inbox into it (in push order), so that every reader and
    /// writer under the lock sees every add and update pushed before it.
    fn locked(&self) -> MutexGuard<'_, State<K>> {
        let mut st = self.state.lock();
        let spare = std::mem::take(&mut st.spare_inbox);
        let pushed = std::mem::replace(&mut self.inbox.lock().pushed, spare);
        Self::move_pushed(&mut st, pushed);
        st
    }

    /// The number of a write made under the queue's lock. Pushes that took a smaller number
    /// since the lock was taken are moved into the queue first, so every older write is queued.
    fn write_seq(&self, st: &mut State<K>) -> u64 {
        let spare = std::mem::take(&mut st.spare_inbox);
        let (pushed, seq) = {
            let mut inbox = self.inbox.lock();
            let seq = inbox.next_seq;
            inbox.next_seq += 1;
            (std::mem::replace(&mut inbox.pushed, spare), seq)
        };
        Self::move_pushed(st, pushed);
        seq
    }

    /// Queues pushed adds and updates; the newest resourceVersion among them becomes one mark,
    /// numbered as the last of them (reached once all of them are processed).
    fn move_pushed(st: &mut State<K>, mut pushed: Vec<(ObjectKey, Delta<K>, Stamp)>) {
        if !pushed.is_empty() {
            st.sync.populate();
            let last = pushed.last().map(|(_, _, stamp)| stamp.seq);
            let rv = pushed.iter().rev().find_map(|(_, delta, _)| {
                let rv = delta.object.object()?.resource_version()?;
                (!rv.is_empty()).then(|| Arc::<str>::from(rv))
            });
            if let (Some(seq), Some(rv)) = (last, rv) {
                st.progress.mark(seq, &rv);
            }
            for (key, delta, stamp) in pushed.drain(..) {
                st.rules.push(key, delta, stamp);
            }
        }
        if pushed.capacity() <= INBOX_KEPT_CAPACITY {
            st.spare_inbox = pushed;
        }
    }
}

impl<K> DeltaFifo<K> {
    /// Marks a consumer as waiting for a push, unless one arrived since the queue was locked
    /// (then the caller looks again). Called with the queue's lock held.
    fn wait_for_push(&self) -> bool {
        let mut inbox = self.inbox.lock();
        if !inbox.pushed.is_empty() {
            return false;
        }
        inbox.consumer_waiting = true;
        true
    }
}

impl<K: Object> ReflectorStore<K> for DeltaFifo<K> {
    fn add(&self, obj: Arc<K>) -> Result<(), kcache_core::Error> {
        Ok(DeltaFifo::add(self, obj)?)
    }
    fn update(&self, obj: Arc<K>) -> Result<(), kcache_core::Error> {
        Ok(DeltaFifo::update(self, obj)?)
    }
    fn delete(&self, obj: Arc<K>) -> Result<(), kcache_core::Error> {
        Ok(DeltaFifo::delete(self, obj)?)
    }
    fn replace(
        &self,
        items: Vec<Arc<K>>,
        resource_version: &str,
    ) -> Result<(), kcache_core::Error> {
        Ok(DeltaFifo::replace(self, items, resource_version)?)
    }
    fn replace_with_keys(
        &self,
        items: Vec<(ObjectKey, Arc<K>)>,
        resource_version: &str,
    ) -> Result<(), kcache_core::Error> {
        Ok(DeltaFifo::replace_with_keys(self, items, resource_version)?)
    }
    fn resync(&self) -> Result<(), kcache_core::Error> {
        Ok(DeltaFifo::resync(self)?)
    }
    fn bookmark(&self, resource_version: &str) {
        DeltaFifo::bookmark(self, resource_version)
    }
}

impl<K: Object> std::fmt::Debug for DeltaFifo<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let st = self.locked();
        f.debug_struct("DeltaFifo")
            .field("depth", &st.rules.depth())
            .field("processing", &st.processing.len())
            .field("closed", &st.closed)
            .field("synced", &st.sync.has_synced())
            .finish()
    }
}
