//! Prometheus adapter for the controller metrics (feature `prometheus`), with
//! controller-runtime's names and labels, its workqueue metrics included.

use std::collections::HashMap;
use std::sync::Arc;

use parking_lot::Mutex;
use prometheus::{
    exponential_buckets, GaugeVec, HistogramOpts, HistogramVec, IntCounterVec, IntGaugeVec, Opts,
    Registry,
};

use kcache_workqueue::{MetricsProvider, PrometheusMetricsProvider};

use crate::metrics::{
    ControllerMetricsProvider, CounterMetric, GaugeMetric, HistogramMetric, SettableGaugeMetric,
};

/// Every controller's metrics as Prometheus vectors labelled `controller`, registered in one
/// [`Registry`] (the one a manager serves on `/metrics`): the `controller_runtime_*` families
/// and, as controller-runtime registers them, each controller's `workqueue_*` families
/// (kcache-workqueue's [`PrometheusMetricsProvider`] with the constant label
/// `controller=<name>`, the depth by `priority`, controller-runtime's buckets), registered when
/// the controller starts (so do not register a plain `PrometheusMetricsProvider` in the same
/// registry: its `workqueue_*` families lack the `controller` label).
#[derive(Clone)]
pub struct PrometheusControllerMetrics {
    registry: Registry,
    /// Each controller's queue metrics, by controller name: a controller started again under
    /// the same name reports to the families it registered before.
    workqueues: Arc<Mutex<HashMap<String, PrometheusMetricsProvider>>>,
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
    /// Creates the `controller_runtime_*` vectors and registers them in `registry`, where each
    /// controller's `workqueue_*` families go too.
    pub fn new(registry: &Registry) -> prometheus::Result<Self> {
        // controller-runtime's reconcile-time buckets: 5 ms up to about 60 s.
        let buckets = exponential_buckets(0.005, 2.0, 14)?;
        let p = PrometheusControllerMetrics {
            registry: registry.clone(),
            workqueues: Arc::default(),
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

impl ControllerMetricsProvider for PrometheusControllerMetrics {
    fn reconcile_total(&self, controller: &str, result: &str) -> Arc<dyn CounterMetric> {
        Arc::new(self.total.with_label_values(&[controller, result]))
    }
    fn reconcile_errors(&self, controller: &str) -> Arc<dyn CounterMetric> {
        Arc::new(self.errors.with_label_values(&[controller]))
    }
    fn terminal_reconcile_errors(&self, controller: &str) -> Arc<dyn CounterMetric> {
        Arc::new(self.terminal.with_label_values(&[controller]))
    }
    fn reconcile_panics(&self, controller: &str) -> Arc<dyn CounterMetric> {
        Arc::new(self.panics.with_label_values(&[controller]))
    }
    fn reconcile_timeouts(&self, controller: &str) -> Arc<dyn CounterMetric> {
        Arc::new(self.timeouts.with_label_values(&[controller]))
    }
    fn reconcile_time(&self, controller: &str) -> Arc<dyn HistogramMetric> {
        Arc::new(self.time.with_label_values(&[controller]))
    }
    fn max_concurrent_reconciles(&self, controller: &str) -> Arc<dyn SettableGaugeMetric> {
        Arc::new(self.max_concurrent.with_label_values(&[controller]))
    }
    fn active_workers(&self, controller: &str) -> Arc<dyn GaugeMetric> {
        Arc::new(self.active.with_label_values(&[controller]))
    }
    /// Registers the controller's `workqueue_*` families, labelled `controller=<name>`, at its
    /// first start; `None` (the queue then reports to kcache-workqueue's global provider, if
    /// any) when the registry refuses them.
    fn workqueue_metrics(&self, controller: &str) -> Option<Arc<dyn MetricsProvider>> {
        let mut queues = self.workqueues.lock();
        if let Some(p) = queues.get(controller) {
            return Some(Arc::new(p.clone()));
        }
        // controller-runtime's duration buckets: 10 ns to 1000 s by factors of 10.
        let registered = exponential_buckets(10e-9, 10.0, 12).and_then(|buckets| {
            PrometheusMetricsProvider::builder()
                .const_label("controller", controller)
                .depth_by_priority()
                .duration_buckets(buckets)
                .register(&self.registry)
        });
        match registered {
            Ok(p) => {
                queues.insert(controller.to_string(), p.clone());
                Some(Arc::new(p))
            }
            Err(error) => {
                tracing::error!(
                    controller,
                    %error,
                    "the registry refused the controller's workqueue_* metrics"
                );
                None
            }
        }
    }
}
