//! client-go's `examples/workqueue`, rebuilt on kcache: a Pod informer whose handlers enqueue
//! keys into a rate-limited workqueue; workers read each object from the informer's indexer by
//! key, retry failures with rate-limited backoff up to 5 times, then forget them; Ctrl-C (or the
//! end of the demo) shuts everything down gracefully.
//!
//! ```text
//! cargo run --release --example workqueue-controller                       # embedded server + pod churn
//! cargo run --release --example workqueue-controller -- --kubeconfig F [--namespace NS]
//! ```
//!
//! Without `--kubeconfig` (and without `KUBECONFIG`), it starts kcache-testserver in-process and
//! drives pod churn — creates, updates, deletes, one pod that fails twice before it syncs and one
//! that always fails — so the output shows adds, updates, deletes and retries, then exits.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use kcache::informer::{FactoryOptions, ResourceEventHandlerFuncs, SharedInformerFactory};
use kcache::store::Indexer;
use kcache::transport::{Api, Client, DeleteParams, Patch, PatchParams, PostParams};
use kcache::workqueue::{default_controller_rate_limiter, RateLimitingQueue};
use kcache::ObjectKey;
use tokio_util::sync::CancellationToken;

/// Retries before a key is dropped (client-go's example uses 5).
pub const MAX_RETRIES: usize = 5;

/// The demo pods' image: one every kind node has preloaded and any cluster can pull, so on a
/// full cluster the pods run (their status changes are updates the controller sees).
const DEMO_IMAGE: &str = "k8s.gcr.io/pause:3.2";

/// What the controller did, for the closing summary (and for the test that runs this example).
#[derive(Debug, Default, Clone)]
pub struct Summary {
    /// Keys synced while their pod existed.
    pub synced: BTreeSet<String>,
    /// Keys processed after their pod was deleted.
    pub gone: BTreeSet<String>,
    /// Failed attempts per key.
    pub failures: BTreeMap<String, usize>,
    /// Keys dropped after `MAX_RETRIES` retries.
    pub dropped: BTreeSet<String>,
    /// Handler notifications: adds, updates, deletes.
    pub notifications: [usize; 3],
}

/// The controller: an informer feeding a workqueue, and workers.
pub struct Controller {
    indexer: Arc<Indexer<Pod>>,
    queue: RateLimitingQueue<String>,
    summary: Arc<Mutex<Summary>>,
}

impl Controller {
    /// The business logic: print the pod, or that it is gone. Pods named `flaky-*` fail twice
    /// and pods named `broken-*` always fail, to show retries.
    fn sync(&self, key: &str) -> Result<(), String> {
        let Some(pod) = self.indexer.get_by_key(key) else {
            println!("Pod {key} does not exist anymore");
            self.summary.lock().unwrap().gone.insert(key.to_string());
            return Ok(());
        };
        let name = pod.metadata.name.as_deref().unwrap_or_default();
        let failures = self
            .summary
            .lock()
            .unwrap()
            .failures
            .get(key)
            .copied()
            .unwrap_or(0);
        if name.starts_with("broken-") || (name.starts_with("flaky-") && failures < 2) {
            return Err(format!("pretend failure syncing {name}"));
        }
        println!(
            "Sync/Add/Update for Pod {key} (resourceVersion {:?})",
            pod.metadata.resource_version
        );
        self.summary.lock().unwrap().synced.insert(key.to_string());
        Ok(())
    }

    /// One key from the queue: sync, then forget or retry (client-go's `processNextItem` and
    /// `handleErr`). Returns false once the queue is shut down and drained.
    async fn process_next_item(&self) -> bool {
        let Some(key) = self.queue.get().await else {
            return false;
        };
        match self.sync(&key) {
            Ok(()) => self.queue.forget(&key),
            Err(e) => {
                *self
                    .summary
                    .lock()
                    .unwrap()
                    .failures
                    .entry(key.clone())
                    .or_default() += 1;
                if self.queue.num_requeues(&key) < MAX_RETRIES {
                    let retry = self.queue.num_requeues(&key) + 1;
                    println!("Error syncing pod {key}: {e}; retry {retry}");
                    self.queue.add_rate_limited(key.clone());
                } else {
                    println!(
                        "Dropping pod {key} out of the queue after {MAX_RETRIES} retries: {e}"
                    );
                    self.queue.forget(&key);
                    self.summary.lock().unwrap().dropped.insert(key.clone());
                }
            }
        }
        self.queue.done(&key);
        true
    }
}

