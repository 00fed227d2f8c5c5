//! The `informer` scenario (see the crate README): a typed ConfigMap informer over all namespaces, from
//! a `SharedInformerFactory` on a client whose QPS limits are raised to 1000/1000 (as cgbench's),
//! with one handler counting adds and updates. `sync_seconds` runs from `start` until
//! `has_synced`; then, with `--expect-updates N`, `update_seconds` runs until N update
//! notifications have arrived (another process — `kcache-bench churn` — modifies objects once
//! "SYNCED" appears on stderr, the same line cgbench prints). With `--metadata` the informer
//! caches `PartialObjectMeta<ConfigMap>` (client-go's metadatainformer, cgbench's `-metadata`)
//! and the report says `metadata_only: true`.
//!
//! `--resource pods` informs on Pods instead (cgbench's `-resource pods`), for the at-scale runs
//! against a server holding many realistic pods. `--storage` picks what the cache keeps: `plain`
//! (k8s-openapi structs, the factory's `informer`), `compact` (the factory's `compact_informer`:
//! the pipeline keeps `Compact<K>`, the handler gets typed objects; with `--metadata`,
//! `compact_metadata_informer`) or `object` (untyped [`CompactObject`]s, structurally shared);
//! the report names it in `storage`; with `compact`, `--lazy` registers the counting handler as a
//! lazy one (`LazyTyped<K>`, nothing decoded for it). `--account` adds where the memory went.
//!
//! `--relist` then forces a relist and measures it: the peak RSS so far is recorded as
//! `peak_rss_sync_bytes` and reset (`/proc/self/clear_refs`), the server is asked to expire every
//! watch (kcache-testserver's `POST /testserver/expire-watches`: history compacted past the
//! newest revision, watches cut, so the re-watch gets 410 Gone), and the bench waits until every
//! cached object has been re-delivered as an update (the relist's `Replace`).
//! `relist_seconds` is that wait and `peak_rss_relist_bytes` the peak during it.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use k8s_openapi::api::core::v1::{ConfigMap, Pod};
use kcache_compact::CompactObject;
use kcache_core::{Object, Resource};
use kcache_informer::{
    CompactInformer, FactoryOptions, ResourceEventHandlerFuncs, SharedIndexInformer,
    SharedInformerFactory,
};
use kcache_reflector::WatchListMode;
use kcache_store::Indexers;
use kcache_transport::{Api, Client};
use serde_json::json;
use tokio::sync::Notify;

use crate::account;
use crate::client;
use crate::proc_status::{peak_rss_bytes, reset_peak_rss, rss_bytes};
use crate::report::emit;

/// The resources the scenario informs on (cgbench's `-resource`).
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum InformedResource {
    /// core/v1 ConfigMaps.
    Configmaps,
    /// core/v1 Pods.
    Pods,
}

/// What the cache keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Storage {
    /// k8s-openapi structs (`SharedInformerFactory::informer`).
    Plain,
    /// `Compact<K>`, typed on the way out (`SharedInformerFactory::compact_informer`).
    Compact,
    /// Untyped `CompactObject`s: structurally shared JSON trees.
    Object,
}

/// kcache-testserver's admin endpoint that forces every client to relist.
const EXPIRE_WATCHES: &str = "/testserver/expire-watches";

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
    #[arg(long, default_value = "10m", value_parser = crate::duration::parse_duration)]
    timeout: Duration,
    /// Cache metadata only (`PartialObjectMetadata`, client-go's metadatainformer).
    #[arg(long)]
    metadata: bool,
    /// Do not ask for gzip (client-go's `DisableCompression`): measures what compression costs
    /// or saves on this server. Without it the scenario asks for gzip whatever the server's
    /// address, as cgbench does, so that both sides decode the same bytes (a kcache client's
    /// default asks nothing of a loopback server).
    #[arg(long)]
    disable_compression: bool,
    /// The resource to inform on.
    #[arg(long, value_enum, default_value = "configmaps")]
    resource: InformedResource,
    /// What the cache keeps (`object` is not offered with `--metadata`).
    #[arg(long, value_enum, default_value = "plain")]
    storage: Storage,
    /// Ask for every list in JSON only (`Config::metadata_protobuf` and `Config::protobuf`
    /// false): by default metadata-only lists ask for protobuf first, as client-go's metadata
    /// client does, and so do lists of ConfigMaps (a built-in kind kcache decodes from protobuf),
    /// as kube-controller-manager's clients do; client-go's default typed clientset (cgbench's)
    /// asks for JSON.
    #[arg(long)]
    no_protobuf: bool,
    /// With `--storage compact`: the counting handler is a lazy one (`LazyTyped<K>`, decoded
    /// only when read, as podsync's `--lazy`): what a handler that needs no typed object saves.
    #[arg(long)]
    lazy: bool,
    /// Also report where the memory goes (`account` in the JSON line, see [`crate::account`]):
    /// counts heap bytes from the start, and after the sync lists the objects once more (plain
    /// storage: the cache holds decoded objects) and shuts the informer down to weigh the pieces. Slower; not for timing runs.
    #[arg(long)]
    account: bool,
    /// After the sync, force a relist on kcache-testserver and measure it (see the module docs).
    #[arg(long)]
    relist: bool,
    /// Fill the cache with a list, never a watch-list (`WatchListMode::Disabled`, client-go
    /// without the `WatchListClient` gate); by default a server that does watch-lists
    /// (kcache-testserver, kube-apiserver 1.27+ with the gate) gets one.
    #[arg(long)]
    no_watch_list: bool,
}

