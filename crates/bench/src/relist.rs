//! The `relist` scenario (see the crate README): what an atomic FIFO costs on a relist. A cache
//! (an indexer with the namespace index) holds n ConfigMaps (gen 0); a relist lists them again
//! (gen 1) without the last `--gone` of them, and one consumer applies it as kcache's informer
//! does. Plain (RealFIFO): the relist queues a tombstone per missing object and a `Replaced`
//! delta per listed one, and the consumer pops batches and writes them with `upsert_all`.
//! `--atomic` (AtomicFIFO): the relist is one queue entry, and the consumer compares it with the
//! cache and swaps the whole content in with one `replace_all`. The clock runs from the
//! `replace` call until the cache holds the list. Objects are built before the clock.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Instant;

use k8s_openapi::api::core::v1::ConfigMap;
use kcache_core::{CacheWriter, KnownObjects, ObjectKey};
use kcache_delta_fifo::{AtomicEvent, DeltaFifo, DeltaFifoOptions, DeltaType, FifoMode};
use kcache_store::{Indexer, Indexers};
use serde_json::json;

/// Flags.
#[derive(clap::Args)]
pub struct Args {
    /// How many objects the cache holds before the relist.
    #[arg(long, default_value_t = 100_000)]
    objects: usize,
    /// How many of them the relist lacks (deleted while the watch was down).
    #[arg(long, default_value_t = 1_000)]
    gone: usize,
    /// Queue the relist as one unit and apply it in one write (client-go's AtomicFIFO).
    #[arg(long)]
    atomic: bool,
}

/// Entries per pop, as the informer takes them.
const POP_BATCH: usize = 1024;

pub fn run(args: Args) {
    let n = args.objects;
    let listed_n = n.saturating_sub(args.gone);
    let indexer = Arc::new(Indexer::new(Indexers::new().with_namespace_index()));
    for i in 0..n {
        indexer
            .upsert(crate::objects::config_map(i, 0, n, false))
            .expect("indexer write");
    }
    let mode = if args.atomic {
        FifoMode::Atomic
    } else {
        FifoMode::Real
    };
    let fifo = DeltaFifo::new(DeltaFifoOptions {
        known_objects: (!args.atomic).then(|| indexer.clone() as Arc<dyn KnownObjects<ConfigMap>>),
        mode,
        ..Default::default()
    });
    let listed: Vec<Arc<ConfigMap>> = (0..listed_n)
        .map(|i| crate::objects::config_map(i, 1, n, false))
        .collect();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    let rss_before = crate::proc_status::rss_bytes();

    let start = Instant::now();
    fifo.replace(listed, "2").expect("relist");
    let mut entries = 0usize;
    runtime.block_on(async {
        while !fifo.is_empty() {
            let batch = fifo.pop_batch(POP_BATCH).await.expect("pop");
            entries += batch.entries().len();
            let mut writes: Vec<&Arc<ConfigMap>> = Vec::with_capacity(batch.entries().len());
            for e in batch.entries() {
                if let Some(event) = e.atomic() {
                    apply_atomic(&indexer, event);
                    continue;
                }
                for d in e.deltas().iter() {
                    match d.type_ {
                        DeltaType::Deleted => {
                            indexer.upsert_all(&writes).expect("indexer write");
                            writes.clear();
                            Indexer::delete_by_key(&indexer, e.key().as_str());
                        }
                        _ => writes.extend(d.object.object()),
                    }
                }
            }
            indexer.upsert_all(&writes).expect("indexer write");
        }
    });
    let seconds = start.elapsed().as_secs_f64();
    assert_eq!(indexer.len(), listed_n, "the cache holds the list");

    crate::report::emit(
        "relist",
        json!({
            "objects": n,
            "gone": n - listed_n,
            "atomic": args.atomic,
            "queue_entries": entries,
            "cached": indexer.len(),
            "seconds": seconds,
            "objects_per_sec": n as f64 / seconds,
            "rss_growth_bytes": crate::proc_status::peak_rss_bytes().saturating_sub(rss_before),
        }),
    );
}

/// A `ReplacedAll` as the informer applies it: the cached keys the list lacks are stale, and
/// the list goes in with one `replace_all` (one swap of the indexer's content).
fn apply_atomic(indexer: &Indexer<ConfigMap>, event: &AtomicEvent<ConfigMap>) {
    let AtomicEvent::ReplacedAll {
        resource_version,
        objects,
    } = event
    else {
        return;
    };
    let listed: HashSet<&str> = objects.iter().map(|(k, _)| k.as_str()).collect();
    let stale: Vec<ObjectKey> = indexer
        .list_keys()
        .into_iter()
        .filter(|k| !listed.contains(k.as_str()))
        .collect();
    let objs: Vec<&Arc<ConfigMap>> = objects.iter().map(|(_, o)| o).collect();
    CacheWriter::replace_all(indexer, &objs, &stale, resource_version, &mut |r| {
        r.expect("indexer write");
    })
    .expect("relist write");
}
