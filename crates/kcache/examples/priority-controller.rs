//! A controller over a rate-limited, delaying priority queue, as controller-runtime runs its
//! controllers since v0.23: objects of the informer's initial list are enqueued at a low
//! priority (`on_add`'s `is_in_initial_list`), so a restart's full resync does not delay objects
//! that change meanwhile; later events go in at the normal priority 0. Failures are retried with
//! rate-limited backoff and a reconcile can ask to be run again later (`add_after`): both keep
//! the priority they are given.
//!
//! It starts kcache-testserver in-process, creates pods, lets the informer list them, creates
//! more while the worker has not started yet, then runs one worker: the new pods are reconciled
//! before the initial ones. It prints the order and exits.
//!
//! `cargo run --example priority-controller`

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use kcache::informer::{FactoryOptions, ResourceEventHandlerFuncs, SharedInformerFactory};
use kcache::transport::{Api, Client, PostParams};
use kcache::workqueue::{
    DelayingQueue, ItemExponentialFailureRateLimiter, PriorityQueue, RateLimitingQueue,
};
use kcache::ObjectKey;

/// controller-runtime's `handler.LowPriority`: what initial-list objects are enqueued with.
pub const LOW_PRIORITY: i32 = -100;
/// Pods that exist before the controller starts: they arrive in the initial list.
pub const INITIAL: [&str; 4] = ["old-0", "old-1", "old-2", "old-3"];
/// Pods created once the informer synced: they arrive as watch events.
pub const LATER: [&str; 2] = ["new-0", "flaky-0"];
/// How long `new-0` asks to wait before it is reconciled again.
pub const REQUEUE_AFTER: Duration = Duration::from_millis(20);

/// The queue: controller-runtime's priority queue, with delays and rate-limited retries.
pub type WorkQueue = RateLimitingQueue<String, kcache::workqueue::ByPriority<String>>;

/// The demo pods' image: one every kind node has preloaded and any cluster can pull.
const DEMO_IMAGE: &str = "k8s.gcr.io/pause:3.2";

/// The demo pods name a scheduler no cluster runs, so on a full cluster nothing binds, runs or
/// updates them: the only events are the demo's own, and the order it shows is the queue's.
const NO_SCHEDULER: &str = "kcache-demo-unscheduled";

/// What the worker did, in order.
#[derive(Debug, Default, Clone)]
pub struct Summary {
    /// Every reconcile, in order: pod name and the priority it was enqueued with last.
    pub order: Vec<(String, i32)>,
    /// Failed reconciles per pod.
    pub failures: BTreeMap<String, usize>,
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

/// Waits (on the condition, polling) until `done` holds; the limit only bounds a broken run.
async fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while !done() {
        assert!(tokio::time::Instant::now() < deadline, "timed out: {what}");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// Business logic: `flaky-*` fails once; `new-0` asks to be looked at again after
/// `REQUEUE_AFTER`, once.
fn reconcile(name: &str, summary: &Summary) -> Result<Option<Duration>, String> {
    let runs = summary.order.iter().filter(|(n, _)| n == name).count();
    match name {
        n if n.starts_with("flaky-") && runs == 1 => Err(format!("pretend failure of {n}")),
        "new-0" if runs == 1 => Ok(Some(REQUEUE_AFTER)),
        _ => Ok(None),
    }
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

    let queue: WorkQueue = RateLimitingQueue::wrap(
        DelayingQueue::wrap(PriorityQueue::default()),
        ItemExponentialFailureRateLimiter::new(Duration::from_millis(5), Duration::from_secs(1)),
    );
    // The priority each key was last enqueued with, for the printout.
    let priorities = Arc::new(Mutex::new(BTreeMap::<String, i32>::new()));
    let factory = SharedInformerFactory::new(
        client,
        FactoryOptions {
            namespace: Some(ns.clone()),
            ..FactoryOptions::default()
        },
    );
    let informer = factory.informer::<Pod>();
    let enqueue = {
        let (queue, priorities) = (queue.clone(), priorities.clone());
        move |key: String, priority: i32| {
            priorities.lock().unwrap().insert(key.clone(), priority);
            queue.add_with_priority(key, priority);
        }
    };
    let (on_add, on_update) = (enqueue.clone(), enqueue);
    informer
        .add_event_handler(
            ResourceEventHandlerFuncs::new()
                .on_add(move |pod: &Arc<Pod>, is_in_initial_list| {
                    // controller-runtime's rule: the initial list goes in at low priority.
                    let priority = if is_in_initial_list { LOW_PRIORITY } else { 0 };
                    on_add(ObjectKey::of(pod.as_ref()).to_string(), priority);
                })
                .on_update(move |_, pod: &Arc<Pod>| {
                    on_update(ObjectKey::of(pod.as_ref()).to_string(), 0);
                }),
        )
        .expect("the informer is not stopped");
    factory.start();
    factory.wait_for_cache_sync().await;
    wait_until("the initial list is queued", || {
        queue.len() == INITIAL.len()
    })
    .await;
    println!("initial list queued at priority {LOW_PRIORITY}: {INITIAL:?}");
    for name in LATER {
        pods.create(&PostParams::default(), &pod(&ns, name))
            .await
            .expect("create pod");
    }
    let queued = INITIAL.len() + LATER.len();
    wait_until("the new pods are queued", || queue.len() == queued).await;
    println!("new pods queued at priority 0: {LATER:?}; starting one worker");

    let summary = Arc::new(Mutex::new(Summary::default()));
    let worker = {
        let (queue, summary, priorities) = (queue.clone(), summary.clone(), priorities.clone());
        tokio::spawn(async move {
            while let Some(key) = queue.get_guarded().await {
                let name = key.rsplit('/').next().unwrap_or_default().to_string();
                let priority = priorities.lock().unwrap().get(&*key).copied().unwrap_or(0);
                let mut s = summary.lock().unwrap();
                s.order.push((name.clone(), priority));
                match reconcile(&name, &s) {
                    Ok(None) => {
                        println!("reconciled {name} (priority {priority})");
                        queue.forget(&key);
                    }
                    Ok(Some(after)) => {
                        println!("reconciled {name} (priority {priority}); again in {after:?}");
                        queue.forget(&key);
                        queue.add_after_with_priority(key.to_string(), after, priority);
                    }
                    Err(e) => {
                        println!("{e} (priority {priority}); retrying rate-limited");
                        *s.failures.entry(name).or_default() += 1;
                        queue.add_rate_limited_with_priority(key.to_string(), priority);
                    }
                }
                // Dropping `key` calls `done`.
            }
        })
    };
    let runs = queued + 2; // flaky-0's retry and new-0's requeue
    wait_until("every reconcile ran", || {
        summary.lock().unwrap().order.len() == runs
    })
    .await;
    queue.shut_down_with_drain().await;
    worker.await.expect("worker");
    factory.shutdown().await;
    let s = summary.lock().unwrap().clone();
    s
}

#[tokio::main]
async fn main() {
    let s = demo().await;
    println!("---");
    let order: Vec<_> = s.order.iter().map(|(n, p)| format!("{n}@{p}")).collect();
    println!("reconcile order: {}", order.join(", "));
}
