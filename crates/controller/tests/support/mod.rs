//! Shared helpers: ConfigMaps, an in-memory informer, a recorder of reconciles, counting metrics
//! and a client for a test cluster.
#![allow(dead_code)]

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kcache_controller::{
    ControllerMetricsProvider, CounterMetric, GaugeMetric, HistogramMetric, ObjectCache,
    SettableGaugeMetric,
};
use kcache_informer::testing::FakeControllerSource;
use kcache_informer::{InformerOptions, SharedIndexInformer};
use kcache_store::Indexers;
use kcache_testing::TestCluster;
use kcache_transport::{Client, Config};
use parking_lot::Mutex;
use tokio::sync::Notify;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// Liveness guard for waits on conditions; they normally end at once.
pub const LIMIT: Duration = Duration::from_secs(30);

pub fn cm(ns: &str, name: &str) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some(ns.into()),
            ..Default::default()
        },
        data: Some(BTreeMap::from([("k".into(), "v".into())])),
        ..Default::default()
    }
}

pub fn with_data(mut cm: ConfigMap, value: &str) -> ConfigMap {
    cm.data = Some(BTreeMap::from([("k".into(), value.into())]));
    cm
}

/// An in-memory ConfigMap source and a running informer over it.
pub struct Fake {
    pub source: Arc<FakeControllerSource<ConfigMap>>,
    pub informer: SharedIndexInformer<ConfigMap>,
    pub stop: CancellationToken,
}

impl Fake {
    pub fn new(name: &str, objects: impl IntoIterator<Item = ConfigMap>) -> Fake {
        let source = FakeControllerSource::new(|cm: &mut ConfigMap, rv| {
            cm.metadata.resource_version = Some(rv)
        });
        for o in objects {
            source.add(o);
        }
        let informer = SharedIndexInformer::new(
            source.clone(),
            Indexers::new(),
            InformerOptions::named(name),
        );
        let stop = CancellationToken::new();
        let (inf, s) = (informer.clone(), stop.clone());
        tokio::spawn(async move { inf.run(s).await });
        Fake {
            source,
            informer,
            stop,
        }
    }

    pub fn cache(&self) -> Arc<dyn ObjectCache<ConfigMap>> {
        Arc::new(self.informer.clone())
    }
}

impl Drop for Fake {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

/// Every reconcile: the object's name, its data value, and when (tokio's clock).
#[derive(Default)]
pub struct Recorder {
    pub calls: Mutex<Vec<(String, String, Instant)>>,
    changed: Notify,
}

impl Recorder {
    pub fn record(&self, cm: &ConfigMap) {
        let value = cm
            .data
            .as_ref()
            .and_then(|d| d.get("k").cloned())
            .unwrap_or_default();
        let name = cm.metadata.name.clone().unwrap_or_default();
        self.calls.lock().push((name, value, Instant::now()));
        self.changed.notify_waiters();
    }

    pub fn names(&self) -> Vec<String> {
        self.calls.lock().iter().map(|c| c.0.clone()).collect()
    }

    pub fn count(&self, name: &str) -> usize {
        self.calls.lock().iter().filter(|c| c.0 == name).count()
    }

    pub fn times(&self, name: &str) -> Vec<Instant> {
        self.calls
            .lock()
            .iter()
            .filter(|c| c.0 == name)
            .map(|c| c.2)
            .collect()
    }

    /// Waits until `done` holds of the calls so far. The liveness guard is on the wall clock, in
    /// a thread of its own: a tokio timer would be advanced by paused time while the informer's
    /// delivery threads work, and fire early.
    pub async fn wait_until(
        &self,
        what: &str,
        done: impl Fn(&[(String, String, Instant)]) -> bool,
    ) {
        let expired = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let guard = Arc::new(Notify::new());
        {
            let (expired, guard) = (expired.clone(), guard.clone());
            std::thread::spawn(move || {
                std::thread::sleep(LIMIT);
                expired.store(true, Ordering::Relaxed);
                guard.notify_waiters();
            });
        }
        loop {
            let notified = self.changed.notified();
            let timed_out = guard.notified();
            if done(&self.calls.lock()) {
                return;
            }
            if expired.load(Ordering::Relaxed) {
                panic!("timed out waiting for {what}: {:?}", self.names());
            }
            tokio::select! {
                () = notified => {}
                () = timed_out => {}
            }
        }
    }
}

/// Metrics that count, by metric and label.
#[derive(Default)]
pub struct CountingMetrics {
    counts: Mutex<HashMap<String, Arc<Count>>>,
}

#[derive(Default)]
pub struct Count(AtomicU64);

impl CounterMetric for Count {
    fn inc(&self) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}
impl GaugeMetric for Count {
    fn inc(&self) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
    fn dec(&self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}
impl SettableGaugeMetric for Count {
    fn set(&self, v: f64) {
        self.0.store(v as u64, Ordering::Relaxed);
    }
}
impl HistogramMetric for Count {
    fn observe(&self, _: f64) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}

impl CountingMetrics {
    fn get(&self, name: &str) -> Arc<Count> {
        self.counts.lock().entry(name.into()).or_default().clone()
    }

    /// The count of `name` (e.g. `reconcile_total/success`, `reconcile_panics`).
    pub fn value(&self, name: &str) -> u64 {
        self.get(name).0.load(Ordering::Relaxed)
    }
}

impl ControllerMetricsProvider for CountingMetrics {
    fn reconcile_total(&self, _: &str, result: &str) -> Arc<dyn CounterMetric> {
        self.get(&format!("reconcile_total/{result}"))
    }
    fn reconcile_errors(&self, _: &str) -> Arc<dyn CounterMetric> {
        self.get("reconcile_errors")
    }
    fn terminal_reconcile_errors(&self, _: &str) -> Arc<dyn CounterMetric> {
        self.get("terminal_reconcile_errors")
    }
    fn reconcile_panics(&self, _: &str) -> Arc<dyn CounterMetric> {
        self.get("reconcile_panics")
    }
    fn reconcile_timeouts(&self, _: &str) -> Arc<dyn CounterMetric> {
        self.get("reconcile_timeouts")
    }
    fn reconcile_time(&self, _: &str) -> Arc<dyn HistogramMetric> {
        self.get("reconcile_time")
    }
    fn max_concurrent_reconciles(&self, _: &str) -> Arc<dyn SettableGaugeMetric> {
        self.get("max_concurrent_reconciles")
    }
    fn active_workers(&self, _: &str) -> Arc<dyn GaugeMetric> {
        self.get("active_workers")
    }
}

/// A reconcile error for tests.
#[derive(Debug, thiserror::Error)]
pub enum TestError {
    #[error("try again")]
    Retry,
    #[error("bad spec")]
    Bad(#[source] kcache_controller::TerminalError),
}

/// A client for `cluster` without client-side rate limits.
pub fn cluster_client(cluster: &TestCluster) -> Client {
    let mut config = Config::from_kubeconfig_file(cluster.kubeconfig_path()).unwrap();
    config.qps = 0.0;
    Client::new(config).unwrap()
}
