//! [`HashRing`]: consistent hashing over shard names with virtual nodes.
//!
//! Each shard is placed at [`DEFAULT_VIRTUAL_NODES`] points of the 64-bit circle (the hash of its
//! name and the point's number); a key belongs to the shard of the first point at or after the
//! key's hash, wrapping around. A shard joining takes over only the arcs in front of its own
//! points, and a shard leaving hands only its arcs to the next points: the objects that move are
//! the ones whose owner changed, about 1/n of them, and none move between the other shards.
//!
//! The ring is a pure function of the set of shard names: the order they are given in, the
//! process and the replica do not matter, so the sharder and every shard agree on each key's owner.

use crate::hash::{fmix64, fnv1a64, fnv1a64_continue, hash_key};

/// Virtual nodes per shard.
///
/// A shard's share of the circle is the sum of its `v` arcs, so its relative spread is about
/// `1/√v`; the largest of n shards lies about `√(2 ln n)` spreads above the mean (≈ 3 for 100
/// shards). The target "largest shard ≤ 1.1 × the mean at 100 shards" needs `3/√v` well under 0.1,
/// hence `v` ≥ 900; 1000 points per shard give 1.08 (docs/benchmarks.md) and cost 16 bytes
/// each: 1.6 MB and a 17-step binary search for 100 shards. (timebertt's sharder uses 100, which
/// gives 1.24 × the mean at 100 shards.)
pub const DEFAULT_VIRTUAL_NODES: u32 = 1000;

/// A consistent-hash ring over a set of shard names.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct HashRing {
    /// The shards, sorted and without duplicates; `points` refer to them by index.
    shards: Vec<String>,
    /// `(position, shard index)`, sorted by position (ties by shard name, so any order of
    /// construction gives the same ring).
    points: Vec<(u64, u32)>,
}

impl HashRing {
    /// A ring over `shards` with [`DEFAULT_VIRTUAL_NODES`] points each. Duplicates count once.
    pub fn new<I, S>(shards: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self::with_virtual_nodes(shards, DEFAULT_VIRTUAL_NODES)
    }

