//! client-go `tools/events`' series (event_broadcaster.go): events with the same regarding and
//! related objects, reason, action and reporting controller are *isomorphic*, whatever their
//! notes. The first is created; the second turns it into a series (`series.count` 2) written by
//! merge patch; later ones only count in memory. Every [`series_finish`] an ended series
//! (not observed for that long) has its final count written and is forgotten, as is a single
//! event that old; every [`series_refresh`] open series are written again.
//!
//! [`series_finish`]: crate::BroadcasterOptions::series_finish
//! [`series_refresh`]: crate::BroadcasterOptions::series_refresh

use std::collections::HashMap;
use std::time::Duration;

use serde_json::{json, Value};
use tokio::time::Instant;

use crate::types::{Event, EventSeries, ObjectReference};

/// client-go's `eventKey`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct IsomorphicKey {
    action: String,
    reason: String,
    reporting_controller: String,
    regarding: ObjectReference,
    related: Option<ObjectReference>,
}

impl IsomorphicKey {
    pub(crate) fn of(e: &Event) -> Self {
        IsomorphicKey {
            action: e.action.clone(),
            reason: e.reason.clone(),
            reporting_controller: e.reporting_controller.clone(),
            regarding: e.regarding.clone(),
            related: e.related.clone(),
        }
    }
}

#[derive(Debug)]
struct Entry {
    event: Event,
    /// When it was last observed (created, or counted into the series).
    observed: Instant,
    /// The in-memory count is ahead of the last one written.
    unwritten: bool,
}

/// What to write for one recorded event.
#[derive(Debug, PartialEq)]
pub(crate) enum Observed {
    /// A new event: create it.
    Create(Event),
    /// The second isomorphic event: the cached one with its new series, and the patch.
    StartSeries(Event, Value),
    /// Counted into an open series; nothing written now.
    Counted,
}

#[derive(Debug, Default)]
pub(crate) struct SeriesCache {
    entries: HashMap<IsomorphicKey, Entry>,
}

/// The merge patch that writes `series` (client-go's `createPatchBytesForSeries`: the diff
/// between the event without and with its series).
pub(crate) fn series_patch(e: &Event) -> Value {
    json!({ "series": e.series })
}

impl SeriesCache {
    /// `recordToSink`'s cache step. `now_wall` is the new `lastObservedTime`.
    pub(crate) fn observe(&mut self, event: Event, now: Instant, now_wall: &str) -> Observed {
        let key = IsomorphicKey::of(&event);
        let Some(entry) = self.entries.get_mut(&key) else {
            self.entries.insert(
                key,
                Entry {
                    event: event.clone(),
                    observed: now,
                    unwritten: false,
                },
            );
            return Observed::Create(event);
        };
        entry.observed = now;
        match &mut entry.event.series {
            Some(s) => {
                s.count += 1;
                s.last_observed_time = now_wall.to_string();
                entry.unwritten = true;
                Observed::Counted
            }
            None => {
                entry.event.series = Some(EventSeries {
                    count: 2,
                    last_observed_time: now_wall.to_string(),
                });
                let e = entry.event.clone();
                let patch = series_patch(&e);
                Observed::StartSeries(e, patch)
            }
        }
    }

    /// `finishSeries`: removes what ended before `now - finish`; returns the ended series,
    /// whose final count is to be written.
    pub(crate) fn finish(&mut self, now: Instant, finish: Duration) -> Vec<Event> {
        let mut ended = Vec::new();
        self.entries.retain(|_, e| {
            if now.saturating_duration_since(e.observed) <= finish {
                return true;
            }
            if e.event.series.is_some() {
                ended.push(e.event.clone());
            }
            false
        });
        ended
    }

    /// `refreshExistingEventSeries`: every open series (all of them with `all`, else only those
    /// whose count moved since written — what a shutdown flushes).
    pub(crate) fn open_series(&mut self, all: bool) -> Vec<Event> {
        self.entries
            .values_mut()
            .filter(|e| e.event.series.is_some() && (all || e.unwritten))
            .map(|e| {
                e.unwritten = false;
                e.event.clone()
            })
            .collect()
    }

