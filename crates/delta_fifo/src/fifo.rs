//! The FIFO itself: one lock around the queue, waiting consumers, and the initial-sync count.

use std::pin::pin;
use std::sync::Arc;
use std::time::Duration;

use kcache_core::{KnownObjects, Object, ObjectKey, ReflectorStore};
use parking_lot::{Condvar, Mutex, MutexGuard};
use tokio::sync::Notify;

use crate::in_order::InOrderQueue;
use crate::initial_sync::InitialSync;
use crate::keyed::KeyedQueue;
use crate::rules::{KnownView, Processing, QueueRules};
use crate::{
    Delta, DeltaFifoOptions, DeltaObject, DeltaType, Deltas, Error, FifoMode, Popped, TransformFunc,
};

/// client-go's `DeltaFIFO` (and, with [`FifoMode::Real`], its `RealFIFO`): the queue between a
/// reflector and an informer's cache.
///
/// Producers (the reflector, through [`ReflectorStore`]) never wait for consumers: a consumer's
/// processing runs without the lock (client-go #103789). Deltas of a key being processed wait
/// until that processing ends, so each key's deltas are applied in order even with several
/// consumers.
pub struct DeltaFifo<K> {
    state: Mutex<State<K>>,
    known_objects: Option<Arc<dyn KnownObjects<K>>>,
    transformer: Option<TransformFunc<K>>,
    replaced: DeltaType,
    wake_async: Notify,
    wake_blocking: Condvar,
}

