//! Discovery documents (`/api`, `/apis`, resource lists) and `/version`, enough for kubectl.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use http::StatusCode;
use serde_json::{json, Value};

use crate::http::responses::{json_value, raw_json_response, ApiError, ApiResult};
use crate::resources::version_priority::by_priority;
use crate::resources::ResourceInfo;
use crate::state::ServerState;

/// The version this server claims: the kube-apiserver whose API it serves and is checked
/// against (the envtest tier runs 1.20.2). Clients gate features on it (aggregated
/// discovery, ephemeral containers, ... arrived later), so claiming a newer one would make
/// them ask for what is not here. The suffix marks it as not the real server.
pub(crate) const GIT_VERSION: &str = "v1.20.2-kcache";

/// `/version`, in `version.Info`'s field order, indented.
pub(crate) fn version() -> ApiResult {
    let info = json!({"major": "1", "minor": "20", "gitVersion": GIT_VERSION,
        "gitCommit": "0000000000000000000000000000000000000000", "gitTreeState": "clean",
        "buildDate": "2021-01-13T13:20:00Z", "goVersion": "rust", "compiler": "rustc",
        "platform": "linux/amd64"});
    // The API server writes it with `json.MarshalIndent`, whatever the request asks.
    let body = crate::wire::to_vec_shaped(&info, &crate::wire::VERSION_INFO);
    Ok(raw_json_response(
        StatusCode::OK,
        crate::wire::indent(&body),
    ))
}

/// `/api`.
pub(crate) fn core_versions(state: &ServerState) -> ApiResult {
    Ok(json_value(
        StatusCode::OK,
        &json!({"kind": "APIVersions", "versions": ["v1"],
                "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": state.address}]}),
    ))
}

/// The real server's `/apis` groups, in its order (by group priority), with their versions
/// and preferred versions.
fn builtin_groups() -> &'static [Value] {
    static GROUPS: OnceLock<Vec<Value>> = OnceLock::new();
    GROUPS.get_or_init(|| {
        let docs: Value = serde_json::from_str(crate::resources::builtin::DISCOVERY_JSON)
            .expect("the embedded discovery.json is valid JSON");
        docs["/apis"]["groups"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    })
}

/// Every served group's document: the built-in groups as the real server lists them, then the
/// groups CRDs add (their versions in kube-aware priority order, the first preferred).
fn groups(state: &ServerState) -> Vec<Value> {
    let mut docs: Vec<Value> = builtin_groups().to_vec();
    let mut custom: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for r in state.resources.all().iter().filter(|r| !r.builtin) {
        if builtin_groups()
            .iter()
            .any(|g| g["name"] == r.api.group.as_str())
        {
            continue;
        }
        let versions = custom.entry(r.api.group.clone()).or_default();
        if !versions.contains(&r.api.version) {
            versions.push(r.api.version.clone());
        }
    }
    for versions in custom.values_mut() {
        versions.sort_by(|a, b| by_priority(a, b));
    }
    docs.extend(custom.iter().map(|(g, v)| group_doc(g, v)));
    docs
}

fn group_doc(name: &str, versions: &[String]) -> Value {
    let vs: Vec<Value> = versions
        .iter()
        .map(|v| json!({"groupVersion": format!("{name}/{v}"), "version": v}))
        .collect();
    json!({"name": name, "versions": vs, "preferredVersion": vs[0]})
}

/// `/apis`.
pub(crate) fn group_list(state: &ServerState) -> ApiResult {
    let groups = groups(state);
    Ok(json_value(
        StatusCode::OK,
        &json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}),
    ))
}

/// `/apis/{group}`.
pub(crate) fn group(state: &ServerState, group: &str) -> ApiResult {
    let mut doc = groups(state)
        .into_iter()
        .find(|g| g["name"] == group)
        .ok_or_else(ApiError::no_route)?;
    doc["kind"] = json!("APIGroup");
    doc["apiVersion"] = json!("v1");
    Ok(json_value(StatusCode::OK, &doc))
}

