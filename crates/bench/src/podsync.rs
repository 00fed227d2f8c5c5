//! The `podsync` scenario (see the crate README): the informer machinery alone, no network. The list
//! call reads and decodes the cgbench `podlist` fixture into [`CompactObject`]s; the watch is an
//! in-memory channel. Indexes `namespace`, `node` (spec.nodeName) and `app` (label); `handlers`
//! handlers count notifications. Measures the time until the informer has synced and every
//! initial add has reached every handler, the heap kept per object after that (allocated minus
//! freed bytes, counted by [`crate::heap`], minus the baseline taken before the informer exists),
//! then the time for `events` MODIFIED events — copies of cached pods with new resourceVersions,
//! built before the clock starts — to reach every handler.
//!
//! `--typed` runs the same with k8s-openapi `Pod`s: handlers receive `Pod`s and the `node` and
//! `app` index functions take `Pod`s. `--storage compact` (the default) is kcache-informer's
//! `CompactInformer<Pod>` (the pipeline carries `Compact<Pod>`, each handler gets a `Pod`
//! decoded from the shared tree; the index functions share one decode per write (`TypedIndexes`)
//! and each is registered with the `same_at` check of
//! the path it reads, so an update that leaves that path does not call it); `--lazy` gives the
//! same informer's handlers `LazyTyped<Pod>`s (decoded when read, once for all handlers);
//! `--storage plain` is a `SharedIndexInformer<Pod>`.
//! The report names the mode in `objects_as` and `storage`. `--read` makes every handler read
//! each object's `spec.nodeName` (in every mode), which a lazy handler pays a decode for.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;
use k8s_openapi::api::core::v1::Pod;
use kcache_compact::{Compact, CompactObject, CompactValue};
use kcache_core::{
    Error, ListParams, ListerWatcher, Object, ObjectList, WatchEvent, WatchParams, WatchStream,
};
use kcache_informer::{
    same_at, CompactInformer, InformerOptions, LazyTyped, ResourceEventHandlerFuncs,
    ResourceEventHandlerRegistration, SharedIndexInformer, TypedIndexes,
};
use kcache_reflector::WatchListMode;
use kcache_store::{IndexValues, Indexers};
use kcache_transport::decode::{ListStream, DEFAULT_MAX_OBJECT_SIZE};
use parking_lot::Mutex;
use serde::de::DeserializeOwned;
use serde_json::json;
use tokio::sync::{mpsc, Notify};
use tokio_util::sync::CancellationToken;

/// Flags, as cgbench's.
#[derive(clap::Args)]
pub struct Args {
    /// The PodList fixture written by `cgbench -scenario podlist`.
    #[arg(long)]
    file: PathBuf,
    /// How many handlers.
    #[arg(long, default_value_t = 10)]
    handlers: usize,
    /// How many MODIFIED events after sync.
    #[arg(long, default_value_t = 100_000)]
    events: usize,
    /// Typed `Pod`s for handlers and index functions.
    #[arg(long)]
    typed: bool,
    /// With `--typed`: how the informer keeps them.
    #[arg(long, value_enum, default_value_t = crate::storage::Storage::Compact)]
    storage: crate::storage::Storage,
    /// With `--typed --storage compact`: lazy handlers (`LazyTyped<Pod>`, decoded when read).
    #[arg(long)]
    lazy: bool,
    /// Each handler reads every object it gets (its `spec.nodeName`), as a handler filtering on
    /// the spec would: what a lazy handler that reads costs.
    #[arg(long)]
    read: bool,
}

type Event<K> = Result<WatchEvent<K>, Error>;

/// How much of the fixture the list decoder gets at a time.
const CHUNK: usize = 64 * 1024;

/// Lists the fixture file; watches a channel (client-go's `watch.FakeWatcher` in cgbench).
struct FixtureSource<K> {
    file: PathBuf,
    watch: Mutex<Option<mpsc::Receiver<Event<K>>>>,
}

