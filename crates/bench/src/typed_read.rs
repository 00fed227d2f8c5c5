//! The `typed read` scenario (see the crate README): the fixture's pods cached as an informer
//! caches them — `Compact<Pod>` (`--storage compact`, the compact informer's mode) or `Pod`
//! (`--storage plain`) — in an `Indexer`; then `rounds` passes of `get_by_key` for every pod,
//! each handing user code a typed `Pod` as `CompactInformer::get_by_key` does (for the compact
//! mode a decode of the `Pod` from the shared tree; for the plain mode an `Arc` clone).
//! `ns_per_object` is the time per read; client-go's side times `DeepCopy` of each pod, what
//! controller-runtime's cached client does on every read. Also reports the heap the cache keeps
//! per pod (`retained_bytes_per_object`, allocator counter).

use std::hint::black_box;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use k8s_openapi::api::core::v1::Pod;
use kcache_compact::Compact;
use kcache_core::{Object, ObjectKey, ObjectList};
use kcache_store::{Indexer, Indexers};
use serde::de::DeserializeOwned;
use serde_json::json;

use crate::storage::Storage;

/// Flags.
#[derive(clap::Args)]
pub struct Args {
    /// The PodList fixture written by `cgbench -scenario podlist`.
    #[arg(long)]
    file: PathBuf,
    /// Passes over every pod.
    #[arg(long, default_value_t = 3)]
    rounds: usize,
    /// How the pods are cached.
    #[arg(long, value_enum, default_value_t = Storage::Compact)]
    storage: Storage,
}

pub fn run(args: Args) {
    crate::heap::start_counting();
    let fields = match args.storage {
        Storage::Compact => measure::<Compact<Pod>>(&args, |c| {
            Arc::new(c.to_typed().expect("checked to decode when cached"))
        }),
        Storage::Plain => measure::<Pod>(&args, |p| p.clone()),
    };
    crate::report::emit("typed-read", fields);
}

/// Caches the fixture as `K`s, then times `read` (the typed `Pod` handed out) for every key.
fn measure<K: Object + DeserializeOwned>(
    args: &Args,
    read: impl Fn(&Arc<K>) -> Arc<Pod>,
) -> serde_json::Value {
    let base = crate::heap::heap_in_use();
    let bytes = std::fs::read(&args.file).expect("read the fixture");
    let list: ObjectList<K> = serde_json::from_slice(&bytes).expect("decode the fixture");
    drop(bytes);
    let cache = Indexer::new(Indexers::new().with_namespace_index());
    let keys: Vec<String> = list
        .items
        .into_iter()
        .map(|o| {
            let key = ObjectKey::of(&o).as_str().to_string();
            cache.add(Arc::new(o)).expect("cache the pod");
            key
        })
        .collect();
    let n = keys.len();
    let keys_bytes: usize = keys.iter().map(|k| k.capacity()).sum::<usize>() + n * 24;
    let retained = (crate::heap::heap_in_use() - base) as f64 - keys_bytes as f64;
    crate::heap::stop_counting();
    let start = Instant::now();
    let mut containers = 0usize;
    for _ in 0..args.rounds {
        for key in &keys {
            let obj = cache.get_by_key(key).expect("cached");
            let pod = read(&obj);
            containers += black_box(&pod)
                .spec
                .as_ref()
                .map_or(0, |s| s.containers.len());
        }
    }
    let reads = (n * args.rounds).max(1);
    let ns = start.elapsed().as_nanos() as f64 / reads as f64;
    json!({
        "objects": n,
        "rounds": args.rounds,
        "storage": args.storage.name(),
        "ns_per_object": ns,
        "containers_seen": containers,
        "retained_bytes_per_object": retained / n.max(1) as f64,
    })
}
