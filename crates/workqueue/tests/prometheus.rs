//! The Prometheus adapter (feature `prometheus`): client-go's names, and controller-runtime
//! v0.23's shape on demand (constant labels, the depth per priority and its cardinality bound).
#![cfg(feature = "prometheus")]

use std::sync::Arc;
use std::time::Duration;

use kcache_workqueue::{
    DelayingQueue, PriorityQueue, PrometheusMetricsBuilder, PrometheusMetricsProvider, Queue,
    QueueConfig,
};
use prometheus::{Encoder, Registry, TextEncoder};

/// controller-runtime's priority of an informer's initial list.
const LOW_PRIORITY: i32 = -100;

/// The registry's exposition lines of one family's series (`family{...} value`).
fn series(registry: &Registry, family: &str) -> Vec<String> {
    let mut text = Vec::new();
    TextEncoder::new()
        .encode(&registry.gather(), &mut text)
        .unwrap();
    let prefix = format!("{family}{{");
    String::from_utf8(text)
        .unwrap()
        .lines()
        .filter(|l| l.starts_with(&prefix))
        .map(str::to_string)
        .collect()
}

/// The expected `workqueue_depth` lines of controller `name`'s queue, one per `(priority, depth)`.
fn depths(name: &str, by_priority: &[(&str, i64)]) -> Vec<String> {
    by_priority
        .iter()
        .map(|(p, n)| {
            format!(r#"workqueue_depth{{controller="{name}",name="{name}",priority="{p}"}} {n}"#)
        })
        .collect()
}

fn config(provider: PrometheusMetricsProvider, name: &str) -> QueueConfig {
    QueueConfig {
        name: name.into(),
        metrics_provider: Some(Arc::new(provider)),
        unfinished_work_update_period: None,
    }
}

/// A priority queue reporting controller-runtime's shape, labelled `controller=<name>`.
fn controller_queue(registry: &Registry, name: &str) -> PriorityQueue<&'static str> {
    let provider = controller_runtime(name).register(registry).unwrap();
    PriorityQueue::with_ordering(Default::default(), config(provider, name))
}

fn controller_runtime(name: &str) -> PrometheusMetricsBuilder {
    PrometheusMetricsProvider::builder()
        .const_label("controller", name)
        .depth_by_priority()
}

#[tokio::test(start_paused = true)]
async fn prometheus_adapter_exports_client_go_names() {
    let registry = Registry::new();
    let provider = PrometheusMetricsProvider::new(&registry).unwrap();
    let q = DelayingQueue::with_config(config(provider, "prom"));
    q.add("a");
    q.add_after("b", Duration::ZERO);
    let i = q.get().await.unwrap();
    q.done(&i);
    let families = registry.gather();
    let names: Vec<_> = families.iter().map(|f| f.name().to_string()).collect();
    for n in [
        "workqueue_depth",
        "workqueue_adds_total",
        "workqueue_queue_duration_seconds",
        "workqueue_work_duration_seconds",
        "workqueue_unfinished_work_seconds",
        "workqueue_longest_running_processor_seconds",
        "workqueue_retries_total",
    ] {
        assert!(names.iter().any(|x| x == n), "{n} missing from {names:?}");
    }
    let adds = families
        .iter()
        .find(|f| f.name() == "workqueue_adds_total")
        .unwrap();
    assert_eq!(adds.get_metric()[0].get_counter().get_value(), 2.0);
}

