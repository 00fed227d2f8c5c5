//! Read your writes: the resourceVersion an informer's cache reflects, and waiting for it to
//! reach a version a controller just wrote (KEP-5647; client-go's
//! `LastStoreSyncResourceVersion`; controller-runtime PR #3473).
//!
//! The FIFO moves the version in the order writes reached it — an event's object, a relist's
//! list, a bookmark — once each and everything before it has been applied to the cache (see
//! kcache-delta-fifo's `DeltaFifo::last_store_sync_resource_version`). The informer publishes
//! each move on a `tokio::sync::watch` channel, so a waiter sleeps until the version moves or
//! the informer stops: no polling.
//!
//! Versions are compared only when both are decimal integers without leading zeros
//! (kube-apiserver's etcd revisions, KEP-5504's comparable form); any other is refused with an
//! error that names it, as KEP-5647 refuses opaque versions.

use std::cmp::Ordering;
use std::sync::Arc;
use std::time::Duration;

use kcache_core::{compare_resource_versions, IncomparableResourceVersion};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

/// Why a wait for a resourceVersion ended without the cache reaching it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum WaitForResourceVersionError {
    /// The wanted version, or the one the cache reflects, cannot be ordered (not a decimal
    /// integer: the server's resourceVersions are opaque).
    #[error("cannot wait for a resourceVersion: {0}")]
    Incomparable(#[from] IncomparableResourceVersion),
    /// The time allowed ran out.
    #[error("informer {informer:?}: cache still at resourceVersion {reached:?} after {after:?}, waiting for {wanted:?}")]
    Timeout {
        /// The informer's name.
        informer: String,
        /// The version waited for.
        wanted: String,
        /// The version the cache reflected when the wait ended.
        reached: String,
        /// How long the wait lasted.
        after: Duration,
    },
    /// The caller's cancellation token fired.
    #[error("informer {informer:?}: wait for resourceVersion {wanted:?} cancelled (cache at {reached:?})")]
    Cancelled {
        /// The informer's name.
        informer: String,
        /// The version waited for.
        wanted: String,
        /// The version the cache reflected when the wait ended.
        reached: String,
    },
    /// The informer stopped: its cache will not move any more.
    #[error("informer {informer:?} stopped with its cache at resourceVersion {reached:?}, before {wanted:?}")]
    Stopped {
        /// The informer's name.
        informer: String,
        /// The version waited for.
        wanted: String,
        /// The version the cache reflected when the informer stopped.
        reached: String,
    },
}

/// What the informer publishes.
#[derive(Debug, Clone, Default)]
pub(crate) struct CacheVersion {
    pub(crate) rv: Arc<str>,
    pub(crate) stopped: bool,
}

/// The informer's side: moves the published version.
pub(crate) struct CacheVersionSender {
    tx: Arc<watch::Sender<CacheVersion>>,
}

impl CacheVersionSender {
    pub(crate) fn new() -> Self {
        CacheVersionSender {
            tx: Arc::new(watch::Sender::new(CacheVersion::default())),
        }
    }

    /// What the FIFO calls as its resourceVersion moves.
    pub(crate) fn observer(&self) -> kcache_delta_fifo::ResourceVersionObserver {
        let tx = self.tx.clone();
        Arc::new(move |rv: &str| tx.send_modify(|v| v.rv = Arc::from(rv)))
    }

    /// The informer stopped: waiters give up.
    pub(crate) fn stopped(&self) {
        self.tx.send_modify(|v| v.stopped = true);
    }

    pub(crate) fn handle(&self, informer: &str) -> CacheResourceVersion {
        CacheResourceVersion {
            informer: informer.into(),
            rx: self.tx.subscribe(),
        }
    }
}

/// The resourceVersion an informer's cache reflects, for a controller to read and wait on
/// beside its lister (from [`crate::SharedIndexInformer::cache_resource_version`]). Cheap to
/// clone; every clone follows the same informer.
///
/// After writing an object at resourceVersion X, wait for X before trusting the cache for that
/// object again: the cache then holds the write, or something newer.
#[derive(Debug, Clone)]
pub struct CacheResourceVersion {
    informer: Arc<str>,
    rx: watch::Receiver<CacheVersion>,
}

impl CacheResourceVersion {
    /// The resourceVersion the cache reflects: the newest event, relist or watch bookmark
    /// applied together with everything before it ("" before the first). client-go's
    /// `LastStoreSyncResourceVersion`.
    pub fn last_store_sync_resource_version(&self) -> String {
        self.rx.borrow().rv.to_string()
    }

    /// Whether the cache reflects `rv` or later.
    pub fn has_reached(&self, rv: &str) -> Result<bool, WaitForResourceVersionError> {
        let current = self.rx.borrow().rv.clone();
        reached(&current, rv)
    }

    /// Waits until the cache reflects `rv` or later. Event-driven: it sleeps until the version
    /// moves. Errors at once when `rv` (or the cache's version) is not comparable, and when the
    /// informer stops first. Cancel it by dropping the future, or use the `_timeout` /
    /// `_until` forms for an error that says why.
    pub async fn wait_for_resource_version(
        &self,
        rv: &str,
    ) -> Result<(), WaitForResourceVersionError> {
        let mut rx = self.rx.clone();
        loop {
            let (current, stopped) = {
                let v = rx.borrow_and_update();
                (v.rv.clone(), v.stopped)
            };
            if reached(&current, rv)? {
                return Ok(());
            }
            if stopped || rx.changed().await.is_err() {
                return Err(WaitForResourceVersionError::Stopped {
                    informer: self.informer.to_string(),
                    wanted: rv.into(),
                    reached: self.last_store_sync_resource_version(),
                });
            }
        }
    }

    /// [`CacheResourceVersion::wait_for_resource_version`], giving up after `timeout`.
    pub async fn wait_for_resource_version_timeout(
        &self,
        rv: &str,
        timeout: Duration,
    ) -> Result<(), WaitForResourceVersionError> {
        match tokio::time::timeout(timeout, self.wait_for_resource_version(rv)).await {
            Ok(r) => r,
            Err(_) => Err(WaitForResourceVersionError::Timeout {
                informer: self.informer.to_string(),
                wanted: rv.into(),
                reached: self.last_store_sync_resource_version(),
                after: timeout,
            }),
        }
    }

    /// [`CacheResourceVersion::wait_for_resource_version`], giving up when `cancel` fires.
    pub async fn wait_for_resource_version_until(
        &self,
        rv: &str,
        cancel: &CancellationToken,
    ) -> Result<(), WaitForResourceVersionError> {
        tokio::select! {
            r = self.wait_for_resource_version(rv) => r,
            () = cancel.cancelled() => Err(WaitForResourceVersionError::Cancelled {
                informer: self.informer.to_string(),
                wanted: rv.into(),
                reached: self.last_store_sync_resource_version(),
            }),
        }
    }
}

/// Whether `current` is at `wanted` or later; "" (nothing applied yet) is before everything.
/// An opaque `wanted` is refused whatever `current` is.
fn reached(current: &str, wanted: &str) -> Result<bool, WaitForResourceVersionError> {
    if current.is_empty() {
        compare_resource_versions(wanted, wanted)?;
        return Ok(false);
    }
    Ok(compare_resource_versions(current, wanted)? != Ordering::Less)
}
