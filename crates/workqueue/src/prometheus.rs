//! Prometheus adapter for the queue metrics (feature `prometheus`), with component-base's names.
//!
//! One provider is one set of the seven families in a registry. Several sets may share a
//! registry when each has its own constant label values (the prometheus crate keys a family's
//! registration by name and constant label values, and merges same-named families when
//! gathering): that is how every controller of a manager gets its own `controller=<name>`
//! queue metrics next to the others.

mod depth_by_priority;

use std::collections::HashMap;
use std::sync::Arc;

use prometheus::{
    exponential_buckets, GaugeVec, HistogramOpts, HistogramVec, IntCounterVec, IntGaugeVec, Opts,
    Registry,
};

use crate::metrics::{
    CounterMetric, DepthMetricWithPriority, GaugeMetric, HistogramMetric, MetricsProvider,
    SettableGaugeMetric,
};
use depth_by_priority::DepthByPriority;

/// Makes every named queue's metrics as Prometheus vectors labelled `name`, registered in one
/// [`Registry`]: `workqueue_depth`, `workqueue_adds_total`, `workqueue_queue_duration_seconds`,
/// `workqueue_work_duration_seconds`, `workqueue_unfinished_work_seconds`,
/// `workqueue_longest_running_processor_seconds`, `workqueue_retries_total`.
/// [`builder`](Self::builder) adds constant labels, the depth per priority and other buckets.
#[derive(Clone)]
pub struct PrometheusMetricsProvider {
    depth: IntGaugeVec,
    /// The depth has a `priority` label: see [`PrometheusMetricsBuilder::depth_by_priority`].
    by_priority: bool,
    adds: IntCounterVec,
    latency: HistogramVec,
    work_duration: HistogramVec,
    unfinished_work_seconds: GaugeVec,
    longest_running_processor: GaugeVec,
    retries: IntCounterVec,
}

/// How a [`PrometheusMetricsProvider`] labels its families and buckets its durations.
#[derive(Debug, Clone, Default)]
pub struct PrometheusMetricsBuilder {
    const_labels: HashMap<String, String>,
    by_priority: bool,
    buckets: Option<Vec<f64>>,
}

impl PrometheusMetricsBuilder {
    /// Adds the label `name=value` to every series of every family (e.g.
    /// `controller=<controller's name>`), so that several providers can share a registry.
    pub fn const_label(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.const_labels.insert(name.into(), value.into());
        self
    }

    /// Reports a priority queue's depth per priority, as controller-runtime v0.23 does:
    /// `workqueue_depth` gets a `priority` label (the priority as a decimal integer; `""` for a
    /// queue not ordered by priority), a series appears with the first item of its priority and
    /// stays (at 0 when none waits), and past 25 distinct priorities in one queue every further
    /// change goes to `priority="exceeded_cardinality_limit"`.
    pub fn depth_by_priority(mut self) -> Self {
        self.by_priority = true;
        self
    }

    /// The buckets of the two duration histograms, instead of client-go's 10 ns to 10 s by
    /// factors of 10 (controller-runtime goes on to 1000 s).
    pub fn duration_buckets(mut self, buckets: Vec<f64>) -> Self {
        self.buckets = Some(buckets);
        self
    }

    /// Creates the seven metric vectors and registers them in `registry`. Fails if the
    /// registry already holds these families with other label names or help, or with the same
    /// constant label values.
    pub fn register(self, registry: &Registry) -> prometheus::Result<PrometheusMetricsProvider> {
        let opts = |name: &str, help: &str| {
            Opts::new(name, help)
                .subsystem("workqueue")
                .const_labels(self.const_labels.clone())
        };
        let buckets = match &self.buckets {
            Some(b) => b.clone(),
            None => exponential_buckets(10e-9, 10.0, 10)?,
        };
        let seconds = |name: &str, help: &str| {
            HistogramVec::new(
                HistogramOpts::new(name, help)
                    .subsystem("workqueue")
                    .const_labels(self.const_labels.clone())
                    .buckets(buckets.clone()),
                &["name"],
            )
        };
        let labels = &["name"];
        let depth = if self.by_priority {
            IntGaugeVec::new(
                opts(
                    "depth",
                    "Current depth of workqueue by workqueue and priority",
                ),
                &["name", "priority"],
            )?
        } else {
            IntGaugeVec::new(opts("depth", "Current depth of workqueue"), labels)?
        };
        let p = PrometheusMetricsProvider {
            depth,
            by_priority: self.by_priority,
            adds: IntCounterVec::new(
                opts("adds_total", "Total number of adds handled by workqueue"),
                labels,
            )?,
            latency: seconds(
                "queue_duration_seconds",
                "How long in seconds an item stays in workqueue before being requested.",
            )?,
            work_duration: seconds(
                "work_duration_seconds",
                "How long in seconds processing an item from workqueue takes.",
            )?,
            unfinished_work_seconds: GaugeVec::new(
                opts(
                    "unfinished_work_seconds",
                    "How many seconds of work has been done that is in progress and hasn't \
                     been observed by work_duration. Large values indicate stuck threads.",
                ),
                labels,
            )?,
            longest_running_processor: GaugeVec::new(
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
                    "Total number of retries handled by workqueue",
                ),
                labels,
            )?,
        };
        registry.register(Box::new(p.depth.clone()))?;
        registry.register(Box::new(p.adds.clone()))?;
        registry.register(Box::new(p.latency.clone()))?;
        registry.register(Box::new(p.work_duration.clone()))?;
        registry.register(Box::new(p.unfinished_work_seconds.clone()))?;
        registry.register(Box::new(p.longest_running_processor.clone()))?;
        registry.register(Box::new(p.retries.clone()))?;
        Ok(p)
    }
}

