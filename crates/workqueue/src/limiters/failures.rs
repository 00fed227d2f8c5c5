//! Per-item failure counts with a bound on memory (client-go's grow without bound when callers
//! never `forget`: kubernetes PR #138743).
//!
//! The eviction order is a queue of (stamp, item), one entry per recorded failure, oldest first;
//! an entry whose stamp is no longer its item's last is stale and skipped. A failure then costs
//! one map update and one push, with no tree to rebalance or node to allocate; stale entries are
//! swept out in place once they outnumber the live ones, so the queue stays within twice the
//! tracked items plus a constant.
//!
//! The order is kept only while it can matter: from the moment more than half of the memory is
//! in use until less than a quarter is. Below that, a failure and a `forget` are one map
//! operation under the lock that every `add_rate_limited` and every worker's `forget` take —
//! the common case of a controller whose items fail and recover — and the order is rebuilt from
//! the stamps (one sort) when the memory fills up again. The gap between the two marks keeps an
//! item count hovering at one mark from rebuilding over and over.
//!
//! A large memory (the default) is split into shards by item hash, each with its own lock and
//! its own share of the memory, so the producer's failures and the workers' `forget`s rarely
//! meet on one lock. Eviction is then by least recent failure within the new item's shard; with
//! at least [`MIN_PER_SHARD`] items per shard that is close to the whole memory's order. A
//! smaller memory is one shard, with the exact order.

use std::collections::{HashMap, VecDeque};
use std::hash::Hash;
use std::sync::atomic::{AtomicUsize, Ordering};

use parking_lot::Mutex;

use crate::engine::{shard_index, Hasher};

/// How many items a per-item limiter remembers by default before it evicts the least recently
/// failed one.
pub const DEFAULT_MAX_TRACKED_ITEMS: usize = 100_000;

/// Number of shards of a memory of at least `SHARDS × MIN_PER_SHARD` items (a power of two).
const SHARDS: usize = 16;

/// The fewest items a shard remembers: a smaller memory is not sharded.
const MIN_PER_SHARD: usize = 1024;

/// Failure counts of at most `max` items; when full, recording a new item evicts the item whose
/// last failure is the oldest in its shard (so it starts afresh if it fails again).
pub(crate) struct Failures<T> {
    shards: Box<[Shard<T>]>,
    hasher: Hasher,
    /// Number of tracked items, readable without a lock: `forget` of an untracked item is
    /// then free when nothing is tracked (the common case of a healthy controller).
    len: AtomicUsize,
    /// How many items one shard remembers.
    max: usize,
}

/// One shard's items, on cache lines of its own.
#[repr(align(128))]
struct Shard<T>(Mutex<Tracked<T>>);

struct Tracked<T> {
    /// item → (failures, stamp of its last failure)
    counts: HashMap<T, (u32, u64), Hasher>,
    /// (stamp, item) per recorded failure, oldest first: the eviction order. An entry is live
    /// while its stamp is the item's last in `counts`.
    by_age: VecDeque<(u64, T)>,
    /// Whether `by_age` is kept (more than half of the memory was in use since it was less than
    /// a quarter).
    ordered: bool,
    clock: u64,
}

impl<T: Hash + Eq + Clone> Failures<T> {
    pub(crate) fn new(max: usize) -> Self {
        let max = max.max(1);
        let shards = if max >= SHARDS * MIN_PER_SHARD {
            SHARDS
        } else {
            1
        };
        let hasher = Hasher::new();
        Failures {
            shards: (0..shards)
                .map(|_| {
                    Shard(Mutex::new(Tracked {
                        counts: HashMap::with_hasher(hasher.clone()),
                        by_age: VecDeque::new(),
                        ordered: false,
                        clock: 0,
                    }))
                })
                .collect(),
            hasher,
            len: AtomicUsize::new(0),
            max: max / shards,
        }
    }

    /// The shard of `item` ([`shard_index`]).
    fn shard(&self, item: &T) -> &Mutex<Tracked<T>> {
        &self.shards[shard_index(&self.hasher, item, self.shards.len())].0
    }

    /// Records one failure; returns how many were remembered before it.
    pub(crate) fn record(&self, item: &T) -> u32 {
        let mut t = self.shard(item).lock();
        let t = &mut *t;
        t.clock += 1;
        let stamp = t.clock;
        let before = match t.counts.get_mut(item) {
            Some((count, last)) => {
                let before = *count;
                *count = count.saturating_add(1);
                *last = stamp;
                before
            }
            None => {
                if t.counts.len() >= self.max {
                    t.evict_oldest();
                } else {
                    self.len.fetch_add(1, Ordering::Release);
                }
                t.counts.insert(item.clone(), (1, stamp));
                0
            }
        };
        if t.ordered {
            t.by_age.push_back((stamp, item.clone()));
            t.sweep_if_stale();
        } else if t.counts.len() > self.max / 2 {
            t.build_order();
        }
        before
    }

    pub(crate) fn count(&self, item: &T) -> u32 {
        if self.len.load(Ordering::Acquire) == 0 {
            return 0;
        }
        self.shard(item).lock().counts.get(item).map_or(0, |c| c.0)
    }

