//! How a queue orders its queued items: client-go's `QueueConfig.Queue` (the `Queue[T]`
//! interface, `DefaultQueue`), and controller-runtime's priority order.
//!
//! The engine keeps the dirty/processing rules and calls an ordering only for items that are
//! queued: `push` once when an item becomes queued, `pop` when a getter takes one, and `raise`
//! when a queued item is added again with a higher priority. client-go's `Touch` is called on
//! every re-add of a queued item; here re-adds that change nothing never reach the ordering (nor
//! its lock), which keeps collapsed adds cheap.

use std::cmp::Reverse;
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::fmt;
use std::hash::Hash;

use ahash::RandomState as Hasher;

/// The order in which a [`Queue`](crate::Queue) hands out queued items (client-go
/// `QueueConfig.Queue`). [`Fifo`] is the default; [`ByPriority`] is controller-runtime's priority
/// order. Priorities are `i32` (controller-runtime's `int`; 0 by default, higher first); the
/// queue remembers the highest one an item was added with until it is handed out. An ordering only sees items that are queued — each at most once — so it needs no
/// deduplication of its own. It is called under the queue's lock: keep it quick, and never call
/// back into the queue.
pub trait QueueOrdering<T>: Send + 'static {
    /// Queues `item`, which is not queued yet, with the highest priority it was added with
    /// (client-go `Push`). An ordering without priorities ignores it.
    fn push(&mut self, item: T, priority: i32);
    /// A queued `item` was added again with a higher priority (`to > from`).
    fn raise(&mut self, item: &T, from: i32, to: i32);
    /// Takes the next item (client-go `Pop`).
    fn pop(&mut self) -> Option<T>;
    /// Number of queued items (client-go `Len`).
    fn len(&self) -> usize;
    /// Whether nothing is queued.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Whether items are handed out by priority, so a queue with metrics reports its depth per
    /// priority ([`MetricsProvider::new_depth_metric_with_priority`](crate::MetricsProvider)).
    fn by_priority(&self) -> bool {
        false
    }
}

/// First in, first out: client-go's `DefaultQueue`, the ordering of a plain
/// [`Queue`](crate::Queue).
pub struct Fifo<T>(VecDeque<T>);

impl<T> Default for Fifo<T> {
    fn default() -> Self {
        Fifo(VecDeque::new())
    }
}

impl<T> fmt::Debug for Fifo<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Fifo").field("len", &self.0.len()).finish()
    }
}

impl<T: Send + 'static> QueueOrdering<T> for Fifo<T> {
    fn push(&mut self, item: T, _: i32) {
        self.0.push_back(item);
    }
    fn raise(&mut self, _: &T, _: i32, _: i32) {}
    fn pop(&mut self) -> Option<T> {
        self.0.pop_front()
    }
    fn len(&self) -> usize {
        self.0.len()
    }
}

/// controller-runtime's priority order: higher priorities first, FIFO within a priority. A
/// raised item keeps its place among items of its new priority by its first add.
pub struct ByPriority<T> {
    order: BTreeMap<(Reverse<i32>, u64), T>,
    seq_of: HashMap<T, u64, Hasher>,
    next_seq: u64,
}

impl<T> Default for ByPriority<T> {
    fn default() -> Self {
        ByPriority {
            order: BTreeMap::new(),
            seq_of: HashMap::with_hasher(Hasher::new()),
            next_seq: 0,
        }
    }
}

impl<T> fmt::Debug for ByPriority<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ByPriority")
            .field("len", &self.order.len())
            .finish()
    }
}

impl<T: Hash + Eq + Clone + Send + 'static> QueueOrdering<T> for ByPriority<T> {
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

    fn by_priority(&self) -> bool {
        true
    }
}
