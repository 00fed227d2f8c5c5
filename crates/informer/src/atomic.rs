//! How the pop loop applies what an atomic FIFO queues as one unit (client-go's
//! `processReplacedAllInfo` and the `SyncAll` case of `processDeltas`, controller.go).
//!
//! A relist goes to the cache as one `CacheWriter::replace_all` — for kcache-store's `Indexer`
//! one swap, so a reader sees the cache before the relist or after it, never in between — and
//! only then to the handlers: first a deletion (a `DeletedFinalStateUnknown` tombstone with the
//! cached object) for every cached key the list lacks, then an add or update per listed object
//! in list order, as client-go does.

use std::collections::HashSet;
use std::sync::Arc;

use kcache_core::{CacheReader, CacheWriter, DeletedFinalStateUnknown, DeletedObject, ObjectKey};
use kcache_delta_fifo::AtomicEvent;

use crate::delivery::Notification;
use crate::outbox::{write_notification, Outbox};

/// Applies `event` to `cache` and queues its notifications in `outbox`. A relist the cache
/// rejects as a whole is logged and notifies nothing; an object whose write failed is logged
/// and skipped.
pub(crate) fn apply<K, C>(
    cache: &C,
    informer: &str,
    event: &AtomicEvent<K>,
    is_in_initial_list: bool,
    outbox: &mut Outbox<K>,
) where
    K: kcache_core::Object,
    C: CacheReader<K> + CacheWriter<K>,
{
    match event {
        AtomicEvent::SyncAll => {
            for obj in cache.list() {
                let n = Notification::Update {
                    old: obj.clone(),
                    new: obj,
                };
                outbox.push((n, true));
            }
        }
        AtomicEvent::ReplacedAll {
            resource_version,
            objects,
        } => {
            let listed: HashSet<&str> = objects.iter().map(|(k, _)| k.as_str()).collect();
            let stale: Vec<ObjectKey> = cache
                .list_keys()
                .into_iter()
                .filter(|k| !listed.contains(k.as_str()))
                .collect();
            // The pop loop is the cache's only writer: what it reads now is what the relist
            // replaces.
            let gone: Vec<DeletedObject<K>> = stale
                .iter()
                .map(|key| {
                    DeletedObject::Tombstone(Box::new(DeletedFinalStateUnknown {
                        key: key.clone(),
                        obj: cache.get_by_key(key.as_str()),
                    }))
                })
                .collect();
            let objs: Vec<&Arc<K>> = objects.iter().map(|(_, o)| o).collect();
            let mut written = Vec::with_capacity(objs.len());
            let replaced =
                cache.replace_all(&objs, &stale, resource_version, &mut |r| written.push(r));
            if let Err(e) = replaced {
                tracing::error!(informer, "cache relist failed: {e}");
                return;
            }
            outbox.extend(gone.into_iter().map(|d| (Notification::Delete(d), false)));
            for (obj, result) in objs.into_iter().zip(written) {
                match result {
                    Ok(old) => outbox.push(write_notification(obj, old, is_in_initial_list)),
                    Err(e) => tracing::error!(informer, "cache write failed: {e}"),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kcache_core::DynamicObject;
    use kcache_store::{Indexer, Indexers};

    fn cm(name: &str, rv: &str) -> Arc<DynamicObject> {
        let mut o = DynamicObject::new(name).within("ns");
        o.metadata.resource_version = Some(rv.into());
        Arc::new(o)
    }

    /// Each notification as "kind name old->new", with whether it is a resync.
    fn show(outbox: &Outbox<DynamicObject>) -> Vec<String> {
        let rv = |o: &DynamicObject| o.metadata.resource_version.clone().unwrap_or_default();
        outbox
            .iter()
            .map(|(n, sync)| match n {
                Notification::Add {
                    obj,
                    is_in_initial_list,
                } => format!("add {} {} {is_in_initial_list}", obj.metadata.name, rv(obj)),
                Notification::Update { old, new } => {
                    format!(
                        "update {} {}->{} {sync}",
                        new.metadata.name,
                        rv(old),
                        rv(new)
                    )
                }
                Notification::Delete(d) => match d.as_tombstone() {
                    Some(t) => format!(
                        "delete ~{} {}",
                        t.key,
                        t.obj.as_deref().map(rv).unwrap_or_default()
                    ),
                    None => format!("delete {}", d.key()),
                },
            })
            .collect()
    }

    fn relist(rv: &str, objs: &[Arc<DynamicObject>]) -> AtomicEvent<DynamicObject> {
        AtomicEvent::ReplacedAll {
            resource_version: rv.into(),
            objects: objs
                .iter()
                .map(|o| (ObjectKey::of(&**o), o.clone()))
                .collect(),
        }
    }

    /// client-go's processReplacedAllInfo: the cache is replaced first, then handlers hear of
    /// the deletions (tombstones with the cached object), then of each listed object in list
    /// order, an update when it was cached.
    #[test]
    fn a_relist_replaces_the_cache_then_notifies_deletions_first() {
        let cache = Indexer::new(Indexers::new());
        for o in [cm("a", "1"), cm("b", "1"), cm("c", "1")] {
            cache.upsert(o).unwrap();
        }
        let mut outbox = Vec::new();
        let event = relist("9", &[cm("d", "9"), cm("a", "5"), cm("c", "1")]);
        apply(&cache, "test", &event, false, &mut outbox);
        assert_eq!(
            show(&outbox),
            [
                "delete ~ns/b 1",
                "add d 9 false",
                "update a 1->5 false",
                "update c 1->1 true",
            ]
        );
        let mut keys: Vec<String> = cache.list_keys().iter().map(|k| k.to_string()).collect();
        keys.sort();
        assert_eq!(keys, ["ns/a", "ns/c", "ns/d"]);
    }

    #[test]
    fn the_initial_relist_adds_as_initial() {
        let cache = Indexer::new(Indexers::new());
        let mut outbox = Vec::new();
        apply(
            &cache,
            "test",
            &relist("3", &[cm("a", "3")]),
            true,
            &mut outbox,
        );
        assert_eq!(show(&outbox), ["add a 3 true"]);
    }

    #[test]
    fn a_resync_updates_every_cached_object_as_a_resync() {
        let cache = Indexer::new(Indexers::new());
        cache.upsert(cm("a", "4")).unwrap();
        let mut outbox = Vec::new();
        apply(&cache, "test", &AtomicEvent::SyncAll, false, &mut outbox);
        assert_eq!(show(&outbox), ["update a 4->4 true"]);
    }
}
