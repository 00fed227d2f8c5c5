//! A weakly held, sharded hash-consing table: one canonical `Arc` per distinct value.
//!
//! Children are interned before their parent, so a node is hashed and compared by its
//! children's addresses, in O(node) and not O(subtree). The tables hold `Weak`s and never keep a
//! value alive; entries of dropped values are pruned whenever a table shard would grow, which
//! bounds a shard to about twice its live entries, and all at once when many objects were
//! dropped (`CompactObject`'s drop counts them): a `Weak` keeps its dropped value's allocation,
//! so a cache dropped while nothing else interns would otherwise keep its memory. Values are immutable, so sharing is
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

/// Where in the hash the shard comes from: bits no table uses. hashbrown takes a bucket from the
/// low bits and each entry's 7-bit tag (what a probe compares before calling `eq`) from the top
/// 7; a shard from the top bits would leave entries of one shard one bit of tag between them, so
/// a look-up would upgrade and compare about half of every probed group.
const SHARD_SHIFT: u32 = 40;

/// The shard of a value with this hash.
fn shard_of(hash: u64) -> usize {
    (hash >> SHARD_SHIFT) as usize & ((1 << SHARD_BITS) - 1)
}

/// Maps a value to its one live `Arc`. Entries are weak: the table never keeps a value alive.
/// Entries of dropped values are pruned whenever a shard is about to grow, so a shard holds at
/// most about twice as many entries as it has live values (plus the dropped values' freed-but-not-
/// yet-released allocations, which a `Weak` pins until the prune).
///
/// An entry is the `Weak` alone (16 bytes for a slice or `str`): a value's hash is computed again
/// from the value (`rehash`) when the table grows, instead of being stored beside it, which
/// would take a third more of the table — a large cache has several entries per object.
pub(crate) struct Interner<T: ?Sized> {
    shards: Box<[Mutex<HashTable<Weak<T>>>]>,
    rehash: fn(&T) -> u64,
}

impl<T: ?Sized> Interner<T> {
    /// An empty table whose values hash with `rehash` (the hash every caller of
    /// [`intern`](Self::intern) passes for that value).
    pub(crate) fn new(rehash: fn(&T) -> u64) -> Self {
        Interner {
            shards: (0..1 << SHARD_BITS)
                .map(|_| Mutex::new(HashTable::new()))
                .collect(),
            rehash,
        }
    }

    /// The live value equal to `value` (`hash`, which must be `rehash` of it, and `eq`), or the
    /// one `make` builds from `value`, which becomes canonical. `value` is moved in, so `make`
    /// can move its parts into the new value instead of cloning them (a clone of an `Arc`
    /// child is two atomic operations, with the drop of the original).
    pub(crate) fn intern<V>(
        &self,
        hash: u64,
        value: V,
        eq: impl Fn(&T, &V) -> bool,
        make: impl FnOnce(V) -> Arc<T>,
    ) -> Arc<T> {
        let mut table = self.shards[shard_of(hash)].lock();
        let mut hit = None;
        table.find(hash, |weak| match weak.upgrade() {
            Some(live) if eq(&live, &value) => {
                hit = Some(live);
                true
            }
            _ => false,
        });
        if let Some(live) = hit {
            return live;
        }
        let rehash = |weak: &Weak<T>| self.rehash_entry(weak);
        if table.len() == table.capacity() {
            table.retain(|weak| weak.strong_count() > 0);
            if table.len() * 2 > table.capacity() {
                let live = table.len();
                table.reserve(live, rehash);
            }
        }
        let made = make(value);
        table.insert_unique(hash, Arc::downgrade(&made), rehash);
        made
    }

    /// An entry's hash, from its value. A value dropped meanwhile cannot be hashed again; any
    /// bucket will do for its entry, which no lookup matches and the next prune removes.
    fn rehash_entry(&self, weak: &Weak<T>) -> u64 {
        weak.upgrade().map_or(0, |v| (self.rehash)(&v))
    }

    /// Removes the entries of dropped values from every shard now, which frees their memory
    /// (an entry's `Weak` keeps a dropped value's allocation until it goes), and gives back the
    /// table space of a shard left less than a quarter full; returns the entries left.
    pub(crate) fn prune(&self) -> usize {
        let mut left = 0;
        for shard in self.shards.iter() {
            let mut table = shard.lock();
            table.retain(|weak| weak.strong_count() > 0);
            let live = table.len();
            if table.capacity() > 4 * live {
                table.shrink_to(2 * live, |weak| self.rehash_entry(weak));
            }
            left += table.len();
        }
        left
    }

    /// Entries held, dead ones included.
    pub(crate) fn entries(&self) -> usize {
        self.shards.iter().map(|s| s.lock().len()).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hash_str(s: &str) -> u64 {
        HASHER.hash_one(s)
    }

    fn intern_str(t: &Interner<str>, s: &str) -> Arc<str> {
        t.intern(hash_str(s), s, |x, s| x == *s, Arc::from)
    }

    #[test]
    fn one_shards_values_spread_over_every_tag() {
        // hashbrown compares a 7-bit tag from the hash's top bits before calling `eq`: the
        // values of one shard must keep all 128 tags, or a look-up compares most of a group.
        let tags: std::collections::HashSet<u64> = (0..400_000u64)
            .map(|i| HASHER.hash_one(i))
            .filter(|&h| shard_of(h) == 0)
            .map(|h| h >> 57)
            .collect();
        assert_eq!(tags.len(), 128);
    }

    #[test]
    fn equal_values_share_one_arc() {
        let t = Interner::new(hash_str);
        let a = intern_str(&t, "hello");
        let b = intern_str(&t, "hello");
        let c = intern_str(&t, "world");
        assert!(Arc::ptr_eq(&a, &b));
        assert!(!Arc::ptr_eq(&a, &c));
    }

    #[test]
    fn a_dropped_value_is_built_anew_and_the_table_stays_bounded() {
        let t = Interner::new(hash_str);
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
        let t = Arc::new(Interner::new(hash_str));
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
