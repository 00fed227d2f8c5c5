//! The item map: key → object, in copy-on-write shards so a snapshot costs one reference count.

use std::sync::Arc;

use ahash::RandomState;
use hashbrown::hash_map::EntryRef;
use hashbrown::HashMap;
use kcache_core::ObjectKey;

use crate::values::Values;

/// How many shards the item map has. A snapshot shares all of them; after it, the first write to
/// each shard copies that shard (1/256 of the items), so writers pay for a snapshot a little at a
/// time instead of a reader paying for a full copy under the lock.
const SHARDS: usize = 256;

/// One stored object and, per index, the values it is indexed under (so updates and deletes move
/// exactly what was added, without calling the index function on the old object).
pub(crate) struct Slot<K> {
    pub(crate) obj: Arc<K>,
    pub(crate) values: Box<[Values]>,
}

impl<K> Clone for Slot<K> {
    fn clone(&self) -> Self {
        Slot {
            obj: self.obj.clone(),
            values: self.values.clone(),
        }
    }
}

type Shard<K> = HashMap<ObjectKey, Slot<K>, RandomState>;

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

impl<K> Items<K> {
    pub(crate) fn new(hasher: RandomState) -> Self {
        let empty: Arc<Shard<K>> = Arc::new(HashMap::with_hasher(hasher.clone()));
        Items {
            shards: Arc::new(vec![empty; SHARDS]),
            len: 0,
            hasher,
        }
    }

    /// Bits 32.. of the key's hash pick the shard; the shard's own table uses the low bits and the
    /// top seven, so the two never correlate.
    fn shard_of(&self, key: &str) -> usize {
        (self.hasher.hash_one(key) >> 32) as usize % SHARDS
    }

    fn shard_mut(&mut self, key: &str) -> &mut Shard<K> {
        let i = self.shard_of(key);
        Arc::make_mut(&mut Arc::make_mut(&mut self.shards)[i])
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    pub(crate) fn get(&self, key: &str) -> Option<&Slot<K>> {
        self.shards[self.shard_of(key)].get(key)
    }

    /// The entry for `key` (looked up by string: an update needs no owned key), and the length
    /// to bump when the caller fills a vacant one.
    pub(crate) fn entry<'a, 'k>(
        &'a mut self,
        key: &'k str,
    ) -> (
        EntryRef<'a, 'k, ObjectKey, str, Slot<K>, RandomState>,
        &'a mut usize,
    ) {
        let i = self.shard_of(key);
        let shard = Arc::make_mut(&mut Arc::make_mut(&mut self.shards)[i]);
        (shard.entry_ref(key), &mut self.len)
    }

    /// Removes `key`, returning the stored key (whose string the index sets share) and slot.
    pub(crate) fn remove(&mut self, key: &str) -> Option<(ObjectKey, Slot<K>)> {
        let old = self.shard_mut(key).remove_entry(key);
        if old.is_some() {
            self.len -= 1;
        }
        old
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = (&ObjectKey, &Slot<K>)> {
        self.shards.iter().flat_map(|s| s.iter())
    }

    pub(crate) fn iter_mut(&mut self) -> impl Iterator<Item = (&ObjectKey, &mut Slot<K>)> {
        Arc::make_mut(&mut self.shards)
            .iter_mut()
            .flat_map(|s| Arc::make_mut(s).iter_mut())
    }
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
