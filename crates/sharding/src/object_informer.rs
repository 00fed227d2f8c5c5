//! The sharder's informers over the sharded objects: passes read the objects from their caches
//! instead of listing them, and an object that needs placing wakes the sharder, so it is placed
//! at once rather than at the next periodic pass. What needs placing is the mode's
//! ([`NeedsPlacing`]): in label mode an object created without a shard label or let go by its
//! shard (its acknowledgement removed the label), in slice mode one whose slice label is missing
//! or wrong. Label changes the sharder made itself (an assignment, a drain) wake nothing.

use std::sync::Arc;
use std::time::Duration;

use kcache_core::DynamicObject;
use kcache_informer::{
    FactoryOptions, ResourceEventHandlerFuncs, SharedIndexInformer, SharedInformerFactory,
};
use kcache_leaderelection::CancellationToken;
use kcache_transport::Client;
use tokio::sync::Notify;

use crate::sharded_kind::ShardedKind;

/// Whether an object of a kind, on an add (`None`) or an update from the old version, needs the
/// sharder.
pub(crate) type NeedsPlacing =
    Arc<dyn Fn(&ShardedKind, Option<&DynamicObject>, &DynamicObject) -> bool + Send + Sync>;

/// One informer per sharded kind, for one sharder term.
pub(crate) struct ObjectInformers {
    factories: Vec<SharedInformerFactory>,
    informers: Vec<SharedIndexInformer<DynamicObject>>,
    changed: Arc<Notify>,
}

impl ObjectInformers {
    /// Informers over every object of `kinds` (each in its namespace, or all), waking the
    /// sharder when `needs` says so; they list and watch once [`run`](Self::run) is called.
    pub(crate) fn new(client: &Client, kinds: &[ShardedKind], needs: NeedsPlacing) -> Self {
        let changed = Arc::new(Notify::new());
        let mut factories = Vec::new();
        let mut informers = Vec::new();
        for kind in kinds {
            let factory = SharedInformerFactory::new(
                client.clone(),
                FactoryOptions {
                    namespace: kind.namespace.clone(),
                    ..FactoryOptions::default()
                },
            );
            let informer = factory.dynamic_informer(&kind.resource);
            let (on_add, on_update) = (needs.clone(), needs.clone());
            let (added, updated) = (changed.clone(), changed.clone());
            let (add_kind, update_kind) = (kind.clone(), kind.clone());
            let handler = ResourceEventHandlerFuncs::new()
                .on_add(move |obj: &Arc<DynamicObject>, _| {
                    if on_add(&add_kind, None, obj) {
                        added.notify_one();
                    }
                })
                .on_update(move |old, new| {
                    if on_update(&update_kind, Some(old), new) {
                        updated.notify_one();
                    }
                });
            // A fresh informer has not stopped, so this cannot fail; were it to, the periodic
            // passes would still place the objects.
            if let Err(e) = informer.add_event_handler(handler) {
                tracing::warn!(resource = %kind.resource.plural, "watching the sharded objects: {e}");
            }
            factories.push(factory);
            informers.push(informer);
        }
        ObjectInformers {
            factories,
            informers,
            changed,
        }
    }

    /// Lists and watches until `stop` fires, then waits for the informers to stop.
    pub(crate) async fn run(&self, stop: CancellationToken) {
        for f in &self.factories {
            f.start();
        }
        stop.cancelled().await;
        for f in &self.factories {
            f.shutdown().await;
        }
    }

    /// Waits until every cache holds its first list (false: an informer stopped first).
    pub(crate) async fn wait_for_sync(&self) -> bool {
        for i in &self.informers {
            if !i.wait_for_cache_sync().await {
                return false;
            }
        }
        true
    }

    /// The cached objects of the `kind`-th sharded kind.
    pub(crate) fn objects(&self, kind: usize) -> Vec<Arc<DynamicObject>> {
        self.informers
            .get(kind)
            .map(|i| i.indexer().list())
            .unwrap_or_default()
    }

    /// Waits (at most `limit`) until the `kind`-th cache reflects `resource_version`, so the next
    /// pass sees this pass's writes.
    pub(crate) async fn catch_up(&self, kind: usize, resource_version: &str, limit: Duration) {
        if let Some(i) = self.informers.get(kind) {
            let _ = i
                .wait_for_resource_version_timeout(resource_version, limit)
                .await;
        }
    }

    /// Waits (at most `limit`) until the `kind`-th cache reflects the latest of `written` (the
    /// resourceVersions a pass's writes returned), so the next pass sees them.
    pub(crate) async fn catch_up_to_latest(
        &self,
        kind: usize,
        written: impl IntoIterator<Item = String>,
        limit: Duration,
    ) {
        // Read as the decimal counters the API server writes (a longer number is larger).
        let latest = written
            .into_iter()
            .max_by(|a, b| (a.len(), a).cmp(&(b.len(), b)));
        if let Some(rv) = latest {
            self.catch_up(kind, &rv, limit).await;
        }
    }

    /// Resolves when an object needs placing; a signal that found no waiter is kept.
    pub(crate) async fn changed(&self) {
        self.changed.notified().await
    }
}
