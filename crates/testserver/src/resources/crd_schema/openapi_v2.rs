//! A CRD's schema as `/openapi/v2` publishes it: apiextensions-apiserver 1.20.2 turns the
//! structural OpenAPI v3 schema into what OpenAPI v2 and kubectl's client-side validation can
//! read — `allOf`, `anyOf`, `oneOf`, `not`, `default` and `nullable` go; a nullable value, one
//! keeping unknown fields and an embedded resource lose `type`, `items` and `properties` (kubectl
//! would refuse what they allow); a nullable property is no longer `required`, and a nullable
//! `additionalProperties` schema becomes `true`.

use serde_json::{Map, Value};

const DROPPED: &[&str] = &["allOf", "anyOf", "oneOf", "not", "default", "nullable"];

fn is_set(schema: &Map<String, Value>, key: &str) -> bool {
    schema.get(key) == Some(&Value::Bool(true))
}

/// `schema` (a CRD version's `openAPIV3Schema`, or any schema within it) for OpenAPI v2.
pub(crate) fn to_v2(schema: &Value) -> Value {
    let Some(m) = schema.as_object() else {
        return schema.clone();
    };
    let mut out = m.clone();
    if is_set(m, "nullable")
        || is_set(m, "x-kubernetes-preserve-unknown-fields")
        || is_set(m, "x-kubernetes-embedded-resource")
    {
        for key in ["type", "items", "properties"] {
            out.remove(key);
        }
    }
    for key in DROPPED {
        out.remove(*key);
    }
    if let Some(Value::Object(props)) = out.get("properties") {
        let nullable: Vec<String> = props
            .iter()
            .filter(|(_, s)| s.as_object().is_some_and(|s| is_set(s, "nullable")))
            .map(|(name, _)| name.clone())
            .collect();
        let props = props.iter().map(|(k, s)| (k.clone(), to_v2(s))).collect();
        out.insert("properties".into(), Value::Object(props));
        if let Some(Value::Array(required)) = out.get_mut("required") {
            required.retain(|r| r.as_str().is_none_or(|r| !nullable.iter().any(|n| n == r)));
        }
    }
    if let Some(items) = out.get("items").map(to_v2) {
        out.insert("items".into(), items);
    }
    match out.get("additionalProperties") {
        Some(Value::Object(a)) if is_set(a, "nullable") => {
            out.insert("additionalProperties".into(), Value::Bool(true));
        }
        Some(a @ Value::Object(_)) => {
            let a = to_v2(a);
            out.insert("additionalProperties".into(), a);
        }
        _ => {}
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn what_openapi_v2_cannot_say_goes() {
        let schema = json!({
            "type": "object", "description": "A thing.", "required": ["a", "b"],
            "properties": {
                "a": {"type": "integer", "default": 3, "enum": [1, 2, 3], "format": "int32"},
                "b": {"type": "string", "nullable": true, "pattern": "^x"},
                "c": {"anyOf": [{"type": "integer"}, {"type": "string"}], "x-kubernetes-int-or-string": true},
                "d": {"type": "object", "x-kubernetes-embedded-resource": true,
                      "x-kubernetes-preserve-unknown-fields": true, "properties": {"x": {"type": "string"}}},
                "e": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["k"],
                      "items": {"type": "object", "required": ["k"], "properties": {"k": {"type": "string", "default": "z"}}}},
                "f": {"type": "object", "additionalProperties": {"type": "string", "nullable": true}},
                "g": {"type": "object", "additionalProperties": {"type": "string", "minLength": 1, "not": {"pattern": "^x"}}},
                "h": {"type": "string", "oneOf": [{"minLength": 1}], "allOf": [{"maxLength": 5}]},
            },
        });
        assert_eq!(
            to_v2(&schema),
            json!({
                "type": "object", "description": "A thing.", "required": ["a"],
                "properties": {
                    "a": {"type": "integer", "enum": [1, 2, 3], "format": "int32"},
                    "b": {"pattern": "^x"},
                    "c": {"x-kubernetes-int-or-string": true},
                    "d": {"x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true},
                    "e": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["k"],
                          "items": {"type": "object", "required": ["k"], "properties": {"k": {"type": "string"}}}},
                    "f": {"type": "object", "additionalProperties": true},
                    "g": {"type": "object", "additionalProperties": {"type": "string", "minLength": 1}},
                    "h": {"type": "string"},
                },
            })
        );
    }
}
