//! Watch events (`watch.Event`).

use crate::status::Status;

/// The annotation a watch-list's final bookmark carries (`metav1.InitialEventsAnnotationKey`).
pub const INITIAL_EVENTS_END_ANNOTATION: &str = "k8s.io/initial-events-end";

/// A `BOOKMARK` event: the server has sent everything up to `resource_version`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Bookmark {
    /// The resourceVersion the watch has reached.
    pub resource_version: String,
    /// Whether this bookmark ends a watch-list's initial events (annotation
    /// `k8s.io/initial-events-end: "true"`).
    pub initial_events_end: bool,
}

/// One event of a watch stream.
#[derive(Debug, Clone, PartialEq)]
pub enum WatchEvent<K> {
    /// `ADDED`.
    Added(K),
    /// `MODIFIED`.
    Modified(K),
    /// `DELETED`: the object's last state.
    Deleted(K),
    /// `BOOKMARK`: only a resourceVersion (and the initial-events-end flag).
    Bookmark(Bookmark),
    /// `ERROR`: the server ends the watch with a `Status` (e.g. 410 Expired).
    Error(Status),
}

impl<K> WatchEvent<K> {
    /// The wire name of the event type.
    pub fn type_name(&self) -> &'static str {
        match self {
            WatchEvent::Added(_) => "ADDED",
            WatchEvent::Modified(_) => "MODIFIED",
            WatchEvent::Deleted(_) => "DELETED",
            WatchEvent::Bookmark(_) => "BOOKMARK",
            WatchEvent::Error(_) => "ERROR",
        }
    }

    /// Converts the object, keeping the event type.
    pub fn map<T>(self, f: impl FnOnce(K) -> T) -> WatchEvent<T> {
        match self {
            WatchEvent::Added(o) => WatchEvent::Added(f(o)),
            WatchEvent::Modified(o) => WatchEvent::Modified(f(o)),
            WatchEvent::Deleted(o) => WatchEvent::Deleted(f(o)),
            WatchEvent::Bookmark(b) => WatchEvent::Bookmark(b),
            WatchEvent::Error(s) => WatchEvent::Error(s),
        }
    }
}
