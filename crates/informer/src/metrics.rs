//! Informer metrics, pulled on scrape: anything that can report [`InformerStats`] is a source.
//!
//! Besides kcache's own `kcache_informer_*` families, the collector exports client-go's informer
//! metrics under client-go's names (component-base `metrics/prometheus/clientgo/fifo`, fed by
//! client-go's `InformerMetricsProvider`), so dashboards built for a Go controller read a kcache
//! one: `informer_queued_items` (items waiting in the FIFO) labelled `name` — client-go's
//! `InformerName`, here the informer's name — and, per handler, a processing-latency histogram
//! with client-go's buckets and the handler's queue. client-go times the pop loop's processing of
//! a popped item (its handlers run on goroutines of their own); kcache times each handler call,
//! which is where a slow controller spends its time, hence `handler` in the names.

use crate::{InformerStats, SharedIndexInformer};
use kcache_core::{CacheReader, CacheWriter, Object};

/// Something that reports an informer's state (every `SharedIndexInformer` does), so one
/// exporter can hold informers of different object types.
pub trait StatsSource: Send + Sync {
    /// The state now.
    fn stats(&self) -> InformerStats;
}

impl<K, C> StatsSource for SharedIndexInformer<K, C>
where
    K: Object,
    C: CacheReader<K> + CacheWriter<K> + 'static,
{
    fn stats(&self) -> InformerStats {
        SharedIndexInformer::stats(self)
    }
}

#[cfg(feature = "prometheus")]
mod prometheus_collector {
    use std::sync::Arc;

    use std::collections::HashMap;

    use parking_lot::Mutex;
    use prometheus::core::{Collector, Desc};
    use prometheus::proto::{self, MetricFamily, MetricType};
    use prometheus::{GaugeVec, IntCounterVec, IntGaugeVec, Opts};

    use super::StatsSource;
    use crate::{HandlerLatency, InformerStats, LATENCY_BUCKETS};

    const LATENCY_NAME: &str = "informer_handler_processing_latency_seconds";
    const LATENCY_HELP: &str = "Time a handler call took, per handler.";

    /// A Prometheus collector reading every registered informer at scrape time:
    /// `kcache_informer_objects`, `kcache_informer_synced`, `kcache_informer_fifo_depth`,
    /// `kcache_informer_lists_total`, `kcache_informer_relists_total`,
    /// `kcache_informer_watches_total`, `kcache_informer_watch_restarts_total`,
    /// `kcache_informer_last_sync_resource_version` (label `informer`), and per handler
    /// `kcache_informer_handler_pending`, `kcache_informer_handler_oldest_pending_seconds`,
    /// `kcache_informer_handler_delivered_total`, `kcache_informer_handler_panics_total`
    /// (labels `informer`, `handler`); and client-go's `informer_queued_items` (label `name`),
    /// `informer_handler_queued_items` and the histogram
    /// `informer_handler_processing_latency_seconds` (labels `name`, `handler`) — see the
    /// module docs.
    pub struct InformerCollector {
        sources: Mutex<Vec<Arc<dyn StatsSource>>>,
        objects: IntGaugeVec,
        synced: IntGaugeVec,
        fifo_depth: IntGaugeVec,
        lists: IntCounterVec,
        relists: IntCounterVec,
        watches: IntCounterVec,
        watch_restarts: IntCounterVec,
        last_rv: GaugeVec,
        pending: IntGaugeVec,
        oldest: GaugeVec,
        delivered: IntCounterVec,
        panics: IntCounterVec,
        queued_items: IntGaugeVec,
        handler_queued_items: IntGaugeVec,
        latency_desc: Desc,
        /// The latency histograms read by the last refresh, per (informer, handler).
        latencies: Mutex<Vec<(String, String, HandlerLatency)>>,
    }

    fn opts(name: &str, help: &str) -> Opts {
        Opts::new(name, help)
            .namespace("kcache")
            .subsystem("informer")
    }

    impl InformerCollector {
        /// An empty collector; register it once in a `prometheus::Registry`.
        pub fn new() -> prometheus::Result<Self> {
            let inf = &["informer"];
            let h = &["informer", "handler"];
            Ok(InformerCollector {
                sources: Mutex::new(Vec::new()),
                objects: IntGaugeVec::new(opts("objects", "Objects in the cache."), inf)?,
                synced: IntGaugeVec::new(
                    opts("synced", "1 once the first list is processed."),
                    inf,
                )?,
                fifo_depth: IntGaugeVec::new(
                    opts("fifo_depth", "Entries waiting in the FIFO."),
                    inf,
                )?,
                lists: IntCounterVec::new(opts("lists_total", "List passes."), inf)?,
                relists: IntCounterVec::new(
                    opts("relists_total", "List passes after the first."),
                    inf,
                )?,
                watches: IntCounterVec::new(opts("watches_total", "Watch requests."), inf)?,
                watch_restarts: IntCounterVec::new(
                    opts(
                        "watch_restarts_total",
                        "Watches re-established without a relist.",
                    ),
                    inf,
                )?,
                last_rv: GaugeVec::new(
                    opts(
                        "last_sync_resource_version",
                        "Last synced resourceVersion, if numeric.",
                    ),
                    inf,
                )?,
                pending: IntGaugeVec::new(opts("handler_pending", "Notifications waiting."), h)?,
                oldest: GaugeVec::new(
                    opts(
                        "handler_oldest_pending_seconds",
                        "Age of the oldest waiting notification.",
                    ),
                    h,
                )?,
                delivered: IntCounterVec::new(
                    opts("handler_delivered_total", "Notifications delivered."),
                    h,
                )?,
                panics: IntCounterVec::new(opts("handler_panics_total", "Handler panics."), h)?,
                queued_items: IntGaugeVec::new(
                    Opts::new(
                        "informer_queued_items",
                        "Number of items currently queued in the FIFO.",
                    ),
                    &["name"],
                )?,
                handler_queued_items: IntGaugeVec::new(
                    Opts::new(
                        "informer_handler_queued_items",
                        "Notifications waiting for a handler, per handler.",
                    ),
                    &["name", "handler"],
                )?,
                latency_desc: Desc::new(
                    LATENCY_NAME.into(),
                    LATENCY_HELP.into(),
                    vec!["name".into(), "handler".into()],
                    HashMap::new(),
                )?,
                latencies: Mutex::new(Vec::new()),
            })
        }

