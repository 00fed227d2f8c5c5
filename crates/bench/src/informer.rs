//! The `informer` scenario (see the crate README): a typed ConfigMap informer over all namespaces, from
//! a `SharedInformerFactory` on a client whose QPS limits are raised to 1000/1000 (as cgbench's),
//! with one handler counting adds and updates. `sync_seconds` runs from `start` until
//! `has_synced`; then, with `--expect-updates N`, `update_seconds` runs until N update
//! notifications have arrived (another process — `kcache-bench churn` — modifies objects once
//! "SYNCED" appears on stderr, the same line cgbench prints). With `--metadata` the informer
//! caches `PartialObjectMeta<ConfigMap>` (client-go's metadatainformer, cgbench's `-metadata`)
//! and the report says `metadata_only: true`. `--storage compact` uses the factory's
//! `compact_informer::<ConfigMap>()` (the pipeline keeps `Compact<ConfigMap>`, the handler gets
//! typed `ConfigMap`s) or, with `--metadata`, its `compact_metadata_informer::<ConfigMap>()`;
//! `--storage plain` (the default) its `informer::<ConfigMap>()` / `metadata_informer`; the
//! report names it in `storage`. `--account` (plain storage) adds where the memory went.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::ConfigMap;
use kcache_core::Object;
use kcache_informer::{FactoryOptions, ResourceEventHandlerFuncs, SharedInformerFactory};
use kcache_transport::Api;
use serde_json::json;
use tokio::sync::Notify;

use crate::account;
use crate::client;
use crate::report::{emit, rss_bytes};

/// Flags, as cgbench's.
#[derive(clap::Args)]
pub struct Args {
    /// The kubeconfig of the server to list and watch.
    #[arg(long)]
    kubeconfig: PathBuf,
    /// Update notifications to wait for after the sync (0: none).
    #[arg(long, default_value_t = 0)]
    expect_updates: u64,
    /// Overall limit, as a Go duration (`90s`, `10m`) or seconds.
    #[arg(long, default_value = "10m", value_parser = parse_duration)]
    timeout: Duration,
    /// Cache metadata only (`PartialObjectMetadata`, client-go's metadatainformer).
    #[arg(long)]
    metadata: bool,
    /// Do not ask for gzip (client-go's `DisableCompression`): measures what compression costs
    /// or saves on this server.
    #[arg(long)]
    disable_compression: bool,
    /// How the informer keeps its objects.
    #[arg(long, value_enum, default_value_t = crate::Storage::Plain)]
    storage: crate::Storage,
    /// Ask for metadata-only lists in protobuf first, as client-go's metadata client does
    /// (`Config::metadata_protobuf`; with `--metadata`).
    #[arg(long)]
    protobuf: bool,
    /// Also report where the memory goes (`account` in the JSON line, see [`crate::account`]):
    /// counts heap bytes from the start, and after the sync lists the objects once more and
    /// shuts the informer down to weigh the pieces. Slower; not for timing runs; plain storage.
    #[arg(long)]
    account: bool,
}

/// Parses `N`, `Ns`, `Nm` or `Nh` (the forms cgbench's `-timeout` is given in).
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let (number, unit) = match s.find(|c: char| c.is_ascii_alphabetic()) {
        Some(i) => s.split_at(i),
        None => (s, "s"),
    };
    let scale = match unit {
        "s" => 1.0,
        "m" => 60.0,
        "h" => 3600.0,
        other => return Err(format!("unknown unit {other:?} (use s, m or h)")),
    };
    let n: f64 = number
        .parse()
        .map_err(|_| format!("{number:?} is not a number"))?;
    Duration::try_from_secs_f64(n * scale).map_err(|e| e.to_string())
}

/// What the handler counts; `reached` fires once `updates` reaches the expected number.
struct Counts {
    adds: AtomicU64,
    updates: AtomicU64,
    expect: u64,
    reached: Notify,
}

