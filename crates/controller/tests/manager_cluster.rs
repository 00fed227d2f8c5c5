//! The Manager against the API server: the health and metrics endpoints over loopback HTTP,
//! two managers electing on one Lease with warm caches, the event recorders, and SIGTERM.
//! Real time with short leases; every wait is a liveness guard on a condition.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kcache_controller::{BoxFuture, Manager, ManagerError, Runnable};
use kcache_core::BoxError;
use kcache_events::{EventType, ObjectReference};
use kcache_informer::SharedIndexInformer;
use kcache_leaderelection::LeaderElectionConfig;
use kcache_testing::ROOT_CA_CONFIGMAP;
use kcache_transport::{Api, PostParams};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::helpers::cluster;
use crate::manager::{Probe, Seen};

const LIMIT: Duration = Duration::from_secs(30);

async fn within<T>(what: &str, f: impl Future<Output = T>) -> T {
    tokio::time::timeout(LIMIT, f)
        .await
        .unwrap_or_else(|_| panic!("timed out waiting for {what}"))
}

/// `GET path` (or another method) over a fresh connection: status code and body.
async fn http(addr: SocketAddr, method: &str, path: &str) -> (u16, String) {
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    let req = format!("{method} {path} HTTP/1.1\r\nHost: probe\r\nConnection: close\r\n\r\n");
    s.write_all(req.as_bytes()).await.unwrap();
    let mut resp = String::new();
    s.read_to_string(&mut resp).await.unwrap();
    let status = resp[9..12].parse().unwrap();
    let body = resp
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    (status, body)
}

#[tokio::test]
async fn health_ready_and_metrics_answer_over_http() {
    let (_c, client, ns) = cluster("mgr-http").await;
    let mut m = Manager::builder(client)
        .http_address("127.0.0.1:0".parse().unwrap())
        .factory_options(kcache_informer::FactoryOptions {
            namespace: Some(ns),
            ..Default::default()
        })
        .build()
        .unwrap();
    let addr = m.http_local_addr().unwrap();
    let informer: SharedIndexInformer<ConfigMap> = m.factory().informer();
    let gate = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let g = gate.clone();
    m.add_readyz_check(
        "gate",
        Arc::new(move || match g.load(std::sync::atomic::Ordering::SeqCst) {
            true => Ok(()),
            false => Err("closed".into()),
        }),
    )
    .unwrap();
    assert!(matches!(
        m.add_readyz_check("gate", Arc::new(|| Ok(()))),
        Err(ManagerError::DuplicateName(_))
    ));
    #[cfg(feature = "prometheus")]
    {
        let requests = prometheus::IntCounter::new("probe_requests_total", "test counter").unwrap();
        m.registry().register(Box::new(requests.clone())).unwrap();
        requests.inc_by(3);
    }

    let shutdown = CancellationToken::new();
    let run = tokio::spawn(m.run_until(shutdown.clone()));
    assert_eq!(http(addr, "GET", "/healthz").await, (200, "ok".into()));
    within("the informer to sync", informer.wait_for_cache_sync()).await;

    let (status, body) = http(addr, "GET", "/readyz").await;
    assert_eq!(status, 500);
    assert!(body.contains("[+]informers ok"), "{body}");
    assert!(body.contains("[+]leaderElection ok"), "{body}");
    assert!(body.contains("[-]gate failed: closed"), "{body}");
    assert!(body.ends_with("readyz check failed\n"), "{body}");
    assert_eq!(http(addr, "GET", "/readyz/informers").await.0, 200);
    gate.store(true, std::sync::atomic::Ordering::SeqCst);
    assert_eq!(http(addr, "GET", "/readyz").await, (200, "ok".into()));
    let (status, body) = http(addr, "GET", "/readyz?verbose").await;
    assert_eq!(status, 200);
    assert!(
        body.contains("[+]gate ok") && body.ends_with("readyz check passed\n"),
        "{body}"
    );

    assert_eq!(http(addr, "GET", "/healthz/nope").await.0, 404);
    assert_eq!(http(addr, "GET", "/elsewhere").await.0, 404);
    assert_eq!(http(addr, "POST", "/healthz").await.0, 405);
    let (status, body) = http(addr, "GET", "/metrics").await;
    if cfg!(feature = "prometheus") {
        assert_eq!(status, 200);
        assert!(body.contains("probe_requests_total 3"), "{body}");
    } else {
        assert_eq!(status, 404, "no /metrics without the prometheus feature");
    }

    shutdown.cancel();
    within("the manager to stop", run).await.unwrap().unwrap();
    assert!(
        tokio::net::TcpStream::connect(addr).await.is_err(),
        "the server is closed"
    );
}

/// Sends whether the informer had synced when it started.
struct WarmCheck {
    informer: SharedIndexInformer<ConfigMap>,
    tx: mpsc::UnboundedSender<(bool, usize)>,
}

impl Runnable for WarmCheck {
    fn name(&self) -> &str {
        "warm-check"
    }
    fn start(self: Box<Self>, shutdown: CancellationToken) -> BoxFuture<Result<(), BoxError>> {
        Box::pin(async move {
            // A full cluster adds its root CA to every namespace.
            let cached = (self.informer.indexer().list().iter())
                .filter(|cm| cm.metadata.name.as_deref() != Some(ROOT_CA_CONFIGMAP))
                .count();
            let _ = self.tx.send((self.informer.has_synced(), cached));
            shutdown.cancelled().await;
            Ok(())
        })
    }
}

