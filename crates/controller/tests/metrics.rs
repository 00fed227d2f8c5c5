//! The controller's metrics in Prometheus text, under controller-runtime's names: the workqueue's
//! depth per priority (controller-runtime v0.23's priority queue), the initial list at
//! `LOW_PRIORITY`, later changes at 0; every controller with its own `workqueue_*` series in the
//! one registry.

use std::sync::Arc;

use kcache_controller::{Action, Controller, DefaultErrorPolicy, PrometheusControllerMetrics};
use prometheus::{Encoder, Registry, TextEncoder};
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use crate::support::{cm, with_data, Fake, Recorder, TestError};

/// The registry's exposition lines of one family's series (`family{...} value`).
fn series(registry: &Registry, family: &str) -> Vec<String> {
    let mut out = Vec::new();
    TextEncoder::new()
        .encode(&registry.gather(), &mut out)
        .unwrap();
    String::from_utf8(out)
        .unwrap()
        .lines()
        .filter(|l| l.strip_prefix(family).is_some_and(|r| r.starts_with('{')))
        .map(str::to_string)
        .collect()
}

#[tokio::test(start_paused = true)]
async fn the_workqueue_depth_is_reported_per_priority() {
    let fake = Fake::new("depth", [cm("ns", "a"), cm("ns", "b"), cm("ns", "c")]);
    let registry = Registry::new();
    let metrics = PrometheusControllerMetrics::new(&registry).unwrap();
    let ctx = Arc::new(Recorder::default());
    let gate = Arc::new(Semaphore::new(0));
    let stop = CancellationToken::new();
    let c = Controller::for_informer(fake.cache())
        .named("depth")
        .metrics_provider(Arc::new(metrics))
        .shutdown_on(stop.clone());
    let g = gate.clone();
    let reconcile = move |cm: Arc<_>, ctx: Arc<Recorder>| {
        let gate = g.clone();
        async move {
            ctx.record(&cm);
            if ctx.names().len() == 1 {
                drop(gate.acquire().await); // the first reconcile holds the only worker
            }
            Ok::<_, TestError>(Action::await_change())
        }
    };
    let task = tokio::spawn(c.run(reconcile, DefaultErrorPolicy, ctx.clone()));

    ctx.wait_until("the first reconcile", |c| c.len() == 1)
        .await;
    assert_eq!(
        series(&registry, "workqueue_depth"),
        [r#"workqueue_depth{controller="depth",name="depth",priority="-100"} 2"#],
        "the rest of the initial list waits at low priority"
    );
    gate.add_permits(1);
    ctx.wait_until("the initial list", |c| c.len() == 3).await;
    fake.source.modify(with_data(cm("ns", "a"), "v2"));
    ctx.wait_until("the change", |c| c.len() == 4).await;
    assert_eq!(
        series(&registry, "workqueue_depth"),
        [
            r#"workqueue_depth{controller="depth",name="depth",priority="-100"} 0"#,
            r#"workqueue_depth{controller="depth",name="depth",priority="0"} 0"#,
        ],
        "a change is queued at priority 0; every series is back to 0 once taken"
    );
    stop.cancel();
    task.await.unwrap().unwrap();
}

/// Runs a controller named `name` over `objects` until it has reconciled them all, then stops it.
async fn run_once(name: &str, metrics: &PrometheusControllerMetrics, objects: usize) {
    let fake = Fake::new(name, (0..objects).map(|i| cm("ns", &format!("o{i}"))));
    let ctx = Arc::new(Recorder::default());
    let stop = CancellationToken::new();
    let c = Controller::for_informer(fake.cache())
        .named(name)
        .metrics_provider(Arc::new(metrics.clone()))
        .shutdown_on(stop.clone());
    let reconcile = |cm: Arc<_>, ctx: Arc<Recorder>| async move {
        ctx.record(&cm);
        Ok::<_, TestError>(Action::await_change())
    };
    let task = tokio::spawn(c.run(reconcile, DefaultErrorPolicy, ctx.clone()));
    ctx.wait_until("every object", |c| c.len() == objects).await;
    stop.cancel();
    task.await.unwrap().unwrap();
}

#[tokio::test(start_paused = true)]
async fn each_controller_has_its_own_queue_series_in_one_registry() {
    let registry = Registry::new();
    let metrics = PrometheusControllerMetrics::new(&registry).unwrap();
    run_once("first", &metrics, 1).await;
    run_once("second", &metrics, 2).await;
    run_once("first", &metrics, 3).await; // started again: the same series go on
    assert_eq!(
        series(&registry, "workqueue_adds_total"),
        [
            r#"workqueue_adds_total{controller="first",name="first"} 4"#,
            r#"workqueue_adds_total{controller="second",name="second"} 2"#,
        ]
    );
}
