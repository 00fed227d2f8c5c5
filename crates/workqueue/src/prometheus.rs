//! Prometheus adapter for the queue metrics (feature `prometheus`), with component-base's names.

use std::sync::Arc;

use prometheus::{
    exponential_buckets, GaugeVec, HistogramOpts, HistogramVec, IntCounterVec, IntGaugeVec, Opts,
    Registry,
};

use crate::metrics::{
    CounterMetric, GaugeMetric, HistogramMetric, MetricsProvider, SettableGaugeMetric,
};

/// Makes every named queue's metrics as Prometheus vectors labelled `name`, registered in one
/// [`Registry`]: `workqueue_depth`, `workqueue_adds_total`, `workqueue_queue_duration_seconds`,
/// `workqueue_work_duration_seconds`, `workqueue_unfinished_work_seconds`,
/// `workqueue_longest_running_processor_seconds`, `workqueue_retries_total`.
#[derive(Clone)]
pub struct PrometheusMetricsProvider {
    depth: IntGaugeVec,
    adds: IntCounterVec,
    latency: HistogramVec,
    work_duration: HistogramVec,
    unfinished_work_seconds: GaugeVec,
    longest_running_processor: GaugeVec,
    retries: IntCounterVec,
}

fn opts(name: &str, help: &str) -> Opts {
    Opts::new(name, help).subsystem("workqueue")
}

fn seconds(name: &str, help: &str) -> HistogramOpts {
    // client-go's buckets: 10ns up to 10s... by factors of 10.
    let buckets = exponential_buckets(10e-9, 10.0, 10).expect("valid buckets");
    HistogramOpts::new(name, help)
        .subsystem("workqueue")
        .buckets(buckets)
}

impl PrometheusMetricsProvider {
    /// Creates the seven metric vectors and registers them in `registry`.
    pub fn new(registry: &Registry) -> prometheus::Result<Self> {
        let labels = &["name"];
        let p = PrometheusMetricsProvider {
            depth: IntGaugeVec::new(opts("depth", "Current depth of workqueue"), labels)?,
            adds: IntCounterVec::new(
                opts("adds_total", "Total number of adds handled by workqueue"),
                labels,
            )?,
            latency: HistogramVec::new(
                seconds(
                    "queue_duration_seconds",
                    "How long in seconds an item stays in workqueue before being requested.",
                ),
                labels,
            )?,
            work_duration: HistogramVec::new(
                seconds(
                    "work_duration_seconds",
                    "How long in seconds processing an item from workqueue takes.",
                ),
                labels,
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
    fn new_depth_metric(&self, name: &str) -> Arc<dyn GaugeMetric> {
        Arc::new(self.depth.with_label_values(&[name]))
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
}