        /// Adds an informer to report.
        pub fn register(&self, source: Arc<dyn StatsSource>) {
            self.sources.lock().push(source);
        }

        fn refresh(&self) {
            let set_counter = |c: &prometheus::IntCounterVec, labels: &[&str], v: u64| {
                let c = c.with_label_values(labels);
                c.inc_by(v.saturating_sub(c.get()));
            };
            let mut latencies = Vec::new();
            for s in self.sources.lock().iter() {
                let st = s.stats();
                self.refresh_client_go(&st, &mut latencies);
                let l = [st.name.as_str()];
                self.objects.with_label_values(&l).set(st.objects as i64);
                self.synced.with_label_values(&l).set(i64::from(st.synced));
                self.fifo_depth
                    .with_label_values(&l)
                    .set(st.fifo_depth as i64);
                set_counter(&self.lists, &l, st.reflector.lists);
                set_counter(&self.relists, &l, st.reflector.relists);
                set_counter(&self.watches, &l, st.reflector.watches);
                set_counter(&self.watch_restarts, &l, st.reflector.watch_restarts);
                if let Ok(rv) = st.last_sync_resource_version.parse::<f64>() {
                    self.last_rv.with_label_values(&l).set(rv);
                }
                for h in &st.handlers {
                    let id = h.id.to_string();
                    let hl = [st.name.as_str(), id.as_str()];
                    self.pending.with_label_values(&hl).set(h.pending as i64);
                    let age = h.oldest_pending_age.map(|a| a.as_secs_f64()).unwrap_or(0.0);
                    self.oldest.with_label_values(&hl).set(age);
                    set_counter(&self.delivered, &hl, h.delivered);
                    set_counter(&self.panics, &hl, h.panics);
                }
            }
            *self.latencies.lock() = latencies;
        }

        /// Sets client-go's families from `st`; gathers its handlers' latency histograms.
        fn refresh_client_go(
            &self,
            st: &InformerStats,
            latencies: &mut Vec<(String, String, HandlerLatency)>,
        ) {
            self.queued_items
                .with_label_values(&[st.name.as_str()])
                .set(st.fifo_depth as i64);
            for h in &st.handlers {
                let id = h.id.to_string();
                self.handler_queued_items
                    .with_label_values(&[st.name.as_str(), id.as_str()])
                    .set(h.pending as i64);
                latencies.push((st.name.clone(), id, h.latency));
            }
        }

        /// The latency histograms as one Prometheus family.
        fn latency_family(&self) -> MetricFamily {
            let label = |name: &str, value: &str| {
                let mut l = proto::LabelPair::default();
                l.set_name(name.into());
                l.set_value(value.into());
                l
            };
            let latencies = self.latencies.lock();
            let metrics = latencies.iter().map(|(informer, handler, lat)| {
                let buckets = LATENCY_BUCKETS
                    .iter()
                    .zip(lat.cumulative)
                    .map(|(&bound, count)| {
                        let mut b = proto::Bucket::default();
                        b.set_upper_bound(bound);
                        b.set_cumulative_count(count);
                        b
                    })
                    .collect();
                let mut h = proto::Histogram::default();
                h.set_sample_count(lat.count);
                h.set_sample_sum(lat.sum.as_secs_f64());
                h.set_bucket(buckets);
                let mut m = proto::Metric::default();
                m.set_label(vec![label("handler", handler), label("name", informer)]);
                m.set_histogram(h);
                m
            });
            let mut family = MetricFamily::default();
            family.set_name(LATENCY_NAME.into());
            family.set_help(LATENCY_HELP.into());
            family.set_field_type(MetricType::HISTOGRAM);
            family.set_metric(metrics.collect());
            family
        }

        fn parts(&self) -> [&dyn Collector; 14] {
            [
                &self.objects,
                &self.synced,
                &self.fifo_depth,
                &self.lists,
                &self.relists,
                &self.watches,
                &self.watch_restarts,
                &self.last_rv,
                &self.pending,
                &self.oldest,
                &self.delivered,
                &self.panics,
                &self.queued_items,
                &self.handler_queued_items,
            ]
        }
    }

    impl Collector for InformerCollector {
        fn desc(&self) -> Vec<&Desc> {
            let mut descs: Vec<&Desc> = self.parts().into_iter().flat_map(|c| c.desc()).collect();
            descs.push(&self.latency_desc);
            descs
        }

        fn collect(&self) -> Vec<MetricFamily> {
            self.refresh();
            let mut families: Vec<MetricFamily> =
                self.parts().into_iter().flat_map(|c| c.collect()).collect();
            families.push(self.latency_family());
            families
        }
    }
}

#[cfg(feature = "prometheus")]
pub use prometheus_collector::InformerCollector;
