//! The reflector against kcache-testserver with random faults: watch cuts, half-written and
//! malformed events, compaction 410s, 429/500/503/504 bursts, too-large-RV errors, server
//! restarts, and objects written while the reflector is cut off. After the faults stop, the
//! store must equal the server within a bounded time, every object that vanished must have been
//! deleted through a watch `DELETED` or a relist tombstone, and no resourceVersion may go
//! backwards.
//!
//! `KCACHE_SOAK_SEEDS=N` runs N seeds (default 20; `cargo xtask soak` runs many);
//! `KCACHE_CHAOS_SEED=S` replays one seed. With `KCACHE_TEST_KUBECONFIG` set, the test runs the
//! plain list/watch/relist scenario against that cluster and skips fault injection.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use kcache_core::{DynamicObject, Error, Object, ObjectKey, ReflectorStore};
use kcache_reflector::{
    BackoffOptions, Reflector, ReflectorHandle, ReflectorOptions, WatchListMode,
};
use kcache_testing::{Failure, RequestMatch, ServerConfig, TestCluster, Verb, KUBECONFIG_ENV};
use kcache_transport::{Api, Client, Config, PostParams};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::json;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

const NAMES: usize = 24;
const CHAOS_STEPS: usize = 60;
const CONVERGE_WITHIN: Duration = Duration::from_secs(20);

/// A store that keeps key → resourceVersion like an indexer, turns a relist's missing keys into
/// tombstones like DeltaFIFO, and records every rule the reflector must not break.
#[derive(Default)]
struct CheckingStore {
    state: Mutex<Checked>,
}

#[derive(Default)]
struct Checked {
    items: BTreeMap<String, u64>,
    /// Every key the store ever held.
    ever: BTreeSet<String>,
    /// Keys whose last change was a delete (watch `DELETED` or relist tombstone).
    deleted: BTreeSet<String>,
    /// The newest resourceVersion the store has been brought to.
    high_water: u64,
    violations: Vec<String>,
}

fn rv_of(obj: &DynamicObject) -> u64 {
    obj.resource_version()
        .and_then(|rv| rv.parse().ok())
        .unwrap_or(0)
}

impl Checked {
    fn put(&mut self, key: String, rv: u64, what: &str) {
        if let Some(&old) = self.items.get(&key) {
            if rv < old {
                self.violations
                    .push(format!("{what} moved {key} back from {old} to {rv}"));
            }
        }
        self.high_water = self.high_water.max(rv);
        self.ever.insert(key.clone());
        self.deleted.remove(&key);
        self.items.insert(key, rv);
    }
}

impl ReflectorStore<DynamicObject> for CheckingStore {
    fn add(&self, obj: Arc<DynamicObject>) -> Result<(), Error> {
        let key = ObjectKey::of(&*obj).as_str().to_string();
        self.state.lock().unwrap().put(key, rv_of(&obj), "add");
        Ok(())
    }
    fn update(&self, obj: Arc<DynamicObject>) -> Result<(), Error> {
        let key = ObjectKey::of(&*obj).as_str().to_string();
        self.state.lock().unwrap().put(key, rv_of(&obj), "update");
        Ok(())
    }
    fn delete(&self, obj: Arc<DynamicObject>) -> Result<(), Error> {
        let key = ObjectKey::of(&*obj).as_str().to_string();
        let mut s = self.state.lock().unwrap();
        s.high_water = s.high_water.max(rv_of(&obj));
        s.items.remove(&key);
        s.deleted.insert(key);
        Ok(())
    }
    fn replace(&self, items: Vec<Arc<DynamicObject>>, rv: &str) -> Result<(), Error> {
        let rv: u64 = rv.parse().unwrap_or(0);
        let mut s = self.state.lock().unwrap();
        if rv < s.high_water {
            let msg = format!("relist at {rv} travelled back from {}", s.high_water);
            s.violations.push(msg);
        }
        let old = std::mem::take(&mut s.items);
        for obj in &items {
            let key = ObjectKey::of(&**obj).as_str().to_string();
            if let Some(&was) = old.get(&key) {
                s.items.insert(key.clone(), was);
            }
            s.put(key, rv_of(obj), "replace");
        }
        for key in old
            .keys()
            .filter(|k| !s.items.contains_key(*k))
            .cloned()
            .collect::<Vec<_>>()
        {
            s.deleted.insert(key);
        }
        s.high_water = s.high_water.max(rv);
        Ok(())
    }
    fn resync(&self) -> Result<(), Error> {
        Ok(())
    }
    fn bookmark(&self, rv: &str) {
        let rv: u64 = rv.parse().unwrap_or(0);
        let mut s = self.state.lock().unwrap();
        if rv < s.high_water {
            let msg = format!("bookmark at {rv} is older than {}", s.high_water);
            s.violations.push(msg);
        }
        s.high_water = s.high_water.max(rv);
    }
}