#[tokio::test]
async fn without_depth_by_priority_a_priority_queue_has_one_depth() {
    let registry = Registry::new();
    let provider = PrometheusMetricsProvider::new(&registry).unwrap();
    let q = PriorityQueue::with_ordering(Default::default(), config(provider, "plain"));
    q.add_with_priority("a", 0);
    q.add_with_priority("b", LOW_PRIORITY);
    assert_eq!(
        series(&registry, "workqueue_depth"),
        [r#"workqueue_depth{name="plain"} 2"#]
    );
}

#[tokio::test]
async fn depth_is_reported_per_priority_and_goes_to_zero() {
    let registry = Registry::new();
    let q = controller_queue(&registry, "foo");
    assert!(
        series(&registry, "workqueue_depth").is_empty(),
        "no series before an item"
    );
    q.add_with_priority("a", 0);
    q.add_with_priority("b", LOW_PRIORITY);
    q.add_with_priority("c", LOW_PRIORITY);
    assert_eq!(
        series(&registry, "workqueue_depth"),
        depths("foo", &[("-100", 2), ("0", 1)])
    );
    while !q.is_empty() {
        let item = q.get().await.unwrap();
        q.done(&item);
    }
    assert_eq!(
        series(&registry, "workqueue_depth"),
        depths("foo", &[("-100", 0), ("0", 0)])
    );
}

#[tokio::test]
async fn a_raised_priority_moves_the_count() {
    let registry = Registry::new();
    let q = controller_queue(&registry, "raise");
    q.add_with_priority("a", LOW_PRIORITY);
    q.add_with_priority("a", 0);
    assert_eq!(
        series(&registry, "workqueue_depth"),
        depths("raise", &[("-100", 0), ("0", 1)])
    );
}

#[tokio::test]
async fn priorities_past_the_limit_share_one_series() {
    let registry = Registry::new();
    let q = controller_queue(&registry, "many");
    for p in 0..=25 {
        q.add_with_priority(["x", "y"][(p % 2) as usize], p); // raises, one series each
    }
    let lines = series(&registry, "workqueue_depth");
    assert_eq!(lines.len(), 25 + 1, "{lines:?}");
    assert!(
        lines.contains(
            &r#"workqueue_depth{controller="many",name="many",priority="exceeded_cardinality_limit"} 1"#
                .to_string()
        ),
        "{lines:?}"
    );
}

#[tokio::test]
async fn a_plain_queue_reports_an_empty_priority() {
    let registry = Registry::new();
    let provider = controller_runtime("fifo").register(&registry).unwrap();
    let q = Queue::with_config(config(provider, "fifo"));
    q.add("a");
    assert_eq!(
        series(&registry, "workqueue_depth"),
        [r#"workqueue_depth{controller="fifo",name="fifo",priority=""} 1"#]
    );
}

#[tokio::test]
async fn providers_with_their_own_const_labels_share_a_registry() {
    let registry = Registry::new();
    let a = controller_queue(&registry, "a");
    let b = controller_queue(&registry, "b");
    a.add_with_priority("x", 0);
    b.add_with_priority("x", 0);
    b.add_with_priority("y", 0);
    assert_eq!(
        series(&registry, "workqueue_adds_total"),
        [
            r#"workqueue_adds_total{controller="a",name="a"} 1"#,
            r#"workqueue_adds_total{controller="b",name="b"} 2"#,
        ]
    );
    let again = controller_runtime("a").register(&registry);
    assert!(
        matches!(again, Err(prometheus::Error::AlreadyReg)),
        "the same constant labels twice in one registry"
    );
}

#[tokio::test]
async fn duration_buckets_replace_client_gos() {
    let registry = Registry::new();
    let provider = PrometheusMetricsProvider::builder()
        .duration_buckets(vec![1.0, 1000.0])
        .register(&registry)
        .unwrap();
    let q = Queue::with_config(config(provider, "slow"));
    q.add("a");
    let i = q.get().await.unwrap();
    q.done(&i);
    let buckets: Vec<_> = series(&registry, "workqueue_work_duration_seconds_bucket")
        .into_iter()
        .map(|l| l.rsplit_once(' ').unwrap().0.to_string())
        .collect();
    assert_eq!(
        buckets,
        [
            r#"workqueue_work_duration_seconds_bucket{name="slow",le="1"}"#,
            r#"workqueue_work_duration_seconds_bucket{name="slow",le="1000"}"#,
            r#"workqueue_work_duration_seconds_bucket{name="slow",le="+Inf"}"#,
        ]
    );
}
