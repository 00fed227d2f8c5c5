//! client-go `tools/record`'s `EventCorrelator` (events_cache.go): the per source+object spam
//! filter, the aggregation of similar events, and the counting of identical ones — each keyed
//! as client-go keys them, each in a bounded cache (client-go's LRU of 4096 entries).

mod aggregator;
mod keys;
mod log;
mod lru;
mod spam;

use serde_json::Value;
use tokio::time::Instant;

pub use aggregator::AGGREGATE_MESSAGE_PREFIX;
pub(crate) use keys::spam_key;
pub(crate) use lru::Lru;
pub(crate) use spam::SpamFilter;

use crate::options::CorrelatorOptions;
use crate::types::CoreEvent;

/// What [`Correlator::correlate`] decided for one `core/v1` event.
#[derive(Debug)]
pub(crate) enum Correlated {
    /// Write this event: create it, or merge-patch it with `patch` (a repeat).
    Write {
        event: Box<CoreEvent>,
        patch: Option<Value>,
    },
    /// Spam: not written (the count it carried is kept for the next write).
    Skip,
}

/// `EventCorrelator`: aggregate, then count, then filter — client-go's order, so a filtered
/// repeat still counts and the next written one carries the true count.
#[derive(Debug)]
pub(crate) struct Correlator {
    aggregator: aggregator::Aggregator,
    log: log::EventLog,
    spam: SpamFilter,
}

impl Correlator {
    pub(crate) fn new(o: &CorrelatorOptions) -> Self {
        Correlator {
            aggregator: aggregator::Aggregator::new(
                o.cache_size,
                o.aggregate_max_events,
                o.aggregate_interval,
            ),
            log: log::EventLog::new(o.cache_size),
            spam: SpamFilter::new(o.cache_size, o.spam_burst, o.spam_refill),
        }
    }

    /// `EventCorrelate`. `name` names an aggregate event if one is made.
    pub(crate) fn correlate(
        &mut self,
        event: CoreEvent,
        now: Instant,
        name: impl FnOnce() -> String,
    ) -> Correlated {
        let (aggregated, key) = self.aggregator.aggregate(event, now, name);
        let (observed, patch) = self.log.observe(aggregated, &key);
        let spam = spam_key(
            &observed.source.component,
            &observed.source.host,
            &observed.involved_object,
        );
        if !self.spam.allow(&spam, now) {
            return Correlated::Skip;
        }
        Correlated::Write {
            event: Box::new(observed),
            patch,
        }
    }

    /// `UpdateState`: after a successful write.
    pub(crate) fn update_state(&mut self, written: &CoreEvent) {
        self.log.update_state(written);
    }
}

#[cfg(test)]
mod tests {
    //! client-go `events_cache_test.go` `TestEventCorrelator`, case by case.

    use std::time::Duration;

    use super::*;
    use crate::types::{EventSource, ObjectReference};

    fn event(reason: &str, message: &str) -> CoreEvent {
        CoreEvent {
            api_version: "v1".into(),
            kind: "Event".into(),
            metadata: kcache_core::ObjectMeta {
                name: format!("pod.{reason}{}", message.len()),
                namespace: Some("ns".into()),
                ..Default::default()
            },
            involved_object: ObjectReference {
                api_version: "v1".into(),
                kind: "Pod".into(),
                namespace: "ns".into(),
                name: "pod".into(),
                uid: "u1".into(),
                ..Default::default()
            },
            reason: reason.into(),
            message: message.into(),
            source: EventSource {
                component: "kubelet".into(),
                host: "node1".into(),
            },
            first_timestamp: Some("t".into()),
            last_timestamp: Some("t".into()),
            count: 1,
            type_: "Normal".into(),
            action: String::new(),
            related: None,
            reporting_component: String::new(),
            reporting_instance: String::new(),
        }
    }

    fn correlator() -> Correlator {
        Correlator::new(&CorrelatorOptions::default())
    }

    fn written(c: Correlated) -> (CoreEvent, Option<Value>) {
        match c {
            Correlated::Write { event, patch } => (*event, patch),
            Correlated::Skip => panic!("expected a write, got spam"),
        }
    }

    fn agg_name() -> String {
        "pod.aggregate".into()
    }

    #[tokio::test(start_paused = true)]
    async fn a_single_event_is_created_with_count_one() {
        let (e, patch) =
            written(correlator().correlate(event("Created", "m"), Instant::now(), agg_name));
        assert_eq!(e.count, 1);
        assert!(patch.is_none());
    }

    #[tokio::test(start_paused = true)]
    async fn the_same_event_just_counts() {
        let mut c = correlator();
        let now = Instant::now();
        let (first, _) = written(c.correlate(event("Created", "m"), now, agg_name));
        let mut server = first.clone();
        server.metadata.resource_version = Some("5".into());
        c.update_state(&server);
        let (second, patch) = written(c.correlate(event("Created", "m"), now, agg_name));
        assert_eq!(second.count, 2);
        assert_eq!(second.metadata.name, first.metadata.name);
        assert_eq!(second.metadata.resource_version.as_deref(), Some("5"));
        let patch = patch.expect("a repeat is a patch");
        assert_eq!(patch["count"], 2);
        assert_eq!(patch["message"], "m");
        assert!(patch.get("lastTimestamp").is_some());
    }

    #[tokio::test(start_paused = true)]
    async fn the_same_event_is_spam_if_it_happens_too_often() {
        let mut c = correlator();
        let now = Instant::now();
        for i in 1..=25 {
            let (e, _) = written(c.correlate(event("Created", "m"), now, agg_name));
            assert_eq!(e.count, i);
        }
        assert!(matches!(
            c.correlate(event("Created", "m"), now, agg_name),
            Correlated::Skip
        ));
        // five minutes later one more passes, carrying every occurrence counted meanwhile
        let later = now + Duration::from_secs(300);
        let (e, _) = written(c.correlate(event("Created", "m"), later, agg_name));
        assert_eq!(e.count, 27);
    }

    #[tokio::test(start_paused = true)]
    async fn ten_similar_events_aggregate() {
        let mut c = correlator();
        let now = Instant::now();
        for i in 0..9 {
            let (e, _) = written(c.correlate(event("Failed", &format!("m{i}")), now, agg_name));
            assert_eq!(e.message, format!("m{i}"));
        }
        let (agg, patch) = written(c.correlate(event("Failed", "m9"), now, agg_name));
        assert_eq!(agg.message, "(combined from similar events): m9");
        assert_eq!(
            (agg.count, agg.metadata.name.as_str()),
            (1, "pod.aggregate")
        );
        assert!(patch.is_none());
        let (agg2, patch) = written(c.correlate(event("Failed", "m10"), now, agg_name));
        assert_eq!(agg2.message, "(combined from similar events): m10");
        assert_eq!(
            (agg2.count, agg2.metadata.name.as_str()),
            (2, "pod.aggregate")
        );
        assert_eq!(
            patch.unwrap()["message"],
            "(combined from similar events): m10"
        );
        // another reason is not similar
        let (other, _) = written(c.correlate(event("Pulled", "x"), now, agg_name));
        assert_eq!(other.message, "x");
    }

    #[tokio::test(start_paused = true)]
    async fn similar_events_further_apart_than_the_interval_do_not_aggregate() {
        let mut c = correlator();
        let mut now = Instant::now();
        for i in 0..12 {
            let (e, _) = written(c.correlate(event("Failed", &format!("m{i}")), now, agg_name));
            assert_eq!(e.message, format!("m{i}"), "event {i}");
            now += Duration::from_secs(601);
        }
    }
}
