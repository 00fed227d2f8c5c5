//! The replica's one informer over its ring's shard Leases. It serves three readers:
//!
//! - the sharder's passes read the Leases from its cache instead of listing them;
//! - its events record when each Lease was last seen changing, on this replica's clock, whether
//!   or not the replica is the sharder: a replica elected after the sharder died has then
//!   watched a dead shard's Lease since about its death, instead of starting the lease
//!   duration's wait at its election (a kill of the sharder's replica would otherwise cost two
//!   lease durations);
//! - it wakes the sharder when a Lease is added or deleted or its holder changes (a graceful stop
//!   empties it, a take-over or a return sets it). Renewals, which change only the renew time
//!   every retry period, wake nothing; a Lease that expires changes nothing on the server either,
//!   so the sharder's periodic pass still finds killed replicas. In range mode a change of a
//!   Lease's annotations (an assignment, an acknowledgement) wakes the sharder too;
//! - in range mode, each shard learns from it that an assignment changed
//!   ([`assignments`](LeaseInformer::assignments)) and reads its own Lease then.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use kcache_core::{DynamicObject, Object};
use kcache_informer::{
    FactoryOptions, ResourceEventHandlerFuncs, SharedIndexInformer, SharedInformerFactory,
};
use kcache_leaderelection::{leases, CancellationToken};
use kcache_transport::Client;
use parking_lot::Mutex;
use tokio::sync::{watch, Notify};
use tokio::time::Instant;

use crate::conventions::Ring;
use crate::membership::ShardState;

/// Each shard Lease's resourceVersion and when this replica first saw that version.
type Seen = HashMap<String, (String, Instant)>;

/// The ring's shard Leases as this replica watches them.
pub(crate) struct LeaseInformer {
    ring: Ring,
    factory: SharedInformerFactory,
    informer: SharedIndexInformer<DynamicObject>,
    seen: Arc<Mutex<Seen>>,
    changed: Arc<Notify>,
    assignments: Arc<watch::Sender<u64>>,
}

impl LeaseInformer {
    /// An informer over `ring`'s Leases (its Lease namespace, selected by its Lease label); it
    /// lists and watches once [`run`](Self::run) is called.
    pub(crate) fn new(client: Client, ring: Ring) -> Self {
        let factory = SharedInformerFactory::new(
            client,
            FactoryOptions {
                namespace: Some(ring.lease_namespace().to_string()),
                label_selector: Some(ring.lease_selector()),
                ..FactoryOptions::default()
            },
        );
        let informer = factory.dynamic_informer(&leases());
        let seen = Arc::new(Mutex::new(Seen::new()));
        let changed = Arc::new(Notify::new());
        let (on_add, on_update, on_delete) = (seen.clone(), seen.clone(), seen.clone());
        let (added, updated, deleted) = (changed.clone(), changed.clone(), changed.clone());
        let assignments = Arc::new(watch::Sender::new(0u64));
        let assigned = assignments.clone();
        let handler = ResourceEventHandlerFuncs::new()
            .on_add(move |obj: &Arc<DynamicObject>, _| {
                observe(&on_add, obj);
                added.notify_one();
            })
            .on_update(move |old, new| {
                observe(&on_update, new);
                if holder(old) != holder(new) || old.annotations() != new.annotations() {
                    updated.notify_one();
                }
                if generation(old) != generation(new) {
                    assigned.send_modify(|n| *n += 1);
                }
            })
            .on_delete(move |gone| {
                on_delete.lock().remove(gone.key().name());
                deleted.notify_one();
            });
        // A fresh informer has not stopped, so this cannot fail; were it to, the sharder would
        // still pass every sync period.
        if let Err(e) = informer.add_event_handler(handler) {
            tracing::warn!(ring = %ring.name(), "watching the shard Leases: {e}");
        }
        LeaseInformer {
            ring,
            factory,
            informer,
            seen,
            changed,
            assignments,
        }
    }

    /// Lists and watches until `stop` fires, then waits for the informer to stop.
    pub(crate) async fn run(&self, stop: CancellationToken) {
        self.factory.start();
        stop.cancelled().await;
        self.factory.shutdown().await;
    }

    /// Waits until the cache holds the Leases' first list (false: the informer stopped first).
    pub(crate) async fn wait_for_sync(&self) -> bool {
        self.informer.wait_for_cache_sync().await
    }

    /// Every cached shard Lease of the ring (live or not); unreadable Leases are skipped.
    pub(crate) fn shards(&self) -> Vec<ShardState> {
        self.informer
            .indexer()
            .list()
            .iter()
            .filter_map(|obj| match ShardState::from_object(obj) {
                Ok(s) => Some(s),
                Err(e) => {
                    tracing::debug!(ring = %self.ring.name(), lease = %obj.name(), "unreadable shard Lease: {e}");
                    None
                }
            })
            .collect()
    }

    /// How long this replica has seen `shard`'s Lease at `resource_version` (`None`: it has not
    /// seen that version).
    pub(crate) fn unchanged_for(&self, shard: &str, resource_version: &str) -> Option<Duration> {
        self.seen
            .lock()
            .get(shard)
            .filter(|(rv, _)| rv == resource_version)
            .map(|&(_, since)| since.elapsed())
    }

    /// Resolves at the next membership change; a change that found no waiter is kept, so a
    /// change during a pass starts the next one.
    pub(crate) async fn changed(&self) {
        self.changed.notified().await
    }

    /// Changes whenever a Lease's range assignment generation changes (range mode).
    pub(crate) fn assignments(&self) -> watch::Receiver<u64> {
        self.assignments.subscribe()
    }
}

/// A Lease's range assignment generation annotation, as written.
fn generation(obj: &DynamicObject) -> Option<&String> {
    obj.annotations()
        .and_then(|a| a.get(crate::range_lease::GENERATION_ANNOTATION))
}

/// Records a Lease's version, restarting its wait when it changed.
fn observe(seen: &Mutex<Seen>, obj: &DynamicObject) {
    let rv = obj.resource_version().unwrap_or_default();
    let mut seen = seen.lock();
    match seen.get(obj.name()) {
        Some((known, _)) if known == rv => {}
        _ => {
            seen.insert(obj.name().to_string(), (rv.to_string(), Instant::now()));
        }
    }
}

/// The holder named in a Lease object (empty when released or unreadable).
fn holder(obj: &DynamicObject) -> String {
    ShardState::from_object(obj).map_or_else(|_| String::new(), |s| s.record.holder_identity)
}
