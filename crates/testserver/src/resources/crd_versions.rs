//! CustomResourceDefinitions are one collection served as `apiextensions.k8s.io/v1` and
//! `v1beta1`, as on kube-apiserver 1.20.2: stored in the v1 shape, converted on the way in
//! and out for v1beta1, with each version's defaults.
//!
//! The shapes differ in where a version's schema, subresources and printer columns live:
//! v1 has them per version (`versions[].schema`, `.subresources`,
//! `.additionalPrinterColumns[].jsonPath`); v1beta1 may have them once for every version
//! (`validation`, `subresources`, `additionalPrinterColumns[].JSONPath`) and names its first
//! version in `version`. Reading as v1beta1 hoists what every version shares to the top, as the
//! real server's conversion does; v1beta1 also defaults `preserveUnknownFields` to true and
//! names its webhook config `webhookClientConfig`.

use serde_json::{json, Map, Value};

const GROUP: &str = "apiextensions.k8s.io";
/// The version CRDs are stored in.
const STORAGE_VERSION: &str = "apiextensions.k8s.io/v1";

/// An incoming CRD written as `from` (`apiVersion`) in the stored shape, defaulted.
pub(super) fn to_storage(from: &str, mut obj: Value) -> Value {
    if !obj["spec"].is_object() {
        return obj;
    }
    if from != STORAGE_VERSION {
        obj = v1beta1_to_v1(obj);
    }
    default_v1(&mut obj["spec"]);
    obj
}

/// A stored CRD in the v1beta1 shape (the only other version).
pub(super) fn from_storage(obj: Value) -> Value {
    v1_to_v1beta1(obj)
}

