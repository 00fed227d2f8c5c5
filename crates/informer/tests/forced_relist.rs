//! A relist forced by the server (kcache-testserver's `expire_watches`: history compacted past
//! the newest revision, watches cut): the re-watch from the last resourceVersion gets 410 Gone,
//! the reflector relists, every cached object comes back as an update (client-go's `Replace`
//! → `OnUpdate`), and the cache ends as it was. What `kcache-bench informer --relist` measures.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use kcache_core::{ApiResource, DynamicObject};
use kcache_informer::{FactoryOptions, ResourceEventHandlerFuncs, SharedInformerFactory};
use kcache_testing::{ServerConfig, TestServer};
use kcache_transport::{Client, Config};

const PODS: usize = 40;

fn pods() -> ApiResource {
    ApiResource {
        group: String::new(),
        version: "v1".into(),
        kind: "Pod".into(),
        plural: "pods".into(),
        namespaced: true,
    }
}

/// Waits until `done` holds, checking every 10 ms, for at most 20 s (a loaded CI machine).
async fn until(mut done: impl FnMut() -> bool) -> bool {
    let wait = async {
        while !done() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(20), wait)
        .await
        .is_ok()
}

#[tokio::test]
async fn expired_watches_make_the_informer_relist_and_redeliver_every_object() {
    // The pods' ReplicaSets are not seeded: no garbage collector may take them.
    let config = ServerConfig {
        kube_controller_manager: false,
        ..ServerConfig::default()
    };
    let server = TestServer::start(config).await.unwrap();
    server.seed_realistic_pods(PODS).unwrap();
    let kubeconfig = std::env::temp_dir().join(format!(
        "kcache-forced-relist-{}.kubeconfig",
        server.addr().port()
    ));
    server.write_kubeconfig(&kubeconfig).unwrap();
    let mut config = Config::from_kubeconfig_file(&kubeconfig).unwrap();
    config.qps = 0.0;
    let factory =
        SharedInformerFactory::new(Client::new(config).unwrap(), FactoryOptions::default());
    let informer = factory.dynamic_informer(&pods());
    let (adds, updates) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    let (a, u) = (adds.clone(), updates.clone());
    informer
        .add_event_handler(
            ResourceEventHandlerFuncs::new()
                .on_add(move |_, _| {
                    a.fetch_add(1, Ordering::Relaxed);
                })
                .on_update(move |_: &Arc<DynamicObject>, _: &Arc<DynamicObject>| {
                    u.fetch_add(1, Ordering::Relaxed);
                }),
        )
        .unwrap();
    factory.start();
    assert!(factory.wait_for_cache_sync().await.values().all(|s| *s));
    assert!(until(|| adds.load(Ordering::Relaxed) == PODS as u64).await);
    assert_eq!(informer.stats().reflector.relists, 0);
    let synced_rv = informer.last_sync_resource_version();

    let expired_at = server.expire_watches();

    assert!(
        until(|| updates.load(Ordering::Relaxed) == PODS as u64).await,
        "every cached pod is re-delivered by the relist ({} updates)",
        updates.load(Ordering::Relaxed)
    );
    let stats = informer.stats();
    assert_eq!(stats.reflector.relists, 1, "{stats:?}");
    assert_eq!(informer.indexer().len(), PODS);
    assert_eq!(
        adds.load(Ordering::Relaxed),
        PODS as u64,
        "nothing new was added"
    );
    assert_ne!(informer.last_sync_resource_version(), synced_rv);
    assert!(
        informer
            .last_sync_resource_version()
            .parse::<u64>()
            .unwrap()
            >= expired_at
    );
    factory.shutdown().await;
    let _ = std::fs::remove_file(kubeconfig);
}