    /// A ring over `shards` with `virtual_nodes` points each (at least one).
    pub fn with_virtual_nodes<I, S>(shards: I, virtual_nodes: u32) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let mut names: Vec<String> = shards.into_iter().map(Into::into).collect();
        names.sort();
        names.dedup();
        let per_shard = virtual_nodes.max(1);
        let mut points = Vec::with_capacity(names.len() * per_shard as usize);
        for (index, name) in names.iter().enumerate() {
            let seed = fnv1a64(name.as_bytes());
            let index = u32::try_from(index).unwrap_or(u32::MAX);
            for vnode in 0..per_shard {
                let position = fmix64(fnv1a64_continue(seed, &vnode.to_le_bytes()));
                points.push((position, index));
            }
        }
        // Shard indices follow the sorted names, so sorting the pairs breaks ties by name.
        points.sort_unstable();
        HashRing {
            shards: names,
            points,
        }
    }

    /// The shard that owns `key`; `None` when the ring has no shard.
    pub fn owner_of(&self, key: &str) -> Option<&str> {
        self.owner_of_hash(hash_key(key))
    }

    /// The shard that owns the ring position `hash` (a key's [`hash_key`]).
    pub fn owner_of_hash(&self, hash: u64) -> Option<&str> {
        if self.points.is_empty() {
            return None;
        }
        let at = self.points.partition_point(|&(p, _)| p < hash);
        let (_, shard) = self.points[at % self.points.len()];
        self.shards.get(shard as usize).map(String::as_str)
    }

    /// The shards, sorted.
    pub fn shards(&self) -> &[String] {
        &self.shards
    }

    /// Whether the ring has no shard (every key is unowned).
    pub fn is_empty(&self) -> bool {
        self.shards.is_empty()
    }

    /// Whether `shard` is on the ring.
    pub fn contains(&self, shard: &str) -> bool {
        self.shards
            .binary_search_by(|s| s.as_str().cmp(shard))
            .is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn names(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("shard-{i}")).collect()
    }

    fn counts(ring: &HashRing, keys: usize) -> HashMap<String, usize> {
        let mut c = HashMap::new();
        for i in 0..keys {
            let owner = ring.owner_of(&format!("ns-{}/obj-{i}", i % 7)).unwrap();
            *c.entry(owner.to_string()).or_default() += 1;
        }
        c
    }

    #[test]
    fn an_empty_ring_owns_nothing() {
        let ring = HashRing::new(Vec::<String>::new());
        assert!(ring.is_empty());
        assert_eq!(ring.owner_of("default/a"), None);
    }

    #[test]
    fn owners_do_not_depend_on_order_or_duplicates() {
        let a = HashRing::new(["c", "a", "b"]);
        let b = HashRing::new(["b", "a", "c", "a"]);
        assert_eq!(a, b);
        assert_eq!(a.shards(), ["a", "b", "c"]);
        for i in 0..1000 {
            let key = format!("default/cm-{i}");
            assert_eq!(a.owner_of(&key), b.owner_of(&key));
        }
        assert!(a.contains("b") && !a.contains("d"));
    }

    #[test]
    fn owners_are_pinned() {
        // A change here reassigns objects of every deployed ring: it must be deliberate.
        let ring = HashRing::new(["shard-0", "shard-1", "shard-2"]);
        let owners: Vec<_> = ["default/a", "default/b", "kube-system/c", "x"]
            .iter()
            .map(|k| ring.owner_of(k).unwrap())
            .collect();
        assert_eq!(owners, PINNED_OWNERS);
    }
    const PINNED_OWNERS: [&str; 4] = ["shard-1", "shard-0", "shard-2", "shard-0"];

    #[test]
    fn every_shard_gets_about_its_share() {
        for n in [3, 10] {
            let ring = HashRing::new(names(n));
            let keys = 100_000;
            let c = counts(&ring, keys);
            assert_eq!(c.len(), n);
            let mean = keys as f64 / n as f64;
            let max = *c.values().max().unwrap() as f64;
            assert!(
                max / mean <= 1.1,
                "{n} shards: largest {max} vs mean {mean}"
            );
        }
    }

    #[test]
    fn a_join_moves_only_keys_to_the_new_shard() {
        let before = HashRing::new(names(10));
        let after = HashRing::new(names(11));
        let keys = 50_000;
        let mut moved = 0;
        for i in 0..keys {
            let key = format!("default/cm-{i}");
            let (old, new) = (before.owner_of(&key), after.owner_of(&key));
            if old != new {
                assert_eq!(new, Some("shard-10"), "{key} moved between old shards");
                moved += 1;
            }
        }
        let fraction = moved as f64 / keys as f64;
        assert!(fraction <= 1.1 / 11.0, "moved {fraction}");
        assert!(fraction > 0.5 / 11.0, "moved {fraction}");
    }

    #[test]
    fn a_leave_moves_only_the_leavers_keys() {
        let before = HashRing::new(names(10));
        let after = HashRing::new(names(10).into_iter().filter(|s| s != "shard-3"));
        let keys = 50_000;
        let mut moved = 0;
        for i in 0..keys {
            let key = format!("default/cm-{i}");
            let (old, new) = (before.owner_of(&key), after.owner_of(&key));
            if old != new {
                assert_eq!(old, Some("shard-3"), "{key} moved off a shard that stayed");
                moved += 1;
            }
        }
        let fraction = moved as f64 / keys as f64;
        assert!(fraction <= 1.1 / 10.0, "moved {fraction}");
    }

    #[test]
    fn virtual_nodes_are_at_least_one() {
        let ring = HashRing::with_virtual_nodes(["a"], 0);
        assert_eq!(ring.owner_of("k"), Some("a"));
    }
}
