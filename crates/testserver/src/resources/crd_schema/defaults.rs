//! Defaulting, as apiextensions-apiserver 1.20 does on writes and on reads from storage:
//! a property's `default` fills it where its object exists and the property is absent (or
//! null while not nullable); then nulls of non-nullable fields without a default are dropped
//! (`PruneNonNullableNullsWithoutDefaults`).

use serde_json::Value;

/// Applies `schema`'s defaults inside `value`.
pub(super) fn apply(value: &mut Value, schema: &Value) {
    match value {
        Value::Object(fields) => {
            if let Some(props) = schema["properties"].as_object() {
                for (name, prop) in props {
                    let Some(default) = prop.get("default") else {
                        continue;
                    };
                    let missing = match fields.get(name) {
                        None => true,
                        Some(Value::Null) => prop["nullable"] != true,
                        Some(_) => false,
                    };
                    if missing {
                        fields.insert(name.clone(), default.clone());
                    }
                }
            }
            let extra = &schema["additionalProperties"];
            for (name, v) in fields.iter_mut() {
                match schema["properties"].get(name) {
                    Some(prop) => apply(v, prop),
                    None if extra.is_object() => apply(v, extra),
                    None => {}
                }
            }
            fields.retain(|name, v| {
                let prop = match schema["properties"].get(name) {
                    Some(p) => p,
                    None => extra,
                };
                !(v.is_null()
                    && prop.is_object()
                    && prop["nullable"] != true
                    && prop.get("default").is_none())
            });
        }
        Value::Array(items) => {
            let item_schema = &schema["items"];
            if item_schema.is_object() {
                for item in items {
                    apply(item, item_schema);
                }
            }
        }
        _ => {}
    }
}

/// Whether `schema` has a `default` anywhere (only then do reads need defaulting).
pub(super) fn any(schema: &Value) -> bool {
    match schema {
        Value::Object(m) => m.contains_key("default") || m.values().any(any),
        Value::Array(items) => items.iter().any(any),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn defaults_fill_existing_objects_and_non_nullable_nulls() {
        let schema = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
            "defd": {"type": "string", "default": "dflt"},
            "nul": {"type": "string", "nullable": true, "default": "d"},
            "nonnul": {"type": "string"},
            "obj": {"type": "object", "properties": {"a": {"type": "string", "default": "A"}}},
            "absent": {"type": "object", "properties": {"a": {"type": "string", "default": "A"}}},
            "list": {"type": "array", "items": {"type": "object", "properties": {"n": {"type": "integer", "default": 1}}}},
            "map": {"type": "object", "additionalProperties": {"type": "string"}}}}}});
        let mut obj = json!({"spec": {"defd": null, "nul": null, "nonnul": null, "obj": {},
                                      "list": [{}, {"n": 2}], "map": {"a": null, "b": "x"}}});
        apply(&mut obj, &schema);
        assert_eq!(
            obj,
            json!({"spec": {"defd": "dflt", "nul": null, "obj": {"a": "A"},
                            "list": [{"n": 1}, {"n": 2}], "map": {"b": "x"}}})
        );
        assert!(any(&schema));
        assert!(!any(&json!({"type": "object"})));
    }
}
