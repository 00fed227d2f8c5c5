//! A small least-recently-used map: client-go's correlator caches are LRUs of 4096 entries, so
//! memory stays bounded however many objects a controller touches.

use std::collections::HashMap;

/// Entries keyed by string, the least recently used evicted past `capacity`.
///
/// Eviction scans for the oldest entry (O(n) on an insert into a full cache). Events are rare
/// and rate-limited, so that is cheaper in code than a linked list and fast enough.
#[derive(Debug)]
pub(crate) struct Lru<V> {
    map: HashMap<String, (V, u64)>,
    tick: u64,
    capacity: usize,
}

impl<V> Lru<V> {
    pub(crate) fn new(capacity: usize) -> Self {
        Lru {
            map: HashMap::new(),
            tick: 0,
            capacity: capacity.max(1),
        }
    }

    /// The entry for `key`, marked used.
    pub(crate) fn get_mut(&mut self, key: &str) -> Option<&mut V> {
        self.tick += 1;
        let tick = self.tick;
        self.map.get_mut(key).map(|(v, used)| {
            *used = tick;
            v
        })
    }

    /// The entry for `key`, inserted from `make` if absent (evicting the least recently used).
    pub(crate) fn get_or_insert_with(&mut self, key: &str, make: impl FnOnce() -> V) -> &mut V {
        if !self.map.contains_key(key) {
            self.insert(key.to_string(), make());
        }
        self.get_mut(key).expect("present: inserted above")
    }

    /// Inserts or replaces `key`.
    pub(crate) fn insert(&mut self, key: String, value: V) {
        self.tick += 1;
        if !self.map.contains_key(&key) && self.map.len() >= self.capacity {
            let oldest = self
                .map
                .iter()
                .min_by_key(|(_, (_, used))| *used)
                .map(|(k, _)| k.clone());
            if let Some(k) = oldest {
                self.map.remove(&k);
            }
        }
        self.map.insert(key, (value, self.tick));
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.map.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evicts_the_least_recently_used() {
        let mut l = Lru::new(2);
        l.insert("a".into(), 1);
        l.insert("b".into(), 2);
        *l.get_mut("a").unwrap() += 10; // a is now the most recent
        l.insert("c".into(), 3);
        assert_eq!(l.len(), 2);
        assert!(l.get_mut("b").is_none());
        assert_eq!(l.get_mut("a").copied(), Some(11));
        assert_eq!(*l.get_or_insert_with("c", || 99), 3);
    }
}