    /// Keeps the server's copy of a refreshed series (client-go stores the recorded event).
    pub(crate) fn refreshed(&mut self, written: Event) {
        if let Some(e) = self.entries.get_mut(&IsomorphicKey::of(&written)) {
            let series = e.event.series.clone();
            e.event = written;
            // counts observed while the write was in flight stay
            e.event.series = series;
        }
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(reason: &str, note: &str) -> Event {
        Event {
            api_version: "events.k8s.io/v1".into(),
            kind: "Event".into(),
            metadata: kcache_core::ObjectMeta {
                name: format!("foo.{}", note.len()),
                namespace: Some("ns".into()),
                ..Default::default()
            },
            event_time: "t0".into(),
            series: None,
            reporting_controller: "ctl".into(),
            reporting_instance: "ctl-h".into(),
            action: "Reconcile".into(),
            reason: reason.into(),
            regarding: ObjectReference {
                kind: "Foo".into(),
                name: "foo".into(),
                namespace: "ns".into(),
                ..Default::default()
            },
            related: None,
            note: note.into(),
            type_: "Normal".into(),
        }
    }

    /// client-go `TestEventSeriesf` (tools/events): the second isomorphic event starts a
    /// series of 2, the third counts to 3 without a write; notes do not matter.
    #[tokio::test(start_paused = true)]
    async fn isomorphic_events_become_a_series() {
        let mut c = SeriesCache::default();
        let t0 = Instant::now();
        let first = event("Synced", "a");
        assert_eq!(
            c.observe(first.clone(), t0, "w0"),
            Observed::Create(first.clone())
        );
        let Observed::StartSeries(e, patch) = c.observe(event("Synced", "other note"), t0, "w1")
        else {
            panic!("the second isomorphic event starts a series");
        };
        assert_eq!(
            e.metadata.name, first.metadata.name,
            "the series patches the first"
        );
        assert_eq!(e.note, "a");
        assert_eq!(
            patch,
            json!({"series": {"count": 2, "lastObservedTime": "w1"}})
        );
        assert_eq!(c.observe(event("Synced", "a"), t0, "w2"), Observed::Counted);
        assert!(matches!(
            c.observe(event("Failed", "a"), t0, "w3"),
            Observed::Create(_)
        ));
        let flushed = c.open_series(false);
        assert_eq!(flushed.len(), 1);
        assert_eq!(
            flushed[0].series,
            Some(EventSeries {
                count: 3,
                last_observed_time: "w2".into()
            })
        );
        assert!(
            c.open_series(false).is_empty(),
            "written counts are not flushed twice"
        );
        assert_eq!(
            c.open_series(true).len(),
            1,
            "a refresh writes every open series"
        );
    }

    /// client-go `TestFinishSeries`: a series not observed for 6 minutes is written one last
    /// time and forgotten; a single event that old is forgotten; newer ones stay.
    #[tokio::test(start_paused = true)]
    async fn finish_ends_old_series_and_forgets_old_singletons() {
        let finish = Duration::from_secs(360);
        let mut c = SeriesCache::default();
        let t0 = Instant::now();
        c.observe(event("Old", "x"), t0, "w");
        c.observe(event("Old", "x"), t0, "w");
        c.observe(event("Single", "x"), t0, "w");
        c.observe(event("Recent", "x"), t0 + Duration::from_secs(200), "w");
        c.observe(event("Recent", "x"), t0 + Duration::from_secs(200), "w");
        assert!(
            c.finish(t0 + finish, finish).is_empty(),
            "exactly 6 minutes is not past"
        );
        let ended = c.finish(t0 + finish + Duration::from_secs(1), finish);
        assert_eq!(ended.len(), 1);
        assert_eq!(ended[0].reason, "Old");
        assert_eq!(c.len(), 1, "only the recent series stays");
        assert!(matches!(
            c.observe(event("Old", "x"), t0 + finish * 2, "w"),
            Observed::Create(_)
        ));
    }
}
