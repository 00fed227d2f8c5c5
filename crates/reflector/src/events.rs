//! Applying one watch stream's events to a store (client-go's `handleAnyWatch`).

use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use kcache_core::{Error, ErrorChain, Object, ReflectorStore, WatchEvent, WatchStream};
use tokio::time::Instant;

use crate::ReflectorError;

/// A watch that closes sooner than this without any event is an error.
const VERY_SHORT_WATCH: Duration = Duration::from_secs(1);

/// How a watch stream ended without an error.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum StreamEnd {
    /// The server ended the stream (its timeout): re-watch from the last resourceVersion.
    Closed,
    /// The watch-list's `k8s.io/initial-events-end` bookmark arrived; the stream stays open.
    InitialEventsEnd,
}

/// Reads `stream` into `sink` until it ends, fails, or (with `stop_at_initial_events_end`) the
/// initial-events-end bookmark arrives.
///
/// - `ADDED`/`MODIFIED`/`DELETED` → `sink.add`/`update`/`delete`; a store error is logged and the
///   stream goes on, as in client-go.
/// - `BOOKMARK` → only `sink.bookmark(rv)` and the resourceVersion.
/// - `ERROR` → the stream ends with that `Status` as the error.
/// - An object with an empty name (no usable metadata) is logged and skipped: it neither reaches
///   the store nor moves the resourceVersion. A `Decode` error item (one undecodable event) is
///   logged and skipped the same way; if the body broke there, the stream ends next and the
///   re-watch from the unchanged resourceVersion delivers the event again. Any other error item
///   ends the stream with that error, except a broken body (`Request`/`Connect`, e.g. a connection
///   reset): that ends the stream like a clean end, as client-go's `StreamWatcher` closes its
///   channel on probable-EOF errors, so the reflector re-watches from the last resourceVersion
///   instead of relisting (the very-short-watch rule still catches a server that breaks every
///   watch at once).
///
/// After each applied event `on_rv(rv, non_added_seen)` is called, where `non_added_seen` tells
/// whether any event other than `ADDED` has been seen on this stream.
pub(crate) async fn apply_stream<K, S>(
    name: &str,
    stream: &mut WatchStream<K>,
    sink: &S,
    stop_at_initial_events_end: bool,
    on_rv: &mut (dyn FnMut(&str, bool) + Send),
) -> Result<StreamEnd, ReflectorError>
where
    K: Object,
    S: ReflectorStore<K> + ?Sized,
{
    let start = Instant::now();
    let mut events = 0usize;
    let mut non_added_seen = false;
    while let Some(item) = stream.next().await {
        let event = match item {
            Ok(event) => event,
            Err(e @ Error::Decode { .. }) => {
                tracing::warn!(reflector = name, error = %ErrorChain(&e), "skipping undecodable watch event");
                continue;
            }
            Err(e @ (Error::Request(_) | Error::Connect(_))) => {
                tracing::debug!(reflector = name, error = %ErrorChain(&e), "watch body broke, ending the watch");
                break;
            }
            Err(e) => return Err(ReflectorError::Watch(e)),
        };
        let rv = match event {
            WatchEvent::Error(status) => return Err(ReflectorError::Watch(Error::from(status))),
            WatchEvent::Bookmark(bookmark) => {
                non_added_seen = true;
                sink.bookmark(&bookmark.resource_version);
                on_rv(&bookmark.resource_version, non_added_seen);
                events += 1;
                if stop_at_initial_events_end && bookmark.initial_events_end {
                    return Ok(StreamEnd::InitialEventsEnd);
                }
                continue;
            }
            WatchEvent::Added(obj) => apply(name, sink, ObjectOp::Add, obj),
            WatchEvent::Modified(obj) => {
                non_added_seen = true;
                apply(name, sink, ObjectOp::Update, obj)
            }
            WatchEvent::Deleted(obj) => {
                non_added_seen = true;
                apply(name, sink, ObjectOp::Delete, obj)
            }
        };
        if let Some(rv) = rv {
            on_rv(&rv, non_added_seen);
            events += 1;
        }
    }
    if events == 0 && start.elapsed() < VERY_SHORT_WATCH {
        return Err(ReflectorError::VeryShortWatch);
    }
    tracing::debug!(reflector = name, events, "watch closed");
    Ok(StreamEnd::Closed)
}

#[derive(Debug, Clone, Copy)]
enum ObjectOp {
    Add,
    Update,
    Delete,
}

/// Applies one object event; returns its resourceVersion, or `None` if the object was skipped.
fn apply<K, S>(name: &str, sink: &S, op: ObjectOp, obj: K) -> Option<String>
where
    K: Object,
    S: ReflectorStore<K> + ?Sized,
{
    if obj.name().is_empty() {
        tracing::warn!(
            reflector = name,
            ?op,
            "skipping watch event object without a name"
        );
        return None;
    }
    let rv = obj.resource_version().unwrap_or_default().to_string();
    let obj = Arc::new(obj);
    let result = match op {
        ObjectOp::Add => sink.add(obj),
        ObjectOp::Update => sink.update(obj),
        ObjectOp::Delete => sink.delete(obj),
    };
    if let Err(e) = result {
        tracing::error!(reflector = name, ?op, error = %ErrorChain(&e), "unable to apply watch event to the store");
    }
    Some(rv)
}
