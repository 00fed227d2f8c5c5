//! Which of a shard's objects it is acting on right now — a reconcile or a drain's
//! acknowledgement — so a drain seen by the informer's event handler is acknowledged at once when
//! the object is idle, and right after the running reconcile when it is not, never during one.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use kcache_core::{ApiResource, Object, Resource};
use parking_lot::Mutex;

/// What a drain's acknowledgement writes to: the object's version the shard saw drained.
#[derive(Debug, Clone)]
pub(crate) struct DrainAck {
    pub resource: ApiResource,
    pub namespace: Option<String>,
    pub name: String,
    pub resource_version: Option<String>,
}

impl DrainAck {
    pub(crate) fn of<K: Object + Resource>(obj: &K) -> Self {
        DrainAck {
            resource: K::api_resource(),
            namespace: obj.namespace().map(str::to_string),
            name: obj.name().to_string(),
            resource_version: obj.resource_version().map(str::to_string),
        }
    }
}

/// The key of `obj` among every kind a shard serves: `group/Kind/namespace/name`.
pub(crate) fn busy_key<K: Object + Resource>(obj: &K) -> String {
    format!(
        "{}/{}/{}/{}",
        K::GROUP,
        K::KIND,
        obj.namespace().unwrap_or_default(),
        obj.name()
    )
}

#[derive(Debug, Default)]
struct State {
    busy: HashSet<String>,
    /// Drains seen while their object was busy, acknowledged when it is done.
    pending: HashMap<String, DrainAck>,
    /// Objects whose drain this term acknowledged and that were not assigned to it again since:
    /// a cache that lags the handler's events may still hand one out as assigned and undrained.
    released: HashSet<String>,
}

/// The objects a shard is acting on, shared by its reconciler wrapper and its drain handler.
#[derive(Debug, Default)]
pub(crate) struct Drains {
    state: Mutex<State>,
}

impl Drains {
    /// Marks `key` busy for a reconcile; `None` when it already is (its drain is being
    /// acknowledged) or the object was let go.
    pub(crate) fn begin(self: &Arc<Self>, key: String) -> Option<Busy> {
        let mut state = self.state.lock();
        if state.released.contains(&key) || !state.busy.insert(key.clone()) {
            return None;
        }
        Some(Busy {
            drains: self.clone(),
            key,
            released: false,
        })
    }

    /// A drain seen by the event handler: marks `key` busy to acknowledge it now, or, when the
    /// object is busy, keeps `ack` for when it is done (`None`).
    pub(crate) fn drain_seen(self: &Arc<Self>, key: String, ack: DrainAck) -> Option<Busy> {
        let mut state = self.state.lock();
        if state.busy.contains(&key) {
            state.pending.insert(key, ack);
            return None;
        }
        state.busy.insert(key.clone());
        Some(Busy {
            drains: self.clone(),
            key,
            released: false,
        })
    }
}

impl Drains {
    /// The drain of `key` was acknowledged: no reconcile of it runs until it is assigned again.
    pub(crate) fn let_go(&self, key: &str) {
        self.state.lock().released.insert(key.to_string());
    }

    /// `key` is assigned to this shard and not draining (again).
    pub(crate) fn assigned(&self, key: &str) {
        let mut state = self.state.lock();
        if !state.released.is_empty() {
            state.released.remove(key);
        }
    }
}

/// An object marked busy; dropping it (a cancelled reconcile) releases it.
pub(crate) struct Busy {
    drains: Arc<Drains>,
    key: String,
    released: bool,
}

impl Busy {
    /// The object's key.
    pub(crate) fn key(&self) -> &str {
        &self.key
    }

    /// The drain seen while the object was busy, to acknowledge before it is released; `None`:
    /// there is none and the object is released (in one step, so no drain seen in between is
    /// lost).
    pub(crate) fn next_or_release(&mut self) -> Option<DrainAck> {
        let mut state = self.drains.state.lock();
        if let Some(ack) = state.pending.remove(&self.key) {
            return Some(ack);
        }
        state.busy.remove(&self.key);
        self.released = true;
        None
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        if !self.released {
            let mut state = self.drains.state.lock();
            state.busy.remove(&self.key);
            state.pending.remove(&self.key);
        }
    }
}
