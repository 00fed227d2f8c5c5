//! The controller's metrics in Prometheus text, under controller-runtime's names: the workqueue's
//! depth per priority (controller-runtime v0.23's priority queue), the initial list at
//! `LOW_PRIORITY`, later changes at 0.

use std::sync::Arc;

use kcache_controller::{Action, Controller, DefaultErrorPolicy, PrometheusControllerMetrics};
use prometheus::{Encoder, Registry, TextEncoder};
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use crate::support::{cm, with_data, Fake, Recorder, TestError};

/// The `workqueue_depth` lines of the registry's exposition text.
fn depth_lines(registry: &Registry) -> Vec<String> {
    let mut out = Vec::new();
    TextEncoder::new()
        .encode(&registry.gather(), &mut out)
        .unwrap();
    String::from_utf8(out)
        .unwrap()
        .lines()
        .filter(|l| l.starts_with("workqueue_depth{"))
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
        depth_lines(&registry),
        [r#"workqueue_depth{controller="depth",name="depth",priority="-100"} 2"#],
        "the rest of the initial list waits at low priority"
    );
    gate.add_permits(1);
    ctx.wait_until("the initial list", |c| c.len() == 3).await;
    fake.source.modify(with_data(cm("ns", "a"), "v2"));
    ctx.wait_until("the change", |c| c.len() == 4).await;
    assert_eq!(
        depth_lines(&registry),
        [
            r#"workqueue_depth{controller="depth",name="depth",priority="-100"} 0"#,
            r#"workqueue_depth{controller="depth",name="depth",priority="0"} 0"#,
        ],
        "a change is queued at priority 0; every series is back to 0 once taken"
    );
    stop.cancel();
    task.await.unwrap().unwrap();
}
