//! kube-runtime's `finalizer`: run cleanup before an object goes, with the finalizer added
//! before any work and removed only after cleanup succeeded.
//!
//! The four states of an object, by whether it carries our finalizer and whether its deletion
//! was requested:
//!
//! | finalizer | deleting | what happens |
//! |---|---|---|
//! | no  | no  | the finalizer is added (a JSON patch guarded by a `test` of the current list, or of the resourceVersion when there is none); nothing else — the patch itself triggers the next reconcile |
//! | yes | no  | `reconcile(Event::Apply(obj))` |
//! | yes | yes | `reconcile(Event::Cleanup(obj))`, then the finalizer is removed (JSON patch with a `test` of its index) |
//! | no  | yes | nothing: our cleanup already ran, or never needed to |
//!
//! The `test` operations make a concurrent change of the finalizer list fail the patch (422)
//! instead of dropping or duplicating someone else's finalizer (the API server does not
//! deduplicate finalizers); the caller retries with the newer object.

use std::future::Future;
use std::sync::Arc;

use kcache_core::ObjectMut;
use kcache_transport::{Api, Patch, PatchParams};
use serde::de::DeserializeOwned;
use serde_json::{json, Value};

/// What the reconcile closure is asked to do.
#[derive(Debug, Clone, PartialEq)]
pub enum Event<K> {
    /// The object lives and carries our finalizer: reconcile it as usual. Must be idempotent
    /// (it runs on every change) and should undo what a `Cleanup` may have half done.
    Apply(Arc<K>),
    /// The object is being deleted: release what it holds outside the cluster. The finalizer
    /// is removed once this returns `Ok`; an `Err` keeps the object (and retries).
    Cleanup(Arc<K>),
}

/// Why [`finalizer`] failed: the caller's own work, or the API calls around it.
#[derive(Debug, thiserror::Error)]
pub enum Error<E: std::error::Error + 'static> {
    /// `Event::Apply` returned an error.
    #[error("apply failed")]
    ApplyFailed(#[source] E),
    /// `Event::Cleanup` returned an error; the finalizer stays.
    #[error("cleanup failed")]
    CleanupFailed(#[source] E),
    /// Adding the finalizer failed (a 422 means the finalizer list changed meanwhile).
    #[error("failed to add finalizer")]
    AddFinalizer(#[source] kcache_core::Error),
    /// Removing the finalizer failed (a 422 means the finalizer list changed meanwhile).
    #[error("failed to remove finalizer")]
    RemoveFinalizer(#[source] kcache_core::Error),
    /// The object has no name.
    #[error("object has no name")]
    UnnamedObject,
    /// The finalizer name is empty.
    #[error("the finalizer name must not be empty")]
    InvalidFinalizer,
}

impl<E: std::error::Error + 'static> Error<E> {
    /// The reconcile closure's error, if that is what failed (not an API call).
    pub fn reconcile_error(&self) -> Option<&E> {
        match self {
            Error::ApplyFailed(e) | Error::CleanupFailed(e) => Some(e),
            _ => None,
        }
    }

    /// The API error, if a finalizer patch failed.
    pub fn api_error(&self) -> Option<&kcache_core::Error> {
        match self {
            Error::AddFinalizer(e) | Error::RemoveFinalizer(e) => Some(e),
            _ => None,
        }
    }
}

/// Reconciles `obj` under the finalizer `finalizer_name` (kube-runtime's
/// `kube::runtime::finalizer`; see the module docs for the four cases).
///
/// Returns what `reconcile` returned, or `T::default()` where it did not run (the finalizer was
/// just added, or the object is going without our finalizer) — for a controller's `Action`
/// that is "await the next change".
pub async fn finalizer<K, T, E, F, Fut>(
    api: &Api<K>,
    finalizer_name: &str,
    obj: Arc<K>,
    reconcile: F,
) -> Result<T, Error<E>>
where
    K: ObjectMut + DeserializeOwned,
    T: Default,
    E: std::error::Error + 'static,
    F: FnOnce(Event<K>) -> Fut,
    Fut: Future<Output = Result<T, E>>,
{
    if finalizer_name.is_empty() {
        return Err(Error::InvalidFinalizer);
    }
    let name = obj.name().to_string();
    if name.is_empty() {
        return Err(Error::UnnamedObject);
    }
    let finalizers = obj.finalizers();
    let index = finalizers.iter().position(|f| f == finalizer_name);
    match (index, obj.is_deleting()) {
        (Some(_), false) => reconcile(Event::Apply(obj))
            .await
            .map_err(Error::ApplyFailed),
        (Some(i), true) => {
            let out = reconcile(Event::Cleanup(obj))
                .await
                .map_err(Error::CleanupFailed)?;
            let path = format!("/metadata/finalizers/{i}");
            let patch = json!([
                {"op": "test", "path": path, "value": finalizer_name},
                {"op": "remove", "path": path},
            ]);
            api.patch(&name, &PatchParams::default(), &Patch::Json(patch))
                .await
                .map_err(Error::RemoveFinalizer)?;
            Ok(out)
        }
        (None, false) => {
            let guard = match (finalizers.is_empty(), obj.resource_version()) {
                // kube-runtime tests the absent list against null, which the API server's
                // json-patch accepts but RFC 6902 does not (a `test` of a missing member
                // fails); testing the resourceVersion is valid under both, and stricter.
                (true, Some(rv)) => {
                    json!({"op": "test", "path": "/metadata/resourceVersion", "value": rv})
                }
                (true, None) => {
                    json!({"op": "test", "path": "/metadata/finalizers", "value": Value::Null})
                }
                (false, _) => {
                    json!({"op": "test", "path": "/metadata/finalizers", "value": finalizers})
                }
            };
            let patch = if finalizers.is_empty() {
                json!([guard, {"op": "add", "path": "/metadata/finalizers", "value": [finalizer_name]}])
            } else {
                json!([guard, {"op": "add", "path": "/metadata/finalizers/-", "value": finalizer_name}])
            };
            api.patch(&name, &PatchParams::default(), &Patch::Json(patch))
                .await
                .map_err(Error::AddFinalizer)?;
            Ok(T::default())
        }
        (None, true) => Ok(T::default()),
    }
}

/// Adds `name` to the object's finalizers unless present (controllerutil's `AddFinalizer`), in
/// memory; whether it was added.
pub fn add_finalizer(obj: &mut (impl ObjectMut + ?Sized), name: &str) -> bool {
    if obj.has_finalizer(name) {
        return false;
    }
    obj.finalizers_mut()
        .get_or_insert_with(Vec::new)
        .push(name.to_string());
    true
}

/// Removes `name` from the object's finalizers (controllerutil's `RemoveFinalizer`), in memory;
/// whether it was there. An emptied list is left out, as the server omits it.
pub fn remove_finalizer(obj: &mut (impl ObjectMut + ?Sized), name: &str) -> bool {
    let list = obj.finalizers_mut();
    let Some(v) = list.as_mut() else {
        return false;
    };
    let before = v.len();
    v.retain(|f| f != name);
    let removed = v.len() != before;
    if v.is_empty() {
        *list = None;
    }
    removed
}

/// What [`finalizer`] returns where the closure did not run, for a controller's reconcile:
/// await the next change (the finalizer patch is one).
impl Default for crate::Action {
    fn default() -> Self {
        crate::Action::await_change()
    }
}