pub fn run(args: Args) {
    let compact = args.storage == crate::Storage::Compact;
    if args.account && compact {
        eprintln!("--account weighs the plain storage mode only; drop --storage compact");
        std::process::exit(2);
    }
    crate::heap::release_freed_memory_promptly();
    if args.account {
        crate::heap::start_counting_with_peak();
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    let deadline = Instant::now() + args.timeout;
    runtime.block_on(async {
        let client = client::configured(&args.kubeconfig, |config| {
            config.disable_compression = args.disable_compression;
            config.metadata_protobuf = args.protobuf;
        });
        let factory = SharedInformerFactory::new(client.clone(), FactoryOptions::default());
        let baseline = args.account.then(account::Probe::now);
        let (mut fields, account) = if args.metadata && compact {
            let informer = factory.compact_metadata_informer::<ConfigMap>();
            let add = |h| drop(informer.add_event_handler(h).expect("a new informer"));
            let fields = measure(&factory, add, || informer.len(), &args, deadline).await;
            factory.shutdown().await;
            (fields, None)
        } else if compact {
            let informer = factory.compact_informer::<ConfigMap>();
            let add = |h| drop(informer.add_event_handler(h).expect("a new informer"));
            let fields = measure(&factory, add, || informer.len(), &args, deadline).await;
            factory.shutdown().await;
            (fields, None)
        } else if args.metadata {
            let informer = factory.metadata_informer::<ConfigMap>();
            let add = |h| drop(informer.add_event_handler(h).expect("a new informer"));
            let fields = measure(&factory, add, || informer.indexer().len(), &args, deadline).await;
            let lister = Api::<ConfigMap>::all(client.clone()).into_metadata();
            let account = match baseline {
                Some(b) => Some(account::weigh(b, &lister, factory, informer).await),
                None => {
                    factory.shutdown().await;
                    None
                }
            };
            (fields, account)
        } else {
            let informer = factory.informer::<ConfigMap>();
            let add = |h| drop(informer.add_event_handler(h).expect("a new informer"));
            let fields = measure(&factory, add, || informer.indexer().len(), &args, deadline).await;
            let lister = Api::<ConfigMap>::all(client.clone());
            let account = match baseline {
                Some(b) => Some(account::weigh(b, &lister, factory, informer).await),
                None => {
                    factory.shutdown().await;
                    None
                }
            };
            (fields, account)
        };
        fields["metadata_only"] = args.metadata.into();
        fields["storage"] = args.storage.name().into();
        fields["compression"] = (!args.disable_compression).into();
        fields["protobuf"] = args.protobuf.into();
        if let Some(account) = account {
            fields["account"] = account;
        }
        emit("informer", fields);
    });
}

/// Registers the counting handler with `add`, starts the factory and measures the sync (and
/// updates); `len` is the informer's cache size. The report's fields.
async fn measure<K: Object>(
    factory: &SharedInformerFactory,
    add: impl FnOnce(ResourceEventHandlerFuncs<K>),
    len: impl Fn() -> usize,
    args: &Args,
    deadline: Instant,
) -> serde_json::Value {
    let counts = Arc::new(Counts {
        adds: AtomicU64::new(0),
        updates: AtomicU64::new(0),
        expect: args.expect_updates,
        reached: Notify::new(),
    });
    let (on_add, on_update) = (counts.clone(), counts.clone());
    add(ResourceEventHandlerFuncs::new()
        .on_add(move |_, _| {
            on_add.adds.fetch_add(1, Ordering::Relaxed);
        })
        .on_update(move |_, _| {
            let n = on_update.updates.fetch_add(1, Ordering::Relaxed) + 1;
            if n == on_update.expect {
                on_update.reached.notify_one();
            }
        }));

    let start = Instant::now();
    factory.start();
    let synced = tokio::time::timeout_at(deadline.into(), factory.wait_for_cache_sync()).await;
    if !synced.is_ok_and(|all| all.values().all(|s| *s)) {
        eprintln!("sync timed out");
        std::process::exit(1);
    }
    let sync_seconds = start.elapsed().as_secs_f64();
    let at_sync = args.account.then(account::Probe::now);
    eprintln!("SYNCED");

    let mut update_seconds = 0.0;
    if args.expect_updates > 0 {
        let t = Instant::now();
        if tokio::time::timeout_at(deadline.into(), counts.reached.notified())
            .await
            .is_err()
        {
            eprintln!("timed out waiting for {} updates", args.expect_updates);
        }
        update_seconds = t.elapsed().as_secs_f64();
    }
    // Read before shutdown, as cgbench does while its informer still runs.
    json!({
        "sync_seconds": sync_seconds,
        "objects": len(),
        "initial_adds": counts.adds.load(Ordering::Relaxed),
        "updates": counts.updates.load(Ordering::Relaxed),
        "update_seconds": update_seconds,
        "rss_bytes": rss_bytes(),
        "at_sync": at_sync.map(|p| p.to_json()),
    })
}

#[cfg(test)]
mod tests {
    use super::parse_duration;
    use std::time::Duration;

    #[test]
    fn durations_in_go_forms() {
        assert_eq!(parse_duration("90"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("90s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("10m"), Ok(Duration::from_secs(600)));
        assert_eq!(parse_duration("1.5h"), Ok(Duration::from_secs(5400)));
        assert!(parse_duration("10x").is_err());
        assert!(parse_duration("m").is_err());
    }
}
