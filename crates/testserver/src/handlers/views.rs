//! Read-only views the API server computes rather than stores: `componentstatuses` (the
//! control plane's health; like envtest, only etcd is there) and `apiservices` (one local
//! APIService per served group/version, as kube-apiserver's autoregistration keeps them; like
//! it, none for `apiregistration.k8s.io` itself).

use std::sync::OnceLock;

use http::StatusCode;
use serde_json::{json, Value};

use super::Target;
use crate::handlers::meta::now_rfc3339;
use crate::http::responses::{json_value, ApiError, ApiResult};
use crate::resources::{ResourceInfo, Special};
use crate::state::ServerState;

/// When the views came to be (their creationTimestamp and condition times).
fn started() -> &'static str {
    static STARTED: OnceLock<String> = OnceLock::new();
    STARTED.get_or_init(now_rfc3339)
}

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

/// The API server's priorities for its own groups (`apiVersionPriorities`); custom groups
/// get 1000/100.
fn priority(group: &str, version: &str) -> (i64, i64) {
    let group_min = match group {
        "" => 18000,
        "apps" => 17800,
        "events.k8s.io" => 17750,
        "authentication.k8s.io" => 17700,
        "autoscaling" => 17500,
        "batch" => 17400,
        "certificates.k8s.io" => 17300,
        "rbac.authorization.k8s.io" => 17000,
        "apiextensions.k8s.io" => 16700,
        "coordination.k8s.io" => 16500,
        _ => return (1000, 100),
    };
    let version_priority = match (group, version) {
        ("", _) => 1,
        ("batch", "v1beta1") => 9,
        _ => 15,
    };
    (group_min, version_priority)
}

fn api_services(state: &ServerState) -> Vec<Value> {
    let mut gvs: Vec<(String, String, bool)> = state
        .resources
        .all()
        .iter()
        .filter(|r| r.api.group != "apiregistration.k8s.io")
        .map(|r| (r.api.group.clone(), r.api.version.clone(), r.builtin))
        .collect();
    gvs.dedup_by(|a, b| a.0 == b.0 && a.1 == b.1);
    let mut items: Vec<Value> = gvs
        .into_iter()
        .map(|(group, version, builtin)| {
            let (group_min, version_priority) = priority(&group, &version);
            let automanaged = if builtin { "onstart" } else { "true" };
            json!({"kind": "APIService", "apiVersion": "apiregistration.k8s.io/v1",
                   "metadata": {"name": format!("{version}.{group}"), "creationTimestamp": started(),
                                "labels": {"kube-aggregator.kubernetes.io/automanaged": automanaged}},
                   "spec": {"group": group, "version": version, "groupPriorityMinimum": group_min, "versionPriority": version_priority},
                   "status": {"conditions": [{"type": "Available", "status": "True", "lastTransitionTime": started(),
                                              "reason": "Local", "message": "Local APIServices are always available"}]}})
        })
        .collect();
    items.sort_by(|a, b| {
        a["metadata"]["name"]
            .as_str()
            .cmp(&b["metadata"]["name"].as_str())
    });
    items
}

fn items(state: &ServerState, res: &ResourceInfo) -> Vec<Value> {
    match res.special {
        Special::ComponentStatus => component_statuses(),
        _ => api_services(state),
    }
}

/// GET of a view: one item by name, or the list.
pub(crate) fn get(state: &ServerState, t: &Target, watch: bool) -> ApiResult {
    let res = &t.res;
    let all = items(state, res);
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
            let metadata = match res.special {
                Special::ComponentStatus => json!({}),
                _ => json!({"resourceVersion": state.storage.current_rev().to_string()}),
            };
            Ok(json_value(
                StatusCode::OK,
                &json!({"kind": res.list_kind(), "apiVersion": res.api.api_version(),
                        "metadata": metadata, "items": items}),
            ))
        }
    }
}

/// POST of an APIService: the local ones are views of what is served, so one that exists is a
/// conflict (as on the real server); registering another (an aggregated API) is not possible
/// here.
pub(crate) fn create_api_service(state: &ServerState, t: &Target, body: &[u8]) -> ApiResult {
    let obj = super::write::parse_object(body)?;
    let name = obj["metadata"]["name"].as_str().unwrap_or_default();
    if api_services(state)
        .iter()
        .any(|s| s["metadata"]["name"] == name)
    {
        return Err(ApiError::already_exists(&t.res, name));
    }
    Err(ApiError::method_not_allowed())
}