fn client_for(cluster: &TestCluster) -> Client {
    let mut config = Config::from_kubeconfig_file(cluster.kubeconfig_path()).expect("kubeconfig");
    // Faults must reach the reflector: no client-side retries or rate limiting.
    config.qps = 0.0;
    config.max_retries = 0;
    config.connect_timeout = Some(Duration::from_secs(2));
    config.request_timeout = Some(Duration::from_secs(5));
    Client::new(config).expect("client")
}

fn configmaps(cluster: &TestCluster, client: Client, namespace: &str) -> Api<DynamicObject> {
    let resource = match cluster.server() {
        Some(server) => server
            .api_resource("configmaps")
            .expect("configmaps are served"),
        None => kcache_core::ApiResource {
            group: String::new(),
            version: "v1".into(),
            kind: "ConfigMap".into(),
            plural: "configmaps".into(),
            namespaced: true,
        },
    };
    Api::dynamic(client, resource, Some(namespace))
}

fn configmap(namespace: &str, name: &str, value: u64) -> DynamicObject {
    serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace},
        "data": {"v": value.to_string()}
    }))
    .expect("a valid ConfigMap")
}

fn reflector_options(seed: u64) -> ReflectorOptions {
    ReflectorOptions {
        name: format!("chaos-{seed}"),
        watch_list: if seed.is_multiple_of(2) {
            WatchListMode::Auto
        } else {
            WatchListMode::Disabled
        },
        page_size: [None, Some(5)][(seed / 2 % 2) as usize],
        watch_list_end_timeout: Duration::from_secs(2),
        backoff: BackoffOptions {
            initial: Duration::from_millis(5),
            cap: Duration::from_millis(50),
            reset_after: Duration::from_secs(1),
            ..BackoffOptions::default()
        },
        ..ReflectorOptions::default()
    }
}

