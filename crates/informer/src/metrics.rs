//! Informer metrics, pulled on scrape: anything that can report [`InformerStats`] is a source.

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

    use parking_lot::Mutex;
    use prometheus::core::{Collector, Desc};
    use prometheus::proto::MetricFamily;
    use prometheus::{GaugeVec, IntCounterVec, IntGaugeVec, Opts};

    use super::StatsSource;

    /// A Prometheus collector reading every registered informer at scrape time:
    /// `kcache_informer_objects`, `kcache_informer_synced`, `kcache_informer_fifo_depth`,
    /// `kcache_informer_lists_total`, `kcache_informer_relists_total`,
    /// `kcache_informer_watches_total`, `kcache_informer_watch_restarts_total`,
    /// `kcache_informer_last_sync_resource_version` (label `informer`), and per handler
    /// `kcache_informer_handler_pending`, `kcache_informer_handler_oldest_pending_seconds`,
    /// `kcache_informer_handler_delivered_total`, `kcache_informer_handler_panics_total`
    /// (labels `informer`, `handler`).
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
            for s in self.sources.lock().iter() {
                let st = s.stats();
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
        }

        fn parts(&self) -> [&dyn Collector; 12] {
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
            ]
        }
    }

    impl Collector for InformerCollector {
        fn desc(&self) -> Vec<&Desc> {
            self.parts().into_iter().flat_map(|c| c.desc()).collect()
        }

        fn collect(&self) -> Vec<MetricFamily> {
            self.refresh();
            self.parts().into_iter().flat_map(|c| c.collect()).collect()
        }
    }
}

#[cfg(feature = "prometheus")]
pub use prometheus_collector::InformerCollector;
