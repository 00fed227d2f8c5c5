//! Queue metrics, mirroring client-go's `metrics.go`: a [`MetricsProvider`] makes the seven
//! metrics of a *named* queue; unnamed queues (and queues with no provider) pay nothing.
//!
//! Times come from [`tokio::time::Instant`], so tests with paused tokio time see exact latencies.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use ahash::RandomState as Hasher;
use tokio::time::Instant;

/// A gauge that goes up and down (client-go `GaugeMetric`): the queue depth.
pub trait GaugeMetric: Send + Sync {
    /// Adds one.
    fn inc(&self);
    /// Subtracts one.
    fn dec(&self);
}

/// A gauge that is set (client-go `SettableGaugeMetric`): unfinished work, longest running.
pub trait SettableGaugeMetric: Send + Sync {
    /// Sets the value.
    fn set(&self, value: f64);
}

/// A monotonic counter (client-go `CounterMetric`): adds, retries.
pub trait CounterMetric: Send + Sync {
    /// Adds one.
    fn inc(&self);
}

/// A distribution of seconds (client-go `HistogramMetric`): queue and work durations.
pub trait HistogramMetric: Send + Sync {
    /// Records one observation, in seconds.
    fn observe(&self, value: f64);
}

/// The depth of a priority-ordered queue per priority (controller-runtime's
/// `DepthMetricWithPriority`): how many items of each priority are waiting to be handed out.
pub trait DepthMetricWithPriority: Send + Sync {
    /// Adds one at `priority`.
    fn inc(&self, priority: i32);
    /// Subtracts one at `priority`.
    fn dec(&self, priority: i32);
}

/// Makes the metrics of one named queue (client-go `MetricsProvider`). Each method gets the
/// queue's name, which exporters use as the `name` label.
pub trait MetricsProvider: Send + Sync {
    /// `workqueue_depth`: items added and not yet handed out.
    fn new_depth_metric(&self, name: &str) -> Arc<dyn GaugeMetric>;
    /// `workqueue_adds_total`: adds that were not collapsed into a dirty item.
    fn new_adds_metric(&self, name: &str) -> Arc<dyn CounterMetric>;
    /// `workqueue_queue_duration_seconds`: first add → get.
    fn new_latency_metric(&self, name: &str) -> Arc<dyn HistogramMetric>;
    /// `workqueue_work_duration_seconds`: get → done.
    fn new_work_duration_metric(&self, name: &str) -> Arc<dyn HistogramMetric>;
    /// `workqueue_unfinished_work_seconds`: summed age of the items being processed.
    fn new_unfinished_work_seconds_metric(&self, name: &str) -> Arc<dyn SettableGaugeMetric>;
    /// `workqueue_longest_running_processor_seconds`: age of the oldest item being processed.
    fn new_longest_running_processor_seconds_metric(
        &self,
        name: &str,
    ) -> Arc<dyn SettableGaugeMetric>;
    /// `workqueue_retries_total`: every `add_after` (and so every `add_rate_limited`).
    fn new_retries_metric(&self, name: &str) -> Arc<dyn CounterMetric>;
    /// `workqueue_depth` per priority, for a queue ordered by priority
    /// ([`ByPriority`](crate::ByPriority)): controller-runtime's `MetricsProviderWithPriority`.
    /// Such a queue reports its depth here instead of [`new_depth_metric`](Self::new_depth_metric)
    /// when this returns a metric; `None` (the default) keeps one depth for all priorities.
    fn new_depth_metric_with_priority(
        &self,
        _name: &str,
    ) -> Option<Arc<dyn DepthMetricWithPriority>> {
        None
    }
}

/// A provider whose metrics do nothing (client-go `noopMetricsProvider`).
#[derive(Debug, Default, Clone, Copy)]
pub struct NoopMetricsProvider;

struct Noop;
impl GaugeMetric for Noop {
    fn inc(&self) {}
    fn dec(&self) {}
}
impl SettableGaugeMetric for Noop {
    fn set(&self, _: f64) {}
}
impl CounterMetric for Noop {
    fn inc(&self) {}
}
impl HistogramMetric for Noop {
    fn observe(&self, _: f64) {}
}

impl MetricsProvider for NoopMetricsProvider {
    fn new_depth_metric(&self, _: &str) -> Arc<dyn GaugeMetric> {
        Arc::new(Noop)
    }
    fn new_adds_metric(&self, _: &str) -> Arc<dyn CounterMetric> {
        Arc::new(Noop)
    }
    fn new_latency_metric(&self, _: &str) -> Arc<dyn HistogramMetric> {
        Arc::new(Noop)
    }
    fn new_work_duration_metric(&self, _: &str) -> Arc<dyn HistogramMetric> {
        Arc::new(Noop)
    }
    fn new_unfinished_work_seconds_metric(&self, _: &str) -> Arc<dyn SettableGaugeMetric> {
        Arc::new(Noop)
    }
    fn new_longest_running_processor_seconds_metric(
        &self,
        _: &str,
    ) -> Arc<dyn SettableGaugeMetric> {
        Arc::new(Noop)
    }
    fn new_retries_metric(&self, _: &str) -> Arc<dyn CounterMetric> {
        Arc::new(Noop)
    }
}

static GLOBAL_PROVIDER: OnceLock<Arc<dyn MetricsProvider>> = OnceLock::new();

/// Sets the provider used by named queues that were given none (client-go `SetProvider`).
/// Only the first call takes effect, as in client-go; returns whether this one did.
pub fn set_provider(provider: Arc<dyn MetricsProvider>) -> bool {
    GLOBAL_PROVIDER.set(provider).is_ok()
}

