//! Typed copies of the objects being delivered, shared by a compact informer's typed handlers:
//! the first handler to reach a notification decodes `K` from the shared tree, the others take
//! the same `Arc<K>`, so an event costs one decode, not one per handler.
//!
//! A copy is kept until every typed handler has taken it, or until [`RECENT`] newer copies have
//! been made (a handler that lags further, or skips the object — a filter, a resync not meant for
//! it — decodes its own): at most [`RECENT`] typed objects are pinned at any time. With one
//! handler nothing is kept.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Weak};

use kcache_compact::Compact;
use parking_lot::Mutex;
use serde::de::DeserializeOwned;

/// The most typed copies kept (a few batches of the pop loop).
const RECENT: usize = 2048;

/// The shared typed copies of one informer.
pub(crate) struct TypedCopies<K> {
    handlers: AtomicUsize,
    recent: Mutex<Recent<K>>,
}

struct Recent<K> {
    /// By the address of the `Compact<K>`; its `Weak` keeps the address from being reused.
    slots: HashMap<usize, Slot<K>>,
    /// Insertion order, for eviction: (address, generation).
    order: VecDeque<(usize, u64)>,
    generation: u64,
}

struct Slot<K> {
    _source: Weak<Compact<K>>,
    typed: Arc<K>,
    /// Handlers yet to take it.
    left: usize,
    generation: u64,
}

impl<K: DeserializeOwned + Send + Sync + 'static> TypedCopies<K> {
    pub(crate) fn new() -> Self {
        TypedCopies {
            handlers: AtomicUsize::new(0),
            recent: Mutex::new(Recent {
                slots: HashMap::new(),
                order: VecDeque::new(),
                generation: 0,
            }),
        }
    }

    pub(crate) fn handler_added(&self) {
        self.handlers.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn handler_removed(&self) {
        self.handlers.fetch_sub(1, Ordering::Relaxed);
    }

    /// The typed copy of `obj` (shared with the other handlers); `None`, logged, only if `K`'s
    /// decoding is not deterministic.
    pub(crate) fn get(&self, obj: &Arc<Compact<K>>) -> Option<Arc<K>> {
        let handlers = self.handlers.load(Ordering::Relaxed);
        if handlers <= 1 {
            return typed(obj);
        }
        let addr = Arc::as_ptr(obj) as usize;
        if let Some(hit) = self.take(addr) {
            return Some(hit);
        }
        let made = typed(obj)?;
        let mut recent = self.recent.lock();
        if let Some(raced) = recent.slots.get(&addr) {
            // Another handler decoded it meanwhile: share theirs.
            let shared = raced.typed.clone();
            drop(recent);
            return self.take(addr).or(Some(shared));
        }
        recent.generation += 1;
        let generation = recent.generation;
        recent.slots.insert(
            addr,
            Slot {
                _source: Arc::downgrade(obj),
                typed: made.clone(),
                left: handlers - 1,
                generation,
            },
        );
        recent.order.push_back((addr, generation));
        while recent.order.len() > RECENT {
            let Some((old, generation)) = recent.order.pop_front() else {
                break;
            };
            if recent
                .slots
                .get(&old)
                .is_some_and(|s| s.generation == generation)
            {
                recent.slots.remove(&old);
            }
        }
        Some(made)
    }

    /// Takes a kept copy, dropping it when the last handler has taken it.
    fn take(&self, addr: usize) -> Option<Arc<K>> {
        let mut recent = self.recent.lock();
        let slot = recent.slots.get_mut(&addr)?;
        let typed = slot.typed.clone();
        slot.left = slot.left.saturating_sub(1);
        if slot.left == 0 {
            recent.slots.remove(&addr);
        }
        Some(typed)
    }
}

/// A fresh typed copy of a cached object; `None` (logged) only if `K`'s decoding is not
/// deterministic, as every `Compact<K>` was checked to decode when it was built.
pub(crate) fn typed<K: DeserializeOwned>(obj: &Compact<K>) -> Option<Arc<K>> {
    match obj.to_typed() {
        Ok(k) => Some(Arc::new(k)),
        Err(e) => {
            tracing::error!("cached object does not decode any more: {e}");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Deserialize, Debug, PartialEq)]
    struct Thing {
        metadata: Meta,
    }

    #[derive(serde::Deserialize, Debug, PartialEq)]
    struct Meta {
        name: String,
    }

    fn compact(name: &str) -> Arc<Compact<Thing>> {
        let json = serde_json::json!({"metadata": {"name": name}});
        Arc::new(serde_json::from_value(json).unwrap())
    }

    #[test]
    fn handlers_share_one_copy_which_is_dropped_after_the_last() {
        let copies = TypedCopies::<Thing>::new();
        for _ in 0..3 {
            copies.handler_added();
        }
        let obj = compact("a");
        let first = copies.get(&obj).unwrap();
        let second = copies.get(&obj).unwrap();
        assert!(Arc::ptr_eq(&first, &second));
        let third = copies.get(&obj).unwrap();
        assert!(Arc::ptr_eq(&first, &third));
        assert!(copies.recent.lock().slots.is_empty());
        // A fourth read (a late handler) decodes its own.
        assert!(!Arc::ptr_eq(&first, &copies.get(&obj).unwrap()));
    }

    #[test]
    fn at_most_recent_copies_are_kept_and_one_handler_keeps_none() {
        let copies = TypedCopies::<Thing>::new();
        copies.handler_added();
        let obj = compact("solo");
        let a = copies.get(&obj).unwrap();
        assert!(!Arc::ptr_eq(&a, &copies.get(&obj).unwrap()));
        assert!(copies.recent.lock().slots.is_empty());

        copies.handler_added();
        let objs: Vec<_> = (0..RECENT + 10)
            .map(|i| compact(&format!("o{i}")))
            .collect();
        for o in &objs {
            assert_eq!(
                copies.get(o).unwrap().metadata.name,
                o.object().to_json()["metadata"]["name"]
            );
        }
        let recent = copies.recent.lock();
        assert_eq!(recent.slots.len(), RECENT);
        assert!(recent.order.len() <= RECENT);
    }
}
