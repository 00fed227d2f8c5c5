//! A priority work queue: controller-runtime's `priorityqueue`, as a kcache extension.

use std::cmp::Reverse;
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::hash::Hash;
use std::sync::Arc;

use crate::engine::{Engine, Hasher, Item, Pending};
use crate::queue::QueueConfig;

/// Queued items by (priority descending, first-add order).
pub(crate) struct ByPriority<T> {
    order: BTreeMap<(Reverse<i32>, u64), T>,
    seq_of: HashMap<T, u64, Hasher>,
    next_seq: u64,
}

impl<T: Hash + Eq + Clone + Send> Pending<T> for ByPriority<T> {
    type Priority = i32;

    fn push(&mut self, item: T, priority: i32) {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.seq_of.insert(item.clone(), seq);
        self.order.insert((Reverse(priority), seq), item);
    }

    fn raise(&mut self, item: &T, from: i32, to: i32) {
        let Some(&seq) = self.seq_of.get(item) else {
            return;
        };
        if let Some(item) = self.order.remove(&(Reverse(from), seq)) {
            self.order.insert((Reverse(to), seq), item);
        }
    }

    fn pop(&mut self) -> Option<T> {
        let (_, item) = self.order.pop_first()?;
        self.seq_of.remove(&item);
        Some(item)
    }

    fn len(&self) -> usize {
        self.order.len()
    }
}

/// A work queue whose items carry a priority (controller-runtime's priority queue; not in
/// client-go). Higher priorities are handed out first, FIFO within a priority. Adding an item
/// that is already queued with a higher priority raises it (it keeps its place among items of
/// the new priority by its first add); a lower priority changes nothing. The dirty/processing
/// rules are [`Queue`](crate::Queue)'s: an item added while processing is queued again by
/// `done`, with the highest priority it was added with meanwhile.
pub struct PriorityQueue<T: Hash + Eq + Clone + Send + Sync + 'static> {
    engine: Arc<Engine<T, ByPriority<T>>>,
}

impl<T: Hash + Eq + Clone + Send + Sync + 'static> Clone for PriorityQueue<T> {
    fn clone(&self) -> Self {
        PriorityQueue {
            engine: self.engine.clone(),
        }
    }
}

impl<T: Hash + Eq + Clone + Send + Sync + 'static> fmt::Debug for PriorityQueue<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PriorityQueue")
            .field("len", &self.len())
            .finish()
    }
}

impl<T: Hash + Eq + Clone + Send + Sync + 'static> Default for PriorityQueue<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Hash + Eq + Clone + Send + Sync + 'static> PriorityQueue<T> {
    /// An unnamed priority queue without metrics.
    pub fn new() -> Self {
        Self::with_config(QueueConfig::default())
    }

    /// A priority queue built from `config`; metrics as for [`Queue`](crate::Queue).
    pub fn with_config(config: QueueConfig) -> Self {
        PriorityQueue {
            engine: config.build(ByPriority {
                order: BTreeMap::new(),
                seq_of: HashMap::with_hasher(Hasher::new()),
                next_seq: 0,
            }),
        }
    }

    /// Adds `item` with priority 0.
    pub fn add(&self, item: T) {
        self.add_with_priority(item, 0);
    }

    /// Adds `item` with `priority` (higher first); raises an already queued item's priority.
    pub fn add_with_priority(&self, item: T, priority: i32) {
        self.engine.add(Item::Owned(item), priority);
    }

    /// Waits for the highest-priority item; `None` once shut down and empty. Cancel-safe.
    pub async fn get(&self) -> Option<T> {
        self.engine.get().await
    }

    /// [`get`](Self::get) for plain threads.
    pub fn get_blocking(&self) -> Option<T> {
        self.engine.get_blocking()
    }

    /// Ends processing of `item`; queues it again if it was added meanwhile.
    pub fn done(&self, item: &T) {
        self.engine.done(item);
    }

    /// Number of queued items, not counting those being processed.
    pub fn len(&self) -> usize {
        self.engine.len()
    }

    /// Whether no item is queued.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether `item` is queued or being processed.
    pub fn contains(&self, item: &T) -> bool {
        self.engine.contains(item)
    }

    /// Stops accepting items and wakes every waiting getter.
    pub fn shut_down(&self) {
        self.engine.shut_down(false);
    }

    /// Shuts down, then waits until no item is processing (a later `shut_down` ends the wait).
    pub async fn shut_down_with_drain(&self) {
        self.engine.shut_down(true);
        self.engine.wait_drained().await;
    }

    /// [`shut_down_with_drain`](Self::shut_down_with_drain) for plain threads.
    pub fn shut_down_with_drain_blocking(&self) {
        self.engine.shut_down(true);
        self.engine.wait_drained_blocking();
    }

    /// Whether the queue is shutting down.
    pub fn shutting_down(&self) -> bool {
        self.engine.shutting_down()
    }
}
