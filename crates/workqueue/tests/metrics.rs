//! client-go's TestMetrics under paused tokio time, plus the rule that unnamed queues have none.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::Duration;

use kcache_workqueue::{
    CounterMetric, DelayingQueue, DepthMetricWithPriority, GaugeMetric, HistogramMetric,
    MetricsProvider, PriorityQueue, Queue, QueueConfig, SettableGaugeMetric,
};
use parking_lot::Mutex;

/// Records every metric's last value / observations, keyed by metric kind.
#[derive(Default)]
struct Recorder {
    values: Mutex<HashMap<&'static str, Vec<f64>>>,
}

struct Metric {
    rec: Arc<Recorder>,
    kind: &'static str,
}

impl Metric {
    fn bump(&self, by: f64) {
        let mut v = self.rec.values.lock();
        let e = v.entry(self.kind).or_default();
        let last = e.last().copied().unwrap_or(0.0);
        e.push(last + by);
    }
}
impl GaugeMetric for Metric {
    fn inc(&self) {
        self.bump(1.0)
    }
    fn dec(&self) {
        self.bump(-1.0)
    }
}
impl CounterMetric for Metric {
    fn inc(&self) {
        self.bump(1.0)
    }
}
impl SettableGaugeMetric for Metric {
    fn set(&self, value: f64) {
        self.rec
            .values
            .lock()
            .entry(self.kind)
            .or_default()
            .push(value);
    }
}
impl HistogramMetric for Metric {
    fn observe(&self, value: f64) {
        self.rec
            .values
            .lock()
            .entry(self.kind)
            .or_default()
            .push(value);
    }
}

#[derive(Clone, Default)]
struct Provider(Arc<Recorder>, Option<PriorityDepth>);

/// The depth per priority, when the provider offers it (controller-runtime's
/// `MetricsProviderWithPriority`).
#[derive(Clone, Default)]
struct PriorityDepth(Arc<Mutex<BTreeMap<i32, i64>>>);

impl DepthMetricWithPriority for PriorityDepth {
    fn inc(&self, priority: i32) {
        *self.0.lock().entry(priority).or_default() += 1;
    }
    fn dec(&self, priority: i32) {
        *self.0.lock().entry(priority).or_default() -= 1;
    }
}

impl PriorityDepth {
    fn values(&self) -> Vec<(i32, i64)> {
        self.0.lock().iter().map(|(p, n)| (*p, *n)).collect()
    }
}

impl Provider {
    fn metric(&self, kind: &'static str) -> Arc<Metric> {
        Arc::new(Metric {
            rec: self.0.clone(),
            kind,
        })
    }
    fn last(&self, kind: &str) -> f64 {
        self.0
            .values
            .lock()
            .get(kind)
            .and_then(|v| v.last().copied())
            .unwrap_or(0.0)
    }
    fn count(&self, kind: &str) -> usize {
        self.0.values.lock().get(kind).map_or(0, Vec::len)
    }
    fn clear(&self, kind: &str) {
        self.0.values.lock().remove(kind);
    }
}

impl MetricsProvider for Provider {
    fn new_depth_metric(&self, _: &str) -> Arc<dyn GaugeMetric> {
        self.metric("depth")
    }
    fn new_adds_metric(&self, _: &str) -> Arc<dyn CounterMetric> {
        self.metric("adds")
    }
    fn new_latency_metric(&self, _: &str) -> Arc<dyn HistogramMetric> {
        self.metric("latency")
    }
    fn new_work_duration_metric(&self, _: &str) -> Arc<dyn HistogramMetric> {
        self.metric("duration")
    }
    fn new_unfinished_work_seconds_metric(&self, _: &str) -> Arc<dyn SettableGaugeMetric> {
        self.metric("unfinished")
    }
    fn new_longest_running_processor_seconds_metric(
        &self,
        _: &str,
    ) -> Arc<dyn SettableGaugeMetric> {
        self.metric("longest")
    }
    fn new_retries_metric(&self, _: &str) -> Arc<dyn CounterMetric> {
        self.metric("retries")
    }
    fn new_depth_metric_with_priority(&self, _: &str) -> Option<Arc<dyn DepthMetricWithPriority>> {
        self.1
            .clone()
            .map(|d| Arc::new(d) as Arc<dyn DepthMetricWithPriority>)
    }
}

fn config(p: &Provider, name: &str) -> QueueConfig {
    QueueConfig {
        name: name.into(),
        metrics_provider: Some(Arc::new(p.clone())),
        unfinished_work_update_period: Some(Duration::from_millis(1)),
    }
}

const US: Duration = Duration::from_micros(1);

