//! What other tasks can read while a reflector runs.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;

/// A cheap, cloneable view of a running reflector: its last synced resourceVersion and its
/// counters. Readable from any task while [`crate::Reflector::run`] runs.
#[derive(Debug, Clone)]
pub struct ReflectorHandle {
    shared: Arc<Shared>,
}

/// Counters for informer metrics, as of one moment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReflectorStats {
    /// List (or watch-list) passes started, the first one included.
    pub lists: u64,
    /// List passes started after the first: how often the reflector had to relist.
    pub relists: u64,
    /// Times the store was replaced with a complete list.
    pub syncs: u64,
    /// Watch requests sent (watch-list requests included).
    pub watches: u64,
    /// Watches re-established without a relist (after a clean end, a 429 or a refused
    /// connection).
    pub watch_restarts: u64,
}

#[derive(Debug, Default)]
pub(crate) struct Shared {
    name: String,
    rv: Mutex<ResourceVersionState>,
    lists: AtomicU64,
    syncs: AtomicU64,
    watches: AtomicU64,
    watch_restarts: AtomicU64,
}

#[derive(Debug, Default)]
struct ResourceVersionState {
    last_synced: String,
    /// The last synced resourceVersion was rejected as expired or too large: the next list and
    /// watch-list ask for "" (a consistent read) until one succeeds.
    unavailable: bool,
}

/// Which counter to bump.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Counter {
    List,
    Sync,
    Watch,
    WatchRestart,
}

impl Shared {
    pub(crate) fn new(name: String) -> Arc<Self> {
        Arc::new(Shared {
            name,
            ..Shared::default()
        })
    }

    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    pub(crate) fn bump(&self, counter: Counter) {
        let c = match counter {
            Counter::List => &self.lists,
            Counter::Sync => &self.syncs,
            Counter::Watch => &self.watches,
            Counter::WatchRestart => &self.watch_restarts,
        };
        c.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn last_sync_resource_version(&self) -> String {
        self.rv.lock().last_synced.clone()
    }

    /// Records a resourceVersion the store has reached; an empty one (an object or bookmark
    /// without a version) changes nothing.
    pub(crate) fn set_last_sync_resource_version(&self, rv: &str) {
        if !rv.is_empty() {
            rv.clone_into(&mut self.rv.lock().last_synced);
        }
    }

    pub(crate) fn set_unavailable(&self, unavailable: bool) {
        self.rv.lock().unavailable = unavailable;
    }

    /// The resourceVersion a list asks for (client-go's `relistResourceVersion`): "" after an
    /// expired/too-large error, "0" (the watch cache) before the first sync, else the last
    /// synced one — never "" merely because a watch expired (kubernetes#86483).
    pub(crate) fn relist_resource_version(&self) -> String {
        let rv = self.rv.lock();
        if rv.unavailable {
            String::new()
        } else if rv.last_synced.is_empty() {
            "0".to_string()
        } else {
            rv.last_synced.clone()
        }
    }

    /// The resourceVersion a watch-list asks for (client-go's `rewatchResourceVersion`).
    pub(crate) fn rewatch_resource_version(&self) -> String {
        let rv = self.rv.lock();
        if rv.unavailable {
            String::new()
        } else {
            rv.last_synced.clone()
        }
    }
}

impl ReflectorHandle {
    pub(crate) fn new(shared: Arc<Shared>) -> Self {
        ReflectorHandle { shared }
    }

    /// The reflector's name.
    pub fn name(&self) -> &str {
        self.shared.name()
    }

    /// The resourceVersion the store last reached ("" before the first sync) — client-go's
    /// `LastSyncResourceVersion`.
    pub fn last_sync_resource_version(&self) -> String {
        self.shared.last_sync_resource_version()
    }

    /// The counters as of now.
    pub fn stats(&self) -> ReflectorStats {
        let s = &self.shared;
        let lists = s.lists.load(Ordering::Relaxed);
        ReflectorStats {
            lists,
            relists: lists.saturating_sub(1),
            syncs: s.syncs.load(Ordering::Relaxed),
            watches: s.watches.load(Ordering::Relaxed),
            watch_restarts: s.watch_restarts.load(Ordering::Relaxed),
        }
    }
}