    pub(crate) fn forget(&self, item: &T) {
        if self.len.load(Ordering::Acquire) == 0 {
            return;
        }
        let mut t = self.shard(item).lock();
        if t.counts.remove(item).is_some() {
            self.len.fetch_sub(1, Ordering::Release);
            if t.ordered && t.counts.len() < self.max / 4 {
                t.ordered = false;
                t.by_age = VecDeque::new();
            } else if t.ordered {
                t.sweep_if_stale();
            }
        }
    }

    pub(crate) fn tracked(&self) -> usize {
        self.len.load(Ordering::Acquire)
    }
}

impl<T: Hash + Eq + Clone> Tracked<T> {
    /// Whether `(stamp, item)` is the item's last failure.
    fn live(&self, stamp: u64, item: &T) -> bool {
        self.counts
            .get(item)
            .is_some_and(|&(_, last)| last == stamp)
    }

    /// Starts keeping the eviction order: one entry per tracked item, by its last failure.
    fn build_order(&mut self) {
        let mut by_age: Vec<(u64, T)> = self
            .counts
            .iter()
            .map(|(item, &(_, stamp))| (stamp, item.clone()))
            .collect();
        by_age.sort_unstable_by_key(|&(stamp, _)| stamp);
        self.by_age = by_age.into();
        self.ordered = true;
    }

    /// Forgets the item whose last failure is the oldest. Only called with the memory full, so
    /// the order is kept.
    fn evict_oldest(&mut self) {
        while let Some((stamp, item)) = self.by_age.pop_front() {
            if self.live(stamp, &item) {
                self.counts.remove(&item);
                tracing::debug!("rate limiter memory full: forgot the least recently failed item");
                return;
            }
        }
    }

    /// Drops stale entries once they outnumber the live ones (amortized O(1) per failure).
    fn sweep_if_stale(&mut self) {
        if self.by_age.len() > 2 * self.counts.len() + 64 {
            let mut by_age = std::mem::take(&mut self.by_age);
            by_age.retain(|(stamp, item)| self.live(*stamp, item));
            self.by_age = by_age;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evicts_least_recently_failed_and_keeps_indexes_in_step() {
        let f = Failures::new(2);
        assert_eq!(f.record(&1), 0);
        assert_eq!(f.record(&2), 0);
        assert_eq!(f.record(&1), 1); // 2 is now the least recently failed
        assert_eq!(f.record(&3), 0); // evicts 2
        assert_eq!((f.count(&1), f.count(&2), f.count(&3)), (2, 0, 1));
        f.forget(&1);
        f.forget(&3);
        assert_eq!(f.tracked(), 0);
    }

    #[test]
    fn stale_entries_are_swept_and_never_evict_a_live_item() {
        let f = Failures::new(3);
        for round in 0..1000u32 {
            assert_eq!(f.record(&1), round, "item 1 keeps counting");
            f.record(&2);
            f.forget(&2);
        }
        let len = f.shards[0].0.lock().by_age.len();
        assert!(len <= 2 + 64, "stale entries swept: {len} left");
        // 1's oldest entries are stale: filling the memory evicts 1 (the least recent), not 3.
        f.record(&3);
        f.record(&4);
        f.record(&5);
        assert_eq!(
            (f.count(&1), f.count(&3), f.count(&4), f.count(&5)),
            (0, 1, 1, 1)
        );
    }

    #[test]
    fn the_order_is_dropped_when_mostly_empty_and_rebuilt_from_stamps() {
        let f = Failures::new(8);
        for i in 0..5 {
            f.record(&i);
        }
        assert!(f.shards[0].0.lock().ordered, "over half full: ordered");
        for i in 0..4 {
            f.forget(&i);
        }
        assert!(
            !f.shards[0].0.lock().ordered,
            "under a quarter: order dropped"
        );
        assert!(f.shards[0].0.lock().by_age.is_empty());
        // 4 is the oldest failure; 10..17 fill the memory, 4 failing again in between.
        for i in 10..13 {
            f.record(&i);
        }
        f.record(&4);
        for i in 13..17 {
            f.record(&i);
        }
        assert_eq!(f.tracked(), 8);
        f.record(&17); // evicts 10, the least recently failed (4 failed later)
        assert_eq!((f.count(&10), f.count(&4), f.count(&17)), (0, 2, 1));
        f.record(&18); // then 11
        assert_eq!((f.count(&11), f.count(&12)), (0, 1));
    }

    #[test]
    fn a_sharded_memory_stays_within_its_bound() {
        let max = SHARDS * MIN_PER_SHARD + 100;
        let f = Failures::new(max);
        assert_eq!(f.shards.len(), SHARDS);
        for i in 0..3 * max {
            f.record(&i);
        }
        assert!(f.tracked() <= max, "{} > {max}", f.tracked());
        let held: usize = f.shards.iter().map(|s| s.0.lock().counts.len()).sum();
        assert_eq!(held, f.tracked(), "the count matches the shards");
        assert_eq!(
            f.count(&(3 * max - 1)),
            1,
            "the latest failure is remembered"
        );
        for i in 0..3 * max {
            f.forget(&i);
        }
        assert_eq!(f.tracked(), 0);
    }
}
