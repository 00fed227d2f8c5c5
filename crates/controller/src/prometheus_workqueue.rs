//! The controllers' workqueue metrics in Prometheus, as controller-runtime exports them
//! (`pkg/internal/metrics/workqueue.go`): the seven `workqueue_*` families labelled `name` and
//! `controller` (both the controller's name), and the depth also by `priority`.

use std::collections::HashMap;
use std::sync::Arc;

use kcache_workqueue::{
    CounterMetric, DepthMetricWithPriority, GaugeMetric, HistogramMetric, MetricsProvider,
    SettableGaugeMetric,
};
use parking_lot::Mutex;
use prometheus::{
    exponential_buckets, GaugeVec, HistogramOpts, HistogramVec, IntCounterVec, IntGauge,
    IntGaugeVec, Opts, Registry,
};

/// Distinct priorities a queue's depth reports before they are folded into one series
/// (controller-runtime's `maxRecommendedUniquePriorities`): a bound on the label's cardinality.
const MAX_PRIORITIES: usize = 25;

/// The `priority` label of every priority past [`MAX_PRIORITIES`].
const PRIORITIES_EXCEEDED: &str = "exceeded_cardinality_limit";

/// controller-runtime's workqueue metrics provider; see the module docs.
#[derive(Clone)]
pub(crate) struct PrometheusWorkqueueMetrics {
    depth: IntGaugeVec,
    adds: IntCounterVec,
    latency: HistogramVec,
    work_duration: HistogramVec,
    unfinished: GaugeVec,
    longest_running: GaugeVec,
    retries: IntCounterVec,
}

fn opts(name: &str, help: &str) -> Opts {
    Opts::new(name, help).subsystem("workqueue")
}

impl PrometheusWorkqueueMetrics {
    /// Creates the seven vectors and registers them in `registry`.
    pub(crate) fn new(registry: &Registry) -> prometheus::Result<Self> {
        let labels = &["name", "controller"];
        // controller-runtime's buckets: 10 ns to 1000 s by factors of 10.
        let seconds = |name: &str, help: &str| -> prometheus::Result<HistogramVec> {
            let opts = HistogramOpts::new(name, help)
                .subsystem("workqueue")
                .buckets(exponential_buckets(10e-9, 10.0, 12)?);
            HistogramVec::new(opts, labels)
        };
        let p = PrometheusWorkqueueMetrics {
            depth: IntGaugeVec::new(
                opts(
                    "depth",
                    "Current depth of workqueue by workqueue and priority",
                ),
                &["name", "controller", "priority"],
            )?,
            adds: IntCounterVec::new(
                opts("adds_total", "Total number of adds handled by workqueue"),
                labels,
            )?,
            latency: seconds(
                "queue_duration_seconds",
                "How long in seconds an item stays in workqueue before being requested",
            )?,
            work_duration: seconds(
                "work_duration_seconds",
                "How long in seconds processing an item from workqueue takes.",
            )?,
            unfinished: GaugeVec::new(
                opts(
                    "unfinished_work_seconds",
                    "How many seconds of work has been done that is in progress and hasn't \
                     been observed by work_duration. Large values indicate stuck threads. One \
                     can deduce the number of stuck threads by observing the rate at which this \
                     increases.",
                ),
                labels,
            )?,
            longest_running: GaugeVec::new(
                opts(
                    "longest_running_processor_seconds",
                    "How many seconds has the longest running processor for workqueue been \
                     running.",
                ),
                labels,
            )?,
            retries: IntCounterVec::new(
                opts(
                    "retries_total",
                    "Total number of items added to the workqueue with a non-zero delay \
                     (rate-limited requeues, explicit RequeueAfter or AddAfter calls)",
                ),
                labels,
            )?,
        };
        registry.register(Box::new(p.depth.clone()))?;
        registry.register(Box::new(p.adds.clone()))?;
        registry.register(Box::new(p.latency.clone()))?;
        registry.register(Box::new(p.work_duration.clone()))?;
        registry.register(Box::new(p.unfinished.clone()))?;
        registry.register(Box::new(p.longest_running.clone()))?;
        registry.register(Box::new(p.retries.clone()))?;
        Ok(p)
    }
}

