//! The Events sample-controller records on Foos (its `EventRecorder`): `Synced` after each
//! successful sync, `ErrResourceExists` when the named Deployment belongs to someone else.
//! Written as `events.k8s.io/v1` Events (a repeat on an unchanged Foo counts into a series),
//! or `core/v1` Events where the server lacks that API.

use kcache_core::ObjectKey;
use kcache_events::{
    BroadcasterOptions, EventBroadcaster, EventRecorder, EventType, ObjectReference,
};
use kcache_transport::Client;

use super::controller::{
    CONTROLLER_AGENT_NAME, ERR_RESOURCE_EXISTS, MESSAGE_RESOURCE_SYNCED, SUCCESS_SYNCED,
};
use super::foo::Foo;

/// The `action` of every event: what the controller was doing.
pub const ACTION: &str = "Reconcile";

/// The broadcaster and the controller's recorder.
pub struct FooEvents {
    broadcaster: EventBroadcaster,
    recorder: EventRecorder,
}

impl FooEvents {
    /// Starts writing through `client` (within the tokio runtime).
    pub fn start(client: Client) -> FooEvents {
        let broadcaster = EventBroadcaster::start(client, BroadcasterOptions::default());
        let recorder = broadcaster
            .new_recorder(CONTROLLER_AGENT_NAME)
            .expect("sample-controller is a valid reporting controller name");
        FooEvents {
            broadcaster,
            recorder,
        }
    }

    /// `Synced`: "Foo synced successfully".
    pub fn synced(&self, foo: &Foo) {
        log(foo, SUCCESS_SYNCED, MESSAGE_RESOURCE_SYNCED);
        let foo = ObjectReference::of(foo);
        self.recorder.eventf(
            &foo,
            None,
            EventType::Normal,
            SUCCESS_SYNCED,
            ACTION,
            MESSAGE_RESOURCE_SYNCED,
        );
    }

    /// `ErrResourceExists`: "Resource %q already exists and is not managed by Foo".
    pub fn resource_exists(&self, foo: &Foo, message: &str) {
        log(foo, ERR_RESOURCE_EXISTS, message);
        let foo = ObjectReference::of(foo);
        self.recorder.eventf(
            &foo,
            None,
            EventType::Warning,
            ERR_RESOURCE_EXISTS,
            ACTION,
            message,
        );
    }

    /// The broadcaster (its API and statistics).
    pub fn broadcaster(&self) -> &EventBroadcaster {
        &self.broadcaster
    }

    /// Writes what is still queued and stops.
    pub async fn shutdown(&self) {
        self.broadcaster.shutdown().await;
    }
}

/// Events show in the log too (client-go's `StartStructuredLogging`).
fn log(foo: &Foo, reason: &str, message: &str) {
    let foo = ObjectKey::of(foo);
    tracing::info!(target: "event", foo = foo.as_str(), reason, "{message}");
}
