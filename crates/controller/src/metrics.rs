//! The controller's metrics under controller-runtime's names (`controller_runtime_*`), through a
//! provider trait: nothing by default, Prometheus with the `prometheus` feature
//! ([`PrometheusControllerMetrics`](crate::PrometheusControllerMetrics)), or your own. The
//! controller's workqueue reports kcache-workqueue's `workqueue_*` metrics under the
//! controller's name, through the provider's
//! [`workqueue_metrics`](ControllerMetricsProvider::workqueue_metrics) or else that crate's
//! global one.

use std::sync::{Arc, OnceLock};

use kcache_workqueue::MetricsProvider;
pub use kcache_workqueue::{CounterMetric, GaugeMetric, HistogramMetric, SettableGaugeMetric};

/// Makes one controller's metrics; each method gets the controller's name (the `controller`
/// label).
pub trait ControllerMetricsProvider: Send + Sync {
    /// `controller_runtime_reconcile_total{controller, result}`; result is `success`, `error`,
    /// `requeue` or `requeue_after`.
    fn reconcile_total(&self, controller: &str, result: &str) -> Arc<dyn CounterMetric>;
    /// `controller_runtime_reconcile_errors_total`.
    fn reconcile_errors(&self, controller: &str) -> Arc<dyn CounterMetric>;
    /// `controller_runtime_terminal_reconcile_errors_total`.
    fn terminal_reconcile_errors(&self, controller: &str) -> Arc<dyn CounterMetric>;
    /// `controller_runtime_reconcile_panics_total`.
    fn reconcile_panics(&self, controller: &str) -> Arc<dyn CounterMetric>;
    /// `controller_runtime_reconcile_timeouts_total`.
    fn reconcile_timeouts(&self, controller: &str) -> Arc<dyn CounterMetric>;
    /// `controller_runtime_reconcile_time_seconds`.
    fn reconcile_time(&self, controller: &str) -> Arc<dyn HistogramMetric>;
    /// `controller_runtime_max_concurrent_reconciles`.
    fn max_concurrent_reconciles(&self, controller: &str) -> Arc<dyn SettableGaugeMetric>;
    /// `controller_runtime_active_workers`.
    fn active_workers(&self, controller: &str) -> Arc<dyn GaugeMetric>;
    /// Where the controller's workqueue (named after the controller) reports its `workqueue_*`
    /// metrics; asked once each time the controller starts. `None`, the default:
    /// kcache-workqueue's global provider ([`kcache_workqueue::set_provider`]), if any.
    fn workqueue_metrics(&self, _controller: &str) -> Option<Arc<dyn MetricsProvider>> {
        None
    }
}

static GLOBAL: OnceLock<Arc<dyn ControllerMetricsProvider>> = OnceLock::new();

/// Sets the provider of every controller that has no provider of its own (once per process;
/// false if one was already set).
pub fn set_metrics_provider(provider: Arc<dyn ControllerMetricsProvider>) -> bool {
    GLOBAL.set(provider).is_ok()
}

/// Records nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoopControllerMetrics;

impl CounterMetric for NoopControllerMetrics {
    fn inc(&self) {}
}
impl GaugeMetric for NoopControllerMetrics {
    fn inc(&self) {}
    fn dec(&self) {}
}
impl SettableGaugeMetric for NoopControllerMetrics {
    fn set(&self, _: f64) {}
}
impl HistogramMetric for NoopControllerMetrics {
    fn observe(&self, _: f64) {}
}

impl ControllerMetricsProvider for NoopControllerMetrics {
    fn reconcile_total(&self, _: &str, _: &str) -> Arc<dyn CounterMetric> {
        Arc::new(NoopControllerMetrics)
    }
    fn reconcile_errors(&self, _: &str) -> Arc<dyn CounterMetric> {
        Arc::new(NoopControllerMetrics)
    }
    fn terminal_reconcile_errors(&self, _: &str) -> Arc<dyn CounterMetric> {
        Arc::new(NoopControllerMetrics)
    }
    fn reconcile_panics(&self, _: &str) -> Arc<dyn CounterMetric> {
        Arc::new(NoopControllerMetrics)
    }
    fn reconcile_timeouts(&self, _: &str) -> Arc<dyn CounterMetric> {
        Arc::new(NoopControllerMetrics)
    }
    fn reconcile_time(&self, _: &str) -> Arc<dyn HistogramMetric> {
        Arc::new(NoopControllerMetrics)
    }
    fn max_concurrent_reconciles(&self, _: &str) -> Arc<dyn SettableGaugeMetric> {
        Arc::new(NoopControllerMetrics)
    }
    fn active_workers(&self, _: &str) -> Arc<dyn GaugeMetric> {
        Arc::new(NoopControllerMetrics)
    }
}

/// The provider of a controller: its own, else the global one, else none.
pub(crate) fn provider_for(
    own: Option<&Arc<dyn ControllerMetricsProvider>>,
) -> Arc<dyn ControllerMetricsProvider> {
    own.or(GLOBAL.get())
        .cloned()
        .unwrap_or_else(|| Arc::new(NoopControllerMetrics))
}

/// One controller's metrics, made once when it starts.
pub(crate) struct ControllerMetrics {
    pub success: Arc<dyn CounterMetric>,
    pub error: Arc<dyn CounterMetric>,
    pub requeue: Arc<dyn CounterMetric>,
    pub requeue_after: Arc<dyn CounterMetric>,
    pub errors: Arc<dyn CounterMetric>,
    pub terminal: Arc<dyn CounterMetric>,
    pub panics: Arc<dyn CounterMetric>,
    pub timeouts: Arc<dyn CounterMetric>,
    pub time: Arc<dyn HistogramMetric>,
    pub active_workers: Arc<dyn GaugeMetric>,
}

impl ControllerMetrics {
    /// The metrics of `controller` from `p` (see [`provider_for`]).
    pub fn new(controller: &str, p: &dyn ControllerMetricsProvider, concurrency: usize) -> Self {
        p.max_concurrent_reconciles(controller)
            .set(concurrency as f64);
        ControllerMetrics {
            success: p.reconcile_total(controller, "success"),
            error: p.reconcile_total(controller, "error"),
            requeue: p.reconcile_total(controller, "requeue"),
            requeue_after: p.reconcile_total(controller, "requeue_after"),
            errors: p.reconcile_errors(controller),
            terminal: p.terminal_reconcile_errors(controller),
            panics: p.reconcile_panics(controller),
            timeouts: p.reconcile_timeouts(controller),
            time: p.reconcile_time(controller),
            active_workers: p.active_workers(controller),
        }
    }
}
