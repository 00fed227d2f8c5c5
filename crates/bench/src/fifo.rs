//! The `fifo` scenario (see the crate README): a DeltaFIFO whose known objects are an indexer (Replaced
//! deltas on), fed by one producer — `add` for all n ConfigMaps (gen 0), then `updates` updates
//! cycling over them (object j % n, gen 1 + j / n) — and drained by one consumer that applies
//! every delta to the indexer (update if the key exists, else add) as kcache's informer does:
//! popping batches of entries and writing each entry's deltas with `upsert_all`. The run
//! ends when the queue is empty; then the FIFO is closed. Objects are built before the clock.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::ConfigMap;
use kcache_core::KnownObjects;
use kcache_delta_fifo::{Delta, DeltaFifo, DeltaFifoOptions, DeltaObject, DeltaType};
use kcache_store::{Indexer, Indexers};
use serde_json::json;

/// Flags, as cgbench's.
#[derive(clap::Args)]
pub struct Args {
    /// How many objects.
    #[arg(long, default_value_t = 100_000)]
    objects: usize,
    /// Updates after the adds, cycling over the objects.
    #[arg(long, default_value_t = 1_000_000)]
    updates: usize,
}

/// Entries per pop: the consumer takes what is queued, up to this many, under one lock hold.
const POP_BATCH: usize = 64;

/// Applies one popped entry to the cache as an informer does: every delta in order, update if
/// the key exists, else add. The writes between deletions go to the indexer as one
/// `upsert_all` (each object written with its own index maintenance, under one lock hold and
/// one look-up).
fn apply(indexer: &Indexer<ConfigMap>, key: &str, deltas: &[Delta<ConfigMap>]) {
    let mut run: Vec<&Arc<ConfigMap>> = Vec::with_capacity(deltas.len());
    for d in deltas {
        match (d.type_, &d.object) {
            (DeltaType::Deleted, _) => {
                flush(indexer, &mut run);
                indexer.delete_by_key(key);
            }
            (_, DeltaObject::Object(o)) => run.push(o),
            (_, DeltaObject::Tombstone(_)) => {}
        }
    }
    flush(indexer, &mut run);
}

fn flush(indexer: &Indexer<ConfigMap>, run: &mut Vec<&Arc<ConfigMap>>) {
    if !run.is_empty() {
        indexer.upsert_all(run).expect("indexer write");
        run.clear();
    }
}

pub fn run(args: Args) {
    let (n, updates) = (args.objects, args.updates);
    let indexer = Arc::new(Indexer::new(Indexers::new().with_namespace_index()));
    let fifo = Arc::new(DeltaFifo::new(DeltaFifoOptions {
        known_objects: Some(indexer.clone() as Arc<dyn KnownObjects<ConfigMap>>),
        emit_delta_type_replaced: true,
        ..Default::default()
    }));
    let objs: Vec<Arc<ConfigMap>> = (0..n)
        .map(|i| crate::objects::config_map(i, 0, n, false))
        .chain((0..updates).map(|j| crate::objects::config_map(j % n, 1 + j / n, n, false)))
        .collect();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("tokio runtime");
    let applied = Arc::new(AtomicU64::new(0));

    let start = Instant::now();
    let consumer = {
        let (fifo, indexer, applied) = (fifo.clone(), indexer.clone(), applied.clone());
        runtime.spawn(async move {
            while let Ok(batch) = fifo.pop_batch(POP_BATCH).await {
                for popped in batch.entries() {
                    applied.fetch_add(popped.deltas().len() as u64, Ordering::Relaxed);
                    apply(&indexer, popped.key().as_str(), popped.deltas());
                }
            }
        })
    };
    // The bench keeps its objects until the clock stops, as cgbench's slice does (and as the
    // store scenario does): replaced objects are freed after the measurement, where Go's
    // collector frees them on another core.
    let (adds, updates_objs) = objs.split_at(n);
    for o in adds {
        fifo.add(o.clone()).expect("add");
    }
    for o in updates_objs {
        fifo.update(o.clone()).expect("update");
    }
    while !(fifo.has_synced() && fifo.is_empty()) {
        std::thread::sleep(Duration::from_millis(1));
    }
    fifo.close();
    runtime.block_on(consumer).expect("consumer task");
    let seconds = start.elapsed().as_secs_f64();
    drop(objs);

    crate::report::emit(
        "fifo",
        json!({
            "objects": n,
            "updates": updates,
            "deltas_applied": applied.load(Ordering::Relaxed),
            "cached": indexer.len(),
            "seconds": seconds,
            "ops_per_sec": (n + updates) as f64 / seconds,
        }),
    );
}
