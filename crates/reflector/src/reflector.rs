//! The list-and-watch loop (client-go's `Reflector`).

use std::future::pending;
use std::marker::PhantomData;
use std::sync::Arc;

use kcache_core::{
    Error, ErrorChain, ListPager, ListParams, ListerWatcher, Object, ObjectKey, PagedList,
    ReflectorStore, WatchParams, WatchStream, DEFAULT_PAGE_SIZE,
};
use tokio_util::sync::CancellationToken;

use crate::backoff::Backoff;
use crate::error::{default_watch_error_handler, WatchErrorHandler};
use crate::events::apply_stream;
use crate::handle::{Counter, Shared};
use crate::options::DEFAULT_MIN_WATCH_TIMEOUT;
use crate::{ReflectorError, ReflectorHandle, ReflectorOptions, WatchListMode};

/// Keeps a [`ReflectorStore`] in step with the server through a [`ListerWatcher`]: list (or
/// watch-list), then watch from the list's resourceVersion, relisting when the watch can't go on.
///
/// Mirrors client-go's `tools/cache.Reflector`; every rule is in the crate documentation.
pub struct Reflector<K, L, S> {
    pub(crate) lister: L,
    pub(crate) store: S,
    pub(crate) options: ReflectorOptions,
    pub(crate) shared: Arc<Shared>,
    watch_error_handler: Box<WatchErrorHandler>,
    should_resync: Option<Box<dyn Fn() -> bool + Send + Sync>>,
    _kind: PhantomData<fn() -> K>,
}

/// What one run of the loop carries from pass to pass.
pub(crate) struct PassState {
    /// The one backoff shared by relists, watch retries and 429s.
    pub(crate) backoff: Backoff,
    /// A list at "0" came back paginated: the watch cache is off, so every list is paginated.
    paginated_result: bool,
    /// The server showed it does not do watch-lists.
    pub(crate) watch_list_unsupported: bool,
}

impl<K, L, S> std::fmt::Debug for Reflector<K, L, S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reflector")
            .field("options", &self.options)
            .field(
                "last_sync_resource_version",
                &self.shared.last_sync_resource_version(),
            )
            .finish_non_exhaustive()
    }
}