async fn assert_converges(
    label: &str,
    cluster: &TestCluster,
    namespace: &str,
    store: &CheckingStore,
    handle: &ReflectorHandle,
) {
    let deadline = Instant::now() + CONVERGE_WITHIN;
    let mut last = None;
    loop {
        if let Ok(truth) = cluster.configmap_versions(namespace).await {
            let held = store.state.lock().unwrap().items.clone();
            if held == truth {
                break;
            }
            last = Some((truth, held));
        }
        assert!(
            Instant::now() < deadline,
            "{label}: the store did not converge within {CONVERGE_WITHIN:?} \
             (stats {:?}, last RV {:?}); server vs store: {last:?}",
            handle.stats(),
            handle.last_sync_resource_version(),
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let s = store.state.lock().unwrap();
    assert!(s.violations.is_empty(), "{label}: {:?}", s.violations);
    for key in s.ever.iter().filter(|k| !s.items.contains_key(*k)) {
        assert!(
            s.deleted.contains(key),
            "{label}: {key} vanished without a delete"
        );
    }
}

async fn chaos_seed(seed: u64) {
    let mut rng = StdRng::seed_from_u64(seed);
    let cluster = TestCluster::start_with(ServerConfig {
        history_window: 40,
        bookmark_interval: Duration::from_millis(100),
        too_large_rv_wait: Duration::from_millis(20),
        ..ServerConfig::default()
    })
    .await
    .expect("test server");
    let server = cluster.server().expect("an embedded server");
    let namespace = cluster.create_namespace("chaos").await.expect("namespace");
    let api = configmaps(&cluster, client_for(&cluster), &namespace);
    for i in 0..NAMES / 2 {
        api.create(
            &PostParams::default(),
            &configmap(&namespace, &format!("cm-{i}"), 0),
        )
        .await
        .expect("seed objects");
    }

    let store = Arc::new(CheckingStore::default());
    let lister = configmaps(&cluster, client_for(&cluster), &namespace);
    let reflector = Reflector::new(lister, store.clone(), reflector_options(seed));
    let handle = reflector.handle();
    let cancel = CancellationToken::new();
    let task = tokio::spawn(reflector.run(cancel.clone()));

    for _ in 0..CHAOS_STEPS {
        if rng.random_bool(0.4) {
            kcache_testing::inject_random_fault(server, rng.random(), "configmaps")
                .await
                .expect("the server comes back");
        } else {
            let _ = cluster
                .random_configmap_write(rng.random(), &namespace, NAMES as u64)
                .await;
        }
        if rng.random_bool(0.1) {
            // Writes while the reflector cannot watch.
            server.fail_next(
                3,
                RequestMatch::any().verb(Verb::Watch),
                Failure::InternalError,
            );
            server.cut_watches();
            for _ in 0..rng.random_range(1..6) {
                let _ = cluster
                    .random_configmap_write(rng.random(), &namespace, NAMES as u64)
                    .await;
            }
        }
        tokio::time::sleep(Duration::from_millis(rng.random_range(0..12))).await;
    }
    server.clear_faults();
    assert_converges(
        &format!("seed {seed}"),
        &cluster,
        &namespace,
        &store,
        &handle,
    )
    .await;
    eprintln!(
        "seed {seed}: converged at RV {} with {:?}",
        handle.last_sync_resource_version(),
        handle.stats()
    );
    cancel.cancel();
    tokio::time::timeout(Duration::from_secs(5), task)
        .await
        .expect("the reflector stops promptly")
        .expect("the reflector task does not panic");
}

/// The plain scenario for a real cluster: list, watch through writes, and a fresh reflector's
/// full list.
async fn real_cluster(cluster: &TestCluster) {
    let namespace = cluster
        .create_namespace("kcache-reflector")
        .await
        .expect("namespace");
    let api = configmaps(cluster, client_for(cluster), &namespace);
    let mut rng = StdRng::seed_from_u64(1);
    for i in 0..NAMES / 2 {
        api.create(
            &PostParams::default(),
            &configmap(&namespace, &format!("cm-{i}"), 0),
        )
        .await
        .expect("seed objects");
    }
    for round in 0..2 {
        let store = Arc::new(CheckingStore::default());
        let lister = configmaps(cluster, client_for(cluster), &namespace);
        let reflector = Reflector::new(lister, store.clone(), reflector_options(round));
        let handle = reflector.handle();
        let cancel = CancellationToken::new();
        let task = tokio::spawn(reflector.run(cancel.clone()));
        for _ in 0..20 {
            let _ = cluster
                .random_configmap_write(rng.random(), &namespace, NAMES as u64)
                .await;
        }
        assert_converges(
            &format!("real cluster, round {round}"),
            cluster,
            &namespace,
            &store,
            &handle,
        )
        .await;
        cancel.cancel();
        task.await.expect("the reflector task does not panic");
    }
    let _ = cluster
        .client()
        .delete(&format!("/api/v1/namespaces/{namespace}"))
        .await;
}

fn seeds() -> Vec<u64> {
    let env = |name: &str| std::env::var(name).ok().and_then(|v| v.parse::<u64>().ok());
    if let Some(seed) = env("KCACHE_CHAOS_SEED") {
        return vec![seed];
    }
    (0..env("KCACHE_SOAK_SEEDS").unwrap_or(20)).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn store_converges_to_the_server_under_chaos() {
    if std::env::var_os(KUBECONFIG_ENV).is_some_and(|v| !v.is_empty()) {
        eprintln!(
            "{KUBECONFIG_ENV} names a real cluster: fault injection needs the embedded \
             server, so only the plain list/watch/relist scenario runs"
        );
        let cluster = TestCluster::start().await.expect("the real cluster");
        real_cluster(&cluster).await;
        return;
    }
    let seeds = seeds();
    let started = std::time::Instant::now();
    let mut running = tokio::task::JoinSet::new();
    for seed in seeds.iter().copied() {
        if running.len() >= 4 {
            running.join_next().await.unwrap().expect("a seed failed");
        }
        running.spawn(chaos_seed(seed));
    }
    while let Some(done) = running.join_next().await {
        done.expect("a seed failed");
    }
    eprintln!("{} chaos seeds in {:?}", seeds.len(), started.elapsed());
}

/// Holds a reflector off the server on demand: pausing ends the open watch cleanly and makes
/// new lists and watches wait until resumed — the view a reflector has of a long disconnection.
struct Pausable {
    inner: Api<DynamicObject>,
    paused: Arc<tokio::sync::watch::Sender<bool>>,
}

impl Pausable {
    async fn resumed(&self) {
        let _ = self.paused.subscribe().wait_for(|p| !*p).await;
    }
}

impl kcache_core::ListerWatcher<DynamicObject> for Pausable {
    async fn list(
        &self,
        params: &kcache_core::ListParams,
    ) -> Result<kcache_core::ObjectList<DynamicObject>, Error> {
        self.resumed().await;
        self.inner.list(params).await
    }

    async fn watch(
        &self,
        params: &kcache_core::WatchParams,
    ) -> Result<kcache_core::WatchStream<DynamicObject>, Error> {
        use futures_util::StreamExt;
        self.resumed().await;
        let stream = self.inner.watch(params).await?;
        let mut rx = self.paused.subscribe();
        let paused = async move {
            let _ = rx.wait_for(|p| *p).await;
        };
        Ok(Box::pin(stream.take_until(paused)))
    }
}

/// The watch history moves past the reflector's resourceVersion while it is disconnected: its
/// re-watch is answered 410 Gone and it relists (at its last resourceVersion), ending equal to
/// the server. On the embedded server the history is compacted directly; on a real
/// kube-apiserver (`cargo xtask integration --envtest`) by waiting out the watch cache's 75 s
/// freshness window and writing enough to evict the old events.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn relists_after_the_watch_history_expired() {
    let cluster = TestCluster::start().await.expect("test cluster");
    let namespace = cluster.create_namespace("expiry").await.expect("namespace");
    let names = NAMES as u64;
    for i in 0..NAMES / 2 {
        let cm = configmap(&namespace, &format!("cm-{i}"), 0);
        let api = configmaps(&cluster, client_for(&cluster), &namespace);
        api.create(&PostParams::default(), &cm)
            .await
            .expect("seed objects");
    }
    let (paused, _) = tokio::sync::watch::channel(false);
    let paused = Arc::new(paused);
    let lister = Pausable {
        inner: configmaps(&cluster, client_for(&cluster), &namespace),
        paused: paused.clone(),
    };
    let store = Arc::new(CheckingStore::default());
    let mut options = reflector_options(1);
    options.page_size = None;
    let mut reflector = Reflector::new(lister, store.clone(), options);
    let expired = Arc::new(std::sync::atomic::AtomicBool::new(false));
    reflector.set_watch_error_handler({
        let expired = expired.clone();
        move |_, e| {
            if e.is_expired() {
                expired.store(true, std::sync::atomic::Ordering::SeqCst);
            }
        }
    });
    let handle = reflector.handle();
    let cancel = CancellationToken::new();
    let task = tokio::spawn(reflector.run(cancel.clone()));
    let mut rng = StdRng::seed_from_u64(7);
    for _ in 0..10 {
        let _ = cluster
            .random_configmap_write(rng.random(), &namespace, names)
            .await;
    }
    assert_converges(
        "before the disconnection",
        &cluster,
        &namespace,
        &store,
        &handle,
    )
    .await;

    paused.send_replace(true);
    let relists = handle.stats().relists;
    match cluster.server() {
        Some(server) => {
            for _ in 0..20 {
                let _ = cluster
                    .random_configmap_write(rng.random(), &namespace, names)
                    .await;
            }
            server.compact_history();
        }
        None => {
            eprintln!("waiting 80 s for the real watch cache's 75 s freshness window to pass");
            tokio::time::sleep(Duration::from_secs(80)).await;
            for _ in 0..3000 {
                let _ = cluster
                    .random_configmap_write(rng.random(), &namespace, names)
                    .await;
            }
        }
    }
    paused.send_replace(false);
    assert_converges(
        "after the history expired",
        &cluster,
        &namespace,
        &store,
        &handle,
    )
    .await;
    assert!(
        expired.load(std::sync::atomic::Ordering::SeqCst),
        "the re-watch from the old resourceVersion was answered 410 Gone (stats {:?})",
        handle.stats()
    );
    assert!(
        handle.stats().relists > relists,
        "the reflector relisted: {:?}",
        handle.stats()
    );
    cancel.cancel();
    task.await.expect("the reflector task does not panic");
}