/// The provider for a named queue: its own, else the global one, else none (no cost at all).
pub(crate) fn provider_for(
    own: Option<&Arc<dyn MetricsProvider>>,
) -> Option<Arc<dyn MetricsProvider>> {
    own.or(GLOBAL_PROVIDER.get()).cloned()
}

/// How often unfinished-work and longest-running gauges are refreshed, as in client-go.
pub const DEFAULT_UNFINISHED_WORK_UPDATE_PERIOD: Duration = Duration::from_millis(500);

/// Where a queue's depth goes: one gauge, or one per priority.
enum Depth {
    Total(Arc<dyn GaugeMetric>),
    ByPriority(Arc<dyn DepthMetricWithPriority>),
}

impl Depth {
    fn inc(&self, priority: i32) {
        match self {
            Depth::Total(g) => g.inc(),
            Depth::ByPriority(g) => g.inc(priority),
        }
    }

    fn dec(&self, priority: i32) {
        match self {
            Depth::Total(g) => g.dec(),
            Depth::ByPriority(g) => g.dec(priority),
        }
    }
}

/// One named queue's metrics and the per-item times they need; lives under the queue's lock.
pub(crate) struct QueueMetrics<T> {
    depth: Depth,
    adds: Arc<dyn CounterMetric>,
    latency: Arc<dyn HistogramMetric>,
    work_duration: Arc<dyn HistogramMetric>,
    unfinished_work_seconds: Arc<dyn SettableGaugeMetric>,
    longest_running_processor: Arc<dyn SettableGaugeMetric>,
    pub(crate) retries: Arc<dyn CounterMetric>,
    /// Dirty items: when each was first added and the priority it counts at in the depth.
    added_at: HashMap<T, (Instant, i32), Hasher>,
    processing_since: HashMap<T, Instant, Hasher>,
}

impl<T: Hash + Eq + Clone> QueueMetrics<T> {
    /// `by_priority`: the queue orders by priority, so its depth is reported per priority if
    /// the provider can.
    pub(crate) fn new(name: &str, p: &dyn MetricsProvider, by_priority: bool) -> Self {
        let depth = by_priority
            .then(|| p.new_depth_metric_with_priority(name))
            .flatten()
            .map_or_else(|| Depth::Total(p.new_depth_metric(name)), Depth::ByPriority);
        QueueMetrics {
            depth,
            adds: p.new_adds_metric(name),
            latency: p.new_latency_metric(name),
            work_duration: p.new_work_duration_metric(name),
            unfinished_work_seconds: p.new_unfinished_work_seconds_metric(name),
            longest_running_processor: p.new_longest_running_processor_seconds_metric(name),
            retries: p.new_retries_metric(name),
            added_at: HashMap::with_hasher(Hasher::new()),
            processing_since: HashMap::with_hasher(Hasher::new()),
        }
    }

    /// An add that made the item dirty, at `priority` (collapsed adds are not counted).
    pub(crate) fn add(&mut self, item: &T, priority: i32) {
        self.adds.inc();
        self.depth.inc(priority);
        if !self.added_at.contains_key(item) {
            self.added_at
                .insert(item.clone(), (Instant::now(), priority));
        }
    }

    /// A dirty item was added again with a higher priority: its depth moves there.
    pub(crate) fn raise(&mut self, item: &T, to: i32) {
        if let Some((_, priority)) = self.added_at.get_mut(item) {
            if to > *priority {
                self.depth.dec(*priority);
                self.depth.inc(to);
                *priority = to;
            }
        }
    }

    pub(crate) fn get(&mut self, item: &T) {
        let now = Instant::now();
        self.processing_since.insert(item.clone(), now);
        let priority = match self.added_at.remove(item) {
            Some((at, priority)) => {
                self.latency.observe((now - at).as_secs_f64());
                priority
            }
            None => 0,
        };
        self.depth.dec(priority);
    }

    pub(crate) fn done(&mut self, item: &T) {
        if let Some(at) = self.processing_since.remove(item) {
            self.work_duration.observe(at.elapsed().as_secs_f64());
        }
    }

    pub(crate) fn update_unfinished_work(&self) {
        let now = Instant::now();
        let (total, oldest) = self
            .processing_since
            .values()
            .map(|at| (now - *at).as_secs_f64())
            .fold((0.0, 0.0f64), |(t, o), age| (t + age, o.max(age)));
        self.unfinished_work_seconds.set(total);
        self.longest_running_processor.set(oldest);
    }
}

/// Runs `tick` every `period` until it returns false: on the current tokio runtime when there is
/// one (so paused test time drives it), else on a small OS thread.
pub(crate) fn spawn_periodic(period: Duration, tick: impl Fn() -> bool + Send + 'static) {
    match tokio::runtime::Handle::try_current() {
        Ok(handle) => {
            handle.spawn(async move {
                let mut interval = tokio::time::interval(period);
                interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
                loop {
                    interval.tick().await;
                    if !tick() {
                        return;
                    }
                }
            });
        }
        Err(_) => {
            let spawned = std::thread::Builder::new()
                .name("workqueue-metrics".into())
                .spawn(move || {
                    while tick() {
                        std::thread::sleep(period);
                    }
                });
            if let Err(e) = spawned {
                tracing::error!(
                    "workqueue: cannot start the metrics thread ({e}); \
                     unfinished-work gauges will not be refreshed"
                );
            }
        }
    }
}
