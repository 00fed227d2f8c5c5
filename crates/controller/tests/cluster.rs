//! Against kcache-testserver: workers start after the caches and handlers synced, owned objects
//! map to their controller owner (or to every owner), one key is never reconciled twice at once,
//! read-your-writes, a failing watch of one owned kind backs off alone, and the controller as a
//! manager's `Runnable`.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kcache_controller::{
    Action, Controller, DefaultErrorPolicy, Predicate, ReconcileRequest, Runnable, SourceOptions,
    Storage, WriteTracker,
};
use kcache_informer::{FactoryOptions, SharedInformerFactory};
use kcache_testing::{Failure, RequestMatch, TestCluster, ROOT_CA_CONFIGMAP};
use kcache_transport::{Api, Patch, PatchParams, PostParams};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::support::{cluster_client, cm, Recorder, TestError, LIMIT};

fn owned_secret(name: &str, owner: &ConfigMap, controller: bool) -> Secret {
    Secret {
        metadata: ObjectMeta {
            name: Some(name.into()),
            owner_references: Some(vec![OwnerReference {
                api_version: "v1".into(),
                kind: "ConfigMap".into(),
                name: owner.metadata.name.clone().unwrap(),
                uid: owner.metadata.uid.clone().unwrap(),
                controller: Some(controller),
                block_owner_deletion: None,
            }]),
            ..Default::default()
        },
        ..Default::default()
    }
}

