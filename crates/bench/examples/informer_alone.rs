//! The plain ConfigMap informer alone in a binary of its own, as `krbench` is kube-rs's
//! reflector alone: `cargo run --profile bench-release -p kcache-bench --example informer_alone -- KUBECONFIG`
//! prints one JSON line with `sync_seconds`, `objects` and `peak_rss_bytes` (VmHWM).
//!
//! Why it exists: peak RSS counts the binary's code pages a process touches, and kcache-bench
//! carries every scenario: its `informer --storage plain` touches a few MB more of its code
//! than this binary does for the same sync, so against `krbench` this is the like-for-like
//! binary. It builds what `informer --storage plain` builds — `SharedInformerFactory::informer`,
//! one handler counting adds, the bench's client (QPS and burst at 1000, as cgbench's), gzip
//! asked for whatever the server's address (as `informer` and cgbench do) — on the system
//! allocator.

// The bench binary's own client and /proc readers (this binary uses part of each).
#[allow(dead_code)]
#[path = "../src/client.rs"]
mod client;
#[allow(dead_code)]
#[path = "../src/proc_status.rs"]
mod proc_status;

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use k8s_openapi::api::core::v1::ConfigMap;
use kcache_informer::{FactoryOptions, ResourceEventHandlerFuncs, SharedInformerFactory};

fn main() {
    let Some(kubeconfig) = std::env::args_os().nth(1).map(PathBuf::from) else {
        eprintln!("usage: informer_alone KUBECONFIG");
        std::process::exit(2);
    };
    let client = client::configured(&kubeconfig, |c| c.disable_compression = Some(false));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    runtime.block_on(async {
        let factory = SharedInformerFactory::new(client, FactoryOptions::default());
        let informer = factory.informer::<ConfigMap>();
        let adds = Arc::new(AtomicU64::new(0));
        let counted = adds.clone();
        let handler = ResourceEventHandlerFuncs::new().on_add(move |_, _| {
            counted.fetch_add(1, Ordering::Relaxed);
        });
        informer
            .add_event_handler(handler)
            .expect("a new informer takes handlers");
        let start = Instant::now();
        factory.start();
        if !informer.wait_for_cache_sync().await {
            eprintln!("informer_alone: the informer stopped before it synced");
            std::process::exit(1);
        }
        let sync_seconds = start.elapsed().as_secs_f64();
        let report = serde_json::json!({
            "scenario": "informer",
            "impl": "kcache-informer-alone",
            "sync_seconds": sync_seconds,
            "objects": informer.indexer().len(),
            "initial_adds": adds.load(Ordering::Relaxed),
            "peak_rss_bytes": proc_status::peak_rss_bytes(),
        });
        println!("{report}");
        factory.shutdown().await;
    });
}
