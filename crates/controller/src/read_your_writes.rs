//! Read your writes: after a reconcile writes an object, the next reconcile of the same key waits
//! until the informer of the written kind holds that write (its resourceVersion, KEP-5647's
//! wait), so it never acts on the state from before its own write.
//!
//! A reconcile runs with its key and the controller's tracker in a task-local, so a write made
//! on the reconcile's own task is recorded without naming either: the crate's write helpers
//! ([`apply`](crate::apply), [`apply_status`](crate::apply_status),
//! [`patch_status_condition`](crate::conditions::patch_status_condition)) call [`wrote`]
//! themselves, and a reconcile calls it after any other write. A task the reconcile spawns does
//! not inherit the task-local: record its writes with [`WriteTracker::wrote`].

use std::any::TypeId;
use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use kcache_core::Object;
use kcache_informer::CacheResourceVersion;
use parking_lot::Mutex;

use crate::reconcile_request::ReconcileRequest;

tokio::task_local! {
    /// The tracker and key of the reconcile running on this task.
    static RECONCILING: (WriteTracker, ReconcileRequest);
}

/// Records `written` (what a write call returned) for the reconcile running on this task, as
/// [`WriteTracker::wrote`] with its key: the next reconcile of that key waits until the cache
/// holds this write. Whether there was such a reconcile (outside one, or on a task it spawned,
/// nothing is recorded).
pub fn wrote<O: Object>(written: &O) -> bool {
    RECONCILING
        .try_with(|(tracker, request)| tracker.wrote(request, written))
        .is_ok()
}

/// Where a reconcile reports what it wrote. On the reconcile's own task [`wrote`] finds it; for
/// writes made elsewhere (a spawned task), get it from
/// [`Controller::writes`](crate::Controller::writes) before `run` and keep it in your context.
/// Cheap to clone; every clone is the same tracker.
///
/// ```no_run
/// # use k8s_openapi::api::core::v1::{ConfigMap, Secret};
/// # use kcache_controller::{ReconcileRequest, WriteTracker};
/// # use kcache_transport::{Api, PostParams};
/// /// Runs on a task the reconcile of `cm` spawned, where [`wrote`] finds no reconcile.
/// async fn copy(
///     writes: WriteTracker,
///     secrets: Api<Secret>,
///     cm: &ConfigMap,
///     secret: Secret,
/// ) -> Result<(), kcache_core::Error> {
///     let written = secrets.create(&PostParams::default(), &secret).await?;
///     writes.wrote(&ReconcileRequest::of(cm), &written);
///     Ok(())
/// }
/// ```
#[derive(Clone, Default)]
pub struct WriteTracker {
    inner: Arc<Inner>,
}

#[derive(Default)]
struct Inner {
    /// The cache version of each kind the controller watches, by the kind's Rust type.
    caches: Mutex<HashMap<TypeId, CacheResourceVersion>>,
    /// Writes each key's next reconcile waits for.
    pending: Mutex<HashMap<ReconcileRequest, Vec<(CacheResourceVersion, String)>>>,
}

impl std::fmt::Debug for WriteTracker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WriteTracker")
            .field("pending", &self.inner.pending.lock().len())
            .finish()
    }
}

impl WriteTracker {
    pub(crate) fn watch<O: 'static>(&self, cache: CacheResourceVersion) {
        self.inner.caches.lock().insert(TypeId::of::<O>(), cache);
    }

    /// Records that reconciling `request` wrote `written` (what the write call returned): the
    /// next reconcile of `request` waits until the cache of `O` holds it. A kind the controller
    /// does not watch (nor own) is ignored, as is an object without a resourceVersion.
    pub fn wrote<O: Object>(&self, request: &ReconcileRequest, written: &O) {
        if let Some(rv) = written.resource_version() {
            self.wrote_resource_version::<O>(request, rv);
        }
    }

    /// [`wrote`](Self::wrote) with the resourceVersion alone (for a patch whose response you
    /// did not decode, say).
    pub fn wrote_resource_version<O: 'static>(&self, request: &ReconcileRequest, rv: &str) {
        let Some(cache) = self.inner.caches.lock().get(&TypeId::of::<O>()).cloned() else {
            tracing::debug!(key = %request, "a write of a kind the controller does not watch: not tracked");
            return;
        };
        self.inner
            .pending
            .lock()
            .entry(request.clone())
            .or_default()
            .push((cache, rv.to_string()));
    }

    /// Whether a reconcile of `request` would wait for a write.
    pub fn is_pending(&self, request: &ReconcileRequest) -> bool {
        self.inner.pending.lock().contains_key(request)
    }

    /// Runs `reconcile` (of `request`) with this tracker and `request` in reach of [`wrote`].
    pub(crate) fn scope<F: Future>(
        &self,
        request: &ReconcileRequest,
        reconcile: F,
    ) -> impl Future<Output = F::Output> {
        RECONCILING.scope((self.clone(), request.clone()), reconcile)
    }

    /// Forgets the writes of a key whose object is gone.
    pub(crate) fn forget(&self, request: &ReconcileRequest) {
        self.inner.pending.lock().remove(request);
    }

    /// Waits, up to `timeout` in all, until every cache written for `request` holds its write.
    /// A wait that fails (timeout, an opaque resourceVersion, a stopped informer) is logged and
    /// the reconcile goes ahead: a stale read is what controllers without this wait get.
    pub(crate) async fn wait(&self, request: &ReconcileRequest, timeout: Duration) {
        let Some(writes) = self.inner.pending.lock().remove(request) else {
            return;
        };
        let deadline = tokio::time::Instant::now() + timeout;
        for (cache, rv) in writes {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            if let Err(e) = cache.wait_for_resource_version_timeout(&rv, left).await {
                tracing::warn!(key = %request, "reconciling without read-your-writes: {e}");
            }
        }
    }
}
