//! Prometheus adapter for the controller metrics (feature `prometheus`), with
//! controller-runtime's names and labels, its workqueue metrics included.

use std::sync::Arc;

use prometheus::{
    exponential_buckets, GaugeVec, HistogramOpts, HistogramVec, IntCounterVec, IntGaugeVec, Opts,
    Registry,
};

use kcache_workqueue::MetricsProvider;

use crate::metrics::{
    ControllerMetricsProvider, CounterMetric, GaugeMetric, HistogramMetric, SettableGaugeMetric,
};
use crate::prometheus_workqueue::PrometheusWorkqueueMetrics;

/// Every controller's metrics as Prometheus vectors labelled `controller`, registered in one
/// [`Registry`] (the one a manager serves on `/metrics`): the `controller_runtime_*` families
/// and, as controller-runtime registers them, the controllers' `workqueue_*` families, labelled
/// `name` and `controller`, the depth also by `priority` (so do not register kcache-workqueue's
/// `PrometheusMetricsProvider` in the same registry: both name their families `workqueue_*`).
#[derive(Clone)]
pub struct PrometheusControllerMetrics {
    workqueue: PrometheusWorkqueueMetrics,
    total: IntCounterVec,
    errors: IntCounterVec,
    terminal: IntCounterVec,
    panics: IntCounterVec,
    timeouts: IntCounterVec,
    time: HistogramVec,
    max_concurrent: GaugeVec,
    active: IntGaugeVec,
}

fn counter(name: &str, help: &str) -> prometheus::Result<IntCounterVec> {
    IntCounterVec::new(Opts::new(name, help), &["controller"])
}

impl PrometheusControllerMetrics {
    /// Creates the `controller_runtime_*` and `workqueue_*` vectors and registers them in
    /// `registry`.
    pub fn new(registry: &Registry) -> prometheus::Result<Self> {
        // controller-runtime's reconcile-time buckets: 5 ms up to about 60 s.
        let buckets = exponential_buckets(0.005, 2.0, 14)?;
        let p = PrometheusControllerMetrics {
            workqueue: PrometheusWorkqueueMetrics::new(registry)?,
            total: IntCounterVec::new(
                Opts::new(
                    "controller_runtime_reconcile_total",
                    "Total number of reconciliations per controller",
                ),
                &["controller", "result"],
            )?,
            errors: counter(
                "controller_runtime_reconcile_errors_total",
                "Total number of reconciliation errors per controller",
            )?,
            terminal: counter(
                "controller_runtime_terminal_reconcile_errors_total",
                "Total number of terminal reconciliation errors per controller",
            )?,
            panics: counter(
                "controller_runtime_reconcile_panics_total",
                "Total number of reconciliation panics per controller",
            )?,
            timeouts: counter(
                "controller_runtime_reconcile_timeouts_total",
                "Total number of reconciliation timeouts per controller",
            )?,
            time: HistogramVec::new(
                HistogramOpts::new(
                    "controller_runtime_reconcile_time_seconds",
                    "Length of time per reconciliation per controller",
                )
                .buckets(buckets),
                &["controller"],
            )?,
            max_concurrent: GaugeVec::new(
                Opts::new(
                    "controller_runtime_max_concurrent_reconciles",
                    "Maximum number of concurrent reconciles per controller",
                ),
                &["controller"],
            )?,
            active: IntGaugeVec::new(
                Opts::new(
                    "controller_runtime_active_workers",
                    "Number of currently used workers per controller",
                ),
                &["controller"],
            )?,
        };
        registry.register(Box::new(p.total.clone()))?;
        registry.register(Box::new(p.errors.clone()))?;
        registry.register(Box::new(p.terminal.clone()))?;
        registry.register(Box::new(p.panics.clone()))?;
        registry.register(Box::new(p.timeouts.clone()))?;
        registry.register(Box::new(p.time.clone()))?;
        registry.register(Box::new(p.max_concurrent.clone()))?;
        registry.register(Box::new(p.active.clone()))?;
        Ok(p)
    }
}

struct Counter(prometheus::IntCounter);
impl CounterMetric for Counter {
    fn inc(&self) {
        self.0.inc()
    }
}
struct Gauge(prometheus::IntGauge);
impl GaugeMetric for Gauge {
    fn inc(&self) {
        self.0.inc()
    }
    fn dec(&self) {
        self.0.dec()
    }
}
struct Settable(prometheus::Gauge);
impl SettableGaugeMetric for Settable {
    fn set(&self, v: f64) {
        self.0.set(v)
    }
}
struct Histogram(prometheus::Histogram);
impl HistogramMetric for Histogram {
    fn observe(&self, v: f64) {
        self.0.observe(v)
    }
}

impl ControllerMetricsProvider for PrometheusControllerMetrics {
    fn reconcile_total(&self, controller: &str, result: &str) -> Arc<dyn CounterMetric> {
        Arc::new(Counter(self.total.with_label_values(&[controller, result])))
    }
    fn reconcile_errors(&self, controller: &str) -> Arc<dyn CounterMetric> {
        Arc::new(Counter(self.errors.with_label_values(&[controller])))
    }
    fn terminal_reconcile_errors(&self, controller: &str) -> Arc<dyn CounterMetric> {
        Arc::new(Counter(self.terminal.with_label_values(&[controller])))
    }
    fn reconcile_panics(&self, controller: &str) -> Arc<dyn CounterMetric> {
        Arc::new(Counter(self.panics.with_label_values(&[controller])))
    }
    fn reconcile_timeouts(&self, controller: &str) -> Arc<dyn CounterMetric> {
        Arc::new(Counter(self.timeouts.with_label_values(&[controller])))
    }
    fn reconcile_time(&self, controller: &str) -> Arc<dyn HistogramMetric> {
        Arc::new(Histogram(self.time.with_label_values(&[controller])))
    }
    fn max_concurrent_reconciles(&self, controller: &str) -> Arc<dyn SettableGaugeMetric> {
        Arc::new(Settable(
            self.max_concurrent.with_label_values(&[controller]),
        ))
    }
    fn active_workers(&self, controller: &str) -> Arc<dyn GaugeMetric> {
        Arc::new(Gauge(self.active.with_label_values(&[controller])))
    }
    fn workqueue_metrics(&self) -> Option<Arc<dyn MetricsProvider>> {
        Some(Arc::new(self.workqueue.clone()))
    }
}
