//! Shared test helpers: pods as DynamicObjects, a recording handler, an in-memory source, an
//! informer over it and its start, a client for a test cluster and a wait for a named object.
#![allow(dead_code, unused_macros)]

use std::sync::mpsc;
use std::sync::Arc;
use std::time::Duration;

use kcache_core::{DynamicObject, Object};
use kcache_informer::testing::FakeControllerSource;
use kcache_informer::{
    DeletedObject, FifoMode, InformerOptions, ResourceEventHandler, SharedIndexInformer,
};
use kcache_store::Indexers;
use kcache_testing::TestCluster;
use kcache_transport::{Client, Config};
use tokio_util::sync::CancellationToken;

pub type Pod = DynamicObject;

/// Runs an informer test once per queue mode, as `name::real`, `name::atomic` and
/// `name::delta`: the body gets the mode as the named argument.
macro_rules! in_every_fifo_mode {
    ($(#[$attr:meta])* async fn $name:ident($mode:ident: FifoMode) $body:block) => {
        mod $name {
            use super::*;

            async fn body($mode: FifoMode) $body

            $(#[$attr])*
            async fn real() {
                body(FifoMode::Real).await
            }

            $(#[$attr])*
            async fn atomic() {
                body(FifoMode::Atomic).await
            }

            $(#[$attr])*
            async fn delta() {
                body(FifoMode::Delta).await
            }
        }
    };
}

/// A client for `cluster` without client-side rate limits (tests write and read in bursts).
pub fn cluster_client(cluster: &TestCluster) -> Client {
    let mut config = Config::from_kubeconfig_file(cluster.kubeconfig_path()).unwrap();
    config.qps = 0.0;
    Client::new(config).unwrap()
}

/// The first object named `name` a handler sends down `rx` (others are skipped), within 15 s.
pub async fn named<K: Object>(
    rx: &mut tokio::sync::mpsc::UnboundedReceiver<Arc<K>>,
    name: &str,
) -> Arc<K> {
    let wait = async {
        loop {
            let obj = rx.recv().await.expect("the informer runs");
            if obj.name() == name {
                break obj;
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(15), wait)
        .await
        .unwrap_or_else(|_| panic!("{name} reaches the handler within 15 s"))
}

pub fn pod(name: &str) -> Pod {
    DynamicObject::new(name).within("default")
}

pub fn source() -> Arc<FakeControllerSource<Pod>> {
    FakeControllerSource::new(|o: &mut Pod, rv| o.metadata.resource_version = Some(rv))
}

/// An informer named `pods` over `src`, resyncing every `resync` (zero: never), on a FIFO in
/// `mode`.
pub fn informer(
    src: &Arc<FakeControllerSource<Pod>>,
    resync: Duration,
    mode: FifoMode,
) -> SharedIndexInformer<Pod> {
    let opts = InformerOptions {
        resync_period: resync,
        fifo_mode: mode,
        ..InformerOptions::named("pods")
    };
    SharedIndexInformer::new(src.clone(), Indexers::new(), opts)
}

/// Runs `inf` on a task until the token is cancelled.
pub fn start(inf: &SharedIndexInformer<Pod>) -> (CancellationToken, tokio::task::JoinHandle<()>) {
    let stop = CancellationToken::new();
    let task = tokio::spawn({
        let (inf, stop) = (inf.clone(), stop.clone());
        async move { inf.run(stop).await.unwrap() }
    });
    (stop, task)
}

/// What a handler saw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seen {
    Add(String, bool),
    Update(String, String, String),
    Delete(String),
}

impl Seen {
    pub fn name(&self) -> &str {
        match self {
            Seen::Add(n, _) | Seen::Update(n, _, _) | Seen::Delete(n) => n,
        }
    }
}

/// A handler that sends what it sees down a channel.
pub struct Recorder(pub mpsc::Sender<Seen>);

pub fn recorder() -> (Recorder, mpsc::Receiver<Seen>) {
    let (tx, rx) = mpsc::channel();
    (Recorder(tx), rx)
}

impl ResourceEventHandler<Pod> for Recorder {
    fn on_add(&self, obj: &Arc<Pod>, initial: bool) {
        let _ = self.0.send(Seen::Add(obj.metadata.name.clone(), initial));
    }
    fn on_update(&self, old: &Arc<Pod>, new: &Arc<Pod>) {
        let rv = |p: &Pod| p.metadata.resource_version.clone().unwrap_or_default();
        let _ = self
            .0
            .send(Seen::Update(new.metadata.name.clone(), rv(old), rv(new)));
    }
    fn on_delete(&self, obj: &DeletedObject<Pod>) {
        let _ = self.0.send(Seen::Delete(obj.key().name().to_string()));
    }
}

/// Receives `n` notifications, failing after a generous real-time limit (a liveness guard,
/// not a timing assertion). It polls while yielding to the runtime, so the informer's tasks keep
/// running but the runtime is never idle: paused tokio time cannot auto-advance (and fire resync
/// timers) while handler threads catch up.
pub async fn take(rx: mpsc::Receiver<Seen>, n: usize) -> (Vec<Seen>, mpsc::Receiver<Seen>) {
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    let mut got = Vec::new();
    while got.len() < n {
        match rx.try_recv() {
            Ok(s) => got.push(s),
            Err(mpsc::TryRecvError::Empty) => {
                assert!(
                    std::time::Instant::now() < deadline,
                    "waited for {n} notifications, got {got:?}"
                );
                tokio::task::yield_now().await;
                std::thread::sleep(Duration::from_micros(200));
            }
            Err(e) => panic!("waited for {n} notifications, got {got:?}: {e}"),
        }
    }
    (got, rx)
}

/// Names in a batch, sorted.
pub fn names(seen: &[Seen]) -> Vec<String> {
    let mut v: Vec<String> = seen.iter().map(|s| s.name().to_string()).collect();
    v.sort();
    v
}