/// What the handler counts; `reached` fires once `updates` reaches the expected number.
struct Counts {
    adds: AtomicU64,
    updates: AtomicU64,
    expect: u64,
    reached: Notify,
}

pub fn run(args: Args) {
    if args.metadata && args.storage == Storage::Object {
        eprintln!(
            "kcache-bench: --metadata caches PartialObjectMeta; use --storage plain or compact"
        );
        std::process::exit(2);
    }
    if args.lazy && args.storage != Storage::Compact {
        eprintln!("kcache-bench: --lazy needs --storage compact");
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
            config.disable_compression = Some(args.disable_compression);
            config.metadata_protobuf = !args.no_protobuf;
            config.protobuf = !args.no_protobuf;
        });
        let mut options = FactoryOptions::default();
        if args.no_watch_list {
            options.informer.reflector.watch_list = WatchListMode::Disabled;
        }
        let factory = SharedInformerFactory::new(client.clone(), options);
        let fields = match args.resource {
            InformedResource::Configmaps => {
                inform::<ConfigMap>(factory, &client, &args, deadline).await
            }
            InformedResource::Pods => inform::<Pod>(factory, &client, &args, deadline).await,
        };
        emit("informer", fields);
    });
}

/// Builds the informer of `R` that `args` ask for, measures it and shuts the factory down (or
/// weighs it, with `--account`); the report's fields.
async fn inform<R>(
    factory: SharedInformerFactory,
    client: &Client,
    args: &Args,
    deadline: Instant,
) -> serde_json::Value
where
    R: Resource + Object + Clone + serde::de::DeserializeOwned,
{
    let baseline = args.account.then(account::Probe::now);
    let account;
    let mut fields = match (args.metadata, args.storage) {
        (true, Storage::Compact) => {
            let informer = factory.compact_metadata_informer::<R>();
            let fields;
            (fields, account) = compact(factory, client, informer, args, deadline, baseline).await;
            fields
        }
        (false, Storage::Compact) => {
            let informer = factory.compact_informer::<R>();
            let fields;
            (fields, account) = compact(factory, client, informer, args, deadline, baseline).await;
            fields
        }
        (_, Storage::Object) => {
            let informer = compact_object_informer::<R>(&factory, client);
            let add = |h| drop(informer.add_event_handler(h).expect("a new informer"));
            let fields = measure(&factory, client, &informer, add, args, deadline).await;
            account = settle(baseline, None::<&Api<R>>, factory, informer).await;
            fields
        }
        (true, Storage::Plain) => {
            let informer = factory.metadata_informer::<R>();
            let add = |h| drop(informer.add_event_handler(h).expect("a new informer"));
            let fields = measure(&factory, client, &informer, add, args, deadline).await;
            let lister = Api::<R>::all(client.clone()).into_metadata();
            account = settle(baseline, Some(&lister), factory, informer).await;
            fields
        }
        (false, Storage::Plain) => {
            let informer = factory.informer::<R>();
            let add = |h| drop(informer.add_event_handler(h).expect("a new informer"));
            let fields = measure(&factory, client, &informer, add, args, deadline).await;
            let lister = Api::<R>::all(client.clone()).with_exact_copies();
            account = settle(baseline, Some(&lister), factory, informer).await;
            fields
        }
    };
    fields["resource"] = format!("{:?}", args.resource).to_lowercase().into();
    fields["storage"] = format!("{:?}", args.storage).to_lowercase().into();
    fields["metadata_only"] = args.metadata.into();
    fields["compression"] = (!args.disable_compression).into();
    // Whether lists asked for protobuf first: metadata-only ones, and ConfigMaps (`ItemKind`).
    let protobuf_kind = args.metadata || matches!(args.resource, InformedResource::Configmaps);
    fields["protobuf"] = (protobuf_kind && !args.no_protobuf).into();
    fields["watch_list"] = (!args.no_watch_list).into();
    fields["lazy"] = args.lazy.into();
    if let Some(account) = account {
        fields["account"] = account;
    }
    fields
}