fn fast_election(id: &str) -> LeaderElectionConfig {
    let mut c = LeaderElectionConfig::new(id);
    c.lease_duration = Duration::from_secs(3);
    c.renew_deadline = Duration::from_secs(2);
    c.retry_period = Duration::from_millis(300);
    c.release_on_cancel = true;
    c
}

#[tokio::test]
async fn a_standby_manager_keeps_warm_caches_and_takes_over() {
    let (_c, client, ns) = cluster("mgr-elect").await;
    let cms = Api::<ConfigMap>::namespaced(client.clone(), &ns);
    let cm = ConfigMap {
        metadata: ObjectMeta {
            name: Some("seen".into()),
            ..ObjectMeta::default()
        },
        ..ConfigMap::default()
    };
    cms.create(&PostParams::default(), &cm).await.unwrap();
    let build = |id: &str| {
        Manager::builder(client.clone())
            .leader_election(&ns, "ctl-lock", fast_election(id))
            .factory_options(kcache_informer::FactoryOptions {
                namespace: Some(ns.clone()),
                ..Default::default()
            })
            .build()
            .unwrap()
    };
    let (tx, mut rx) = mpsc::unbounded_channel();
    let mut a = build("a");
    a.add(Probe::new("ctl-a", true, &tx)).unwrap();
    let stop_a = CancellationToken::new();
    let run_a = tokio::spawn(a.run_until(stop_a.clone()));
    assert_eq!(
        within("a to lead", rx.recv()).await,
        Some(("ctl-a", Seen::Started))
    );

    let mut b = build("b");
    let informer: SharedIndexInformer<ConfigMap> = b.factory().informer();
    let (warm_tx, mut warm_rx) = mpsc::unbounded_channel();
    b.add(WarmCheck {
        informer: informer.clone(),
        tx: warm_tx,
    })
    .unwrap();
    let elected_b = b.elected();
    let stop_b = CancellationToken::new();
    let run_b = tokio::spawn(b.run_until(stop_b.clone()));
    // Warm-up: b's cache fills while a leads.
    assert!(within("b's informer to sync", informer.wait_for_cache_sync()).await);
    assert!(!*elected_b.borrow(), "b synced as a standby");
    assert!(
        warm_rx.try_recv().is_err(),
        "b's leader runnable waits for the lease"
    );

    stop_a.cancel();
    within("a to stop", run_a).await.unwrap().unwrap();
    assert_eq!(rx.recv().await, Some(("ctl-a", Seen::Stopped)));
    let (synced, cached) = within("b to lead", warm_rx.recv()).await.unwrap();
    assert!(synced, "the new leader starts on a synced cache");
    assert_eq!(cached, 1);
    stop_b.cancel();
    within("b to stop", run_b).await.unwrap().unwrap();
}

#[tokio::test]
async fn event_recorders_are_flushed_at_shutdown() {
    let (cluster, client, ns) = cluster("mgr-events").await;
    let cms = Api::<ConfigMap>::namespaced(client.clone(), &ns);
    let cm = ConfigMap {
        metadata: ObjectMeta {
            name: Some("about".into()),
            ..ObjectMeta::default()
        },
        ..ConfigMap::default()
    };
    let cm = cms.create(&PostParams::default(), &cm).await.unwrap();
    let m = Manager::builder(client).build().unwrap();
    let recorder = m.event_recorder("demo-controller").unwrap();
    assert!(m.event_recorder("Not A Name").is_err(), "names are checked");
    recorder.eventf(
        &ObjectReference::of(&cm),
        None,
        EventType::Normal,
        "Synced",
        "Reconcile",
        "done",
    );
    let shutdown = CancellationToken::new();
    shutdown.cancel();
    within("the manager to stop", m.run_until(shutdown))
        .await
        .unwrap();
    let path = format!("/apis/events.k8s.io/v1/namespaces/{ns}/events");
    let list = cluster.client().get(&path).await.unwrap();
    let items = list.body["items"].as_array().cloned().unwrap_or_default();
    assert!(
        items
            .iter()
            .any(|e| e["reason"] == "Synced" && e["reportingController"] == "demo-controller"),
        "{items:?}"
    );
}

#[tokio::test]
async fn sigterm_shuts_the_manager_down_gracefully() {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let mut m = Manager::builder(crate::helpers::unreachable_client())
        .build()
        .unwrap();
    m.add(Probe::new("ctl", false, &tx)).unwrap();
    let run = tokio::spawn(m.run());
    // The handlers are installed before any runnable starts.
    assert_eq!(
        within("start", rx.recv()).await,
        Some(("ctl", Seen::Started))
    );
    let status = std::process::Command::new("kill")
        .args(["-TERM", &std::process::id().to_string()])
        .status()
        .expect("kill");
    assert!(status.success());
    assert_eq!(
        within("stop", rx.recv()).await,
        Some(("ctl", Seen::Stopped))
    );
    within("run to return", run).await.unwrap().unwrap();
}