/// Runs the controller with `workers` workers until `stop` fires, then drains the queue and
/// stops the informer, recording what it does in `summary`.
pub async fn run(
    client: Client,
    namespace: Option<String>,
    workers: usize,
    stop: CancellationToken,
    summary: Arc<Mutex<Summary>>,
) {
    let factory = SharedInformerFactory::new(
        client,
        FactoryOptions {
            namespace,
            ..FactoryOptions::default()
        },
    );
    let informer = factory.informer::<Pod>();
    let controller = Arc::new(Controller {
        indexer: informer.indexer().clone(),
        queue: RateLimitingQueue::new(default_controller_rate_limiter()),
        summary,
    });
    let (q1, q2, q3) = (
        controller.queue.clone(),
        controller.queue.clone(),
        controller.queue.clone(),
    );
    let (s1, s2, s3) = (
        controller.summary.clone(),
        controller.summary.clone(),
        controller.summary.clone(),
    );
    informer
        .add_event_handler(
            ResourceEventHandlerFuncs::new()
                .on_add(move |pod: &Arc<Pod>, _| {
                    s1.lock().unwrap().notifications[0] += 1;
                    q1.add(ObjectKey::of(pod.as_ref()).to_string());
                })
                .on_update(move |_, pod: &Arc<Pod>| {
                    s2.lock().unwrap().notifications[1] += 1;
                    q2.add(ObjectKey::of(pod.as_ref()).to_string());
                })
                .on_delete(move |gone| {
                    s3.lock().unwrap().notifications[2] += 1;
                    q3.add(gone.key().to_string());
                }),
        )
        .expect("the informer is not stopped");
    factory.start();
    let synced = factory.wait_for_cache_sync().await;
    println!("Caches synced: {synced:?}; starting {workers} workers");
    let tasks: Vec<_> = (0..workers)
        .map(|_| {
            let c = controller.clone();
            tokio::spawn(async move { while c.process_next_item().await {} })
        })
        .collect();
    stop.cancelled().await;
    println!("Stopping: draining the queue");
    controller.queue.shut_down_with_drain().await;
    controller.queue.shut_down();
    for t in tasks {
        t.await.expect("worker");
    }
    factory.shutdown().await;
}

fn pod(namespace: &str, name: &str) -> Pod {
    serde_json::from_value(serde_json::json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "labels": {"app": "demo"}},
        "spec": {"containers": [{"name": "main", "image": DEMO_IMAGE, "imagePullPolicy": "IfNotPresent"}]}
    }))
    .expect("a valid pod")
}

/// The demo's pod churn: creates, an update, a delete, a flaky pod and a broken one.
pub async fn churn(client: Client, namespace: &str) {
    let pods: Api<Pod> = Api::namespaced(client, namespace);
    let pp = PostParams::default();
    for name in ["web-0", "web-1", "web-2", "flaky-0", "broken-0"] {
        pods.create(&pp, &pod(namespace, name))
            .await
            .expect("create pod");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let patch = Patch::Merge(serde_json::json!({"metadata": {"labels": {"tier": "frontend"}}}));
    pods.patch("web-1", &PatchParams::default(), &patch)
        .await
        .expect("patch pod");
    // Grace period 0: gone at once, not Terminating while a kubelet stops it.
    let now = DeleteParams {
        grace_period_seconds: Some(0),
        ..DeleteParams::default()
    };
    pods.delete("web-2", &now).await.expect("delete pod");
}

/// The embedded demo: a test server, churn, and a stop once every pod reached its end state.
pub async fn demo(workers: usize) -> Summary {
    let cluster = kcache_testing::TestCluster::start()
        .await
        .expect("embedded test server");
    let namespace = cluster.create_namespace("demo").await.expect("namespace");
    let client = Client::from_kubeconfig(cluster.kubeconfig_path()).expect("client");
    let stop = CancellationToken::new();
    let summary = Arc::new(Mutex::new(Summary::default()));
    let controller = tokio::spawn(run(
        client.clone(),
        Some(namespace.clone()),
        workers,
        stop.clone(),
        summary.clone(),
    ));
    churn(client, &namespace).await;
    let key = |name: &str| format!("{namespace}/{name}");
    let done = |s: &Summary| {
        s.dropped.contains(&key("broken-0"))
            && s.synced.contains(&key("flaky-0"))
            && s.gone.contains(&key("web-2"))
            && s.notifications[1] > 0
    };
    // The broken pod's last retry comes after five backoffs (5+10+20+40+80 ms); the deadline
    // only bounds a run that went wrong.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while !done(&summary.lock().unwrap()) && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    stop.cancel();
    controller.await.expect("controller");
    let s = summary.lock().unwrap().clone();
    s
}

fn print_summary(s: &Summary) {
    println!("---");
    println!(
        "notifications: {} adds, {} updates, {} deletes; synced {} keys, {} gone, {} failures, dropped {:?}",
        s.notifications[0],
        s.notifications[1],
        s.notifications[2],
        s.synced.len(),
        s.gone.len(),
        s.failures.values().sum::<usize>(),
        s.dropped
    );
}

#[derive(clap::Parser)]
#[command(about = "client-go's workqueue example on kcache")]
struct Args {
    /// A kubeconfig; without one (and without KUBECONFIG) an embedded server and pod churn run.
    #[arg(long)]
    kubeconfig: Option<PathBuf>,
    /// Watch one namespace (default: all).
    #[arg(long)]
    namespace: Option<String>,
    /// Workers taking keys from the queue.
    #[arg(long, default_value_t = 2)]
    workers: usize,
}

#[tokio::main]
async fn main() {
    use clap::Parser;
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()),
        )
        .init();
    let args = Args::parse();
    let kubeconfig = args
        .kubeconfig
        .or_else(|| std::env::var_os("KUBECONFIG").map(PathBuf::from));
    match kubeconfig {
        None => print_summary(&demo(args.workers).await),
        Some(path) => {
            let client = match Client::from_kubeconfig(&path) {
                Ok(c) => c,
                Err(e) => {
                    eprintln!("{}", kcache::core::ErrorChain(&e));
                    std::process::exit(2);
                }
            };
            let stop = CancellationToken::new();
            let summary = Arc::new(Mutex::new(Summary::default()));
            let ctrl_c = stop.clone();
            tokio::spawn(async move {
                let _ = tokio::signal::ctrl_c().await;
                ctrl_c.cancel();
            });
            run(client, args.namespace, args.workers, stop, summary.clone()).await;
            print_summary(&summary.lock().unwrap());
        }
    }
}
