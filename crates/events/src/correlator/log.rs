//! `eventLogger`: identical events are one event whose `count` and `lastTimestamp` (and
//! message, for an aggregate) are patched on every repeat.

use serde_json::{json, Value};

use super::keys::event_key;
use super::Lru;
use crate::types::CoreEvent;

#[derive(Debug)]
pub(crate) struct EventLog {
    cache: Lru<Observation>,
}

#[derive(Debug, Clone)]
struct Observation {
    count: i32,
    first_timestamp: Option<String>,
    name: String,
    resource_version: Option<String>,
}

impl EventLog {
    pub(crate) fn new(capacity: usize) -> Self {
        EventLog {
            cache: Lru::new(capacity),
        }
    }

    /// `eventObserve`: a repeat of an event seen under `key` takes that event's name, version
    /// and first timestamp, counts one more, and comes with the merge patch that updates it.
    pub(crate) fn observe(
        &mut self,
        mut event: CoreEvent,
        key: &str,
    ) -> (CoreEvent, Option<Value>) {
        let mut patch = None;
        if let Some(last) = self.cache.get_mut(key).filter(|o| o.count > 0) {
            event.metadata.name = last.name.clone();
            event.metadata.resource_version = last.resource_version.clone();
            event.first_timestamp = last.first_timestamp.clone();
            event.count = last.count + 1;
            patch = Some(json!({
                "count": event.count,
                "lastTimestamp": event.last_timestamp,
                "message": event.message,
            }));
        }
        self.cache.insert(key.to_string(), Observation::of(&event));
        (event, patch)
    }

    /// `updateState`: remembers the server's copy (its name and resourceVersion) after a write.
    pub(crate) fn update_state(&mut self, written: &CoreEvent) {
        self.cache
            .insert(event_key(written), Observation::of(written));
    }
}

impl Observation {
    fn of(e: &CoreEvent) -> Self {
        Observation {
            count: e.count,
            first_timestamp: e.first_timestamp.clone(),
            name: e.metadata.name.clone(),
            resource_version: e.metadata.resource_version.clone(),
        }
    }
}