struct State<K> {
    rules: Box<dyn QueueRules<K>>,
    processing: Processing<K>,
    sync: InitialSync,
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
            FifoMode::Real => Box::new(InOrderQueue::new()),
        };
        let replaced = if options.emit_delta_type_replaced || options.mode == FifoMode::Real {
            DeltaType::Replaced
        } else {
            DeltaType::Sync
        };
        DeltaFifo {
            state: Mutex::new(State {
                rules,
                processing: Processing::default(),
                sync: InitialSync::default(),
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
        let mut st = self.state.lock();
        st.sync.populate();
        let st_ref = &mut *st;
        let known = KnownView {
            known: self.known_objects.as_deref(),
            processing: &st_ref.processing,
        };
        st_ref.rules.delete(key, obj, &known);
        self.unlock_and_wake(st);
        Ok(())
    }

    /// A relist: `Replaced` (or `Sync` when `emit_delta_type_replaced` is off, in Delta mode)
    /// for every item, and a `Deleted` tombstone for every queued or known key the list lacks.
    /// All items are transformed first, so a transformer error leaves the queue unchanged.
    pub fn replace(&self, items: Vec<Arc<K>>, resource_version: &str) -> Result<(), Error> {
        let _ = resource_version;
        let items = items
            .into_iter()
            .map(|obj| {
                let key = ObjectKey::of(&*obj);
                let obj = self.transform(&key, obj)?;
                Ok((key, obj))
            })
            .collect::<Result<Vec<_>, Error>>()?;
        let mut st = self.state.lock();
        let st_ref = &mut *st;
        let known = KnownView {
            known: self.known_objects.as_deref(),
            processing: &st_ref.processing,
        };
        let count = st_ref.rules.replace(items, self.replaced, &known);
        st_ref.sync.replaced(count);
        self.unlock_and_wake(st);
        Ok(())
    }

    /// Queues a `Sync` delta for every known object with nothing queued; a no-op without known
    /// objects.
    pub fn resync(&self) -> Result<(), Error> {
        if self.known_objects.is_none() {
            return Ok(());
        }
        let mut st = self.state.lock();
        let st_ref = &mut *st;
        let known = KnownView {
            known: self.known_objects.as_deref(),
            processing: &st_ref.processing,
        };
        st_ref.rules.resync(&known);
        self.unlock_and_wake(st);
        Ok(())
    }

    /// Waits for the next entry, runs `process(deltas, is_in_initial_list)` without holding the
    /// lock, and returns its result. [`Error::Closed`] once closed and drained.
    pub async fn pop<R>(&self, process: impl FnOnce(&Deltas<K>, bool) -> R) -> Result<R, Error> {
        let popped = self.pop_guard().await?;
        Ok(process(popped.deltas(), popped.is_in_initial_list()))
    }

    /// [`DeltaFifo::pop`] for threads outside an async runtime: blocks the thread while waiting.
    pub fn pop_blocking<R>(&self, process: impl FnOnce(&Deltas<K>, bool) -> R) -> Result<R, Error> {
        let mut st = self.state.lock();
        let popped = loop {
            if let Some(r) = self.try_take(&mut st) {
                break r?;
            }
            st.waiting_blocking += 1;
            self.wake_blocking.wait(&mut st);
        };
        drop(st);
        Ok(process(popped.deltas(), popped.is_in_initial_list()))
    }

    /// Waits for the next entry and hands it out as a guard: processing lasts until the guard
    /// is dropped, may `.await`, and may end in [`Popped::requeue`].
    pub async fn pop_guard(&self) -> Result<Popped<'_, K>, Error> {
        if let Some(r) = self.try_take(&mut self.state.lock()) {
            return r;
        }
        loop {
            let mut notified = pin!(self.wake_async.notified());
            notified.as_mut().enable();
            {
                let mut st = self.state.lock();
                if let Some(r) = self.try_take(&mut st) {
                    return r;
                }
                st.waiting_async += 1;
            }
            notified.await;
        }
    }

    /// Closes the FIFO: waiting and future pops return [`Error::Closed`] once the queue is
    /// drained. Producers may still write.
    pub fn close(&self) {
        let mut st = self.state.lock();
        st.closed = true;
        self.unlock_and_wake(st);
    }

    /// Whether [`DeltaFifo::close`] was called.
    pub fn is_closed(&self) -> bool {
        self.state.lock().closed
    }

    /// True once add/update/delete came before any replace, or once every entry of the first
    /// replace has been popped and processed.
    pub fn has_synced(&self) -> bool {
        self.state.lock().sync.has_synced()
    }

    /// The newest queued object (or tombstone) of each queued key, in queue order.
    pub fn list(&self) -> Vec<DeltaObject<K>> {
        self.state.lock().rules.newest_objects()
    }

    /// The queued keys, in queue order, each once.
    pub fn list_keys(&self) -> Vec<ObjectKey> {
        self.state.lock().rules.keys()
    }

    /// The queued deltas of this object's key.
    pub fn get(&self, obj: &K) -> Option<Deltas<K>> {
        self.get_by_key(ObjectKey::of(obj).as_str())
    }

    /// The queued deltas of a key, oldest first.
    pub fn get_by_key(&self, key: &str) -> Option<Deltas<K>> {
        self.state.lock().rules.deltas_of(key)
    }

    /// How many entries wait to be popped (see [`QueueMetrics::depth`]).
    pub fn len(&self) -> usize {
        self.state.lock().rules.depth()
    }

    /// Whether nothing waits to be popped.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Queue depth, keys in processing, and the age of the oldest queued entry.
    pub fn metrics(&self) -> QueueMetrics {
        let st = self.state.lock();
        QueueMetrics {
            depth: st.rules.depth(),
            processing: st.processing.len(),
            oldest_age: st.rules.oldest().map(|t| t.elapsed()),
        }
    }

    fn push(&self, type_: DeltaType, obj: Arc<K>) -> Result<(), Error> {
        let key = ObjectKey::of(&*obj);
        let obj = self.transform(&key, obj)?;
        let mut st = self.state.lock();
        st.sync.populate();
        st.rules.push(key, Delta::new(type_, obj));
        self.unlock_and_wake(st);
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
    fn try_take(&self, st: &mut State<K>) -> Option<Result<Popped<'_, K>, Error>> {
        match st.rules.take(&st.processing) {
            Some((key, deltas)) => {
                let after = deltas.newest().and_then(Delta::resulting_object);
                st.processing.insert(key.clone(), after);
                let (is_in_initial_list, counted) = st.sync.popped();
                Some(Ok(Popped {
                    fifo: self,
                    key,
                    deltas,
                    is_in_initial_list,
                    counted,
                    finished: false,
                }))
            }
            None if st.closed && st.rules.depth() == 0 => Some(Err(Error::Closed)),
            None => None,
        }
    }

    /// Ends a popped entry's processing, requeueing its deltas if given.
    pub(crate) fn finish(&self, key: &ObjectKey, counted: bool, requeue: Option<Deltas<K>>) {
        let mut st = self.state.lock();
        st.processing.remove(key);
        match requeue {
            Some(deltas) => {
                st.rules.requeue(key.clone(), deltas);
                st.sync.requeued(counted);
            }
            None => st.sync.finished(counted),
        }
        self.unlock_and_wake(st);
    }

    /// Releases the lock, then wakes waiting consumers if there are any.
    fn unlock_and_wake(&self, mut st: MutexGuard<'_, State<K>>) {
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
    fn resync(&self) -> Result<(), kcache_core::Error> {
        Ok(DeltaFifo::resync(self)?)
    }
}

impl<K> std::fmt::Debug for DeltaFifo<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let st = self.state.lock();
        f.debug_struct("DeltaFifo")
            .field("depth", &st.rules.depth())
            .field("processing", &st.processing.len())
            .field("closed", &st.closed)
            .field("synced", &st.sync.has_synced())
            .finish()
    }
}
