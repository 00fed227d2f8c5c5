//! The checks of the `x-kubernetes-*` extensions go-openapi does not know, run after the
//! schema's own: `x-kubernetes-list-type: set|map` lists hold no duplicates
//! (`ValidateListSetsAndMaps`), and an `x-kubernetes-embedded-resource` object names its
//! `apiVersion` and `kind`.

use std::collections::HashSet;

use kcache_core::StatusCause;
use serde_json::{Map, Value};

use super::causes::{child, duplicate, invalid, required};
use super::go_value;
use crate::http::query::go_quote;
use crate::resources::object_meta;

/// The extension problems of `value` at `path` against `schema`.
pub(super) fn validate(schema: &Value, value: &Value, path: &str, out: &mut Vec<StatusCause>) {
    match value {
        Value::Object(fields) => {
            if schema["x-kubernetes-embedded-resource"] == true {
                for f in ["apiVersion", "kind"] {
                    if fields
                        .get(f)
                        .and_then(Value::as_str)
                        .is_none_or(str::is_empty)
                    {
                        out.push(required(&child(path, f), "must not be empty"));
                    }
                }
                embedded_metadata(fields.get("metadata"), &child(path, "metadata"), out);
            }
            for (name, v) in fields {
                let sub = match schema["properties"].get(name) {
                    Some(p) => p,
                    None => &schema["additionalProperties"],
                };
                if sub.is_object() {
                    validate(sub, v, &child(path, name), out);
                }
            }
        }
        Value::Array(items) => {
            match schema["x-kubernetes-list-type"].as_str() {
                Some("set") => duplicates(items, path, |item| Some(item.clone()), out),
                Some("map") => {
                    let keys: Vec<&str> = schema["x-kubernetes-list-map-keys"]
                        .as_array()
                        .map(|k| k.iter().filter_map(Value::as_str).collect())
                        .unwrap_or_default();
                    duplicates(items, path, |item| map_key(item, &keys), out);
                }
                _ => {}
            }
            let item_schema = &schema["items"];
            if item_schema.is_object() {
                for (i, item) in items.iter().enumerate() {
                    validate(item_schema, item, &format!("{path}[{i}]"), out);
                }
            }
        }
        _ => {}
    }
}

/// A map list element's key: the values of its key fields.
fn map_key(item: &Value, keys: &[&str]) -> Option<Value> {
    let fields = item.as_object()?;
    let key: Map<String, Value> = keys
        .iter()
        .filter_map(|k| fields.get(*k).map(|v| (k.to_string(), v.clone())))
        .collect();
    Some(Value::Object(key))
}

/// One `Duplicate value` per repeated key, at its second occurrence.
fn duplicates(
    items: &[Value],
    path: &str,
    key_of: impl Fn(&Value) -> Option<Value>,
    out: &mut Vec<StatusCause>,
) {
    let mut seen = HashSet::new();
    let mut reported = HashSet::new();
    for (i, item) in items.iter().enumerate() {
        let Some(key) = key_of(item) else {
            continue;
        };
        let text = key.to_string();
        if !seen.insert(text.clone()) && reported.insert(text) {
            let shown = match &key {
                Value::Object(_) | Value::Array(_) => go_value::go_syntax(&key),
                scalar => go_value::bad_value(scalar),
            };
            out.push(duplicate(&format!("{path}[{i}]"), &shown));
        }
    }
}

/// An embedded resource's `metadata`, as apiextensions-apiserver validates it
/// (`ValidateEmbeddedResource`): any name, a namespace that is a DNS label, and ObjectMeta's
/// rules for labels, annotations, owner references and finalizers.
fn embedded_metadata(meta: Option<&Value>, path: &str, out: &mut Vec<StatusCause>) {
    let Some(meta) = meta.filter(|m| m.is_object()) else {
        return;
    };
    if let Some(ns) = meta["namespace"].as_str().filter(|ns| !ns.is_empty()) {
        if !object_meta::is_label(ns) {
            out.push(invalid(
                &child(path, "namespace"),
                &go_quote(ns),
                object_meta::LABEL_MSG,
            ));
        }
    }
    object_meta::validate(meta, path, false, out);
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check(schema: Value, value: Value) -> Vec<String> {
        let mut out = Vec::new();
        validate(&schema, &value, "", &mut out);
        out.into_iter()
            .map(|c| format!("{}: {}", c.field, c.message))
            .collect()
    }

    #[test]
    fn sets_and_maps_refuse_duplicates_once_each() {
        let set = json!({"type": "object", "properties": {"uniq": {"type": "array",
            "x-kubernetes-list-type": "set", "items": {"type": "string"}}}});
        assert_eq!(
            check(set, json!({"uniq": ["a", "a", "b", "a"]})),
            ["uniq[1]: Duplicate value: \"a\""]
        );
        let map = json!({"type": "object", "properties": {"mapl": {"type": "array",
            "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["k"],
            "items": {"type": "object", "properties": {"k": {"type": "string"}, "v": {"type": "string"}}}}}});
        assert_eq!(
            check(
                map.clone(),
                json!({"mapl": [{"k": "a"}, {"k": "a", "v": "x"}]})
            ),
            ["mapl[1]: Duplicate value: map[string]interface {}{\"k\":\"a\"}"]
        );
        assert!(check(map, json!({"mapl": [{"k": "a"}, {"k": "b"}]})).is_empty());
    }

    #[test]
    fn embedded_resources_need_api_version_and_kind() {
        let s = json!({"type": "object", "properties": {"emb": {"type": "object",
            "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true}}});
        assert_eq!(
            check(s.clone(), json!({"emb": {}})),
            [
                "emb.apiVersion: Required value: must not be empty",
                "emb.kind: Required value: must not be empty"
            ]
        );
        assert!(check(s, json!({"emb": {"apiVersion": "v1", "kind": "Pod"}})).is_empty());
    }
}
