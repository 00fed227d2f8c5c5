//! Pruning, as apiextensions-apiserver 1.20 does on every write of a custom resource whose
//! CRD does not preserve unknown fields: fields the schema does not specify are dropped,
//! unless `x-kubernetes-preserve-unknown-fields` (or `additionalProperties`) keeps them. The
//! root and every `x-kubernetes-embedded-resource` keep `apiVersion`, `kind` and `metadata`,
//! whose fields are cut down to ObjectMeta's ([`coerce_meta`]).

use serde_json::Value;

use crate::wire::is_object_meta_field;

/// Drops what `schema` does not specify from a whole custom resource.
pub(super) fn prune_root(obj: &mut Value, schema: &Value) {
    prune(obj, schema, true);
}

/// Drops the fields of `metadata` that are not ObjectMeta's.
pub(super) fn coerce_meta(meta: &mut Value) {
    if let Some(m) = meta.as_object_mut() {
        m.retain(|k, _| is_object_meta_field(k));
    }
}

/// Prunes `value` against `schema`; the unknown fields an `x-kubernetes-preserve-unknown-fields`
/// object keeps are kept whole.
fn prune(value: &mut Value, schema: &Value, resource_root: bool) {
    match value {
        Value::Object(fields) => {
            let preserve = schema["x-kubernetes-preserve-unknown-fields"] == true;
            let extra = &schema["additionalProperties"];
            fields.retain(|name, v| {
                if resource_root && matches!(name.as_str(), "apiVersion" | "kind" | "metadata") {
                    if name == "metadata" {
                        coerce_meta(v);
                    }
                    return true;
                }
                match schema["properties"].get(name) {
                    Some(p) => prune(v, p, embedded(p)),
                    None if extra.is_object() => prune(v, extra, embedded(extra)),
                    None => return preserve || *extra == Value::Bool(true),
                }
                true
            });
        }
        Value::Array(items) => {
            let item_schema = &schema["items"];
            if item_schema.is_object() {
                for item in items {
                    prune(item, item_schema, embedded(item_schema));
                }
            }
        }
        _ => {}
    }
}

fn embedded(schema: &Value) -> bool {
    schema["x-kubernetes-embedded-resource"] == true
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn unknown_fields_go_unless_preserved() {
        let schema = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
            "replicas": {"type": "integer"},
            "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
            "map": {"type": "object", "additionalProperties": {"type": "object", "properties": {"a": {"type": "string"}}}},
            "list": {"type": "array", "items": {"type": "object", "properties": {"a": {"type": "string"}}}},
            "emb": {"type": "object", "x-kubernetes-embedded-resource": true,
                    "properties": {"spec": {"type": "object"}}}}}}});
        let mut obj = json!({"apiVersion": "ex.com/v1", "kind": "Probe", "unknown": 5,
            "metadata": {"name": "p", "bogus": 1, "labels": {"a": "b"}},
            "spec": {"replicas": 1, "extra": true, "free": {"x": {"y": 1}},
                     "map": {"k": {"a": "x", "b": "y"}}, "list": [{"a": "x", "b": "y"}],
                     "emb": {"apiVersion": "v1", "kind": "X", "other": 1,
                             "metadata": {"name": "n", "uid": "u", "nope": 1}, "spec": {"z": 1}}}});
        prune_root(&mut obj, &schema);
        assert_eq!(
            obj,
            json!({"apiVersion": "ex.com/v1", "kind": "Probe",
                "metadata": {"name": "p", "labels": {"a": "b"}},
                "spec": {"replicas": 1, "free": {"x": {"y": 1}},
                         "map": {"k": {"a": "x"}}, "list": [{"a": "x"}],
                         "emb": {"apiVersion": "v1", "kind": "X",
                                 "metadata": {"name": "n", "uid": "u"}, "spec": {}}}})
        );
    }
}
