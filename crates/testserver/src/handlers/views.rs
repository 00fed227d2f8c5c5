//! The read-only view the API server computes rather than stores: `componentstatuses` (the
//! control plane's health; like envtest, only etcd is there).

use http::StatusCode;
use serde_json::{json, Value};

use super::Target;
use crate::http::responses::{json_value, ApiError, ApiResult};

fn component_statuses() -> Vec<Value> {
    let down = |port: u16| {
        format!("Get \"http://127.0.0.1:{port}/healthz\": dial tcp 127.0.0.1:{port}: connect: connection refused")
    };
    let item = |name: &str, healthy: bool, message: String| {
        json!({"kind": "ComponentStatus", "apiVersion": "v1", "metadata": {"name": name, "creationTimestamp": null},
               "conditions": [{"type": "Healthy", "status": if healthy {"True"} else {"False"}, "message": message}]})
    };
    vec![
        item("controller-manager", false, down(10252)),
        item("etcd-0", true, "{\"health\":\"true\"}".into()),
        item("scheduler", false, down(10251)),
    ]
}

/// GET of a view: one item by name, or the list.
pub(crate) fn get(t: &Target, watch: bool) -> ApiResult {
    let res = &t.res;
    let all = component_statuses();
    match t.name.as_deref() {
        Some(name) => all
            .into_iter()
            .find(|i| i["metadata"]["name"] == name)
            .map(|i| json_value(StatusCode::OK, &i))
            .ok_or_else(|| ApiError::not_found(res, name)),
        None if watch => Err(ApiError::method_not_allowed()),
        None => {
            // List items carry no kind/apiVersion; component statuses are not versioned.
            let items: Vec<Value> = all
                .into_iter()
                .map(|mut i| {
                    if let Some(m) = i.as_object_mut() {
                        m.remove("kind");
                        m.remove("apiVersion");
                    }
                    i
                })
                .collect();
            let metadata = json!({});
            Ok(json_value(
                StatusCode::OK,
                &json!({"kind": res.list_kind(), "apiVersion": res.api.api_version(),
                        "metadata": metadata, "items": items}),
            ))
        }
    }
}