impl PrometheusMetricsProvider {
    /// Creates the seven metric vectors, client-go's shape, and registers them in `registry`.
    pub fn new(registry: &Registry) -> prometheus::Result<Self> {
        Self::builder().register(registry)
    }

    /// Starts a provider with constant labels, the depth per priority or other buckets:
    ///
    /// ```
    /// use std::sync::Arc;
    /// use kcache_workqueue::{PriorityQueue, PrometheusMetricsProvider, QueueConfig};
    ///
    /// let registry = prometheus::Registry::new();
    /// let metrics = PrometheusMetricsProvider::builder()
    ///     .const_label("controller", "configmap")
    ///     .depth_by_priority()
    ///     .register(&registry)?;
    /// let queue = PriorityQueue::with_ordering(
    ///     Default::default(),
    ///     QueueConfig {
    ///         metrics_provider: Some(Arc::new(metrics)),
    ///         ..QueueConfig::named("configmap")
    ///     },
    /// );
    /// queue.add_with_priority("default/a", -100);
    /// let text = prometheus::TextEncoder::new().encode_to_string(&registry.gather())?;
    /// assert!(text.contains(
    ///     r#"workqueue_depth{controller="configmap",name="configmap",priority="-100"} 1"#
    /// ));
    /// # Ok::<(), prometheus::Error>(())
    /// ```
    pub fn builder() -> PrometheusMetricsBuilder {
        PrometheusMetricsBuilder::default()
    }
}

impl GaugeMetric for prometheus::IntGauge {
    fn inc(&self) {
        prometheus::IntGauge::inc(self)
    }
    fn dec(&self) {
        prometheus::IntGauge::dec(self)
    }
}

impl SettableGaugeMetric for prometheus::Gauge {
    fn set(&self, value: f64) {
        prometheus::Gauge::set(self, value)
    }
}

impl CounterMetric for prometheus::IntCounter {
    fn inc(&self) {
        prometheus::IntCounter::inc(self)
    }
}

impl HistogramMetric for prometheus::Histogram {
    fn observe(&self, value: f64) {
        prometheus::Histogram::observe(self, value)
    }
}

impl MetricsProvider for PrometheusMetricsProvider {
    /// With the depth per priority, a queue not ordered by priority is `priority=""`.
    fn new_depth_metric(&self, name: &str) -> Arc<dyn GaugeMetric> {
        if self.by_priority {
            Arc::new(self.depth.with_label_values(&[name, ""]))
        } else {
            Arc::new(self.depth.with_label_values(&[name]))
        }
    }
    fn new_adds_metric(&self, name: &str) -> Arc<dyn CounterMetric> {
        Arc::new(self.adds.with_label_values(&[name]))
    }
    fn new_latency_metric(&self, name: &str) -> Arc<dyn HistogramMetric> {
        Arc::new(self.latency.with_label_values(&[name]))
    }
    fn new_work_duration_metric(&self, name: &str) -> Arc<dyn HistogramMetric> {
        Arc::new(self.work_duration.with_label_values(&[name]))
    }
    fn new_unfinished_work_seconds_metric(&self, name: &str) -> Arc<dyn SettableGaugeMetric> {
        Arc::new(self.unfinished_work_seconds.with_label_values(&[name]))
    }
    fn new_longest_running_processor_seconds_metric(
        &self,
        name: &str,
    ) -> Arc<dyn SettableGaugeMetric> {
        Arc::new(self.longest_running_processor.with_label_values(&[name]))
    }
    fn new_retries_metric(&self, name: &str) -> Arc<dyn CounterMetric> {
        Arc::new(self.retries.with_label_values(&[name]))
    }
    fn new_depth_metric_with_priority(
        &self,
        name: &str,
    ) -> Option<Arc<dyn DepthMetricWithPriority>> {
        self.by_priority
            .then(|| Arc::new(DepthByPriority::new(self.depth.clone(), name)) as _)
    }
}