impl<K, L, S> Reflector<K, L, S>
where
    K: Object,
    L: ListerWatcher<K>,
    S: ReflectorStore<K>,
{
    /// A reflector that fills `store` from `lister`.
    pub fn new(lister: L, store: S, options: ReflectorOptions) -> Self {
        Reflector {
            lister,
            store,
            shared: Shared::new(options.name.clone()),
            options,
            watch_error_handler: Box::new(default_watch_error_handler),
            should_resync: None,
            _kind: PhantomData,
        }
    }

    /// A handle for reading the last synced resourceVersion and the counters while running.
    pub fn handle(&self) -> ReflectorHandle {
        ReflectorHandle::new(self.shared.clone())
    }

    /// The resourceVersion the store last reached ("" before the first sync).
    pub fn last_sync_resource_version(&self) -> String {
        self.shared.last_sync_resource_version()
    }

    /// Replaces the handler told about every error that ends a list-and-watch pass (default:
    /// [`crate::default_watch_error_handler`]).
    pub fn set_watch_error_handler(
        &mut self,
        handler: impl Fn(&ReflectorHandle, &ReflectorError) + Send + Sync + 'static,
    ) {
        self.watch_error_handler = Box::new(handler);
    }

    /// Sets the predicate asked at every resync period whether to call `store.resync()`
    /// (client-go's `ShouldResync`); without one, every period resyncs.
    pub fn set_should_resync(&mut self, should_resync: impl Fn() -> bool + Send + Sync + 'static) {
        self.should_resync = Some(Box::new(should_resync));
    }

    /// Lists and watches until `cancel` fires (client-go's `Run`). Each pass that ends with an
    /// error is reported to the watch-error handler; between passes the reflector waits one
    /// step of its backoff. Cancellation (or dropping this future) stops it at once, mid-list or
    /// mid-watch.
    pub async fn run(self, cancel: CancellationToken) {
        tracing::debug!(reflector = self.shared.name(), "starting reflector");
        let mut state = PassState {
            backoff: Backoff::new(self.options.backoff.clone()),
            paginated_result: false,
            watch_list_unsupported: self.options.watch_list == WatchListMode::Disabled,
        };
        let handle = self.handle();
        loop {
            let result = tokio::select! {
                biased;
                _ = cancel.cancelled() => break,
                result = self.list_and_watch(&mut state) => result,
            };
            if let Err(e) = result {
                (self.watch_error_handler)(&handle, &e);
            }
            let delay = state.backoff.next_delay();
            tokio::select! {
                biased;
                _ = cancel.cancelled() => break,
                _ = tokio::time::sleep(delay) => {}
            }
        }
        tracing::debug!(reflector = self.shared.name(), "stopping reflector");
    }

    /// One pass: fill the store, then watch until the watch can only be fixed by a relist.
    async fn list_and_watch(&self, state: &mut PassState) -> Result<(), ReflectorError> {
        self.shared.bump(Counter::List);
        let mut stream = None;
        if !state.watch_list_unsupported {
            stream = self.watch_list(state).await.ok();
        }
        if stream.is_none() {
            self.list(state).await?;
        }
        tracing::debug!(reflector = self.shared.name(), "caches populated");
        tokio::select! {
            result = self.watch(state, stream) => result,
            result = self.resync_loop() => result,
        }
    }

    /// Lists everything and replaces the store (client-go's `list`).
    async fn list(&self, state: &mut PassState) -> Result<(), ReflectorError> {
        let rv = self.shared.relist_resource_version();
        let listed = match self.list_at(&rv, state).await {
            Err(e) if e.is_gone() || e.is_too_large_resource_version() => {
                self.shared.set_unavailable(true);
                let rv = self.shared.relist_resource_version();
                self.list_at(&rv, state).await
            }
            other => other,
        }
        .map_err(ReflectorError::List)?;
        if rv == "0" && listed.paginated {
            state.paginated_result = true;
        }
        let rv = listed.list.resource_version().to_string();
        self.replace(listed.list.items, &rv)
    }

    async fn list_at(
        &self,
        rv: &str,
        state: &PassState,
    ) -> Result<PagedList<Arc<K>>, kcache_core::Error> {
        let page_size = match self.options.page_size {
            Some(size) => size,
            None if state.paginated_result || rv.is_empty() || rv == "0" => DEFAULT_PAGE_SIZE,
            None => 0,
        };
        let params = ListParams {
            resource_version: Some(rv.to_string()),
            label_selector: self.options.label_selector.clone(),
            field_selector: self.options.field_selector.clone(),
            shard_selector: self.options.shard_selector.clone(),
            ..ListParams::default()
        };
        ListPager::new(page_size)
            .list_shared(&self.lister, &params)
            .await
    }

    /// Replaces the store's content and records the resourceVersion it is at.
    pub(crate) fn replace(&self, items: Vec<Arc<K>>, rv: &str) -> Result<(), ReflectorError> {
        let replaced = self.store.replace(items, rv);
        self.replaced(replaced, rv)
    }

    /// [`Reflector::replace`] with each item's key already built (a watch-list's).
    pub(crate) fn replace_with_keys(
        &self,
        items: Vec<(ObjectKey, Arc<K>)>,
        rv: &str,
    ) -> Result<(), ReflectorError> {
        let replaced = self.store.replace_with_keys(items, rv);
        self.replaced(replaced, rv)
    }

    fn replaced(&self, result: Result<(), Error>, rv: &str) -> Result<(), ReflectorError> {
        result.map_err(ReflectorError::Replace)?;
        self.shared.set_unavailable(false);
        self.shared.set_last_sync_resource_version(rv);
        self.shared.bump(Counter::Sync);
        Ok(())
    }

    /// What every watch sends: bookmarks allowed, a random timeout, the selectors.
    pub(crate) fn watch_params(&self) -> WatchParams {
        WatchParams {
            label_selector: self.options.label_selector.clone(),
            field_selector: self.options.field_selector.clone(),
            shard_selector: self.options.shard_selector.clone(),
            timeout_seconds: Some(self.watch_timeout_seconds()),
            allow_watch_bookmarks: true,
            ..WatchParams::default()
        }
    }

    /// A random server-side watch timeout in `[min, 2·min)` seconds.
    fn watch_timeout_seconds(&self) -> u32 {
        let min = self
            .options
            .min_watch_timeout
            .max(DEFAULT_MIN_WATCH_TIMEOUT)
            .as_secs_f64();
        let seconds = min + rand::random::<f64>() * min;
        seconds.min(f64::from(u32::MAX)) as u32
    }

    /// Watches from the last synced resourceVersion, re-watching after clean ends, 429s and
    /// refused connections; returns when only a relist can help (client-go's `watch`).
    async fn watch(
        &self,
        state: &mut PassState,
        mut stream: Option<WatchStream<K>>,
    ) -> Result<(), ReflectorError> {
        let name = self.shared.name();
        // Every watch after the first of this pass continues without a relist.
        let mut restarting = false;
        loop {
            // A stream handed over by a watch-list continues from its bookmark.
            let mut propagate_rv_from_start = true;
            let mut current = match stream.take() {
                Some(s) => {
                    restarting = true;
                    s
                }
                None => {
                    let rv = self.shared.last_sync_resource_version();
                    // A watch from "" or "0" starts with synthetic ADDs in no particular order.
                    propagate_rv_from_start = !(rv.is_empty() || rv == "0");
                    let params = WatchParams {
                        resource_version: Some(rv),
                        ..self.watch_params()
                    };
                    self.shared.bump(Counter::Watch);
                    if restarting {
                        self.shared.bump(Counter::WatchRestart);
                    }
                    restarting = true;
                    match self.lister.watch(&params).await {
                        Ok(s) => s,
                        Err(e) if e.is_too_many_requests() || e.is_connect() => {
                            tracing::debug!(reflector = name, error = %ErrorChain(&e), "watch failed, backing off");
                            tokio::time::sleep(state.backoff.next_delay()).await;
                            continue;
                        }
                        Err(e) => return Err(ReflectorError::Watch(e)),
                    }
                }
            };
            let shared = &self.shared;
            let mut track = |rv: &str, non_added_seen: bool| {
                if propagate_rv_from_start || non_added_seen {
                    shared.set_last_sync_resource_version(rv);
                }
            };
            match apply_stream(name, &mut current, &self.store, false, &mut track).await {
                Ok(_) => {}
                Err(e) if e.source_error().is_some_and(|e| e.is_too_many_requests()) => {
                    tracing::debug!(reflector = name, "watch returned 429, backing off");
                    tokio::time::sleep(state.backoff.next_delay()).await;
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Calls `store.resync()` every resync period while watching, if `should_resync` agrees;
    /// returns only when the store fails, which ends the pass.
    async fn resync_loop(&self) -> Result<(), ReflectorError> {
        let period = self.options.resync_period;
        if period.is_zero() {
            return pending().await;
        }
        loop {
            tokio::time::sleep(period).await;
            if self.should_resync.as_ref().is_none_or(|f| f()) {
                tracing::trace!(reflector = self.shared.name(), "forcing resync");
                self.store.resync().map_err(ReflectorError::Resync)?;
            }
        }
    }
}
