//! A weakly held, sharded hash-consing table: one canonical `Arc` per distinct value.
//!
//! Children are interned before their parent, so a node is hashed and compared by its
//! children's addresses, in O(node) and not O(subtree). The tables hold `Weak`s and never keep a
//! value alive; entries of dropped values are pruned whenever a table shard would grow, which
//! bounds a shard to about twice its live entries. Values are immutable, so sharing is
//! invisible: a changed copy (`CompactObject::with_resource_version`,
//! `CompactValue::with_member`) rebuilds only the path from the root to the change.

use std::sync::{Arc, LazyLock, Weak};

use ahash::RandomState;
use hashbrown::HashTable;
use parking_lot::Mutex;

/// The hasher every interner uses, so a value hashes the same in every table.
pub(crate) static HASHER: LazyLock<RandomState> = LazyLock::new(RandomState::new);

/// Shards keep threads that decode at the same time off each other's locks.
const SHARD_BITS: u32 = 6;

struct Entry<T: ?Sized> {
    hash: u64,
    weak: Weak<T>,
}

/// Maps a value to its one live `Arc`. Entries are weak: the table never keeps a value alive.
/// Entries of dropped values are pruned whenever a shard is about to grow, so a shard holds at
/// most about twice as many entries as it has live values (plus the dropped values' freed-but-not-
/// yet-released allocations, which a `Weak` pins until the prune).
pub(crate) struct Interner<T: ?Sized> {
    shards: Box<[Mutex<HashTable<Entry<T>>>]>,
}

impl<T: ?Sized> Interner<T> {
    pub(crate) fn new() -> Self {
        Interner {
            shards: (0..1 << SHARD_BITS)
                .map(|_| Mutex::new(HashTable::new()))
                .collect(),
        }
    }

    /// The live value equal to the one described (`hash`, `eq`), or the one `make` builds,
    /// which becomes canonical.
    pub(crate) fn intern(
        &self,
        hash: u64,
        eq: impl Fn(&T) -> bool,
        make: impl FnOnce() -> Arc<T>,
    ) -> Arc<T> {
        let mut table = self.shards[(hash >> (64 - SHARD_BITS)) as usize].lock();
        let mut hit = None;
        table.find(hash, |e| {
            if e.hash != hash {
                return false;
            }
            match e.weak.upgrade() {
                Some(live) if eq(&live) => {
                    hit = Some(live);
                    true
                }
                _ => false,
            }
        });
        if let Some(live) = hit {
            return live;
        }
        if table.len() == table.capacity() {
            table.retain(|e| e.weak.strong_count() > 0);
            if table.len() * 2 > table.capacity() {
                let live = table.len();
                table.reserve(live, |e| e.hash);
            }
        }
        let value = make();
        table.insert_unique(
            hash,
            Entry {
                hash,
                weak: Arc::downgrade(&value),
            },
            |e| e.hash,
        );
        value
    }

    /// Entries held, dead ones included (for tests of the growth bound).
    #[cfg(test)]
    pub(crate) fn entries(&self) -> usize {
        self.shards.iter().map(|s| s.lock().len()).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn intern_str(t: &Interner<str>, s: &str) -> Arc<str> {
        t.intern(HASHER.hash_one(s), |x| x == s, || Arc::from(s))
    }

    #[test]
    fn equal_values_share_one_arc() {
        let t = Interner::new();
        let a = intern_str(&t, "hello");
        let b = intern_str(&t, "hello");
        let c = intern_str(&t, "world");
        assert!(Arc::ptr_eq(&a, &b));
        assert!(!Arc::ptr_eq(&a, &c));
    }

    #[test]
    fn a_dropped_value_is_built_anew_and_the_table_stays_bounded() {
        let t = Interner::new();
        for round in 0..50 {
            let live: Vec<_> = (0..1000)
                .map(|i| intern_str(&t, &format!("{round}-{i}")))
                .collect();
            assert_eq!(live.len(), 1000);
        }
        // 50 000 values were interned; at most ~2x the 1000 live at once (per shard) remain.
        assert!(t.entries() < 8000, "{} entries", t.entries());
    }

    #[test]
    fn concurrent_interning_agrees_on_one_value() {
        let t = Arc::new(Interner::new());
        let results: Vec<Vec<Arc<str>>> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..4)
                .map(|_| {
                    let t = t.clone();
                    s.spawn(move || {
                        (0..2000)
                            .map(|i| intern_str(&t, &format!("k{}", i % 300)))
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        for r in &results[1..] {
            for (a, b) in r.iter().zip(&results[0]) {
                assert!(Arc::ptr_eq(a, b));
            }
        }
    }
}