impl<K: DeserializeOwned + Send + 'static> ListerWatcher<K> for FixtureSource<K> {
    /// Reads the file, then decodes it as a list response body is decoded (kcache-transport's
    /// `ListStream`: items in batches on every core), fed in chunks of a socket read's size.
    async fn list(&self, _: &ListParams) -> Result<ObjectList<K>, Error> {
        self.items().await?.into_list().await
    }

    /// As kcache-transport's `Api` does: each item goes into its `Arc` where it was decoded.
    async fn list_shared(&self, _: &ListParams) -> Result<ObjectList<Arc<K>>, Error>
    where
        K: Send + Sync,
    {
        self.items().await?.into_shared_list().await
    }

    /// The channel's one stream; a second watch (none is expected: the channel never ends while
    /// the scenario runs) gets a stream that never yields.
    async fn watch(&self, _: &WatchParams) -> Result<WatchStream<K>, Error> {
        Ok(match self.watch.lock().take() {
            Some(rx) => Box::pin(tokio_stream::wrappers::ReceiverStream::new(rx)),
            None => Box::pin(futures_util::stream::pending()),
        })
    }
}

impl<K: DeserializeOwned> FixtureSource<K> {
    /// The fixture's list, read whole, then fed to the list decoder in socket-read-sized chunks.
    async fn items(
        &self,
    ) -> Result<ListStream<impl futures_util::Stream<Item = Result<Bytes, Error>>, K>, Error> {
        let file = self.file.clone();
        let bytes = tokio::task::spawn_blocking(move || std::fs::read(file))
            .await
            .map_err(|e| Error::Request(Box::new(e)))?
            .map_err(|e| Error::Request(Box::new(e)))?;
        let body = Bytes::from(bytes);
        let chunks = (0..body.len())
            .step_by(CHUNK)
            .map(move |at| Ok::<_, Error>(body.slice(at..(at + CHUNK).min(body.len()))));
        Ok(ListStream::new(
            futures_util::stream::iter(chunks),
            DEFAULT_MAX_OBJECT_SIZE,
        ))
    }
}

fn node_of(p: &Pod) -> Result<IndexValues<'_>, kcache_core::BoxError> {
    let node = p.spec.as_ref().and_then(|s| s.node_name.as_deref());
    Ok(IndexValues::one(node.unwrap_or("")))
}

fn app_of(p: &Pod) -> Result<IndexValues<'_>, kcache_core::BoxError> {
    Ok(IndexValues::one(p.label("app").unwrap_or("")))
}

/// One way of caching the fixture's pods: what the list and watch carry (`Stored`), what
/// handlers receive (`Handed`).
trait Mode: Sized {
    type Stored: Object + DeserializeOwned;
    type Handed: Send + Sync + 'static;
    const NAME: (&'static str, &'static str);
    fn build(source: FixtureSource<Self::Stored>, options: InformerOptions) -> Self;
    fn informer(&self) -> &SharedIndexInformer<Self::Stored>;
    fn add_handler(
        &self,
        h: ResourceEventHandlerFuncs<Self::Handed>,
    ) -> ResourceEventHandlerRegistration<Self::Stored>;
    /// What `--read` reads of each object handed: its node's name.
    fn node(obj: &Self::Handed) -> Option<&str>;
    /// A copy of `obj` with resourceVersion `rv`.
    fn bump(obj: &Self::Stored, rv: &str) -> Self::Stored;
}

/// `SharedIndexInformer<CompactObject>`, index functions over the tree.
struct Untyped(SharedIndexInformer<CompactObject>);

impl Mode for Untyped {
    type Stored = CompactObject;
    type Handed = CompactObject;
    const NAME: (&'static str, &'static str) = ("CompactObject", "compact");
    fn build(source: FixtureSource<CompactObject>, options: InformerOptions) -> Self {
        let indexers = Indexers::new()
            .with_namespace_index()
            .with("node", |p: &CompactObject| {
                let node = p.get(&["spec", "nodeName"]).and_then(CompactValue::as_str);
                Ok(IndexValues::one(node.unwrap_or("")))
            })
            .with("app", |p: &CompactObject| {
                Ok(IndexValues::one(p.label("app").unwrap_or("")))
            });
        Untyped(SharedIndexInformer::new(source, indexers, options))
    }
    fn informer(&self) -> &SharedIndexInformer<CompactObject> {
        &self.0
    }
    fn add_handler(
        &self,
        h: ResourceEventHandlerFuncs<CompactObject>,
    ) -> ResourceEventHandlerRegistration<CompactObject> {
        self.0.add_event_handler(h).expect("add handler")
    }
    fn node(obj: &CompactObject) -> Option<&str> {
        obj.get(&["spec", "nodeName"])
            .and_then(CompactValue::as_str)
    }
    fn bump(obj: &CompactObject, rv: &str) -> CompactObject {
        obj.with_resource_version(rv)
    }
}

