//! kcache-controller's priority queue, as controller-runtime runs its controllers since v0.23:
//! objects of the informer's initial list (and resyncs) are queued at `LOW_PRIORITY`, so after a
//! restart the relisted backlog does not delay objects that really change meanwhile; their
//! events go in at the normal priority 0. It is on by default (`priority_queue(false)` turns it
//! off). Failures are retried with rate-limited backoff and a reconcile can ask to run again
//! later (`Action::requeue_after`).
//!
//! It starts kcache-testserver in-process, creates four pods, then starts a controller of pods
//! with one worker: the four are its initial list, a backlog at low priority. The first
//! reconcile holds until two more pods have been created and queued; the new pods then go before
//! the rest of the backlog. It prints the order and exits.
//!
//! `cargo run -p kcache --example priority-controller`

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use kcache::controller::{Action, Controller, DefaultErrorPolicy, Predicate, LOW_PRIORITY};
use kcache::informer::{FactoryOptions, SharedInformerFactory};
use kcache::transport::{Api, Client, PostParams};
use kcache::Object;
use parking_lot::Mutex;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

/// Pods that exist before the controller starts: they arrive in the initial list.
pub const INITIAL: [&str; 4] = ["old-0", "old-1", "old-2", "old-3"];
/// Pods created while the first reconcile holds: they arrive as watch events.
pub const LATER: [&str; 2] = ["new-0", "flaky-0"];
/// A pod created after [`LATER`] that the controller's predicate filters out. A handler gets an
/// informer's events one at a time, in order: once the predicate has seen this one, the
/// events of [`LATER`] are queued.
pub const MARKER: &str = "marker";
/// How long `new-0` asks to wait before it is reconciled again.
pub const REQUEUE_AFTER: Duration = Duration::from_millis(20);
/// Every reconcile the demo makes: each pod once, plus `flaky-0`'s retry and `new-0`'s requeue.
const RUNS: usize = INITIAL.len() + LATER.len() + 2;

/// The demo pods' image: one every kind node has preloaded and any cluster can pull.
const DEMO_IMAGE: &str = "k8s.gcr.io/pause:3.2";

/// The demo pods name a scheduler no cluster runs, so on a full cluster nothing binds, runs or
/// updates them: the only events are the demo's own, and the order it shows is the queue's.
const NO_SCHEDULER: &str = "kcache-demo-unscheduled";

/// What the worker did, in order.
#[derive(Debug, Default, Clone)]
pub struct Summary {
    /// Every reconcile, in order: the pod's name.
    pub order: Vec<String>,
    /// Failed reconciles per pod.
    pub failures: BTreeMap<String, usize>,
}

/// The reconcile's context: what it did, and the demo's two signals.
struct Ctx {
    summary: Mutex<Summary>,
    /// Reconciles begun.
    begun: watch::Sender<usize>,
    /// Whether the predicate has seen [`MARKER`].
    marker_seen: watch::Sender<bool>,
}

/// `flaky-*`'s first reconcile fails.
#[derive(Debug, thiserror::Error)]
#[error("pretend failure of {0}")]
struct PretendFailure(String);

/// Business logic: the first reconcile holds until the new pods are queued; `flaky-*` fails
/// once; `new-0` asks to be looked at again after `REQUEUE_AFTER`, once.
async fn reconcile(pod: Arc<Pod>, ctx: Arc<Ctx>) -> Result<Action, PretendFailure> {
    let name = pod.name().to_string();
    let (begun, runs) = {
        let mut s = ctx.summary.lock();
        s.order.push(name.clone());
        (
            s.order.len(),
            s.order.iter().filter(|n| **n == name).count(),
        )
    };
    ctx.begun.send_replace(begun);
    if begun == 1 {
        let _ = ctx.marker_seen.subscribe().wait_for(|seen| *seen).await;
    }
    match name.as_str() {
        n if n.starts_with("flaky-") && runs == 1 => {
            println!("{n}: pretend failure; retrying rate-limited");
            *ctx.summary.lock().failures.entry(name.clone()).or_default() += 1;
            Err(PretendFailure(name))
        }
        "new-0" if runs == 1 => {
            println!("reconciled new-0; again in {REQUEUE_AFTER:?}");
            Ok(Action::requeue_after(REQUEUE_AFTER))
        }
        n => {
            println!("reconciled {n}");
            Ok(Action::await_change())
        }
    }
}

fn pod(namespace: &str, name: &str) -> Pod {
    serde_json::from_value(serde_json::json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"schedulerName": NO_SCHEDULER,
                 "containers": [{"name": "main", "image": DEMO_IMAGE, "imagePullPolicy": "IfNotPresent"}]}
    }))
    .expect("a valid pod")
}

/// Waits until `done` holds on `progress`; the limit only bounds a broken run.
async fn wait_for<T>(what: &str, progress: &watch::Sender<T>, done: impl FnMut(&T) -> bool) {
    let mut rx = progress.subscribe();
    let waited = tokio::time::timeout(Duration::from_secs(30), rx.wait_for(done)).await;
    assert!(waited.is_ok_and(|r| r.is_ok()), "timed out: {what}");
}

/// Runs the demo against the embedded server and returns what the worker did.
pub async fn demo() -> Summary {
    let cluster = kcache_testing::TestCluster::start()
        .await
        .expect("embedded test server");
    let ns = cluster
        .create_namespace("priority")
        .await
        .expect("namespace");
    let client = Client::from_kubeconfig(cluster.kubeconfig_path()).expect("client");
    let pods: Api<Pod> = Api::namespaced(client.clone(), &ns);
    for name in INITIAL {
        pods.create(&PostParams::default(), &pod(&ns, name))
            .await
            .expect("create pod");
    }

    let factory = Arc::new(SharedInformerFactory::new(
        client,
        FactoryOptions {
            namespace: Some(ns.clone()),
            ..FactoryOptions::default()
        },
    ));
    let ctx = Arc::new(Ctx {
        summary: Mutex::default(),
        begun: watch::Sender::new(0),
        marker_seen: watch::Sender::new(false),
    });
    let seen = ctx.clone();
    let not_marker = Predicate::from_object(move |pod: &Pod| {
        let marker = pod.name() == MARKER;
        if marker {
            seen.marker_seen.send_replace(true);
        }
        !marker
    });
    let stop = CancellationToken::new();
    let controller = Controller::for_::<Pod>(&factory)
        .named("priority-controller")
        .predicate(not_marker)
        .shutdown_on(stop.clone()); // one worker; the priority queue is on by default
    let running = tokio::spawn(controller.run(reconcile, DefaultErrorPolicy, ctx.clone()));

    wait_for("the first reconcile", &ctx.begun, |n| *n >= 1).await;
    println!(
        "initial list queued at priority {LOW_PRIORITY}: {INITIAL:?}; the first reconcile holds"
    );
    for name in LATER.into_iter().chain([MARKER]) {
        pods.create(&PostParams::default(), &pod(&ns, name))
            .await
            .expect("create pod");
    }
    println!("new pods created, queued at priority 0: {LATER:?}");
    wait_for("every reconcile", &ctx.begun, |n| *n >= RUNS).await;
    stop.cancel();
    running
        .await
        .expect("the controller's task")
        .expect("the controller ran");
    factory.shutdown().await;
    let summary = ctx.summary.lock().clone();
    summary
}

#[tokio::main]
async fn main() {
    let s = demo().await;
    println!("---");
    println!("reconcile order: {}", s.order.join(", "));
}
