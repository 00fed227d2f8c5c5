//! The subresources of pods (and `bindings`) that reach a kubelet or the scheduler's place:
//! `binding` and `bindings` assign a pod to a node, `eviction` deletes it (no disruption
//! budget is consulted), and the streaming ones answer as the real server does for a pod on no
//! node (`exec`, `attach`, `portforward`: 400 "does not have a host assigned"; `log`: 204, no
//! content; `proxy`: 400 "address not allowed"), as envtest's kube-apiserver answers them.

use http::{Response, StatusCode};
use serde_json::{json, Value};

use super::write::{parse_object, update_stored};
use super::Target;
use crate::http::query::Query;
use crate::http::responses::{full, json_value, ApiError, ApiResult};
use crate::state::ServerState;

/// A `Status` of success with the code the real server puts in it for created subresources.
fn created() -> ApiResult {
    Ok(json_value(
        StatusCode::CREATED,
        &json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}),
    ))
}

/// The pod `t` names (its `/sub` or the `bindings` body's name).
fn pod(state: &ServerState, t: &Target, name: &str) -> Result<Value, ApiError> {
    let pods = state
        .resources
        .get("", "v1", "pods")
        .ok_or_else(ApiError::no_route)?;
    let key = crate::storage::object_key(t.namespace.as_deref(), name);
    state
        .storage
        .get(&pods, &key)
        .map(|s| s.value())
        .ok_or_else(|| ApiError::not_found(&pods, name))
}

/// POST `pods/{name}/binding` or `bindings`: sets `spec.nodeName` of a pod that has none.
pub(crate) fn bind(state: &ServerState, t: &Target, body: &[u8]) -> ApiResult {
    let binding = parse_object(body)?;
    let name = match &t.name {
        Some(n) => n.clone(),
        None => binding["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
    };
    let node = binding["target"]["name"].as_str().unwrap_or_default();
    if node.is_empty() {
        return Err(ApiError::bad_request("target.name: Required value"));
    }
    let pods = state
        .resources
        .get("", "v1", "pods")
        .ok_or_else(ApiError::no_route)?;
    let target = Target {
        res: pods.clone(),
        name: Some(name.clone()),
        subresource: None,
        ..t.clone()
    };
    update_stored(state, &target, None, |cur| {
        if let Some(on) = cur["spec"]["nodeName"].as_str().filter(|n| !n.is_empty()) {
            let why = format!("pod {name} is already assigned to node \"{on}\"");
            return Err(ApiError::conflict(&pods, &name, &why));
        }
        let mut next = cur.clone();
        next["spec"]["nodeName"] = json!(node);
        Ok((next, false))
    })?;
    created()
}

/// POST `pods/{name}/eviction`: deletes the pod with the eviction's `deleteOptions`.
pub(crate) fn evict(state: &ServerState, t: &Target, q: &Query, body: &[u8]) -> ApiResult {
    let eviction = parse_object(body)?;
    let options = match eviction.get("deleteOptions") {
        Some(o) if o.is_object() => serde_json::to_vec(o).unwrap_or_default(),
        _ => Vec::new(),
    };
    let target = Target {
        subresource: None,
        ..t.clone()
    };
    super::delete::delete(state, &target, q, &options)?;
    created()
}

/// The streaming subresources, for a pod no kubelet runs.
pub(crate) fn unscheduled(state: &ServerState, t: &Target, sub: &str) -> ApiResult {
    let name = t.name.clone().unwrap_or_default();
    pod(state, t, &name)?;
    match sub {
        // No log stream to copy: the real server answers No Content.
        "log" => Ok(Response::builder()
            .status(StatusCode::NO_CONTENT)
            .body(full(""))
            .expect("static headers are valid")),
        "proxy" => Err(ApiError::bad_request("address not allowed")),
        _ => Err(ApiError::bad_request(format!(
            "pod {name} does not have a host assigned"
        ))),
    }
}
