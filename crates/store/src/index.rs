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

/// One set: the objects indexed under one value.
struct Set<K> {
    /// The value, shared with the index's look-up table.
    value: Arc<str>,
    members: Members<K>,
}

/// One index (client-go's `Index`, a value → set-of-keys map). Each set has a small id, which is
/// what a stored object keeps of its values: an update reaches its sets without hashing a
/// value, and compares its new values with the sets' own strings. A set whose last member
/// leaves is removed at once (its id is reused), so every value present has at least one
/// member.
pub(crate) struct Index<K> {
    ids: HashMap<Arc<str>, u32, RandomState>,
    /// By id; `None` for a free id.
    sets: Vec<Option<Set<K>>>,
    free: Vec<u32>,
    hasher: RandomState,
}

impl<K> Index<K> {
    pub(crate) fn new(hasher: RandomState) -> Self {
        Index {
            ids: HashMap::with_hasher(hasher.clone()),
            sets: Vec::new(),
            free: Vec::new(),
            hasher,
        }
    }

    fn set(&self, id: u32) -> Option<&Set<K>> {
        self.sets.get(id as usize).and_then(Option::as_ref)
    }

    fn set_mut(&mut self, id: u32) -> Option<&mut Set<K>> {
        self.sets.get_mut(id as usize).and_then(Option::as_mut)
    }

    /// The id of `value`'s set, creating the set if needed.
    fn id_of(&mut self, value: &str) -> u32 {
        if let Some(&id) = self.ids.get(value) {
            return id;
        }
        let value: Arc<str> = Arc::from(value);
        let set = Set {
            value: value.clone(),
            members: Members::with_hasher(self.hasher.clone()),
        };
        let id = match self.free.pop() {
            Some(id) => {
                self.sets[id as usize] = Some(set);
                id
            }
            None => {
                self.sets.push(Some(set));
                (self.sets.len() - 1) as u32
            }
        };
        self.ids.insert(value, id);
        id
    }

    /// Adds `key` under each of `new`'s values and returns the stored form of those values.
    pub(crate) fn insert(
        &mut self,
        key: &ObjectKey,
        new: &IndexValues<'_>,
        obj: &Arc<K>,
    ) -> Values {
        if let Some(v) = single(new) {
            return Values::One(self.join(v, MemberKey(key.clone()), obj));
        }
        let ids = new
            .iter()
            .map(|v| self.join(v, MemberKey(key.clone()), obj))
            .collect();
        Values::from_ids(ids)
    }

    /// Adds `key` with `obj` to the set of `value` (creating it); returns the set's id.
    fn join(&mut self, value: &str, key: MemberKey, obj: &Arc<K>) -> u32 {
        let id = self.id_of(value);
        if let Some(set) = self.set_mut(id) {
            set.members.insert(key, obj.clone());
        }
        id
    }

    /// Takes `key` out of set `id`, removing the set if it empties; returns the member key.
    fn take_member(&mut self, id: u32, key: &ObjectKey) -> Option<MemberKey> {
        let set = self.set_mut(id)?;
        let (member, _) = set.members.remove_entry(&addr_of(key))?;
        if set.members.is_empty() {
            if let Some(set) = self.sets[id as usize].take() {
                self.ids.remove(&set.value);
            }
            self.free.push(id);
        }
        Some(member)
    }

    /// Removes `key` (the stored one) from each of `old`'s sets, dropping sets that become
    /// empty.
    pub(crate) fn remove(&mut self, key: &ObjectKey, old: &Values) {
        for &id in old.as_slice() {
            self.take_member(id, key);
        }
    }

    /// Whether `old` names exactly `new`'s values, in order.
    fn same(&self, old: &Values, new: &IndexValues<'_>) -> bool {
        let old = old.as_slice();
        old.len() == new.len()
            && old
                .iter()
                .zip(new.iter())
                .all(|(&id, v)| self.set(id).is_some_and(|s| &*s.value == v))
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
        if self.same(old, new) {
            if last {
                let addr = addr_of(key);
                for &id in old.as_slice() {
                    if let Some(handle) = self.set_mut(id).and_then(|s| s.members.get_mut(&addr)) {
                        *handle = obj.clone();
                    }
                }
            }
            return;
        }
        if let (Values::One(from), Some(to)) = (&*old, single(new)) {
            // The usual move between two sets: the member key goes along.
            let member = self
                .take_member(*from, key)
                .unwrap_or_else(|| MemberKey(key.clone()));
            *old = Values::One(self.join(to, member, obj));
            return;
        }
        self.remove(key, old);
        *old = self.insert(key, new, obj);
    }

    /// The objects indexed under `value`.
    pub(crate) fn members(&self, value: &str) -> Option<&Members<K>> {
        let id = *self.ids.get(value)?;
        self.set(id).map(|s| &s.members)
    }

    /// Every value with at least one member.
    pub(crate) fn values(&self) -> impl Iterator<Item = &Arc<str>> {
        self.ids.keys()
    }
}

/// The only value of `values`, if it has exactly one.
fn single<'v>(values: &'v IndexValues<'_>) -> Option<&'v str> {
    let mut it = values.iter();
    match (it.next(), it.next()) {
        (Some(v), None) => Some(v),
        _ => None,
    }
}
