//! `EventRecorder` (client-go `tools/events` `recorder.go`): builds the event and queues it.
//! Never blocks, never fails the caller: a full queue drops the event (counted and logged).

use std::sync::Arc;

use jiff::Timestamp;
use kcache_core::ObjectMeta;
use tokio::sync::mpsc::{self, error::TrySendError};

use crate::limits::{self, ACTION_LENGTH_LIMIT, REASON_LENGTH_LIMIT};
use crate::stats::Counters;
use crate::time::micro_time;
use crate::types::{Event, EventType, ObjectReference};

/// Where an `events.k8s.io/v1` event about a cluster-scoped object lives (see `make_event`).
const CLUSTER_SCOPED_NAMESPACE: &str = "kube-system";

/// Records events for one reporting controller. Cheap to clone; usable from any thread, with
/// or without a runtime.
#[derive(Clone)]
pub struct EventRecorder {
    inner: Arc<Inner>,
}

struct Inner {
    tx: mpsc::Sender<Event>,
    controller: String,
    instance: String,
    counters: Arc<Counters>,
}

impl std::fmt::Debug for EventRecorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventRecorder")
            .field("reporting_controller", &self.inner.controller)
            .field("reporting_instance", &self.inner.instance)
            .finish_non_exhaustive()
    }
}

impl EventRecorder {
    pub(crate) fn new(
        tx: mpsc::Sender<Event>,
        controller: String,
        instance: String,
        counters: Arc<Counters>,
    ) -> Self {
        EventRecorder {
            inner: Arc::new(Inner {
                tx,
                controller,
                instance,
                counters,
            }),
        }
    }

    /// `reportingController`.
    pub fn reporting_controller(&self) -> &str {
        &self.inner.controller
    }

    /// `reportingInstance`.
    pub fn reporting_instance(&self) -> &str {
        &self.inner.instance
    }

    /// Records an event about `regarding` (client-go's `Eventf`). `note` is anything
    /// displayable: a `&str`, a `String`, or `format_args!("Resource {name:?} already exists")`
    /// (formatted only up to the 1 KiB the server accepts). `reason` and `action` longer than
    /// 128 bytes are truncated; empty ones, or a `regarding` without a name (the server
    /// requires all three), drop the event with an error log, counted in [`BroadcasterStats::invalid`](crate::BroadcasterStats::invalid).
    pub fn eventf(
        &self,
        regarding: &ObjectReference,
        related: Option<&ObjectReference>,
        type_: EventType,
        reason: &str,
        action: &str,
        note: impl std::fmt::Display,
    ) {
        let missing = [
            ("regarding.name", regarding.name.is_empty()),
            ("reason", reason.is_empty()),
            ("action", action.is_empty()),
        ]
        .into_iter()
        .find_map(|(field, empty)| empty.then_some(field));
        if let Some(field) = missing {
            Counters::inc(&self.inner.counters.invalid);
            tracing::error!(
                regarding = %regarding.name,
                reason,
                action,
                "event not recorded: {field} is required"
            );
            return;
        }
        let event = self.make_event(regarding, related, type_, reason, action, note);
        match self.inner.tx.try_send(event) {
            Ok(()) => Counters::inc(&self.inner.counters.recorded),
            Err(TrySendError::Full(e)) => {
                // One line for the first drop and every hundredth: a flood stays readable.
                let dropped = Counters::inc_get(&self.inner.counters.dropped);
                if dropped == 1 || dropped.is_multiple_of(100) {
                    tracing::warn!(
                        regarding = %e.regarding.name,
                        reason = %e.reason,
                        dropped,
                        "event queue full: event dropped"
                    );
                }
            }
            Err(TrySendError::Closed(e)) => {
                Counters::inc(&self.inner.counters.dropped);
                tracing::debug!(
                    regarding = %e.regarding.name,
                    reason = %e.reason,
                    "event broadcaster shut down: event dropped"
                );
            }
        }
    }

    /// client-go's `makeEvent`: named `{regarding}.{unix nanos in hex}`, in the regarding
    /// object's namespace. For a cluster-scoped one, `kube-system` (the new Event API's rule,
    /// KEP-383), where client-go writes `default`: kube-apiserver refuses `default` for such an
    /// event before 1.23 (`involvedObject.namespace: Invalid value: "": does not match
    /// event.namespace`) and takes both since.
    fn make_event(
        &self,
        regarding: &ObjectReference,
        related: Option<&ObjectReference>,
        type_: EventType,
        reason: &str,
        action: &str,
        note: impl std::fmt::Display,
    ) -> Event {
        let now = Timestamp::now();
        let namespace = match regarding.namespace.as_str() {
            "" => CLUSTER_SCOPED_NAMESPACE,
            ns => ns,
        };
        Event {
            api_version: "events.k8s.io/v1".into(),
            kind: "Event".into(),
            metadata: ObjectMeta {
                name: format!("{}.{:x}", regarding.name, now.as_nanosecond()),
                namespace: Some(namespace.to_string()),
                ..ObjectMeta::default()
            },
            event_time: micro_time(now),
            series: None,
            reporting_controller: self.inner.controller.clone(),
            reporting_instance: self.inner.instance.clone(),
            action: limits::truncate(action, ACTION_LENGTH_LIMIT).to_string(),
            reason: limits::truncate(reason, REASON_LENGTH_LIMIT).to_string(),
            regarding: regarding.clone(),
            related: related.cloned(),
            note: limits::note_string(note),
            type_: type_.as_str().to_string(),
        }
    }
}