#[tokio::test(start_paused = true)]
async fn metrics() {
    let mp = Provider::default();
    let q = Queue::with_config(config(&mp, "test"));
    tokio::task::yield_now().await; // the updater's first (immediate) tick

    q.add("foo");
    assert_eq!(mp.last("adds"), 1.0);
    assert_eq!(mp.last("depth"), 1.0);

    tokio::time::advance(50 * US).await;
    let i = q.get().await.unwrap();
    assert_eq!(i, "foo");
    assert_eq!(mp.last("latency"), 5e-05);
    assert_eq!(mp.count("latency"), 1);
    assert_eq!(mp.last("depth"), 0.0);

    // adds while processing: the item becomes dirty once; collapsed adds are not counted
    for _ in 0..5 {
        q.add(i);
    }
    assert_eq!(mp.last("adds"), 2.0);
    assert_eq!(mp.last("depth"), 1.0);

    tokio::time::advance(25 * US).await;
    q.done(&i);
    assert_eq!(mp.last("duration"), 2.5e-05);
    assert_eq!(mp.count("duration"), 1);
    assert_eq!(mp.last("depth"), 1.0);

    let i = q.get().await.unwrap();
    assert_eq!(mp.last("latency"), 2.5e-05);
    assert_eq!(mp.count("latency"), 2);

    mp.clear("unfinished");
    mp.clear("longest");
    tokio::time::advance(Duration::from_millis(1)).await;
    for _ in 0..8 {
        tokio::task::yield_now().await;
    }
    assert_eq!(mp.last("unfinished"), 0.001);
    assert_eq!(mp.last("longest"), 0.001);

    q.done(&i);
    assert_eq!(mp.last("duration"), 0.001);
    assert_eq!(mp.count("duration"), 2);
}

/// controller-runtime's priority queue metrics: the depth of ready items per priority, moved
/// when a waiting item is raised; a FIFO queue keeps the one depth gauge.
#[tokio::test(start_paused = true)]
async fn a_priority_queue_reports_its_depth_per_priority() {
    let depth = PriorityDepth::default();
    let mp = Provider(Default::default(), Some(depth.clone()));
    let q = PriorityQueue::with_ordering(Default::default(), config(&mp, "prio"));
    q.add_with_priority("a", 0);
    q.add_with_priority("b", -100);
    q.add_with_priority("c", -100);
    q.add_with_priority("b", -100); // collapsed: not counted
    assert_eq!(depth.values(), [(-100, 2), (0, 1)]);
    assert_eq!(
        mp.count("depth"),
        0,
        "no total gauge beside the per-priority one"
    );
    assert_eq!(mp.last("adds"), 3.0);

    q.add_with_priority("c", 5); // raised: counted at its new priority
    q.add_with_priority("c", 1); // lower: changes nothing
    assert_eq!(depth.values(), [(-100, 1), (0, 1), (5, 1)]);

    let c = q.get().await.unwrap();
    assert_eq!(c, "c");
    assert_eq!(depth.values(), [(-100, 1), (0, 1), (5, 0)]);
    q.add_with_priority("c", -100); // while processing: dirty again, at its new priority
    q.add_with_priority("c", 0); // raised while processing
    assert_eq!(depth.values(), [(-100, 1), (0, 2), (5, 0)]);
    q.done(&c); // queued again, already counted
    assert_eq!(depth.values(), [(-100, 1), (0, 2), (5, 0)]);

    while !q.is_empty() {
        let i = q.get().await.unwrap();
        q.done(&i);
    }
    assert_eq!(depth.values(), [(-100, 0), (0, 0), (5, 0)]);

    let fifo = Queue::with_config(config(&mp, "fifo"));
    fifo.add_with_priority("x", -100);
    assert_eq!(mp.last("depth"), 1.0, "a FIFO queue has one depth gauge");
    assert_eq!(depth.values(), [(-100, 0), (0, 0), (5, 0)]);

    let plain = Provider::default();
    let q = PriorityQueue::with_ordering(Default::default(), config(&plain, "plain"));
    q.add_with_priority("a", 0);
    q.add_with_priority("b", -100);
    assert_eq!(
        plain.last("depth"),
        2.0,
        "a provider without per-priority depth gets the total"
    );
}

#[tokio::test(start_paused = true)]
async fn retries_count_every_add_after() {
    let mp = Provider::default();
    let q = DelayingQueue::with_config(config(&mp, "retries"));
    q.add_after(1, Duration::ZERO);
    q.add_after(1, Duration::from_millis(5));
    assert_eq!(mp.last("retries"), 2.0);
}

#[tokio::test(start_paused = true)]
async fn unnamed_queues_have_no_metrics() {
    let mp = Provider::default();
    let q = Queue::with_config(config(&mp, ""));
    q.add(1);
    let i = q.get().await.unwrap();
    q.done(&i);
    assert!(mp.0.values.lock().is_empty());
}