/// Measures a compact informer (the factory's `compact_informer` or `compact_metadata_informer`)
/// and ends the scenario: the report's fields and, with `--account`, the weighing.
async fn compact<K>(
    factory: SharedInformerFactory,
    client: &Client,
    informer: CompactInformer<K>,
    args: &Args,
    deadline: Instant,
    baseline: Option<account::Probe>,
) -> (serde_json::Value, Option<serde_json::Value>)
where
    K: Object + serde::de::DeserializeOwned,
{
    let fields = if args.lazy {
        let add = |h| drop(informer.add_lazy_event_handler(h).expect("a new informer"));
        measure(&factory, client, informer.informer(), add, args, deadline).await
    } else {
        let add = |h| drop(informer.add_event_handler(h).expect("a new informer"));
        measure(&factory, client, informer.informer(), add, args, deadline).await
    };
    // Only the informer underneath is weighed: dropping the typed wrapper first lets the
    // factory's shutdown free everything.
    let inner = informer.informer().clone();
    drop(informer);
    (
        fields,
        settle(baseline, None::<&Api<K>>, factory, inner).await,
    )
}

/// Ends the scenario: with `--account` (a `baseline` probe), weighs the informer (and the
/// objects `lister` decodes, where the cache holds decoded `K`s) as it shuts down; else shuts
/// the factory down.
async fn settle<S: Object, K: Object + serde::de::DeserializeOwned>(
    baseline: Option<account::Probe>,
    lister: Option<&Api<K>>,
    factory: SharedInformerFactory,
    informer: SharedIndexInformer<S>,
) -> Option<serde_json::Value> {
    let Some(baseline) = baseline else {
        factory.shutdown().await;
        return None;
    };
    let at_sync = account::Probe::now();
    let objects = match lister {
        Some(lister) => Some(account::weigh_objects(lister).await),
        None => None,
    };
    Some(account::weigh(baseline, at_sync, objects, factory, informer).await)
}

/// The informer of `R`'s resource caching [`CompactObject`]s, indexed by namespace as the
/// factory's typed informers are.
fn compact_object_informer<R: Resource>(
    factory: &SharedInformerFactory,
    client: &Client,
) -> SharedIndexInformer<CompactObject> {
    let resource = R::api_resource();
    let client = client.clone();
    factory.informer_for(
        &resource,
        || Indexers::new().with_namespace_index(),
        |o| Api::<CompactObject>::dynamic(client, resource.clone(), o.namespace.as_deref()),
    )
}

/// Registers the counting handler with `add`, starts the factory and measures `informer`'s
/// sync (and updates, and a relist); the report's fields.
async fn measure<S: Object, K: Object>(
    factory: &SharedInformerFactory,
    client: &Client,
    informer: &SharedIndexInformer<S>,
    add: impl FnOnce(ResourceEventHandlerFuncs<K>),
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
    let synced = tokio::time::timeout_at(deadline.into(), informer.wait_for_cache_sync()).await;
    if synced != Ok(true) {
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
    let mut fields = json!({
        "sync_seconds": sync_seconds,
        "objects": informer.indexer().len(),
        "initial_adds": counts.adds.load(Ordering::Relaxed),
        "updates": counts.updates.load(Ordering::Relaxed),
        "update_seconds": update_seconds,
        "rss_bytes": rss_bytes(),
        "at_sync": at_sync.map(|p| p.to_json()),
    });
    if args.relist {
        fields["peak_rss_sync_bytes"] = peak_rss_bytes().into();
        let relist = relist(client, informer, &counts, deadline).await;
        fields["relist_seconds"] = relist.into();
        fields["peak_rss_relist_bytes"] = peak_rss_bytes().into();
        fields["relists"] = informer.stats().reflector.relists.into();
        fields["rss_after_relist_bytes"] = rss_bytes().into();
    }
    fields
}

/// Resets the peak RSS, makes the server expire every watch and waits until each cached
/// object has come back as an update from the relist; the seconds that took.
async fn relist<K: Object>(
    client: &Client,
    informer: &SharedIndexInformer<K>,
    counts: &Counts,
    deadline: Instant,
) -> f64 {
    reset_peak_rss();
    let target = counts.updates.load(Ordering::Relaxed) + informer.indexer().len() as u64;
    let start = Instant::now();
    let req = http::Request::post(EXPIRE_WATCHES)
        .body(Bytes::new())
        .expect("a static request is valid");
    if let Err(e) = client.request_bytes(req).await {
        eprintln!(
            "kcache-bench: {EXPIRE_WATCHES} failed (is the server kcache-testserver?): {}",
            kcache_core::ErrorChain(&e)
        );
        std::process::exit(1);
    }
    while counts.updates.load(Ordering::Relaxed) < target {
        if Instant::now() >= deadline {
            eprintln!("timed out waiting for the relist");
            std::process::exit(1);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let seconds = start.elapsed().as_secs_f64();
    eprintln!("RELISTED");
    seconds
}
