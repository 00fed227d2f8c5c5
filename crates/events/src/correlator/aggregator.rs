//! `EventAggregator`: when one source emits more than `max_events` different messages with the
//! same reason about one object within `interval` (client-go: 10 in 10 minutes), further ones
//! are replaced by one aggregate event whose message says "(combined from similar events)" and
//! whose count then grows like any repeated event.

use std::collections::HashSet;
use std::time::Duration;

use kcache_core::ObjectMeta;
use tokio::time::Instant;

use super::keys::{aggregate_key, event_key};
use super::Lru;
use crate::types::CoreEvent;

/// client-go's `EventAggregatorByReasonMessageFunc` prefix.
pub const AGGREGATE_MESSAGE_PREFIX: &str = "(combined from similar events): ";

#[derive(Debug)]
pub(crate) struct Aggregator {
    records: Lru<Record>,
    max_events: usize,
    interval: Duration,
}

#[derive(Debug)]
struct Record {
    messages: HashSet<String>,
    last: Instant,
}

impl Aggregator {
    pub(crate) fn new(capacity: usize, max_events: usize, interval: Duration) -> Self {
        Aggregator {
            records: Lru::new(capacity),
            max_events: max_events.max(1),
            interval,
        }
    }

    /// `EventAggregate`: the event to record and the key of its count (the event's own key,
    /// or the aggregate key once similar events pass the threshold). `name` names a new
    /// aggregate event.
    pub(crate) fn aggregate(
        &mut self,
        event: CoreEvent,
        now: Instant,
        name: impl FnOnce() -> String,
    ) -> (CoreEvent, String) {
        let (key, message) = aggregate_key(&event);
        let fresh = || Record {
            messages: HashSet::new(),
            last: now,
        };
        let record = self.records.get_or_insert_with(&key, fresh);
        if now.saturating_duration_since(record.last) > self.interval {
            *record = fresh();
        }
        record.messages.insert(message.to_string());
        record.last = now;
        if record.messages.len() < self.max_events {
            let k = event_key(&event);
            return (event, k);
        }
        // Do not grow the set past the threshold (client-go drops any one key).
        if let Some(any) = record.messages.iter().next().cloned() {
            record.messages.remove(&any);
        }
        let mut aggregate = event;
        aggregate.metadata = ObjectMeta {
            name: name(),
            namespace: aggregate.metadata.namespace.take(),
            ..ObjectMeta::default()
        };
        aggregate.message = format!("{AGGREGATE_MESSAGE_PREFIX}{}", aggregate.message);
        aggregate.count = 1;
        aggregate.first_timestamp = aggregate.last_timestamp.clone();
        (aggregate, key)
    }
}
