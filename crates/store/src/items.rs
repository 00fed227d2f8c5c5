//! The item map: key → object, in copy-on-write shards so a snapshot costs one reference count.

use std::sync::Arc;

use ahash::RandomState;
use hashbrown::hash_table;
use hashbrown::HashTable;
use kcache_core::ObjectKey;
use smallvec::SmallVec;

use crate::index::Member;
use crate::values::Values;

/// How many shards the item map has. A snapshot shares all of them; after it, the first write to
/// each shard copies that shard (1/256 of the items), so writers pay for a snapshot a little at a
/// time instead of a reader paying for a full copy under the lock.
const SHARDS: usize = 256;

/// Per index, the sets of one object; inline for up to two indexes.
pub(crate) type SlotValues = SmallVec<[Values; 2]>;

/// One stored object and, per index, the sets it is in (so updates and deletes move exactly
/// what was added, without calling the index function on the old object).
pub(crate) struct Slot<K> {
    pub(crate) obj: Arc<K>,
    pub(crate) values: SlotValues,
}

impl<K> Clone for Slot<K> {
    fn clone(&self) -> Self {
        Slot {
            obj: self.obj.clone(),
            values: self.values.clone(),
        }
    }
}

/// One item: its key's hash is kept so growing a shard never reads the key's string again.
struct Entry<K> {
    hash: u64,
    key: ObjectKey,
    slot: Slot<K>,
}

impl<K> Clone for Entry<K> {
    fn clone(&self) -> Self {
        Entry {
            hash: self.hash,
            key: self.key.clone(),
            slot: self.slot.clone(),
        }
    }
}

type Shard<K> = HashTable<Entry<K>>;

/// The item map. Cloning it (a snapshot) is O(1).
pub(crate) struct Items<K> {
    shards: Arc<Vec<Arc<Shard<K>>>>,
    len: usize,
    hasher: RandomState,
}

impl<K> Clone for Items<K> {
    fn clone(&self) -> Self {
        Items {
            shards: self.shards.clone(),
            len: self.len,
            hasher: self.hasher.clone(),
        }
    }
}

/// Where a key was found by [`Items::upsert_slot`].
pub(crate) struct Found<'a, K> {
    pub(crate) key: &'a ObjectKey,
    /// The key's hash here, which index sets keep with it.
    pub(crate) hash: u64,
    pub(crate) slot: &'a mut Slot<K>,
    /// Whether the slot was just made (the key was absent).
    pub(crate) inserted: bool,
}

impl<K> Items<K> {
    pub(crate) fn new(hasher: RandomState) -> Self {
        let empty: Arc<Shard<K>> = Arc::new(HashTable::new());
        Items {
            shards: Arc::new(vec![empty; SHARDS]),
            len: 0,
            hasher,
        }
    }

    /// One hash per operation: bits 32.. pick the shard, and the shard's table uses the low bits
    /// and the top seven of the same hash, so the two never correlate.
    fn locate(&self, key: &str) -> (usize, u64) {
        let hash = self.hasher.hash_one(key);
        (shard_of(hash), hash)
    }

    fn shard_mut(&mut self, i: usize) -> &mut Shard<K> {
        Arc::make_mut(&mut Arc::make_mut(&mut self.shards)[i])
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    pub(crate) fn get(&self, key: &str) -> Option<&Slot<K>> {
        let (i, hash) = self.locate(key);
        self.shards[i]
            .find(hash, is_key(hash, key))
            .map(|e| &e.slot)
    }

    /// The slot of an index set's member: found by its hash and the address of its key, so the
    /// key's string is never read.
    pub(crate) fn member_slot(&self, member: &Member) -> Option<&Slot<K>> {
        let hash = member.hash;
        self.shards[shard_of(hash)]
            .find(hash, |e| e.hash == hash && member.is(&e.key))
            .map(|e| &e.slot)
    }

    /// The slot of `key` with the stored key, after one look-up by string (an update needs no
    /// owned key); if absent, `make` builds the slot from the key `new_key` returns.
    pub(crate) fn upsert_slot(
        &mut self,
        key: &str,
        new_key: impl FnOnce() -> ObjectKey,
        make: impl FnOnce(&ObjectKey, u64) -> Slot<K>,
    ) -> Found<'_, K> {
        let (i, hash) = self.locate(key);
        let len = &mut self.len;
        let shard = Arc::make_mut(&mut Arc::make_mut(&mut self.shards)[i]);
        let (entry, inserted) = match shard.entry(hash, is_key(hash, key), |e| e.hash) {
            hash_table::Entry::Occupied(e) => (e.into_mut(), false),
            hash_table::Entry::Vacant(e) => {
                let key = new_key();
                let slot = make(&key, hash);
                *len += 1;
                (e.insert(Entry { hash, key, slot }).into_mut(), true)
            }
        };
        Found {
            key: &entry.key,
            hash,
            slot: &mut entry.slot,
            inserted,
        }
    }

    /// Removes `key`, returning it as the index sets hold it, and its slot.
    pub(crate) fn remove(&mut self, key: &str) -> Option<(Member, Slot<K>)> {
        let (i, hash) = self.locate(key);
        let found = self.shard_mut(i).find_entry(hash, is_key(hash, key)).ok()?;
        let (entry, _) = found.remove();
        self.len -= 1;
        Some((Member::new(entry.key, entry.hash), entry.slot))
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = (&ObjectKey, &Slot<K>)> {
        self.shards
            .iter()
            .flat_map(|s| s.iter().map(|e| (&e.key, &e.slot)))
    }

    /// Every key with its hash, and its slot.
    pub(crate) fn iter_mut(&mut self) -> impl Iterator<Item = (&ObjectKey, u64, &mut Slot<K>)> {
        Arc::make_mut(&mut self.shards).iter_mut().flat_map(|s| {
            Arc::make_mut(s)
                .iter_mut()
                .map(|e| (&e.key, e.hash, &mut e.slot))
        })
    }
}

/// Matches the entry of `key`, hashed `hash` (the stored hash is compared first: it is in the
/// entry, the key's string is behind a pointer).
fn is_key<K>(hash: u64, key: &str) -> impl Fn(&Entry<K>) -> bool + '_ {
    move |e| e.hash == hash && e.key.as_str() == key
}

/// The shard of a key hashed `hash`.
fn shard_of(hash: u64) -> usize {
    (hash >> 32) as usize % SHARDS
}

/// An immutable view of a store's items at one moment (see [`crate::Indexer::snapshot`]).
///
/// Taking it holds the store's read lock for a reference-count increment; iterating it holds no
/// lock at all, so a reader may walk a snapshot for as long as it likes while writers carry on.
pub struct Snapshot<K> {
    items: Items<K>,
}

impl<K> Clone for Snapshot<K> {
    fn clone(&self) -> Self {
        Snapshot {
            items: self.items.clone(),
        }
    }
}

impl<K> Snapshot<K> {
    pub(crate) fn new(items: Items<K>) -> Self {
        Snapshot { items }
    }

    /// How many objects.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.items.len() == 0
    }

    /// The object with this key.
    pub fn get(&self, key: &str) -> Option<&Arc<K>> {
        self.items.get(key).map(|s| &s.obj)
    }

    /// Every key and object, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (&ObjectKey, &Arc<K>)> {
        self.items.iter().map(|(k, s)| (k, &s.obj))
    }

    /// Every object, in no particular order.
    pub fn objects(&self) -> impl Iterator<Item = &Arc<K>> {
        self.items.iter().map(|(_, s)| &s.obj)
    }
}
