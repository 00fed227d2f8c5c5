//! Where a watch-list's initial events collect until the end bookmark: the last state of each
//! key (client-go's temporary `Store`).
//!
//! The initial events are `ADDED`s, one per object (the server sends what it holds, then the
//! bookmark), so they are kept in arrival order with the keys the FIFO takes them by, and
//! nothing is hashed: a keyed map written per event, on the reflector's one task, made a large
//! watch-list sync measurably slower. The first event of another kind (an update, a delete, a
//! replace) indexes what is there by key, an `ADDED` again for a key dropping its earlier one,
//! and from then on every event goes through that index. Two `ADDED`s of one key before any
//! other event (which a server does not send) reach the FIFO as a list holding that key twice
//! would.

use std::collections::HashMap;
use std::sync::Arc;

use kcache_core::{Error, Object, ObjectKey, ReflectorStore};
use parking_lot::Mutex;

pub(crate) struct TemporaryStore<K> {
    inner: Mutex<Inner<K>>,
}

struct Inner<K> {
    /// Objects in arrival order; `None` where one was deleted or added again later.
    items: Vec<Option<(ObjectKey, Arc<K>)>>,
    /// Each key's place in `items`, from the first event that is not an `ADDED`. aHash: the
    /// keys come from the server, but the map lives for one watch-list.
    index: Option<HashMap<ObjectKey, usize, ahash::RandomState>>,
}

impl<K> TemporaryStore<K> {
    pub(crate) fn new() -> Self {
        TemporaryStore {
            inner: Mutex::new(Inner {
                items: Vec::new(),
                index: None,
            }),
        }
    }

    /// The last state of each key, in arrival order, with its key (collected in place, at its
    /// length: no second list of every object at the end of a large watch-list).
    pub(crate) fn into_items(self) -> Vec<(ObjectKey, Arc<K>)> {
        let mut items = self.inner.into_inner().items;
        items.retain(Option::is_some);
        items.shrink_to_fit();
        // `map` over a `Vec`'s own iterator, to an item of the same size, reuses its buffer.
        items
            .into_iter()
            .map(|kept| kept.expect("retained"))
            .collect()
    }
}

impl<K> Inner<K> {
    /// The index, built from the items on first use.
    fn index(&mut self) -> &mut HashMap<ObjectKey, usize, ahash::RandomState> {
        let items = &mut self.items;
        self.index.get_or_insert_with(|| {
            let mut index = HashMap::with_capacity_and_hasher(items.len(), Default::default());
            for at in 0..items.len() {
                let Some((key, _)) = &items[at] else { continue };
                if let Some(earlier) = index.insert(key.clone(), at) {
                    items[earlier] = None;
                }
            }
            index
        })
    }

    /// Sets `key`'s state to `obj`.
    fn upsert(&mut self, key: ObjectKey, obj: Arc<K>) {
        let len = self.items.len();
        // One hash of the key: its entry, filled in if it is new.
        let at = *self.index().entry(key.clone()).or_insert(len);
        if at == len {
            self.items.push(Some((key, obj)));
        } else {
            self.items[at] = Some((key, obj));
        }
    }
}

impl<K: Object> ReflectorStore<K> for TemporaryStore<K> {
    fn add(&self, obj: Arc<K>) -> Result<(), Error> {
        let key = ObjectKey::of(&*obj);
        let mut inner = self.inner.lock();
        match inner.index {
            None => inner.items.push(Some((key, obj))),
            Some(_) => inner.upsert(key, obj),
        }
        Ok(())
    }
    fn update(&self, obj: Arc<K>) -> Result<(), Error> {
        self.inner.lock().upsert(ObjectKey::of(&*obj), obj);
        Ok(())
    }
    fn delete(&self, obj: Arc<K>) -> Result<(), Error> {
        let mut inner = self.inner.lock();
        if let Some(at) = inner.index().remove(&ObjectKey::of(&*obj)) {
            inner.items[at] = None;
        }
        Ok(())
    }
    fn replace(&self, items: Vec<Arc<K>>, _resource_version: &str) -> Result<(), Error> {
        let mut inner = self.inner.lock();
        inner.items.clear();
        inner.index = None;
        for obj in items {
            inner.upsert(ObjectKey::of(&*obj), obj);
        }
        Ok(())
    }
    fn resync(&self) -> Result<(), Error> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kcache_core::DynamicObject;

    fn obj(name: &str, rv: &str) -> Arc<DynamicObject> {
        let meta = serde_json::json!({"name": name, "namespace": "ns", "resourceVersion": rv});
        Arc::new(serde_json::from_value(serde_json::json!({ "metadata": meta })).unwrap())
    }

    /// `key@resourceVersion` of each item handed over, in order.
    fn state(store: TemporaryStore<DynamicObject>) -> Vec<String> {
        let items = store.into_items().into_iter();
        items
            .map(|(key, o)| format!("{key}@{}", o.resource_version().unwrap()))
            .collect()
    }

    #[test]
    fn adds_keep_their_order_and_keys() {
        let store = TemporaryStore::new();
        for (name, rv) in [("b", "1"), ("a", "2"), ("c", "3")] {
            store.add(obj(name, rv)).unwrap();
        }
        assert_eq!(state(store), ["ns/b@1", "ns/a@2", "ns/c@3"]);
    }

    #[test]
    fn other_events_keep_the_last_state_of_each_key() {
        let store = TemporaryStore::new();
        store.add(obj("a", "1")).unwrap();
        store.add(obj("b", "2")).unwrap();
        store.add(obj("a", "3")).unwrap(); // before any index: both kept, until the next line
        store.update(obj("b", "4")).unwrap();
        store.delete(obj("c", "5")).unwrap(); // unknown: nothing
        store.add(obj("c", "6")).unwrap();
        store.add(obj("c", "7")).unwrap();
        store.delete(obj("b", "8")).unwrap();
        store.add(obj("d", "9")).unwrap();
        assert_eq!(state(store), ["ns/a@3", "ns/c@7", "ns/d@9"]);
    }

    #[test]
    fn a_replace_starts_over() {
        let store = TemporaryStore::new();
        store.add(obj("a", "1")).unwrap();
        store.delete(obj("a", "2")).unwrap();
        store
            .replace(vec![obj("x", "3"), obj("y", "4"), obj("x", "5")], "5")
            .unwrap();
        store.add(obj("z", "6")).unwrap();
        assert_eq!(state(store), ["ns/x@5", "ns/y@4", "ns/z@6"]);
    }
}
