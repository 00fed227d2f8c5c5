//! Filling the store from a watch-list (`sendInitialEvents=true`) instead of a list.

use kcache_core::{
    Error, ErrorChain, ListerWatcher, Object, ReflectorStore, ResourceVersionMatch, WatchParams,
    WatchStream,
};
use tokio::time::Instant;

use crate::events::{apply_stream, StreamEnd};
use crate::handle::Counter;
use crate::reflector::{PassState, Reflector};
use crate::temporary_store::TemporaryStore;
use crate::{ReflectorError, WatchListMode};

/// The server does not do watch-lists: it rejected `sendInitialEvents` as a bad or invalid
/// request, or does not implement it.
fn is_unsupported(err: &ReflectorError) -> bool {
    let code = err
        .source_error()
        .and_then(Error::status)
        .map_or(0, |s| s.code);
    matches!(code, 400 | 405 | 406 | 422 | 501) || err.source_error().is_some_and(Error::is_invalid)
}

impl<K, L, S> Reflector<K, L, S>
where
    K: Object,
    L: ListerWatcher<K>,
    S: ReflectorStore<K>,
{
    /// Streams the initial state with a watch-list, replaces the store with it at the end
    /// bookmark's resourceVersion, and returns the still-open stream. An error means "fall back
    /// to a list for this pass"; a server that does not support watch-lists (or never ends its
    /// initial events in time) is also remembered in `state`, in [`WatchListMode::Auto`].
    pub(crate) async fn watch_list(
        &self,
        state: &mut PassState,
    ) -> Result<WatchStream<K>, ReflectorError> {
        let waited = self.options.watch_list_end_timeout;
        let deadline = Instant::now() + waited;
        let result =
            match tokio::time::timeout_at(deadline, self.watch_list_until_synced(state)).await {
                Ok(result) => result,
                Err(_) => Err(ReflectorError::WatchListEndTimeout(waited)),
            };
        if let Err(e) = &result {
            let unsupported =
                is_unsupported(e) || matches!(e, ReflectorError::WatchListEndTimeout(_));
            if unsupported && self.options.watch_list == WatchListMode::Auto {
                state.watch_list_unsupported = true;
            }
            tracing::debug!(reflector = self.shared.name(), error = %ErrorChain(e), unsupported,
                "watch-list failed, falling back to list");
        }
        result
    }

    async fn watch_list_until_synced(
        &self,
        state: &mut PassState,
    ) -> Result<WatchStream<K>, ReflectorError> {
        loop {
            let params = WatchParams {
                resource_version: Some(self.shared.rewatch_resource_version()),
                resource_version_match: Some(ResourceVersionMatch::NotOlderThan),
                send_initial_events: Some(true),
                ..self.watch_params()
            };
            self.shared.bump(Counter::Watch);
            let mut stream = match self.lister.watch(&params).await {
                Ok(stream) => stream,
                Err(e) => {
                    let e = ReflectorError::Watch(e);
                    if self.retry_watch_list(&e, state).await {
                        continue;
                    }
                    return Err(e);
                }
            };
            let temporary = TemporaryStore::new();
            let mut synced_rv = String::new();
            let mut track = |rv: &str, non_added_seen: bool| {
                if non_added_seen {
                    rv.clone_into(&mut synced_rv);
                }
            };
            match apply_stream(
                self.shared.name(),
                &mut stream,
                &temporary,
                true,
                &mut track,
            )
            .await
            {
                Ok(StreamEnd::InitialEventsEnd) => {
                    // Keyed as the FIFO keys them: handed over with their keys.
                    let items = temporary.into_items();
                    self.replace_with_keys(items, &synced_rv)?;
                    return Ok(stream);
                }
                Ok(StreamEnd::Closed) => {
                    // Ended before the initial events did: start over, after a backoff step so
                    // a server that keeps doing this is not hammered.
                    tokio::time::sleep(state.backoff.next_delay()).await;
                }
                Err(e) => {
                    if !self.retry_watch_list(&e, state).await {
                        return Err(e);
                    }
                }
            }
        }
    }

    /// client-go's `isErrorRetriableWithSideEffectsFn`: a 429 or a refused connection backs off
    /// and retries; an expired or too-large resourceVersion retries at once from "".
    async fn retry_watch_list(&self, err: &ReflectorError, state: &mut PassState) -> bool {
        let Some(e) = err.source_error() else {
            return false;
        };
        if e.is_too_many_requests() || e.is_connect() {
            tracing::debug!(reflector = self.shared.name(), error = %ErrorChain(e), "watch-list failed, backing off");
            tokio::time::sleep(state.backoff.next_delay()).await;
            return true;
        }
        if e.is_gone() || e.is_too_large_resource_version() {
            self.shared.set_unavailable(true);
            return true;
        }
        false
    }
}
