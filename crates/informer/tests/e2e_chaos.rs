//! The whole stack against kcache-testserver under the reflector's chaos faults: after the
//! faults stop, every handler's view (adds − deletes, last update per key) and the cache equal
//! the server's state — no handler misses the final state of any object, a slow handler
//! included.
//!
//! With `KCACHE_TEST_KUBECONFIG` set, the same checks run against that cluster with writes but
//! without fault injection (a real API server cannot be told to fail).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use kcache_core::{DynamicObject, Object, ObjectKey};
use kcache_informer::{FifoMode, InformerOptions, ResourceEventHandlerFuncs, SharedIndexInformer};
use kcache_reflector::{BackoffOptions, ReflectorOptions, WatchListMode};
use kcache_store::Indexers;
use kcache_testing::{ServerConfig, TestCluster, KUBECONFIG_ENV};
use kcache_transport::{Api, Client, Config};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

const NAMES: u64 = 16;
const STEPS: usize = 75;
const SEEDS: u64 = 6;
const CONVERGE_WITHIN: Duration = Duration::from_secs(20);

type View = Arc<Mutex<BTreeMap<String, u64>>>;

fn rv(o: &DynamicObject) -> u64 {
    o.resource_version()
        .and_then(|r| r.parse().ok())
        .unwrap_or(0)
}

/// A handler that keeps key → resourceVersion from its notifications alone.
fn viewer(view: View, slow: bool) -> ResourceEventHandlerFuncs<DynamicObject> {
    let (a, u, d) = (view.clone(), view.clone(), view);
    let pause = move || {
        if slow {
            std::thread::sleep(Duration::from_micros(300));
        }
    };
    ResourceEventHandlerFuncs::new()
        .on_add(move |o: &Arc<DynamicObject>, _| {
            pause();
            a.lock()
                .unwrap()
                .insert(ObjectKey::of(o.as_ref()).to_string(), rv(o));
        })
        .on_update(move |_, o: &Arc<DynamicObject>| {
            pause();
            u.lock()
                .unwrap()
                .insert(ObjectKey::of(o.as_ref()).to_string(), rv(o));
        })
        .on_delete(move |gone| {
            pause();
            d.lock().unwrap().remove(gone.key().as_str());
        })
}

fn informer(
    cluster: &TestCluster,
    namespace: &str,
    seed: u64,
) -> SharedIndexInformer<DynamicObject> {
    let mut config = Config::from_kubeconfig_file(cluster.kubeconfig_path()).expect("kubeconfig");
    config.qps = 0.0;
    config.max_retries = 0;
    config.request_timeout = Some(Duration::from_secs(5));
    let client = Client::new(config).expect("client");
    let resource = kcache_core::ApiResource {
        group: String::new(),
        version: "v1".into(),
        kind: "ConfigMap".into(),
        plural: "configmaps".into(),
        namespaced: true,
    };
    let api = Api::<DynamicObject>::dynamic(client, resource, Some(namespace));
    let options = InformerOptions {
        resync_period: Duration::from_secs(1),
        // Every queue mode meets the chaos (relists after expired watches among it).
        fifo_mode: [FifoMode::Real, FifoMode::Atomic, FifoMode::Delta][(seed % 3) as usize],
        reflector: ReflectorOptions {
            watch_list: [WatchListMode::Auto, WatchListMode::Disabled][(seed % 2) as usize],
            page_size: [None, Some(4)][(seed / 2 % 2) as usize],
            watch_list_end_timeout: Duration::from_secs(2),
            backoff: BackoffOptions {
                initial: Duration::from_millis(5),
                cap: Duration::from_millis(50),
                reset_after: Duration::from_secs(1),
                ..BackoffOptions::default()
            },
            ..ReflectorOptions::default()
        },
        ..InformerOptions::named(format!("e2e-{seed}"))
    };
    SharedIndexInformer::new(api, Indexers::new().with_namespace_index(), options)
}

async fn run_seed(seed: u64) {
    let cluster = TestCluster::start_with(ServerConfig {
        history_window: 40,
        bookmark_interval: Duration::from_millis(100),
        too_large_rv_wait: Duration::from_millis(20),
        ..ServerConfig::default()
    })
    .await
    .expect("test cluster");
    let namespace = cluster
        .create_namespace("informer-e2e")
        .await
        .expect("namespace");
    let mut rng = StdRng::seed_from_u64(seed);
    for _ in 0..NAMES {
        let _ = cluster
            .random_configmap_write(rng.random::<u64>() / 3 * 3, &namespace, NAMES)
            .await;
    }
    let inf = informer(&cluster, &namespace, seed);
    let mut views: Vec<View> = (0..3).map(|_| View::default()).collect();
    for (i, v) in views.iter().enumerate() {
        inf.add_event_handler(viewer(v.clone(), i == 2))
            .expect("handler");
    }
    let stop = CancellationToken::new();
    let task = tokio::spawn({
        let inf = inf.clone();
        let stop = stop.clone();
        async move { inf.run(stop).await }
    });
    for step in 0..STEPS {
        match cluster.server() {
            Some(server) if rng.random_bool(0.4) => {
                kcache_testing::inject_random_fault(server, rng.random(), "configmaps")
                    .await
                    .expect("server");
            }
            _ => {
                let _ = cluster
                    .random_configmap_write(rng.random(), &namespace, NAMES)
                    .await;
            }
        }
        if step == STEPS / 2 {
            // A handler joining mid-stream gets the cache as initial adds, then follows.
            let late = View::default();
            inf.add_event_handler(viewer(late.clone(), false))
                .expect("late handler");
            views.push(late);
        }
        tokio::time::sleep(Duration::from_millis(rng.random_range(0..8))).await;
    }
    if let Some(server) = cluster.server() {
        server.clear_faults();
    }
    let deadline = Instant::now() + CONVERGE_WITHIN;
    loop {
        let truth = cluster.configmap_versions(&namespace).await.ok();
        let cache: BTreeMap<String, u64> = inf
            .indexer()
            .list()
            .iter()
            .map(|o| (ObjectKey::of(o.as_ref()).to_string(), rv(o)))
            .collect();
        let seen: Vec<BTreeMap<String, u64>> =
            views.iter().map(|v| v.lock().unwrap().clone()).collect();
        if truth
            .as_ref()
            .is_some_and(|t| &cache == t && seen.iter().all(|v| v == t))
        {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "seed {seed}: no convergence within {CONVERGE_WITHIN:?}: server {truth:?}, \
             cache {cache:?}, handlers {seen:?}, stats {:?}",
            inf.stats()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    stop.cancel();
    task.await.expect("informer task").expect("informer ran");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_handler_converges_to_the_server_under_chaos() {
    if std::env::var_os(KUBECONFIG_ENV).is_some() {
        eprintln!("{KUBECONFIG_ENV} is set: running writes against the real cluster without fault injection");
    }
    let seeds: Vec<u64> = match std::env::var("KCACHE_CHAOS_SEED") {
        Ok(s) => vec![s.parse().expect("KCACHE_CHAOS_SEED is a number")],
        Err(_) => (0..SEEDS).collect(),
    };
    for chunk in seeds.chunks(3) {
        let runs: Vec<_> = chunk.iter().map(|&s| tokio::spawn(run_seed(s))).collect();
        for r in runs {
            r.await.expect("seed run");
        }
    }
}