/// v1's defaults (`SetDefaults_CustomResourceDefinitionSpec`): the list kind, the singular
/// name and the `None` conversion strategy.
fn default_v1(spec: &mut Value) {
    let kind = spec["names"]["kind"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    if spec["names"].is_object() {
        if spec["names"]["listKind"].as_str().is_none_or(str::is_empty) && !kind.is_empty() {
            spec["names"]["listKind"] = json!(format!("{kind}List"));
        }
        if spec["names"]["singular"].as_str().is_none_or(str::is_empty) && !kind.is_empty() {
            spec["names"]["singular"] = json!(kind.to_lowercase());
        }
    }
    if !spec["conversion"].is_object() {
        spec["conversion"] = json!({"strategy": "None"});
    }
}

/// Renames a printer column's JSON path field.
fn columns(cols: &Value, from: &str, to: &str) -> Value {
    let Some(list) = cols.as_array() else {
        return cols.clone();
    };
    Value::Array(
        list.iter()
            .map(|c| {
                let mut c = c.clone();
                if let Some(m) = c.as_object_mut() {
                    if let Some(p) = m.remove(from) {
                        m.insert(to.into(), p);
                    }
                }
                c
            })
            .collect(),
    )
}

fn take(spec: &mut Map<String, Value>, field: &str) -> Option<Value> {
    spec.remove(field).filter(|v| !v.is_null())
}

/// A v1beta1 CRD (defaulted as v1beta1 is) in the v1 shape.
fn v1beta1_to_v1(mut obj: Value) -> Value {
    obj["apiVersion"] = json!(STORAGE_VERSION);
    let Some(spec) = obj["spec"].as_object_mut() else {
        return obj;
    };
    let version = take(spec, "version");
    let mut versions = spec
        .remove("versions")
        .and_then(|v| v.as_array().cloned())
        .unwrap_or_default();
    if versions.is_empty() {
        if let Some(name) = version {
            versions.push(json!({"name": name, "served": true, "storage": true}));
        }
    }
    let schema = take(spec, "validation");
    let subresources = take(spec, "subresources");
    let cols = take(spec, "additionalPrinterColumns");
    for v in versions.iter_mut().filter(|v| v.is_object()) {
        if let Some(s) = &schema {
            v["schema"] = s.clone();
        }
        if let Some(s) = &subresources {
            v["subresources"] = s.clone();
        }
        if let Some(c) = &cols {
            v["additionalPrinterColumns"] = c.clone();
        }
        if v["additionalPrinterColumns"].is_array() {
            v["additionalPrinterColumns"] =
                columns(&v["additionalPrinterColumns"], "JSONPath", "jsonPath");
        }
    }
    spec.insert("versions".into(), Value::Array(versions));
    if !spec.contains_key("preserveUnknownFields") || spec["preserveUnknownFields"].is_null() {
        spec.insert("preserveUnknownFields".into(), json!(true));
    }
    if spec["preserveUnknownFields"] == false {
        spec.remove("preserveUnknownFields");
    }
    if let Some(conv) = spec.get_mut("conversion").and_then(Value::as_object_mut) {
        let config = conv.remove("webhookClientConfig");
        let review = conv.remove("conversionReviewVersions");
        if config.is_some() || review.is_some() {
            let mut webhook = Map::new();
            if let Some(c) = config {
                webhook.insert("clientConfig".into(), c);
            }
            if let Some(r) = review {
                webhook.insert("conversionReviewVersions".into(), r);
            }
            conv.insert("webhook".into(), Value::Object(webhook));
        }
    }
    obj
}

/// A stored (v1) CRD in the v1beta1 shape: what every version shares hoisted to the top.
fn v1_to_v1beta1(mut obj: Value) -> Value {
    obj["apiVersion"] = json!(format!("{GROUP}/v1beta1"));
    let Some(spec) = obj["spec"].as_object_mut() else {
        return obj;
    };
    let mut versions = spec
        .get("versions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if let Some(first) = versions.first().and_then(|v| v["name"].as_str()) {
        spec.insert("version".into(), json!(first));
    }
    for (field, top) in [
        ("schema", "validation"),
        ("subresources", "subresources"),
        ("additionalPrinterColumns", "additionalPrinterColumns"),
    ] {
        let first = versions.first().map(|v| v[field].clone());
        let shared = first
            .filter(|f| !f.is_null())
            .filter(|f| versions.iter().all(|v| v[field] == *f));
        if let Some(value) = shared {
            for v in versions.iter_mut().filter_map(Value::as_object_mut) {
                v.remove(field);
            }
            spec.insert(top.into(), value);
        }
    }
    for v in versions.iter_mut() {
        if v["additionalPrinterColumns"].is_array() {
            v["additionalPrinterColumns"] =
                columns(&v["additionalPrinterColumns"], "jsonPath", "JSONPath");
        }
    }
    if let Some(cols) = spec.get("additionalPrinterColumns") {
        let renamed = columns(cols, "jsonPath", "JSONPath");
        spec.insert("additionalPrinterColumns".into(), renamed);
    }
    spec.insert("versions".into(), Value::Array(versions));
    if !spec.contains_key("preserveUnknownFields") {
        spec.insert("preserveUnknownFields".into(), json!(false));
    }
    if let Some(conv) = spec.get_mut("conversion").and_then(Value::as_object_mut) {
        if let Some(Value::Object(mut webhook)) = conv.remove("webhook") {
            if let Some(c) = webhook.remove("clientConfig") {
                conv.insert("webhookClientConfig".into(), c);
            }
            if let Some(r) = webhook.remove("conversionReviewVersions") {
                conv.insert("conversionReviewVersions".into(), r);
            }
        }
    }
    obj
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_v1beta1_crd_round_trips_through_the_v1_shape() {
        let b1 = json!({"apiVersion": "apiextensions.k8s.io/v1beta1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "ws.example.com"},
            "spec": {"group": "example.com", "scope": "Namespaced", "version": "v1",
                     "names": {"plural": "ws", "kind": "W"},
                     "validation": {"openAPIV3Schema": {"type": "object"}},
                     "subresources": {"status": {}},
                     "additionalPrinterColumns": [{"name": "Age", "type": "date", "JSONPath": ".metadata.creationTimestamp"}]}});
        let mut v1 = v1beta1_to_v1(b1);
        default_v1(&mut v1["spec"]);
        assert_eq!(v1["apiVersion"], "apiextensions.k8s.io/v1");
        assert_eq!(
            v1["spec"]["versions"],
            json!([{"name": "v1", "served": true, "storage": true,
                    "schema": {"openAPIV3Schema": {"type": "object"}}, "subresources": {"status": {}},
                    "additionalPrinterColumns": [{"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}]}])
        );
        assert_eq!(v1["spec"]["preserveUnknownFields"], true);
        assert_eq!(v1["spec"]["names"]["listKind"], "WList");
        assert_eq!(v1["spec"]["conversion"], json!({"strategy": "None"}));
        let back = v1_to_v1beta1(v1);
        assert_eq!(back["spec"]["version"], "v1");
        assert_eq!(back["spec"]["subresources"], json!({"status": {}}));
        assert_eq!(
            back["spec"]["additionalPrinterColumns"][0]["JSONPath"],
            ".metadata.creationTimestamp"
        );
        assert_eq!(
            back["spec"]["versions"],
            json!([{"name": "v1", "served": true, "storage": true}])
        );
    }

    #[test]
    fn versions_that_differ_keep_their_own_fields_in_v1beta1() {
        let v1 = json!({"apiVersion": "apiextensions.k8s.io/v1", "spec": {"versions": [
            {"name": "v2", "served": true, "storage": true, "subresources": {"status": {}}},
            {"name": "v1", "served": true, "storage": false}],
            "conversion": {"strategy": "Webhook", "webhook": {"conversionReviewVersions": ["v1"],
                           "clientConfig": {"url": "https://x"}}}}});
        let b1 = v1_to_v1beta1(v1);
        assert_eq!(b1["spec"]["version"], "v2");
        assert!(b1["spec"].get("subresources").is_none(), "{b1}");
        assert_eq!(
            b1["spec"]["versions"][0]["subresources"],
            json!({"status": {}})
        );
        assert_eq!(b1["spec"]["preserveUnknownFields"], false);
        assert_eq!(
            b1["spec"]["conversion"],
            json!({"strategy": "Webhook", "conversionReviewVersions": ["v1"],
                   "webhookClientConfig": {"url": "https://x"}})
        );
    }
}
