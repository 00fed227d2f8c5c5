//! The `store` scenario (see the crate README): an indexer keyed `namespace/name` with the `namespace`
//! index and an `app` label index; insert n typed ConfigMaps (gen 0), update all n (gen 1), then n
//! `by_index("app", "app-{i % 1000}")` look-ups. Objects are built before the clock starts, as in
//! cgbench; the look-up loop formats its value string inside the clock, as cgbench's does.

use std::sync::Arc;
use std::time::Instant;

use k8s_openapi::api::core::v1::ConfigMap;
use kcache_core::Object;
use kcache_store::{IndexValues, Indexer, Indexers};
use serde_json::json;

/// Flags, as cgbench's.
#[derive(clap::Args)]
pub struct Args {
    /// How many objects.
    #[arg(long, default_value_t = 100_000)]
    objects: usize,
}

pub fn run(args: Args) {
    let n = args.objects;
    let store: Indexer<ConfigMap> = Indexer::new(
        Indexers::new()
            .with_namespace_index()
            .with("app", |cm: &ConfigMap| {
                Ok(IndexValues::one(cm.label("app").unwrap_or("")))
            }),
    );
    let objs: Vec<Arc<ConfigMap>> = (0..n)
        .map(|i| crate::objects::config_map(i, 0, n, true))
        .collect();
    let upd: Vec<Arc<ConfigMap>> = (0..n)
        .map(|i| crate::objects::config_map(i, 1, n, true))
        .collect();

    // The vectors live until the clock stops, as cgbench's slices do: replaced objects are freed
    // after the measurement on both sides (Go's collector frees them later, off this thread).
    let t0 = Instant::now();
    for o in &objs {
        store.add(o.clone()).expect("add");
    }
    let t1 = Instant::now();
    for o in &upd {
        store.update(o.clone()).expect("update");
    }
    let t2 = Instant::now();
    let mut found = 0;
    for i in 0..n {
        found += store
            .by_index("app", &format!("app-{}", i % 1000))
            .expect("by_index")
            .len();
    }
    let t3 = Instant::now();
    drop((objs, upd));

    let rate = |a: Instant, b: Instant| n as f64 / (b - a).as_secs_f64();
    crate::report::emit(
        "store",
        json!({
            "objects": n,
            "insert_per_sec": rate(t0, t1),
            "update_per_sec": rate(t1, t2),
            "byindex_per_sec": rate(t2, t3),
            "found": found,
        }),
    );
}
