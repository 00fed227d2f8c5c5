//! What kube-apiserver 1.20.2 does to a namespace being deleted (the namespace registry's
//! `Delete` and `finalize`, and the `NamespaceLifecycle` admission plugin): the first DELETE
//! only marks it `Terminating`; the `kubernetes` entry of `spec.finalizers` holds it until the
//! namespace controller has deleted its content and removed the entry through
//! `namespaces/{name}/finalize` (an update that keeps the status and, unlike a plain update,
//! takes `spec.finalizers`); creates in a terminating namespace are refused.

use kcache_core::StatusCause;
use serde_json::{json, Value};

use super::delete_options::{gc_finalizer, DeleteOptions, FOREGROUND, ORPHAN};
use super::termination::Termination;
use super::Target;
use crate::handlers::meta::now_rfc3339;
use crate::http::responses::ApiError;
use crate::state::ServerState;
use crate::storage::{CommitError, Expect, Stored};

/// The namespaces the admission plugin never lets go (`immortalNamespaces`).
const IMMORTAL: [&str; 3] = ["default", "kube-system", "kube-public"];

/// The namespace controller's entry in `spec.finalizers` (`FinalizerKubernetes`).
pub(crate) const KUBERNETES: &str = "kubernetes";

/// Whether a stored namespace is `Terminating`.
pub(crate) fn is_terminating(ns: &Value) -> bool {
    ns["status"]["phase"] == "Terminating"
}

/// Whether a namespace update with this result deletes it (`ShouldDeleteNamespaceDuringUpdate`:
/// being deleted, and no finalizer left in `metadata` nor in `spec`).
pub(crate) fn spec_finalized(ns: &Value) -> bool {
    ns["spec"]["finalizers"]
        .as_array()
        .is_none_or(|f| f.is_empty())
}

/// The namespace registry's `Delete`: an immortal namespace is refused; the first DELETE sets
/// `deletionTimestamp`, the `Terminating` phase and the GC finalizer the options ask for, and
/// answers the namespace; later ones answer it as it is until `spec.finalizers` is empty, when
/// the generic delete applies.
pub(crate) fn delete(
    state: &ServerState,
    t: &Target,
    current: &Stored,
    cur: &Value,
    opts: &DeleteOptions,
) -> Result<Termination, ApiError> {
    let name = current.name.as_str();
    if IMMORTAL.contains(&name) {
        return Err(ApiError::forbidden(
            &t.res,
            name,
            "this namespace may not be deleted",
        ));
    }
    if cur["metadata"]["deletionTimestamp"].is_string() {
        return Ok(match spec_finalized(cur) {
            true => Termination::Generic,
            false => Termination::Answer(cur.clone()),
        });
    }
    let mut next = cur.clone();
    next["metadata"]["deletionTimestamp"] = json!(now_rfc3339());
    next["status"]["phase"] = json!("Terminating");
    if let Some(wanted) = gc_finalizer(&t.res, opts) {
        let mut finalizers: Vec<Value> = next["metadata"]["finalizers"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        finalizers.retain(|f| f != ORPHAN && f != FOREGROUND);
        finalizers.push(json!(wanted));
        next["metadata"]["finalizers"] = Value::Array(finalizers);
    }
    if t.dry_run {
        return Ok(Termination::Answer(next));
    }
    match state
        .storage
        .put(&t.res, &current.key, Expect::Rv(current.rv), next)
    {
        Ok(s) => Ok(Termination::Answer(s.value())),
        Err(CommitError::Conflict) => Ok(Termination::Conflict),
        Err(_) => Err(ApiError::not_found(&t.res, name)),
    }
}

/// The `NamespaceLifecycle` admission plugin on a create: 404 when the namespace does not
/// exist; 403 Forbidden when it is terminating, naming the object (its `generateName` before a
/// name is generated) and with the `NamespaceTerminating` cause.
pub(crate) fn admit_create(state: &ServerState, t: &Target, obj: &Value) -> Result<(), ApiError> {
    let Some(ns) = t.namespace.as_deref().filter(|_| t.res.api.namespaced) else {
        return Ok(());
    };
    let namespaces = state.resources.namespaces();
    let Some(stored) = state.storage.get(&namespaces, ns) else {
        return Err(ApiError::not_found(&namespaces, ns));
    };
    if !is_terminating(&stored.value()) {
        return Ok(());
    }
    let meta = &obj["metadata"];
    let name = [&meta["name"], &meta["generateName"]]
        .into_iter()
        .filter_map(Value::as_str)
        .find(|n| !n.is_empty())
        .or(t.name.as_deref())
        .unwrap_or("Unknown");
    let mut err = ApiError::forbidden(
        &t.res,
        name,
        &format!("unable to create new content in namespace {ns} because it is being terminated"),
    );
    if let Some(d) = err.status.details.as_mut() {
        d.causes.push(StatusCause {
            type_: "NamespaceTerminating".into(),
            message: format!("namespace {ns} is being terminated"),
            field: "metadata.namespace".into(),
        });
    }
    Err(err)
}