/// `SharedIndexInformer<Pod>`: typed all the way.
struct PlainPods(SharedIndexInformer<Pod>);

impl Mode for PlainPods {
    type Stored = Pod;
    type Handed = Pod;
    const NAME: (&'static str, &'static str) = ("Pod", "plain");
    fn build(source: FixtureSource<Pod>, options: InformerOptions) -> Self {
        let indexers = Indexers::new()
            .with_namespace_index()
            .with("node", node_of)
            .with("app", app_of);
        PlainPods(SharedIndexInformer::new(source, indexers, options))
    }
    fn informer(&self) -> &SharedIndexInformer<Pod> {
        &self.0
    }
    fn add_handler(
        &self,
        h: ResourceEventHandlerFuncs<Pod>,
    ) -> ResourceEventHandlerRegistration<Pod> {
        self.0.add_event_handler(h).expect("add handler")
    }
    fn node(obj: &Pod) -> Option<&str> {
        obj.spec.as_ref()?.node_name.as_deref()
    }
    fn bump(obj: &Pod, rv: &str) -> Pod {
        let mut p = obj.clone();
        p.metadata.resource_version = Some(rv.to_string());
        p
    }
}

/// `CompactInformer<Pod>`: compact inside, typed `Pod`s to handlers and index functions.
struct CompactPods(CompactInformer<Pod>);

/// The compact pod informer, its `node` and `app` index functions over `Pod`s.
fn compact_pods(
    source: FixtureSource<Compact<Pod>>,
    options: InformerOptions,
) -> CompactInformer<Pod> {
    let typed = TypedIndexes::new();
    let indexers = Indexers::new()
        .with_namespace_index()
        .with_reuse(
            "node",
            typed.index(node_of),
            same_at(&[&["spec", "nodeName"]]),
        )
        .with_reuse(
            "app",
            typed.index(app_of),
            same_at(&[&["metadata", "labels", "app"]]),
        );
    CompactInformer::new(source, indexers, options)
}

impl Mode for CompactPods {
    type Stored = Compact<Pod>;
    type Handed = Pod;
    const NAME: (&'static str, &'static str) = ("Pod", "compact");
    fn build(source: FixtureSource<Compact<Pod>>, options: InformerOptions) -> Self {
        CompactPods(compact_pods(source, options))
    }
    fn informer(&self) -> &SharedIndexInformer<Compact<Pod>> {
        self.0.informer()
    }
    fn add_handler(
        &self,
        h: ResourceEventHandlerFuncs<Pod>,
    ) -> ResourceEventHandlerRegistration<Compact<Pod>> {
        self.0.add_event_handler(h).expect("add handler")
    }
    fn node(obj: &Pod) -> Option<&str> {
        PlainPods::node(obj)
    }
    fn bump(obj: &Compact<Pod>, rv: &str) -> Compact<Pod> {
        obj.with_resource_version(rv)
    }
}

/// `CompactInformer<Pod>` with lazy handlers: `LazyTyped<Pod>`s, decoded when read.
struct LazyPods(CompactInformer<Pod>);

impl Mode for LazyPods {
    type Stored = Compact<Pod>;
    type Handed = LazyTyped<Pod>;
    const NAME: (&'static str, &'static str) = ("LazyTyped<Pod>", "compact");
    fn build(source: FixtureSource<Compact<Pod>>, options: InformerOptions) -> Self {
        LazyPods(compact_pods(source, options))
    }
    fn informer(&self) -> &SharedIndexInformer<Compact<Pod>> {
        self.0.informer()
    }
    fn add_handler(
        &self,
        h: ResourceEventHandlerFuncs<LazyTyped<Pod>>,
    ) -> ResourceEventHandlerRegistration<Compact<Pod>> {
        self.0.add_lazy_event_handler(h).expect("add handler")
    }
    fn node(obj: &LazyTyped<Pod>) -> Option<&str> {
        PlainPods::node(obj)
    }
    fn bump(obj: &Compact<Pod>, rv: &str) -> Compact<Pod> {
        obj.with_resource_version(rv)
    }
}

/// Counts one handler's updates and wakes the clock when the last handler has seen them all.
struct Finish {
    target: usize,
    handlers_left: AtomicUsize,
    done: Notify,
}