impl MetricsProvider for PrometheusWorkqueueMetrics {
    /// A queue not ordered by priority: one series, `priority=""`.
    fn new_depth_metric(&self, name: &str) -> Arc<dyn GaugeMetric> {
        Arc::new(self.depth.with_label_values(&[name, name, ""]))
    }
    fn new_adds_metric(&self, name: &str) -> Arc<dyn CounterMetric> {
        Arc::new(self.adds.with_label_values(&[name, name]))
    }
    fn new_latency_metric(&self, name: &str) -> Arc<dyn HistogramMetric> {
        Arc::new(self.latency.with_label_values(&[name, name]))
    }
    fn new_work_duration_metric(&self, name: &str) -> Arc<dyn HistogramMetric> {
        Arc::new(self.work_duration.with_label_values(&[name, name]))
    }
    fn new_unfinished_work_seconds_metric(&self, name: &str) -> Arc<dyn SettableGaugeMetric> {
        Arc::new(self.unfinished.with_label_values(&[name, name]))
    }
    fn new_longest_running_processor_seconds_metric(
        &self,
        name: &str,
    ) -> Arc<dyn SettableGaugeMetric> {
        Arc::new(self.longest_running.with_label_values(&[name, name]))
    }
    fn new_retries_metric(&self, name: &str) -> Arc<dyn CounterMetric> {
        Arc::new(self.retries.with_label_values(&[name, name]))
    }
    fn new_depth_metric_with_priority(
        &self,
        name: &str,
    ) -> Option<Arc<dyn DepthMetricWithPriority>> {
        Some(Arc::new(DepthByPriority {
            depth: self.depth.clone(),
            name: name.to_string(),
            series: Mutex::default(),
        }))
    }
}

/// One queue's depth, a series per priority (the priority as a decimal integer), created at the
/// first item of that priority and kept (at 0 when none is queued), as controller-runtime does.
struct DepthByPriority {
    depth: IntGaugeVec,
    name: String,
    series: Mutex<Series>,
}

#[derive(Default)]
struct Series {
    by_priority: HashMap<i32, IntGauge>,
    /// Set once more than [`MAX_PRIORITIES`] were seen: every change goes there from then on.
    exceeded: Option<IntGauge>,
}

impl DepthByPriority {
    fn with(&self, priority: i32, f: impl FnOnce(&IntGauge)) {
        let mut s = self.series.lock();
        if let Some(g) = &s.exceeded {
            return f(g);
        }
        if let Some(g) = s.by_priority.get(&priority) {
            return f(g);
        }
        let label = if s.by_priority.len() < MAX_PRIORITIES {
            priority.to_string()
        } else {
            PRIORITIES_EXCEEDED.to_string()
        };
        let g =
            self.depth
                .with_label_values(&[self.name.as_str(), self.name.as_str(), label.as_str()]);
        f(&g);
        if label == PRIORITIES_EXCEEDED {
            s.by_priority.clear();
            s.exceeded = Some(g);
        } else {
            s.by_priority.insert(priority, g);
        }
    }
}

impl DepthMetricWithPriority for DepthByPriority {
    fn inc(&self, priority: i32) {
        self.with(priority, IntGauge::inc);
    }
    fn dec(&self, priority: i32) {
        self.with(priority, IntGauge::dec);
    }
}

#[cfg(test)]
mod tests {
    use kcache_workqueue::{PriorityQueue, QueueConfig};
    use prometheus::{Encoder, TextEncoder};

    use super::*;
    use crate::LOW_PRIORITY;

    /// The `workqueue_depth` lines of the exposition text.
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

    fn queue(registry: &Registry, name: &str) -> PriorityQueue<&'static str> {
        let provider = PrometheusWorkqueueMetrics::new(registry).unwrap();
        PriorityQueue::with_ordering(
            Default::default(),
            QueueConfig {
                name: name.into(),
                metrics_provider: Some(Arc::new(provider)),
                unfinished_work_update_period: None,
            },
        )
    }

    #[tokio::test]
    async fn depth_is_reported_per_priority_and_goes_to_zero() {
        let registry = Registry::new();
        let q = queue(&registry, "foo");
        assert!(
            depth_lines(&registry).is_empty(),
            "no series before an item"
        );
        q.add_with_priority("a", 0);
        q.add_with_priority("b", LOW_PRIORITY);
        q.add_with_priority("c", LOW_PRIORITY);
        assert_eq!(
            depth_lines(&registry),
            [
                r#"workqueue_depth{controller="foo",name="foo",priority="-100"} 2"#,
                r#"workqueue_depth{controller="foo",name="foo",priority="0"} 1"#,
            ]
        );
        while !q.is_empty() {
            let item = q.get().await.unwrap();
            q.done(&item);
        }
        assert_eq!(
            depth_lines(&registry),
            [
                r#"workqueue_depth{controller="foo",name="foo",priority="-100"} 0"#,
                r#"workqueue_depth{controller="foo",name="foo",priority="0"} 0"#,
            ]
        );
    }

    #[tokio::test]
    async fn priorities_past_the_limit_share_one_series() {
        let registry = Registry::new();
        let q = queue(&registry, "many");
        for p in 0..=MAX_PRIORITIES as i32 {
            q.add_with_priority(["x", "y"][(p % 2) as usize], p); // raises, one series each
        }
        let lines = depth_lines(&registry);
        assert_eq!(lines.len(), MAX_PRIORITIES + 1, "{lines:?}");
        assert!(
            lines.contains(
                &r#"workqueue_depth{controller="many",name="many",priority="exceeded_cardinality_limit"} 1"#
                    .to_string()
            ),
            "{lines:?}"
        );
    }
}
