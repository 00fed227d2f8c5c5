//! Wakes the sharder when the ring's membership may have changed, so a released Lease or a new
//! replica is acted on at once instead of at the next periodic pass: an informer over the ring's
//! Leases signals when a Lease is added or deleted or its holder changes (a graceful stop empties
//! it, a take-over or a return sets it). Renewals, which change only the renew time every retry
//! period, signal nothing; a Lease that expires changes nothing on the server either, so the
//! periodic pass still finds killed replicas.

use std::sync::Arc;

use kcache_core::DynamicObject;
use kcache_informer::{FactoryOptions, ResourceEventHandlerFuncs, SharedInformerFactory};
use kcache_leaderelection::{lease_from_object, leases, CancellationToken};
use kcache_transport::Client;
use tokio::sync::Notify;

use crate::conventions::Ring;

/// The holder named in a Lease object (empty when released or unreadable).
fn holder(obj: &DynamicObject) -> String {
    lease_from_object(obj).map_or_else(|_| String::new(), |l| l.record.holder_identity)
}

/// Watches `ring`'s Leases until `stop` fires; `changed` is notified on every membership change.
/// A notification that finds no waiter is kept, so a change during a pass starts the next one.
pub(crate) async fn watch_membership(
    client: Client,
    ring: Ring,
    changed: Arc<Notify>,
    stop: CancellationToken,
) {
    let factory = SharedInformerFactory::new(
        client,
        FactoryOptions {
            namespace: Some(ring.lease_namespace().to_string()),
            label_selector: Some(ring.lease_selector()),
            ..FactoryOptions::default()
        },
    );
    let (added, updated, deleted) = (changed.clone(), changed.clone(), changed);
    let handler = ResourceEventHandlerFuncs::new()
        .on_add(move |_, _| added.notify_one())
        .on_update(move |old, new| {
            if holder(old) != holder(new) {
                updated.notify_one();
            }
        })
        .on_delete(move |_| deleted.notify_one());
    match factory
        .dynamic_informer(&leases())
        .add_event_handler(handler)
    {
        Ok(_) => {
            factory.start();
            stop.cancelled().await;
        }
        Err(e) => tracing::warn!(ring = %ring.name(), "watching the shard Leases: {e}"),
    }
    factory.shutdown().await;
}
