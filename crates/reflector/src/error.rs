//! Why a list-and-watch pass ended, and the default way of reporting it.

use std::time::Duration;

use kcache_core::{Error, ErrorChain};

use crate::ReflectorHandle;

/// What ended one list-and-watch pass. The reflector reports it to the watch-error handler,
/// waits one backoff step and relists.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReflectorError {
    /// The list failed (after the retry at resourceVersion "" an expired or too-large
    /// resourceVersion gets).
    #[error("failed to list")]
    List(#[source] Error),
    /// The watch could not be started, or its stream failed (an `ERROR` event or a broken body).
    #[error("watch failed")]
    Watch(#[source] Error),
    /// The watch ended within a second without delivering anything: the server is likely
    /// refusing it, so the reflector relists instead of re-watching in a tight loop.
    #[error(
        "very short watch: unexpected watch close - watch lasted less than a second and no items received"
    )]
    VeryShortWatch,
    /// The store rejected the listed content.
    #[error("unable to sync list result")]
    Replace(#[source] Error),
    /// The store failed a periodic resync.
    #[error("resync failed")]
    Resync(#[source] Error),
    /// A watch-list did not deliver its `k8s.io/initial-events-end` bookmark in time.
    #[error("no initial-events-end bookmark after {0:?}")]
    WatchListEndTimeout(Duration),
}

impl ReflectorError {
    /// The underlying list/watch/store error, if there is one.
    pub fn source_error(&self) -> Option<&Error> {
        match self {
            ReflectorError::List(e)
            | ReflectorError::Watch(e)
            | ReflectorError::Replace(e)
            | ReflectorError::Resync(e) => Some(e),
            ReflectorError::VeryShortWatch | ReflectorError::WatchListEndTimeout(_) => None,
        }
    }

    /// The resourceVersion asked for is gone (410 / Expired / Gone): the normal end of a watch
    /// whose history was compacted, fixed by the relist that follows.
    pub fn is_expired(&self) -> bool {
        self.source_error().is_some_and(Error::is_gone)
    }
}

/// The handler told about every error that ends a list-and-watch pass (client-go's
/// `WatchErrorHandler`).
pub type WatchErrorHandler = dyn Fn(&ReflectorHandle, &ReflectorError) + Send + Sync;

/// client-go's `DefaultWatchErrorHandler`: an expired resourceVersion is routine (debug),
/// anything else is a warning. A watch the server ends cleanly is not an error at all, so it is
/// never reported (client-go's silent `io.EOF`).
pub fn default_watch_error_handler(reflector: &ReflectorHandle, err: &ReflectorError) {
    if err.is_expired() {
        tracing::debug!(reflector = reflector.name(), error = %ErrorChain(err), "watch closed");
    } else {
        tracing::warn!(reflector = reflector.name(), error = %ErrorChain(err), "failed to watch");
    }
}
