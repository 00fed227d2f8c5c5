//! The `many` scenario: many small informers in one process, as a controller manager runs them.
//! `informers` typed ConfigMap informers, one per namespace `many-0` … `many-(N-1)` (empty or
//! not; one factory each, as cgbench's `informers.WithNamespace`), all on one client, each with
//! `handlers` handlers counting notifications. `sync_seconds` runs until every informer has
//! synced; then `idle` seconds of nothing, over which `idle_cpu_seconds` is the process's user +
//! system CPU time. `threads` is `Threads:` of /proc/self/status at the end (OS threads; the
//! delivery pool's idle threads exit after 5 s, tokio's blocking pool's after 10 s).

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::ConfigMap;
use kcache_informer::{FactoryOptions, ResourceEventHandlerFuncs, SharedInformerFactory};
use serde_json::json;

use crate::client;
use crate::duration::parse_duration;
use crate::proc_status::threads;
use crate::report::emit;

/// Flags, as cgbench's.
#[derive(clap::Args)]
pub struct Args {
    /// The kubeconfig of the server to list and watch.
    #[arg(long)]
    kubeconfig: PathBuf,
    /// Informers, one per namespace `many-{i}`.
    #[arg(long, default_value_t = 100)]
    informers: usize,
    /// Handlers per informer.
    #[arg(long, default_value_t = 3)]
    handlers: usize,
    /// Idle time after the sync, as a Go duration (`10s`) or seconds.
    #[arg(long, default_value = "10s", value_parser = parse_duration)]
    idle: Duration,
    /// Limit on the sync, as a Go duration or seconds.
    #[arg(long, default_value = "5m", value_parser = parse_duration)]
    timeout: Duration,
}

pub fn run(args: Args) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    runtime.block_on(async {
        let client = client::from_kubeconfig(&args.kubeconfig);
        let events = Arc::new(AtomicU64::new(0));
        let start = Instant::now();
        let mut factories = Vec::with_capacity(args.informers);
        let mut informers = Vec::with_capacity(args.informers);
        for i in 0..args.informers {
            let factory = SharedInformerFactory::new(
                client.clone(),
                FactoryOptions {
                    namespace: Some(format!("many-{i}")),
                    ..FactoryOptions::default()
                },
            );
            let informer = factory.informer::<ConfigMap>();
            for _ in 0..args.handlers {
                let (a, u, d) = (events.clone(), events.clone(), events.clone());
                informer
                    .add_event_handler(
                        ResourceEventHandlerFuncs::new()
                            .on_add(move |_, _| {
                                a.fetch_add(1, Ordering::Relaxed);
                            })
                            .on_update(move |_, _| {
                                u.fetch_add(1, Ordering::Relaxed);
                            })
                            .on_delete(move |_| {
                                d.fetch_add(1, Ordering::Relaxed);
                            }),
                    )
                    .expect("a new informer accepts handlers");
            }
            factory.start();
            factories.push(factory);
            informers.push(informer);
        }
        let all_synced = async {
            for informer in &informers {
                if !informer.wait_for_cache_sync().await {
                    return false;
                }
            }
            true
        };
        if tokio::time::timeout(args.timeout, all_synced).await != Ok(true) {
            eprintln!("sync failed");
            std::process::exit(1);
        }
        let sync_seconds = start.elapsed().as_secs_f64();
        let cpu_before = cpu_seconds();
        tokio::time::sleep(args.idle).await;
        let idle_cpu_seconds = cpu_seconds() - cpu_before;
        let fields = json!({
            "informers": args.informers,
            "handlers": args.handlers,
            "sync_seconds": sync_seconds,
            "threads": threads(),
            "idle_seconds": args.idle.as_secs_f64(),
            "idle_cpu_seconds": idle_cpu_seconds,
            "events": events.load(Ordering::Relaxed),
        });
        for factory in &factories {
            factory.shutdown().await;
        }
        emit("many", fields);
    });
}

/// This process's user + system CPU time so far, from /proc/self/stat (0 where unavailable).
fn cpu_seconds() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return 0.0;
    };
    // Fields after the command name (which may hold spaces) start at the state, field 3;
    // utime and stime are fields 14 and 15, in clock ticks.
    let after_name = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<u64>().ok())
            .unwrap_or(0)
    };
    // /proc reports in USER_HZ, which Linux fixes at 100 whatever the kernel's tick.
    (ticks(11) + ticks(12)) as f64 / 100.0
}
