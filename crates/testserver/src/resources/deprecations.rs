//! The deprecation warnings kube-apiserver 1.20.2 sends (a `Warning: 299 - "..."` header) with
//! every request to a deprecated version of a resource — errors and watches included: for the
//! built-in resources as the real server words them (`deprecations.json`, recorded by `cargo
//! xtask discovery-snapshot`), for a CRD's version marked `deprecated` its
//! `deprecationWarning`, or apiextensions-apiserver's default naming the version to use
//! instead (the first served version not deprecated, in [`super::version_priority`] order).

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde_json::Value;

use super::version_priority::by_priority;

const TABLE: &str = include_str!("../../testdata/kube-apiserver-1.20.2/deprecations.json");

/// The warning of a built-in `group/version/plural` (core: `version/plural`), if deprecated.
pub(super) fn builtin(group: &str, version: &str, plural: &str) -> Option<String> {
    static T: OnceLock<BTreeMap<String, String>> = OnceLock::new();
    let table = T.get_or_init(|| serde_json::from_str(TABLE).expect("deprecations.json is a map"));
    let key = if group.is_empty() {
        format!("{version}/{plural}")
    } else {
        format!("{group}/{version}/{plural}")
    };
    table.get(&key).cloned()
}

/// The warning of `version` (an entry of a CRD's `spec.versions`), if deprecated.
pub(super) fn custom(spec: &Value, version: &Value) -> Option<String> {
    if version["deprecated"] != true {
        return None;
    }
    if let Some(w) = version["deprecationWarning"].as_str() {
        return Some(w.to_string());
    }
    let group = spec["group"].as_str().unwrap_or_default();
    let kind = spec["names"]["kind"].as_str().unwrap_or_default();
    let name = version["name"].as_str().unwrap_or_default();
    let mut warning = format!("{group}/{name} {kind} is deprecated");
    let instead = spec["versions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|v| v["served"] == true && v["deprecated"] != true)
        .filter_map(|v| v["name"].as_str())
        .min_by(|a, b| by_priority(a, b));
    if let Some(instead) = instead {
        warning.push_str(&format!("; use {group}/{instead} {kind}"));
    }
    Some(warning)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn built_in_versions_say_what_the_real_server_says() {
        assert_eq!(
            builtin("extensions", "v1beta1", "ingresses").as_deref(),
            Some("extensions/v1beta1 Ingress is deprecated in v1.14+, unavailable in v1.22+; use networking.k8s.io/v1 Ingress")
        );
        assert_eq!(
            builtin("", "v1", "componentstatuses").as_deref(),
            Some("v1 ComponentStatus is deprecated in v1.19+")
        );
        assert_eq!(builtin("", "v1", "pods"), None);
    }

    #[test]
    fn a_deprecated_crd_version_names_the_best_one_not_deprecated() {
        let spec = json!({"group": "dep.example.com", "names": {"kind": "Gear"}, "versions": [
            {"name": "v1alpha1", "served": true, "deprecated": true},
            {"name": "v1beta1", "served": true, "deprecated": true, "deprecationWarning": "go away"},
            {"name": "v2alpha1", "served": true},
            {"name": "v1", "served": true},
            {"name": "v3", "served": false}]});
        let v = |i: usize| spec["versions"][i].clone();
        assert_eq!(
            custom(&spec, &v(0)).as_deref(),
            Some("dep.example.com/v1alpha1 Gear is deprecated; use dep.example.com/v1 Gear")
        );
        assert_eq!(custom(&spec, &v(1)).as_deref(), Some("go away"));
        assert_eq!(custom(&spec, &v(3)), None);
    }
}