async fn touch(api: &Api<Secret>, name: &str, value: &str) {
    let patch = json!({"metadata": {"labels": {"touched": value}}});
    api.patch(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
}

struct Setup {
    cluster: TestCluster,
    factory: Arc<SharedInformerFactory>,
    cms: Api<ConfigMap>,
    secrets: Api<Secret>,
}

/// ConfigMaps a and b; Secret s-a controlled by a, Secret s-b owned (not controlled) by b.
async fn setup() -> Setup {
    let cluster = TestCluster::start().await.unwrap();
    let ns = cluster.create_namespace("ctrl").await.unwrap();
    let client = cluster_client(&cluster);
    let cms = Api::<ConfigMap>::namespaced(client.clone(), &ns);
    let secrets = Api::<Secret>::namespaced(client.clone(), &ns);
    let pp = PostParams::default();
    let a = cms.create(&pp, &cm(&ns, "a")).await.unwrap();
    let b = cms.create(&pp, &cm(&ns, "b")).await.unwrap();
    secrets
        .create(&pp, &owned_secret("s-a", &a, true))
        .await
        .unwrap();
    secrets
        .create(&pp, &owned_secret("s-b", &b, false))
        .await
        .unwrap();
    let options = FactoryOptions {
        namespace: Some(ns),
        ..Default::default()
    };
    let factory = Arc::new(SharedInformerFactory::new(client, options));
    Setup {
        cluster,
        factory,
        cms,
        secrets,
    }
}

/// The context of the cluster tests: a recorder, and whether every reconcile found both caches
/// synced.
struct Ctx {
    rec: Recorder,
    factory: Arc<SharedInformerFactory>,
    unsynced: AtomicUsize,
    in_flight: AtomicUsize,
    overlaps: AtomicUsize,
}

/// Whether a test counts this ConfigMap: a full cluster adds its root CA to every namespace.
fn counted(cm: &ConfigMap) -> bool {
    cm.metadata.name.as_deref() != Some(ROOT_CA_CONFIGMAP)
}

async fn observe(cm: Arc<ConfigMap>, ctx: Arc<Ctx>) -> Result<Action, TestError> {
    if !counted(&cm) {
        return Ok(Action::await_change());
    }
    if ctx.in_flight.fetch_add(1, Ordering::SeqCst) > 0 {
        ctx.overlaps.fetch_add(1, Ordering::SeqCst);
    }
    let synced = ctx.factory.compact_informer::<ConfigMap>().has_synced()
        && ctx.factory.compact_informer::<Secret>().has_synced();
    if !synced {
        ctx.unsynced.fetch_add(1, Ordering::SeqCst);
    }
    tokio::task::yield_now().await;
    ctx.rec.record(&cm);
    ctx.in_flight.fetch_sub(1, Ordering::SeqCst);
    Ok(Action::await_change())
}

fn ctx(factory: &Arc<SharedInformerFactory>) -> Arc<Ctx> {
    Arc::new(Ctx {
        rec: Recorder::default(),
        factory: factory.clone(),
        unsynced: AtomicUsize::new(0),
        in_flight: AtomicUsize::new(0),
        overlaps: AtomicUsize::new(0),
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn owned_changes_reconcile_the_controller_owner_only() {
    let s = setup().await;
    let ctx = ctx(&s.factory);
    let stop = CancellationToken::new();
    let c = Controller::for_::<ConfigMap>(&s.factory)
        .named("owns-controller-rule")
        .owns::<Secret>()
        .shutdown_on(stop.clone());
    let task = tokio::spawn(c.run(observe, DefaultErrorPolicy, ctx.clone()));
    ctx.rec.wait_until("the first list", |c| c.len() == 2).await;
    assert_eq!(
        ctx.unsynced.load(Ordering::SeqCst),
        0,
        "workers wait for sync"
    );
    // s-b's change comes first and must not reconcile b (not its controller); then s-a's.
    touch(&s.secrets, "s-b", "1").await;
    touch(&s.secrets, "s-a", "1").await;
    ctx.rec
        .wait_until("a again", |c| c.iter().filter(|c| c.0 == "a").count() == 2)
        .await;
    assert_eq!(ctx.rec.count("b"), 1, "{:?}", ctx.rec.names());
    stop.cancel();
    task.await.unwrap().unwrap();
}

/// `Controller::new` watches through a factory of its own (every namespace; the test's objects
/// picked by a predicate) and stops it when it stops: its watches end with it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn new_runs_a_factory_of_its_own_and_stops_it_with_the_controller() {
    let s = setup().await;
    let ns = s.factory.options().namespace.clone();
    let watchers = || s.cluster.server().map(|server| server.watcher_count());
    let before = watchers();
    let rec = Arc::new(Recorder::default());
    let stop = CancellationToken::new();
    let ours = ns.clone();
    let c = Controller::new::<ConfigMap>(&cluster_client(&s.cluster))
        .named("new-own-factory")
        .predicate(Predicate::from_object(move |cm: &ConfigMap| {
            cm.metadata.namespace == ns && counted(cm)
        }))
        .owns::<Secret>()
        .shutdown_on(stop.clone());
    // The factory watches every namespace: on a shared cluster, other tests' owned Secrets
    // (their namespaces' "a" and "b") come through too, and are not counted.
    let record = move |cm: Arc<ConfigMap>, rec: Arc<Recorder>| {
        let counted = cm.metadata.namespace == ours;
        async move {
            if counted {
                rec.record(&cm);
            }
            Ok::<_, TestError>(Action::await_change())
        }
    };
    let task = tokio::spawn(c.run(record, DefaultErrorPolicy, rec.clone()));
    rec.wait_until("the first list", |c| c.len() == 2).await;
    touch(&s.secrets, "s-a", "1").await;
    rec.wait_until("a again, through the owned Secret", |c| c.len() == 3)
        .await;
    assert_eq!(rec.names()[2], "a");
    if let (Some(before), Some(running)) = (before, watchers()) {
        assert!(running >= before + 2, "ConfigMaps and Secrets watched");
    }
    stop.cancel();
    task.await.unwrap().unwrap();

    // The server drops a watcher whose client went away at its next event.
    let deadline = tokio::time::Instant::now() + LIMIT;
    for i in 0.. {
        if watchers() <= before {
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "watches still open");
        touch(&s.secrets, "s-b", &format!("after-{i}")).await;
        let patch = json!({"metadata": {"labels": {"touched": format!("after-{i}")}}});
        s.cms
            .patch("b", &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .unwrap();
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_owner_maps_non_controller_owners_too_over_the_plain_cache() {
    let s = setup().await;
    let ctx = ctx(&s.factory);
    let stop = CancellationToken::new();
    let c = Controller::for_with_storage::<ConfigMap>(&s.factory, Storage::Plain)
        .named("owns-every-owner")
        .owns_with::<Secret>(SourceOptions::new().every_owner())
        .concurrency(4)
        .shutdown_on(stop.clone());
    let observe_plain = |cm: Arc<ConfigMap>, ctx: Arc<Ctx>| async move {
        if counted(&cm) {
            ctx.rec.record(&cm);
        }
        Ok::<_, TestError>(Action::await_change())
    };
    let task = tokio::spawn(c.run(observe_plain, DefaultErrorPolicy, ctx.clone()));
    ctx.rec.wait_until("the first list", |c| c.len() == 2).await;
    touch(&s.secrets, "s-b", "1").await;
    ctx.rec
        .wait_until("b again", |c| c.iter().filter(|c| c.0 == "b").count() == 2)
        .await;
    stop.cancel();
    task.await.unwrap().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_key_is_never_reconciled_twice_at_once() {
    let s = setup().await;
    let ctx = ctx(&s.factory);
    let stop = CancellationToken::new();
    let c = Controller::for_::<ConfigMap>(&s.factory)
        .named("never-twice")
        .owns::<Secret>()
        .concurrency(8)
        .shutdown_on(stop.clone());
    // Only a is reconciled (b filtered out), by 8 workers, while its Secret changes 20 times.
    let c = c.predicate(kcache_controller::Predicate::from_object(
        |cm: &ConfigMap| cm.metadata.name.as_deref() == Some("a"),
    ));
    let task = tokio::spawn(c.run(observe, DefaultErrorPolicy, ctx.clone()));
    ctx.rec.wait_until("a", |c| !c.is_empty()).await;
    for i in 0..20 {
        touch(&s.secrets, "s-a", &i.to_string()).await;
    }
    touch(&s.secrets, "s-a", "last").await;
    ctx.rec
        .wait_until("a after the changes", |c| c.len() >= 2)
        .await;
    stop.cancel();
    task.await.unwrap().unwrap();
    assert_eq!(ctx.overlaps.load(Ordering::SeqCst), 0);
    assert_eq!(ctx.rec.count("b"), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_owned_watch_backs_off_alone() {
    // kube-runtime shares one backoff across the trigger watches, so one failing kind stalls
    // them all; here each source is its own informer with its own reflector and backoff.
    let s = setup().await;
    let Some(server) = s.cluster.server() else {
        println!(
            "kcache-skip: a_failing_owned_watch_backs_off_alone: fault injection needs the \
             embedded server"
        );
        return;
    };
    let ctx = ctx(&s.factory);
    let stop = CancellationToken::new();
    let c = Controller::for_::<ConfigMap>(&s.factory)
        .named("owned-backs-off-alone")
        .owns::<Secret>()
        .shutdown_on(stop.clone());
    let task = tokio::spawn(c.run(observe, DefaultErrorPolicy, ctx.clone()));
    ctx.rec.wait_until("the first list", |c| c.len() == 2).await;
    let secret_stats = || {
        s.factory
            .compact_informer::<Secret>()
            .informer()
            .stats()
            .reflector
    };
    let before = secret_stats();

    // Every Secret request fails from now on; every watch is cut, so both kinds relist.
    server.fail_next(
        usize::MAX,
        RequestMatch::any().resource("secrets"),
        Failure::InternalError,
    );
    server.expire_watches();
    let patch = json!({"data": {"k": "1"}});
    s.cms
        .patch("b", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
    ctx.rec
        .wait_until("b while Secrets fail", |c| {
            c.iter().filter(|c| c.0 == "b").count() == 2
        })
        .await;
    let during = secret_stats();
    assert_eq!(
        during.syncs, before.syncs,
        "no Secret list has succeeded: {during:?}"
    );

    // Once Secrets answer again, their changes trigger as before. How many reconciles of a
    // that takes depends on timing (the Secrets' relist after the faults reaches a too, and may
    // or may not fold into the touch's), so the wait is for one after the recovery, not for a
    // count.
    server.clear_faults();
    let recovered = tokio::time::Instant::now();
    touch(&s.secrets, "s-a", "after").await;
    ctx.rec
        .wait_until("a after Secrets recovered", |c| {
            c.iter().any(|c| c.0 == "a" && c.2 >= recovered)
        })
        .await;
    stop.cancel();
    task.await.unwrap().unwrap();
}

struct RywCtx {
    client: kcache_transport::Client,
    secrets: Arc<dyn kcache_controller::ObjectCache<Secret>>,
    writes: WriteTracker,
    /// The label value of the last write that succeeded (0: none yet).
    written: AtomicUsize,
    /// (last written, what the reconcile after it read) of every stale read.
    stale: parking_lot::Mutex<Vec<(usize, Option<String>)>>,
    rec: Recorder,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_next_reconcile_reads_the_controllers_own_write() {
    // Each reconcile bumps a counter in a's Secret and asks to run again at once: without the
    // wait, the next reconcile often reads the Secret from before the write.
    let s = setup().await;
    let stop = CancellationToken::new();
    let c = Controller::for_::<ConfigMap>(&s.factory)
        .named("read-your-writes")
        .owns::<Secret>()
        .shutdown_on(stop.clone());
    let ctx = Arc::new(RywCtx {
        client: s.secrets.client().clone(),
        secrets: Arc::new(s.factory.compact_informer::<Secret>()),
        writes: c.writes(),
        written: AtomicUsize::new(0),
        stale: Default::default(),
        rec: Recorder::default(),
    });
    let reconcile = |cm: Arc<ConfigMap>, ctx: Arc<RywCtx>| async move {
        if cm.metadata.name.as_deref() != Some("a") {
            return Ok(Action::await_change());
        }
        ctx.rec.record(&cm);
        let ns = cm.metadata.namespace.clone().unwrap();
        let n = ctx.rec.count("a");
        let cached = ctx.secrets.get(&format!("{ns}/s-a")).unwrap();
        let seen = cached
            .metadata
            .labels
            .as_ref()
            .and_then(|l| l.get("n").cloned());
        let written = ctx.written.load(Ordering::SeqCst);
        if written > 0 && seen != Some(written.to_string()) {
            ctx.stale.lock().push((written, seen));
        }
        if n == 10 {
            return Ok(Action::await_change());
        }
        let patch = json!({"metadata": {"labels": {"n": n.to_string()}}});
        let written = Api::<Secret>::namespaced(ctx.client.clone(), &ns)
            .patch("s-a", &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .map_err(|_| TestError::Retry)?;
        // Both ways to record a write: through the tracker, and on the reconcile's own task.
        if n.is_multiple_of(2) {
            ctx.writes.wrote(&ReconcileRequest::of(&*cm), &written);
        } else {
            assert!(
                kcache_controller::wrote(&written),
                "on the reconcile's task"
            );
        }
        ctx.written.store(n, Ordering::SeqCst);
        Ok::<_, TestError>(Action::requeue_after(std::time::Duration::ZERO))
    };
    let task = tokio::spawn(c.run(reconcile, DefaultErrorPolicy, ctx.clone()));
    ctx.rec
        .wait_until("ten reconciles of a", |c| c.len() >= 10)
        .await;
    stop.cancel();
    task.await.unwrap().unwrap();
    assert_eq!(*ctx.stale.lock(), [], "(written, read) of stale reads");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_manager_runs_the_controller_as_a_runnable() {
    let s = setup().await;
    let ctx = ctx(&s.factory);
    let runnable: Box<dyn Runnable> = Box::new(
        Controller::for_::<ConfigMap>(&s.factory)
            .named("as-runnable")
            .needs_leader_election(false)
            .into_runnable(observe, DefaultErrorPolicy, ctx.clone()),
    );
    assert_eq!(runnable.name(), "as-runnable");
    assert!(!runnable.needs_leader_election());
    let stop = CancellationToken::new();
    let task = tokio::spawn(runnable.start(stop.clone()));
    ctx.rec.wait_until("the first list", |c| c.len() == 2).await;
    stop.cancel();
    task.await.unwrap().unwrap();
}
