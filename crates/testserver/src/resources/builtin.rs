//! The built-in resources, read at start from kube-apiserver 1.20.2's discovery documents
//! (checked in under `testdata/`, made by `cargo xtask discovery-snapshot`, embedded here):
//! every group, version and resource with its kind, scope, verbs, short names, categories,
//! storage version hash and subresources, exactly as the real server lists them. What
//! discovery does not say (generation, field selectors, special handling) comes from
//! [`super::behaviour`].

use std::collections::BTreeMap;

use kcache_core::ApiResource;
use serde_json::Value;

use super::behaviour::behaviour;
use super::{ResourceInfo, ScalePaths, Subresources};

/// The real server's discovery: every `/api`, `/api/v1`, `/apis` and `/apis/G/V` document,
/// keyed by path.
pub(crate) const DISCOVERY_JSON: &str =
    include_str!("../../testdata/kube-apiserver-1.20.2/discovery.json");

/// Every built-in resource, one row per group/version/resource.
pub(super) fn builtins() -> Vec<ResourceInfo> {
    let docs: BTreeMap<String, Value> =
        serde_json::from_str(DISCOVERY_JSON).expect("the embedded discovery.json is valid JSON");
    docs.values()
        .filter(|doc| doc["kind"] == "APIResourceList")
        .flat_map(resource_list)
        .collect()
}

/// The rows of one `APIResourceList`: each resource with the subresource entries that follow
/// it.
fn resource_list(doc: &Value) -> Vec<ResourceInfo> {
    let gv = doc["groupVersion"].as_str().unwrap_or_default();
    let (group, version) = gv.rsplit_once('/').unwrap_or(("", gv));
    let entries = doc["resources"].as_array().cloned().unwrap_or_default();
    entries
        .iter()
        .filter(|e| !e["name"].as_str().unwrap_or_default().contains('/'))
        .map(|main| {
            let plural = main["name"].as_str().unwrap_or_default();
            let prefix = format!("{plural}/");
            let subs: Vec<&Value> = entries
                .iter()
                .filter(|e| e["name"].as_str().unwrap_or_default().starts_with(&prefix))
                .collect();
            row(group, version, main, &subs)
        })
        .collect()
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| s.as_str().map(str::to_string))
        .collect()
}

fn row(group: &str, version: &str, main: &Value, subs: &[&Value]) -> ResourceInfo {
    let plural = main["name"].as_str().unwrap_or_default();
    let names: Vec<String> = subs
        .iter()
        .filter_map(|s| {
            s["name"]
                .as_str()?
                .split_once('/')
                .map(|(_, n)| n.to_string())
        })
        .collect();
    let has = |n: &str| names.iter().any(|x| x == n);
    let b = behaviour(group, plural);
    let mut discovery = vec![main.clone()];
    discovery.extend(subs.iter().map(|s| (*s).clone()));
    ResourceInfo {
        api: ApiResource {
            group: group.into(),
            version: version.into(),
            kind: main["kind"].as_str().unwrap_or_default().into(),
            plural: plural.into(),
            namespaced: main["namespaced"].as_bool().unwrap_or_default(),
        },
        singular: main["singularName"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
        verbs: strings(&main["verbs"]),
        short_names: strings(&main["shortNames"]),
        categories: strings(&main["categories"]),
        subresources: Subresources {
            status: has("status"),
            scale: has("scale").then(|| ScalePaths {
                spec_replicas: ".spec.replicas".into(),
                status_replicas: ".status.replicas".into(),
                label_selector: None,
                label_selector_object: Some(".spec.selector".into()),
            }),
            approval: has("approval"),
            token: has("token"),
            names,
        },
        returns_deleted_object: b.returns_deleted_object,
        has_generation: b.generation,
        fields: b.fields.iter().map(|f| f.to_string()).collect(),
        storage_id: super::versions::storage_id(group, version, plural),
        builtin: true,
        special: b.special,
        discovery,
        schema: None,
        deprecation: super::deprecations::builtin(group, version, plural),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_resource_of_the_real_server_is_a_row() {
        let rows = builtins();
        assert_eq!(
            rows.iter()
                .filter(|r| r.api.group.is_empty() && r.api.version == "v1")
                .count(),
            17
        );
        let pods = rows.iter().find(|r| r.api.plural == "pods").unwrap();
        assert!(pods.subresources.status);
        assert!(pods.subresources.names.iter().any(|n| n == "exec"));
        let deploy = rows
            .iter()
            .find(|r| r.api.group == "apps" && r.api.plural == "deployments")
            .unwrap();
        assert!(deploy.subresources.scale.is_some());
        assert!(deploy.has_generation);
    }
}
