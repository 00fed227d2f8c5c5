//! The resources a CustomResourceDefinition object describes: one per served version, with the
//! names, scope, categories and subresources its spec gives.

use kcache_core::ApiResource;
use serde_json::Value;

use super::crd_schema::CrSchema;
use super::{ResourceInfo, ScalePaths, Special, Subresources};

/// Every verb a custom resource serves (discovery's order).
const STORED_VERBS: &[&str] = &[
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
];

/// The resources (one per served version) a CustomResourceDefinition object describes.
pub(super) fn resources(crd: &Value) -> Vec<ResourceInfo> {
    let spec = &crd["spec"];
    let group = spec["group"].as_str().unwrap_or_default();
    let names = &spec["names"];
    let plural = names["plural"].as_str().unwrap_or_default();
    let kind = names["kind"].as_str().unwrap_or_default();
    let singular = names["singular"]
        .as_str()
        .map(str::to_string)
        .unwrap_or_else(|| kind.to_lowercase());
    let strings = |v: &Value| -> Vec<String> {
        v.as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|s| s.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    };
    let short_names = strings(&names["shortNames"]);
    let categories = strings(&names["categories"]);
    let namespaced = spec["scope"].as_str() != Some("Cluster");
    let versions = spec["versions"].as_array().cloned().unwrap_or_default();
    versions
        .iter()
        .filter(|v| v["served"].as_bool().unwrap_or(true))
        .filter_map(|v| {
            let version = v["name"].as_str()?;
            Some(ResourceInfo {
                api: ApiResource {
                    group: group.into(),
                    version: version.into(),
                    kind: kind.into(),
                    plural: plural.into(),
                    namespaced,
                },
                singular: singular.clone(),
                verbs: STORED_VERBS.iter().map(|v| v.to_string()).collect(),
                short_names: short_names.clone(),
                categories: categories.clone(),
                subresources: Subresources {
                    status: v["subresources"]["status"].is_object(),
                    scale: scale_paths(&v["subresources"]["scale"]),
                    approval: false,
                    token: false,
                    names: v["subresources"]
                        .as_object()
                        .map(|m| m.keys().cloned().collect())
                        .unwrap_or_default(),
                },
                // 1.20.2's custom resource storage answers a DELETE with a `Status`.
                returns_deleted_object: false,
                has_generation: true,
                fields: Vec::new(),
                storage_id: format!("{group}/{plural}").into(),
                builtin: false,
                special: Special::None,
                discovery: Vec::new(),
                schema: Some(CrSchema::of_version(spec, v)),
                deprecation: super::deprecations::custom(spec, v),
            })
        })
        .collect()
}

/// A version's `subresources.scale`, when it has one.
fn scale_paths(v: &Value) -> Option<ScalePaths> {
    Some(ScalePaths {
        spec_replicas: v["specReplicasPath"].as_str()?.to_string(),
        status_replicas: v["statusReplicasPath"].as_str()?.to_string(),
        label_selector: v["labelSelectorPath"].as_str().map(str::to_string),
        label_selector_object: None,
    })
}
