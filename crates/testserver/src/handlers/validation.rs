//! Validation of incoming objects: the checks a client can trip (names, required fields), with
//! causes worded like the real server's.

use kcache_core::StatusCause;
use serde_json::Value;

use super::event_validation::{is_event, validate_event};
use crate::http::query::go_quote;
use crate::resources::crd_schema;
use crate::resources::crd_schema::causes::{invalid, required};
use crate::resources::object_meta::{self, is_label, is_subdomain, LABEL_MSG, SUBDOMAIN_MSG};
use crate::resources::ResourceInfo;

/// Why `name` is not a path segment (`path.IsValidPathSegmentName`), if it is not.
fn path_segment_problem(name: &str) -> Option<String> {
    if name == "." || name == ".." {
        return Some(format!("may not be '{name}'"));
    }
    ["/", "%"]
        .iter()
        .find(|c| name.contains(**c))
        .map(|c| format!("may not contain '{c}'"))
}

/// The problems with `obj` as an object of `res` (empty: valid). `obj` has its final name.
pub(crate) fn validate(res: &ResourceInfo, obj: &Value) -> Vec<StatusCause> {
    let mut causes = Vec::new();
    let name = obj["metadata"]["name"].as_str().unwrap_or_default();
    if name.is_empty() {
        causes.push(required(
            "metadata.name",
            "name or generateName is required",
        ));
    } else if res.api.plural == "namespaces" {
        if !is_label(name) {
            causes.push(invalid("metadata.name", &go_quote(name), LABEL_MSG));
        }
    } else if res.api.group == "rbac.authorization.k8s.io" {
        // RBAC names are path segments (`system:controller:...`), as `ValidateRBACName` says.
        if let Some(why) = path_segment_problem(name) {
            causes.push(invalid("metadata.name", &go_quote(name), &why));
        }
    } else if !is_subdomain(name) {
        causes.push(invalid("metadata.name", &go_quote(name), SUBDOMAIN_MSG));
    }
    // CRDs are validated by apiextensions with apimachinery's generic ObjectMeta rules, which
    // leave out core's "standard finalizer" check (their cleanup finalizer is not one).
    let core_rules = res.builtin && res.api.group != "apiextensions.k8s.io";
    object_meta::validate(&obj["metadata"], "metadata", core_rules, &mut causes);
    let spec = &obj["spec"];
    match (res.api.group.as_str(), res.api.plural.as_str()) {
        ("", "pods") => match spec["containers"].as_array() {
            Some(cs) if !cs.is_empty() => {
                for (i, c) in cs.iter().enumerate() {
                    for f in ["name", "image"] {
                        if c[f].as_str().unwrap_or_default().is_empty() {
                            causes.push(required(&format!("spec.containers[{i}].{f}"), ""));
                        }
                    }
                }
            }
            _ => causes.push(required("spec.containers", "")),
        },
        ("", "services") => {
            let headless = spec["clusterIP"].as_str() == Some("None");
            let ports = spec["ports"].as_array().is_some_and(|p| !p.is_empty());
            if !headless && !ports && spec["type"].as_str() != Some("ExternalName") {
                causes.push(required("spec.ports", ""));
            }
            // Several ports need names to tell them apart.
            let all = spec["ports"].as_array().map_or(&[][..], Vec::as_slice);
            for (i, p) in all.iter().enumerate().filter(|_| all.len() > 1) {
                if p["name"].as_str().unwrap_or_default().is_empty() {
                    causes.push(required(&format!("spec.ports[{i}].name"), ""));
                }
            }
        }
        _ if is_event(res) => causes.extend(validate_event(obj)),
        ("apps", "deployments") if !spec["selector"].is_object() => {
            causes.push(required("spec.selector", ""));
        }
        ("apiextensions.k8s.io", "customresourcedefinitions") => {
            causes.extend(crd_schema::check_crd(spec));
            for f in ["group", "scope"] {
                if spec[f].as_str().unwrap_or_default().is_empty() {
                    causes.push(required(&format!("spec.{f}"), ""));
                }
            }
            for f in ["plural", "kind"] {
                if spec["names"][f].as_str().unwrap_or_default().is_empty() {
                    causes.push(required(&format!("spec.names.{f}"), ""));
                }
            }
            if spec["versions"].as_array().is_none_or(|v| v.is_empty()) {
                causes.push(required(
                    "spec.versions",
                    "must have exactly one version marked as storage version",
                ));
            }
            let expected = format!(
                "{}.{}",
                spec["names"]["plural"].as_str().unwrap_or_default(),
                spec["group"].as_str().unwrap_or_default()
            );
            if !name.is_empty() && name != expected {
                causes.push(invalid(
                    "metadata.name",
                    &go_quote(name),
                    "must be spec.names.plural+\".\"+spec.group",
                ));
            }
        }
        _ => {}
    }
    causes.extend(crd_schema::validate(res, obj));
    causes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::ResourceTable;
    use serde_json::json;

    #[test]
    fn names_and_required_fields() {
        let t = ResourceTable::new();
        let cm = t.get("", "v1", "configmaps").unwrap();
        assert!(validate(&cm, &json!({"metadata": {"name": "a.b-c"}})).is_empty());
        let missing = validate(&cm, &json!({"metadata": {}}));
        assert_eq!(missing[0].field, "metadata.name");
        assert_eq!(missing[0].type_, "FieldValueRequired");
        let bad = validate(&cm, &json!({"metadata": {"name": "Bad_Name"}}));
        assert!(bad[0]
            .message
            .starts_with("Invalid value: \"Bad_Name\": a lowercase RFC 1123 subdomain"));
        let ns = t.get("", "v1", "namespaces").unwrap();
        assert_eq!(
            validate(&ns, &json!({"metadata": {"name": "a.b"}})).len(),
            1
        );
        let pod = t.get("", "v1", "pods").unwrap();
        let p = validate(
            &pod,
            &json!({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c"}]}}),
        );
        assert_eq!(p[0].field, "spec.containers[0].image");
        let crd = t
            .get("apiextensions.k8s.io", "v1", "customresourcedefinitions")
            .unwrap();
        let c = validate(
            &crd,
            &json!({"metadata": {"name": "x"}, "spec": {"group": "g", "scope": "Namespaced",
            "names": {"plural": "ws", "kind": "W"},
            "versions": [{"name": "v1", "schema": {"openAPIV3Schema": {"type": "object"}}}]}}),
        );
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].field, "metadata.name");
    }
}
