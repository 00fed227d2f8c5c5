//! DELETE of one object (finalizers hold it with a deletionTimestamp) and of a collection.

use http::StatusCode;
use serde_json::{json, Value};

use super::delete_options::{check_preconditions, gc_finalizer, DeleteOptions};
use super::termination::Termination;
use super::{crd_termination, namespace_lifecycle, Target};
use crate::handlers::meta::now_rfc3339;
use crate::http::query::Query;
use crate::http::responses::{json_value, ApiError, ApiResult};
use crate::resources::{conversion, ResourceInfo};
use crate::state::ServerState;
use crate::storage::{CommitError, Expect, ListAt};

/// DELETE of one object.
pub(crate) fn delete(state: &ServerState, t: &Target, q: &Query, body: &[u8]) -> ApiResult {
    let (opts, dry_run) = DeleteOptions::from_request(body, q)?;
    let t = &Target {
        dry_run,
        ..t.clone()
    };
    let name = t.name.clone().unwrap_or_default();
    let body = conversion::present_value(&t.res, delete_one(state, t, &name, &opts)?);
    Ok(json_value(StatusCode::OK, &body))
}

/// DELETE of one object through the registry's rules: namespaces and CRDs first go into
/// termination (their controllers finish the deletion), finalizers hold the others.
pub(crate) fn delete_one(
    state: &ServerState,
    t: &Target,
    name: &str,
    opts: &DeleteOptions,
) -> Result<Value, ApiError> {
    let res = &t.res;
    let key =
        crate::storage::object_key(t.namespace.as_deref().filter(|_| res.api.namespaced), name);
    loop {
        let current = state
            .storage
            .get(res, &key)
            .ok_or_else(|| ApiError::not_found(res, name))?;
        let mut cur = current.value();
        check_preconditions(res, name, &current, &cur, opts)?;
        let termination = match (res.api.group.as_str(), res.api.plural.as_str()) {
            ("", "namespaces") => namespace_lifecycle::delete(state, t, &current, &cur, opts)?,
            ("apiextensions.k8s.io", "customresourcedefinitions") => {
                crd_termination::delete(state, t, &current, &cur)
            }
            _ => Termination::Generic,
        };
        match termination {
            Termination::Answer(v) => return Ok(v),
            Termination::Conflict => continue,
            Termination::Generic => {}
        }
        let mut finalizers: Vec<Value> = cur["metadata"]["finalizers"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        if let Some(f) = gc_finalizer(res, opts).filter(|f| !finalizers.iter().any(|x| x == f)) {
            finalizers.push(json!(f));
        }
        if !finalizers.is_empty() {
            if cur["metadata"]["deletionTimestamp"].is_string() {
                return Ok(cur);
            }
            cur["metadata"]["deletionTimestamp"] = json!(now_rfc3339());
            cur["metadata"]["deletionGracePeriodSeconds"] = json!(0);
            cur["metadata"]["finalizers"] = Value::Array(finalizers);
            if t.dry_run {
                return Ok(cur);
            }
            match state.storage.put(res, &key, Expect::Rv(current.rv), cur) {
                Ok(s) => return Ok(s.value()),
                Err(CommitError::Conflict) => continue,
                Err(_) => return Err(ApiError::not_found(res, name)),
            }
        }
        let gone = if t.dry_run {
            // Checked, not deleted: the answer shows the object as it is.
            current
        } else {
            match state
                .storage
                .delete(res, &key, Expect::Rv(current.rv), None)
            {
                Ok(g) => g,
                Err(CommitError::Conflict) => continue,
                Err(_) => return Err(ApiError::not_found(res, name)),
            }
        };
        if !t.dry_run {
            after_delete(state, res, &cur);
        }
        if res.returns_deleted_object {
            return Ok(gone.value());
        }
        let mut details =
            json!({"name": name, "kind": res.api.plural, "uid": cur["metadata"]["uid"]});
        if !res.api.group.is_empty() {
            // An empty group is omitted, as Go omits empty strings of StatusDetails.
            details["group"] = json!(res.api.group);
        }
        return Ok(json!({
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
            "details": details,
        }));
    }
}

/// What goes with an object once it is gone from the store: a CRD's resources stop being
/// served (their objects were deleted by its cleanup first) and their APIServices go.
pub(crate) fn after_delete(state: &ServerState, res: &ResourceInfo, last: &Value) {
    if (res.api.group.as_str(), res.api.plural.as_str())
        == ("apiextensions.k8s.io", "customresourcedefinitions")
    {
        for id in state.resources.remove_crd(last) {
            state.storage.drop_collection(&id);
        }
        crate::autoregister::sync(state);
    }
}

/// DELETE of a collection: every object matching the selectors, one by one.
pub(crate) fn delete_collection(
    state: &ServerState,
    t: &Target,
    q: &Query,
    body: &[u8],
) -> ApiResult {
    let filter = t.filter(q, &state.config)?;
    q.int("limit")?;
    q.int("timeoutSeconds")?;
    let (opts, dry_run) = DeleteOptions::from_request(body, q)?;
    let page = state
        .storage
        .list(&t.res, ListAt::Current, &filter, None, None)
        .map_err(|_| ApiError::bad_request("cannot list the collection"))?;
    let mut items = Vec::new();
    for obj in &page.items {
        let target = Target {
            namespace: obj.namespace.clone(),
            dry_run,
            ..t.clone()
        };
        match delete_one(state, &target, &obj.name, &opts) {
            Ok(_) => {}
            Err(e) if e.status.is_not_found() => {}
            Err(e) => return Err(e),
        }
        // The answer is the list as it was read before deleting (the real `DeleteCollection`
        // returns its list), whatever a single DELETE of the resource answers.
        items.push(conversion::present_value(&t.res, obj.value()));
    }
    let body = json!({"kind": t.res.list_kind(), "apiVersion": t.res.api.api_version(),
                      "metadata": {"resourceVersion": state.storage.current_rev().to_string()}, "items": items});
    Ok(json_value(StatusCode::OK, &body))
}
