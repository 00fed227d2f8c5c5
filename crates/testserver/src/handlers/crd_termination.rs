//! What kube-apiserver 1.20.2 (apiextensions-apiserver) does when a CustomResourceDefinition is
//! deleted: the first DELETE adds the `customresourcecleanup.apiextensions.k8s.io` finalizer
//! and a `Terminating` condition and answers the CRD; the CRD finalizer controller
//! (`crate::controllers::crd_cleanup`) deletes the custom resources, then removes the
//! finalizer. Meanwhile creates of custom resources are refused.

use serde_json::{json, Value};

use super::termination::Termination;
use super::Target;
use crate::handlers::meta::now_rfc3339;
use crate::http::responses::ApiError;
use crate::resources::ResourceInfo;
use crate::state::ServerState;
use crate::storage::{object_key, CommitError, Expect, Stored};

/// The finalizer that holds a deleted CRD until its instances are gone.
pub(crate) const CLEANUP_FINALIZER: &str = "customresourcecleanup.apiextensions.k8s.io";

/// The CRD registry's `Delete`: the first one marks the CRD (answering it); later ones are the
/// generic delete, which the finalizer holds.
pub(crate) fn delete(
    state: &ServerState,
    t: &Target,
    current: &Stored,
    cur: &Value,
) -> Termination {
    if cur["metadata"]["deletionTimestamp"].is_string() {
        return Termination::Generic;
    }
    let mut next = cur.clone();
    next["metadata"]["deletionTimestamp"] = json!(now_rfc3339());
    let mut finalizers: Vec<Value> = next["metadata"]["finalizers"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    if !finalizers.iter().any(|f| f == CLEANUP_FINALIZER) {
        finalizers.push(json!(CLEANUP_FINALIZER));
    }
    next["metadata"]["finalizers"] = Value::Array(finalizers);
    set_condition(
        &mut next,
        "True",
        "InstanceDeletionPending",
        "CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon",
    );
    if t.dry_run {
        return Termination::Answer(next);
    }
    match state
        .storage
        .put(&t.res, &current.key, Expect::Rv(current.rv), next)
    {
        Ok(s) => Termination::Answer(s.value()),
        Err(CommitError::Conflict) => Termination::Conflict,
        // Gone meanwhile: the generic path answers the 404.
        Err(_) => Termination::Generic,
    }
}

/// `SetCRDCondition` for the `Terminating` condition: replaced in place (its transition time
/// kept unless its status changes), else appended.
pub(crate) fn set_condition(crd: &mut Value, status: &str, reason: &str, message: &str) {
    let now = now_rfc3339();
    let new = json!({"type": "Terminating", "status": status, "lastTransitionTime": now,
                     "reason": reason, "message": message});
    if !crd["status"]["conditions"].is_array() {
        crd["status"]["conditions"] = json!([]);
    }
    let conditions = crd["status"]["conditions"]
        .as_array_mut()
        .expect("made an array above");
    match conditions.iter_mut().find(|c| c["type"] == "Terminating") {
        Some(old) => {
            let time = match old["status"] == status {
                true => old["lastTransitionTime"].clone(),
                false => json!(now),
            };
            *old = new;
            old["lastTransitionTime"] = time;
        }
        None => conditions.push(new),
    }
}

/// Whether a CRD's `Terminating` condition is true.
pub(crate) fn is_terminating(crd: &Value) -> bool {
    crd["status"]["conditions"].as_array().is_some_and(|cs| {
        cs.iter()
            .any(|c| c["type"] == "Terminating" && c["status"] == "True")
    })
}

/// A POST of a custom resource whose CRD is terminating: 405 MethodNotAllowed, as the CRD
/// handler answers (`create not allowed while custom resource definition is terminating`).
pub(crate) fn admit_create(state: &ServerState, res: &ResourceInfo) -> Result<(), ApiError> {
    if res.builtin {
        return Ok(());
    }
    let crds = state.resources.crds();
    let name = object_key(None, &format!("{}.{}", res.api.plural, res.api.group));
    match state.storage.get(&crds, &name) {
        Some(crd) if is_terminating(&crd.value()) => {
            let mut e = ApiError::method_not_supported(res, "create");
            e.status.message =
                "create not allowed while custom resource definition is terminating".into();
            Err(e)
        }
        _ => Ok(()),
    }
}
