//! One index: value → the objects indexed under it.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use ahash::RandomState;
use hashbrown::Equivalent;
use kcache_core::ObjectKey;

use crate::values::{IndexValues, Values};

/// The objects of one index value, by key. It holds the object handles themselves, so `by_index`
/// never looks anything up in the item map.
pub(crate) type Members<K> = hashbrown::HashMap<MemberKey, Arc<K>, RandomState>;

/// A member's key: the very key the item map holds (never an equal copy), so it is hashed and
/// compared by the address of its string. A probe, and the rehash when a set grows, never read
/// the string itself — on a large store that read is a cache miss per member.
#[derive(Clone)]
pub(crate) struct MemberKey(pub(crate) ObjectKey);

impl MemberKey {
    fn addr(&self) -> usize {
        addr_of(&self.0).0
    }
}

/// Looks a member up by a borrowed stored key, without cloning it.
#[derive(Hash)]
struct KeyAddr(usize);

fn addr_of(key: &ObjectKey) -> KeyAddr {
    KeyAddr(key.as_str().as_ptr() as usize)
}

impl Equivalent<MemberKey> for KeyAddr {
    fn equivalent(&self, key: &MemberKey) -> bool {
        self.0 == key.addr()
    }
}

impl PartialEq for MemberKey {
    fn eq(&self, other: &Self) -> bool {
        self.addr() == other.addr()
    }
}

impl Eq for MemberKey {}

impl Hash for MemberKey {
    fn hash<H: Hasher>(&self, state: &mut H) {
        KeyAddr(self.addr()).hash(state);
    }
}

struct Bucket<K> {
    /// The interned value, shared with every object's stored [`Values`].
    value: Arc<str>,
    members: Members<K>,
}

/// One index (client-go's `Index`, a value → set-of-keys map). A value whose set empties is
/// removed at once, so every value present has at least one member.
pub(crate) struct Index<K> {
    buckets: HashMap<Arc<str>, Bucket<K>, RandomState>,
    hasher: RandomState,
}

impl<K> Index<K> {
    pub(crate) fn new(hasher: RandomState) -> Self {
        Index {
            buckets: HashMap::with_hasher(hasher.clone()),
            hasher,
        }
    }

    /// Adds `key` under each of `new`'s values and returns the stored form of those values.
    pub(crate) fn insert(
        &mut self,
        key: &ObjectKey,
        new: &IndexValues<'_>,
        obj: &Arc<K>,
    ) -> Values {
        if new.len() == 1 {
            let v = new.iter().next().unwrap_or_default();
            return Values::One(self.add_member(v, key, obj));
        }
        Values::from_interned(new.iter().map(|v| self.add_member(v, key, obj)).collect())
    }

    /// Adds `key` to the set of `value` (creating it) and returns the interned value.
    fn add_member(&mut self, value: &str, key: &ObjectKey, obj: &Arc<K>) -> Arc<str> {
        let bucket = match self.buckets.get_mut(value) {
            Some(b) => b,
            None => {
                let interned: Arc<str> = Arc::from(value);
                let bucket = Bucket {
                    value: interned.clone(),
                    members: Members::with_hasher(self.hasher.clone()),
                };
                self.buckets.entry(interned).or_insert(bucket)
            }
        };
        bucket.members.insert(MemberKey(key.clone()), obj.clone());
        bucket.value.clone()
    }

    /// Removes `key` (the stored one) from each of `old`'s values, dropping sets that become
    /// empty.
    pub(crate) fn remove(&mut self, key: &ObjectKey, old: &Values) {
        let key = addr_of(key);
        for v in old.as_slice() {
            if let Some(b) = self.buckets.get_mut(v) {
                b.members.remove(&key);
                if b.members.is_empty() {
                    self.buckets.remove(v);
                }
            }
        }
    }

    /// Moves `key` from `old`'s values to `new`'s. When they are the same (the usual update) only
    /// the object handle in each set is replaced — and only if `last`: within a run of writes
    /// to one key under one lock hold, nobody can see the handles of the writes in between.
    pub(crate) fn update(
        &mut self,
        key: &ObjectKey,
        old: &mut Values,
        new: &IndexValues<'_>,
        obj: &Arc<K>,
        last: bool,
    ) {
        if !old.same_as(new) {
            self.remove(key, old);
            *old = self.insert(key, new, obj);
        } else if last {
            let key = addr_of(key);
            for v in old.as_slice() {
                if let Some(handle) = self
                    .buckets
                    .get_mut(v)
                    .and_then(|b| b.members.get_mut(&key))
                {
                    *handle = obj.clone();
                }
            }
        }
    }

    /// The objects indexed under `value`.
    pub(crate) fn members(&self, value: &str) -> Option<&Members<K>> {
        self.buckets.get(value).map(|b| &b.members)
    }

    /// Every value with at least one member.
    pub(crate) fn values(&self) -> impl Iterator<Item = &Arc<str>> {
        self.buckets.keys()
    }
}
