//! The narrow trait through which events reach the cluster: create and merge-patch an event of
//! either API, and ask discovery whether `events.k8s.io/v1` is served. kcache-transport's
//! `Client` implements it (feature `transport`); [`MemoryEventClient`](crate::MemoryEventClient)
//! implements it in memory; any other client can (client-go's `EventSink`).

use std::future::Future;

use kcache_core::Error;
use serde_json::Value;

use crate::types::{CoreEvent, Event};

/// Which Event API the broadcaster writes to (decided once by discovery).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EventApi {
    /// `events.k8s.io/v1` with `series`.
    EventsV1,
    /// `core/v1` with `count` (where `events.k8s.io/v1` is not served).
    CoreV1,
}

/// What the broadcaster needs from a cluster. Errors classify as kcache's do: an
/// [`Error::Api`] with a `Status` is the server's answer (not retried, except an
/// `AlreadyExists` while starting a series); anything else is retried.
pub trait EventClient: Send + Sync + 'static {
    /// Whether the server serves `events.k8s.io/v1` (`GET /apis/events.k8s.io/v1` lists
    /// `events`). `Ok(false)` or an error make the broadcaster write `core/v1` events, as
    /// client-go's `NewEventBroadcasterAdapter` does.
    fn serves_events_v1(&self) -> impl Future<Output = Result<bool, Error>> + Send;

    /// Creates an `events.k8s.io/v1` Event in its namespace.
    fn create_event(&self, event: &Event) -> impl Future<Output = Result<Event, Error>> + Send;

    /// Applies a JSON merge patch (RFC 7386) to the named `events.k8s.io/v1` Event.
    fn patch_event(
        &self,
        namespace: &str,
        name: &str,
        merge_patch: &Value,
    ) -> impl Future<Output = Result<Event, Error>> + Send;

    /// Creates a `core/v1` Event in its namespace.
    fn create_core_event(
        &self,
        event: &CoreEvent,
    ) -> impl Future<Output = Result<CoreEvent, Error>> + Send;

    /// Applies a JSON merge patch to the named `core/v1` Event.
    fn patch_core_event(
        &self,
        namespace: &str,
        name: &str,
        merge_patch: &Value,
    ) -> impl Future<Output = Result<CoreEvent, Error>> + Send;
}
