//! One index: value → the keys of the objects indexed under it.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use ahash::RandomState;
use hashbrown::{hash_table, HashTable};
use kcache_core::ObjectKey;

use crate::values::{IndexValues, Values};

/// An object in a set: the very key the item map holds (never an equal copy), compared by the
/// address of its string, and the key's hash in the item map. A set probe, the rehash when a
/// set grows, and `by_index`'s look-up of the object by (hash, address) never read the key's
/// string — on a large store each such read is a cache miss.
///
/// Sets hold keys rather than object handles so an update that keeps an object's values (its
/// namespace, usually its labels) never probes a set.
#[derive(Clone)]
pub(crate) struct Member {
    pub(crate) key: ObjectKey,
    pub(crate) hash: u64,
}

impl Member {
    /// The member for a stored key and its hash in the item map.
    pub(crate) fn new(key: ObjectKey, hash: u64) -> Self {
        Member { key, hash }
    }

    /// Whether `key` is this member's key itself (not merely an equal one).
    pub(crate) fn is(&self, key: &ObjectKey) -> bool {
        std::ptr::eq(self.key.as_str().as_ptr(), key.as_str().as_ptr())
    }
}

/// The members of one index value. Tabled by the item map's hash of the key, which is already a
/// good hash: nothing is hashed again.
pub(crate) type Members = HashTable<Member>;

/// One set: the objects indexed under one value.
struct Set<K> {
    /// The value, shared with the index's look-up table.
    value: Arc<str>,
    members: Members,
    /// The members' objects, as the first `by_index` since the set last changed found them in
    /// the item map; later ones copy these handles instead of looking every member up again.
    /// Any change to a member or to its object drops them (so they never keep a replaced
    /// object alive).
    objects: OnceLock<Objects<K>>,
}

/// A set's objects, kept between reads.
pub(crate) type Objects<K> = Box<[Arc<K>]>;

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
    /// Kept objects the last writes dropped, for the writer to release after unlocking.
    stale: Vec<Objects<K>>,
}

impl<K> Index<K> {
    pub(crate) fn new(hasher: RandomState) -> Self {
        Index {
            ids: HashMap::with_hasher(hasher),
            sets: Vec::new(),
            free: Vec::new(),
            stale: Vec::new(),
        }
    }

    fn set(&self, id: u32) -> Option<&Set<K>> {
        self.sets.get(id as usize).and_then(Option::as_ref)
    }

    fn set_mut(&mut self, id: u32) -> Option<&mut Set<K>> {
        self.sets.get_mut(id as usize).and_then(Option::as_mut)
    }

    /// The values `stored` names (an object's sets here), as owned strings.
    pub(crate) fn values_of(&self, stored: &Values) -> IndexValues<'static> {
        stored
            .as_slice()
            .iter()
            .filter_map(|&id| self.set(id))
            .map(|set| set.value.to_string())
            .collect()
    }

    /// Set `id` or its objects changed: the objects it kept for reads go to `stale`.
    fn changed(&mut self, id: u32) {
        let kept = self.set_mut(id).and_then(|set| set.objects.take());
        self.stale.extend(kept);
    }

    /// The id of `value`'s set, creating the set if needed.
    fn id_of(&mut self, value: &str) -> u32 {
        if let Some(&id) = self.ids.get(value) {
            return id;
        }
        let value: Arc<str> = Arc::from(value);
        let set = Set {
            value: value.clone(),
            members: Members::new(),
            objects: OnceLock::new(),
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

    /// Adds `member` under each of `new`'s values and returns the stored form of those values.
    pub(crate) fn insert(&mut self, member: &Member, new: &IndexValues<'_>) -> Values {
        debug_assert!(!new.is_kept(), "a new object has no values to keep");
        if let Some(v) = single(new) {
            return Values::One(self.join(v, member.clone()));
        }
        let ids = new.iter().map(|v| self.join(v, member.clone())).collect();
        Values::from_ids(ids)
    }

    /// Adds `member` to the set of `value` (creating it); returns the set's id.
    fn join(&mut self, value: &str, member: Member) -> u32 {
        let id = self.id_of(value);
        self.changed(id);
        if let Some(set) = self.set_mut(id) {
            // A value listed twice joins once.
            if let hash_table::Entry::Vacant(slot) =
                set.members
                    .entry(member.hash, |m| m.is(&member.key), |m| m.hash)
            {
                slot.insert(member);
            }
        }
        id
    }

    /// Takes `key` (hashed `hash`) out of set `id`, removing the set if it empties; returns the
    /// member.
    fn take_member(&mut self, id: u32, key: &ObjectKey, hash: u64) -> Option<Member> {
        let set = self.set_mut(id)?;
        let (member, _) = set.members.find_entry(hash, |m| m.is(key)).ok()?.remove();
        let emptied = set.members.is_empty();
        self.changed(id);
        if emptied {
            if let Some(set) = self.sets[id as usize].take() {
                self.ids.remove(&set.value);
            }
            self.free.push(id);
        }
        Some(member)
    }

    /// Removes `member` from each of `old`'s sets, dropping sets that become empty.
    pub(crate) fn remove(&mut self, member: &Member, old: &Values) {
        for &id in old.as_slice() {
            self.take_member(id, &member.key, member.hash);
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

    /// Moves the object with stored key `key` (hashed `hash`) from `old`'s values to `new`'s.
    /// When they are the same (the usual update) or `new` is [`IndexValues::kept`] the sets
    /// stay as they are; only the objects they keep for reads are dropped.
    pub(crate) fn update(
        &mut self,
        key: &ObjectKey,
        hash: u64,
        old: &mut Values,
        new: &IndexValues<'_>,
    ) {
        if new.is_kept() || self.same(old, new) {
            for &id in old.as_slice() {
                self.changed(id);
            }
            return;
        }
        let member = || Member::new(key.clone(), hash);
        if let (Values::One(from), Some(to)) = (&*old, single(new)) {
            // The usual move between two sets: the member goes along.
            let moved = self.take_member(*from, key, hash).unwrap_or_else(member);
            *old = Values::One(self.join(to, moved));
            return;
        }
        let member = member();
        self.remove(&member, old);
        *old = self.insert(&member, new);
    }

    /// The objects indexed under `value`: the kept ones, or (the first read since the set
    /// changed) each member's object as `object_of` finds it, kept for the next read.
    pub(crate) fn objects(
        &self,
        value: &str,
        object_of: impl Fn(&Member) -> Option<Arc<K>>,
    ) -> Option<&[Arc<K>]> {
        let set = self.set(*self.ids.get(value)?)?;
        Some(
            set.objects
                .get_or_init(|| set.members.iter().filter_map(object_of).collect()),
        )
    }

    /// The kept objects that writes since the last call dropped.
    pub(crate) fn take_stale(&mut self) -> Vec<Objects<K>> {
        std::mem::take(&mut self.stale)
    }

    /// The keys of the objects indexed under `value`.
    pub(crate) fn members(&self, value: &str) -> Option<&Members> {
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
