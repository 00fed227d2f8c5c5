//! Per-item failure counts with a bound on memory (client-go's grow without bound when callers
//! never `forget`: kubernetes PR #138743).

use std::collections::{BTreeMap, HashMap};
use std::hash::Hash;
use std::sync::atomic::{AtomicUsize, Ordering};

use parking_lot::Mutex;

use crate::engine::Hasher;

/// How many items a per-item limiter remembers by default before it evicts the least recently
/// failed one.
pub const DEFAULT_MAX_TRACKED_ITEMS: usize = 100_000;

/// Failure counts of at most `max` items; when full, recording a new item evicts the item whose
/// last failure is the oldest (so it starts afresh if it fails again).
pub(crate) struct Failures<T> {
    inner: Mutex<Tracked<T>>,
    /// Number of tracked items, readable without the lock: `forget` of an untracked item is
    /// then free when nothing is tracked (the common case of a healthy controller).
    len: AtomicUsize,
    max: usize,
}

struct Tracked<T> {
    /// item → (failures, stamp of its last failure)
    counts: HashMap<T, (u32, u64), Hasher>,
    /// stamp → item, oldest failure first: the eviction order.
    by_age: BTreeMap<u64, T>,
    clock: u64,
}

impl<T: Hash + Eq + Clone> Failures<T> {
    pub(crate) fn new(max: usize) -> Self {
        Failures {
            inner: Mutex::new(Tracked {
                counts: HashMap::with_hasher(Hasher::new()),
                by_age: BTreeMap::new(),
                clock: 0,
            }),
            len: AtomicUsize::new(0),
            max: max.max(1),
        }
    }

    /// Records one failure; returns how many were remembered before it.
    pub(crate) fn record(&self, item: &T) -> u32 {
        let mut t = self.inner.lock();
        let t = &mut *t;
        t.clock += 1;
        let stamp = t.clock;
        let before = match t.counts.get_mut(item) {
            Some((count, last)) => {
                let before = *count;
                *count = count.saturating_add(1);
                t.by_age.remove(last);
                *last = stamp;
                before
            }
            None => {
                if t.counts.len() >= self.max {
                    if let Some((_, oldest)) = t.by_age.pop_first() {
                        t.counts.remove(&oldest);
                        tracing::debug!(
                            max = self.max,
                            "rate limiter memory full: forgot the least recently failed item"
                        );
                    }
                }
                t.counts.insert(item.clone(), (1, stamp));
                0
            }
        };
        t.by_age.insert(stamp, item.clone());
        self.len.store(t.counts.len(), Ordering::Release);
        before
    }

    pub(crate) fn count(&self, item: &T) -> u32 {
        if self.len.load(Ordering::Acquire) == 0 {
            return 0;
        }
        self.inner.lock().counts.get(item).map_or(0, |c| c.0)
    }

    pub(crate) fn forget(&self, item: &T) {
        if self.len.load(Ordering::Acquire) == 0 {
            return;
        }
        let mut t = self.inner.lock();
        if let Some((_, stamp)) = t.counts.remove(item) {
            t.by_age.remove(&stamp);
            self.len.store(t.counts.len(), Ordering::Release);
        }
    }

    pub(crate) fn tracked(&self) -> usize {
        self.len.load(Ordering::Acquire)
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
        let t = f.inner.lock();
        assert_eq!(t.counts.len(), t.by_age.len());
        drop(t);
        f.forget(&1);
        f.forget(&3);
        assert_eq!(f.tracked(), 0);
        assert!(f.inner.lock().by_age.is_empty());
    }
}