pub fn run(args: Args) {
    crate::heap::start_counting();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    match (args.typed, args.storage, args.lazy) {
        (false, _, false) => rt.block_on(podsync::<Untyped>(args)),
        (true, crate::storage::Storage::Plain, false) => rt.block_on(podsync::<PlainPods>(args)),
        (true, crate::storage::Storage::Compact, false) => {
            rt.block_on(podsync::<CompactPods>(args))
        }
        (true, crate::storage::Storage::Compact, true) => rt.block_on(podsync::<LazyPods>(args)),
        _ => {
            eprintln!("kcache-bench: --lazy needs --typed --storage compact");
            std::process::exit(2);
        }
    }
}

async fn podsync<M: Mode>(args: Args) {
    let base = crate::heap::heap_in_use();
    let (tx, rx) = mpsc::channel(1024);
    let source = FixtureSource {
        file: args.file.clone(),
        watch: Mutex::new(Some(rx)),
    };
    let mut options = InformerOptions::named("podsync");
    options.reflector.watch_list = WatchListMode::Disabled;
    let mode = M::build(source, options);
    let informer = mode.informer().clone();
    let finish = Arc::new(Finish {
        target: args.events,
        handlers_left: AtomicUsize::new(args.handlers),
        done: Notify::new(),
    });
    let registrations: Vec<_> = (0..args.handlers)
        .map(|_| {
            let finish = finish.clone();
            let updates = AtomicUsize::new(0);
            let adds = Arc::new(AtomicUsize::new(0));
            let read = args.read;
            let handler = ResourceEventHandlerFuncs::new()
                .on_add({
                    let adds = adds.clone();
                    move |obj: &Arc<M::Handed>, _| {
                        if read {
                            std::hint::black_box(M::node(obj));
                        }
                        adds.fetch_add(1, Ordering::Relaxed);
                    }
                })
                .on_update(move |_, new: &Arc<M::Handed>| {
                    if read {
                        std::hint::black_box(M::node(new));
                    }
                    if updates.fetch_add(1, Ordering::Relaxed) + 1 == finish.target
                        && finish.handlers_left.fetch_sub(1, Ordering::AcqRel) == 1
                    {
                        finish.done.notify_one();
                    }
                });
            let reg = mode.add_handler(handler);
            (reg, adds)
        })
        .collect();

    let cancel = CancellationToken::new();
    let start = Instant::now();
    let run = tokio::spawn({
        let informer = informer.clone();
        let cancel = cancel.clone();
        async move { informer.run(cancel).await }
    });
    for (reg, _) in &registrations {
        assert!(reg.wait_for_sync().await, "informer stopped before sync");
    }
    let sync_seconds = start.elapsed().as_secs_f64();
    let n = informer.indexer().len();
    for (_, adds) in &registrations {
        assert_eq!(
            adds.load(Ordering::Relaxed),
            n,
            "a handler missed initial adds"
        );
    }
    let retained = (crate::heap::heap_in_use() - base) as f64 / n.max(1) as f64;
    crate::heap::stop_counting();

    let cached = informer.indexer().list();
    let events: Vec<M::Stored> = (0..args.events)
        .map(|i| M::bump(&cached[i % cached.len()], &(2_000_000 + i).to_string()))
        .collect();
    drop(cached);
    let t1 = Instant::now();
    let done = finish.done.notified();
    tokio::pin!(done);
    done.as_mut().enable();
    for obj in events {
        tx.send(Ok(WatchEvent::Modified(obj)))
            .await
            .expect("watch channel open");
    }
    if args.events > 0 && args.handlers > 0 {
        done.await;
    }
    let elapsed = t1.elapsed().as_secs_f64();
    cancel.cancel();
    run.await.expect("informer task").expect("informer run");

    crate::report::emit(
        "podsync",
        json!({
            "objects": n,
            "objects_as": M::NAME.0,
            "handlers_read": args.read,
            "storage": M::NAME.1,
            "handlers": args.handlers,
            "sync_seconds": sync_seconds,
            "retained_bytes_per_object": retained,
            "events": args.events,
            "fanout_events_per_sec": args.events as f64 / elapsed,
            "deliveries_per_sec": (args.events * args.handlers) as f64 / elapsed,
        }),
    );
}