/// A resource's discovery entries: itself, then its subresources by name (as the API server
/// lists them). Built-in resources' entries are the real server's.
fn resource_doc(r: &ResourceInfo) -> Vec<Value> {
    if !r.discovery.is_empty() {
        return r.discovery.clone();
    }
    let mut main = json!({"name": r.api.plural, "singularName": r.singular, "namespaced": r.api.namespaced,
        "kind": r.api.kind, "verbs": r.verbs});
    if !r.short_names.is_empty() {
        main["shortNames"] = json!(r.short_names);
    }
    if !r.categories.is_empty() {
        main["categories"] = json!(r.categories);
    }
    let sub = |name: &str, kind: &str, verbs: &[&str]| {
        json!({"name": format!("{}/{name}", r.api.plural), "singularName": "", "namespaced": r.api.namespaced,
            "kind": kind, "verbs": verbs})
    };
    let mut subs = Vec::new();
    if r.subresources.status {
        subs.push(sub("status", &r.api.kind, &["get", "patch", "update"]));
    }
    if r.subresources.scale.is_some() {
        let mut d = sub("scale", "Scale", &["get", "patch", "update"]);
        d["group"] = json!("autoscaling");
        d["version"] = json!("v1");
        subs.push(d);
    }
    if r.subresources.token {
        let mut d = sub("token", "TokenRequest", &["create"]);
        d["group"] = json!("authentication.k8s.io");
        d["version"] = json!("v1");
        subs.push(d);
    }
    if r.subresources.approval {
        subs.push(sub("approval", &r.api.kind, &["get", "patch", "update"]));
    }
    subs.sort_by(|a, b| a["name"].as_str().cmp(&b["name"].as_str()));
    let mut docs = vec![main];
    docs.extend(subs);
    docs
}

/// `/api/v1` and `/apis/{group}/{version}`.
pub(crate) fn resource_list(state: &ServerState, group: &str, version: &str) -> ApiResult {
    let resources: Vec<Value> = state
        .resources
        .all()
        .iter()
        .filter(|r| r.api.group == group && r.api.version == version)
        .flat_map(|r| resource_doc(r))
        .collect();
    if resources.is_empty() {
        return Err(ApiError::no_route());
    }
    let gv = if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    };
    let mut doc = json!({"kind": "APIResourceList", "groupVersion": gv, "resources": resources});
    if !group.is_empty() {
        // As kube-apiserver 1.20: `/api/v1` leaves apiVersion out, group versions carry it.
        doc["apiVersion"] = json!("v1");
    }
    Ok(json_value(StatusCode::OK, &doc))
}

fn gv_path(group: &str, version: &str) -> String {
    if group.is_empty() {
        format!("api/{version}")
    } else {
        format!("apis/{group}/{version}")
    }
}

/// `/openapi/v3`: one entry per served group-version, which 1.20.2 does not serve and today's
/// kubectl reads first: `kubectl explain` reads the kinds' schemas from it. No operation
/// accepts `fieldValidation` (1.20.2 ignores the parameter), so kubectl validates manifests
/// itself, against `/openapi/v2`, as it does with 1.20.2.
pub(crate) fn openapi_v3_root(state: &ServerState) -> ApiResult {
    let mut paths = serde_json::Map::new();
    for r in state.resources.all() {
        let p = gv_path(&r.api.group, &r.api.version);
        paths.insert(
            p.clone(),
            json!({"serverRelativeURL": format!("/openapi/v3/{p}")}),
        );
    }
    Ok(json_value(StatusCode::OK, &json!({"paths": paths})))
}

/// `/openapi/v3/{api/v1 | apis/group/version}`: each object path with a PATCH operation that
/// names its kind, and the schemas of the built-in kinds
/// ([`super::openapi_schemas`]).
pub(crate) fn openapi_v3_group_version(state: &ServerState, gv: &str) -> ApiResult {
    let mut paths = serde_json::Map::new();
    for r in state
        .resources
        .all()
        .iter()
        .filter(|r| gv_path(&r.api.group, &r.api.version) == gv)
    {
        let path = r
            .api
            .object_path(r.api.namespaced.then_some("{namespace}"), "{name}");
        let op = json!({"x-kubernetes-group-version-kind": {"group": r.api.group, "version": r.api.version, "kind": r.api.kind},
                        "parameters": [],
                        "responses": {}});
        paths.insert(path, json!({"patch": op}));
    }
    if paths.is_empty() {
        return Err(ApiError::no_route());
    }
    let (group, version) = match gv.split('/').collect::<Vec<_>>()[..] {
        ["api", version] => ("", version),
        [_, group, version] => (group, version),
        _ => return Err(ApiError::no_route()),
    };
    let mut schemas = super::openapi_schemas::schemas_for(group, version);
    for r in state
        .resources
        .all()
        .iter()
        .filter(|r| r.api.group == group && r.api.version == version)
    {
        schemas.extend(super::openapi_crd::v3_schemas(r));
    }
    Ok(json_value(
        StatusCode::OK,
        &json!({"openapi": "3.0.0", "info": {"title": "Kubernetes", "version": GIT_VERSION}, "paths": paths,
                "components": {"schemas": schemas}}),
    ))
}
