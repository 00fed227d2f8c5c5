//! CRD admission's schema checks, as apiextensions-apiserver 1.20 makes them: a CRD that
//! prunes (every v1 CRD; a v1beta1 one with `preserveUnknownFields: false`) needs a
//! structural schema for each version: a root `type`, a `type` for every specified field,
//! `items` for every array, not both `properties` and `additionalProperties`, and `default`s
//! that are valid against their own schema. Errors are reported where the real server
//! reports them: under `spec.validation.openAPIV3Schema` when every version shares one
//! schema (how the internal version holds it), else under each version's.

use kcache_core::StatusCause;
use serde_json::Value;

use super::causes::{child, forbidden, required};
use super::validate::validate;

/// The schema problems of a CRD (in the stored v1 shape).
pub(crate) fn check_crd(spec: &Value) -> Vec<StatusCause> {
    let mut out = Vec::new();
    if spec["preserveUnknownFields"] == true {
        return out;
    }
    let versions = spec["versions"].as_array().map_or(&[][..], Vec::as_slice);
    let schema_of = |v: &Value| v["schema"]["openAPIV3Schema"].clone();
    let shared = versions
        .first()
        .map(schema_of)
        .filter(|first| versions.iter().all(|v| schema_of(v) == *first));
    match shared {
        Some(schema) if !schema.is_null() => {
            check_root(&schema, "spec.validation.openAPIV3Schema", &mut out);
        }
        _ => {
            for (i, v) in versions.iter().enumerate() {
                let base = format!("spec.versions[{i}].schema.openAPIV3Schema");
                match &v["schema"]["openAPIV3Schema"] {
                    Value::Null => out.push(required(&base, "schemas are required")),
                    schema => check_root(schema, &base, &mut out),
                }
            }
        }
    }
    out
}

fn check_root(schema: &Value, base: &str, out: &mut Vec<StatusCause>) {
    if schema["type"].as_str().is_none_or(str::is_empty) {
        out.push(required(
            &format!("{base}.type"),
            "must not be empty at the root",
        ));
    }
    check_node(schema, base, out);
}

/// Whether a specified field's schema may go without a `type`.
fn untyped_ok(schema: &Value) -> bool {
    schema["x-kubernetes-int-or-string"] == true
        || schema["x-kubernetes-preserve-unknown-fields"] == true
}

fn check_node(schema: &Value, path: &str, out: &mut Vec<StatusCause>) {
    if let Some(props) = schema["properties"].as_object() {
        if schema.get("additionalProperties").is_some() {
            out.push(forbidden(
                &format!("{path}.additionalProperties"),
                "additionalProperties and properties are mutual exclusive",
            ));
        }
        for (name, prop) in props {
            let p = format!("{path}.properties[{name}]");
            if prop["type"].as_str().is_none_or(str::is_empty) && !untyped_ok(prop) {
                out.push(required(
                    &format!("{p}.type"),
                    "must not be empty for specified object fields",
                ));
            }
            check_default(prop, &p, out);
            check_node(prop, &p, out);
        }
    }
    if schema["type"] == "array" && !schema["items"].is_object() {
        out.push(required(&format!("{path}.items"), "must be specified"));
    }
    if schema["items"].is_object() {
        let p = format!("{path}.items");
        if schema["items"]["type"].as_str().is_none_or(str::is_empty)
            && !untyped_ok(&schema["items"])
        {
            out.push(required(
                &format!("{p}.type"),
                "must not be empty for specified array items",
            ));
        }
        check_default(&schema["items"], &p, out);
        check_node(&schema["items"], &p, out);
    }
    if schema["additionalProperties"].is_object() {
        let p = format!("{path}.additionalProperties");
        check_default(&schema["additionalProperties"], &p, out);
        check_node(&schema["additionalProperties"], &p, out);
    }
}

/// A `default` must itself be valid against the schema it defaults.
fn check_default(schema: &Value, path: &str, out: &mut Vec<StatusCause>) {
    let Some(default) = schema.get("default") else {
        return;
    };
    let at = format!("{path}.default");
    for mut cause in validate(schema, default, "") {
        cause.field = match cause.field.as_str() {
            "" | "<nil>" => at.clone(),
            sub => child(&at, sub),
        };
        out.push(cause);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn crd(schema: Value) -> Value {
        json!({"versions": [{"name": "v1", "served": true, "storage": true,
                             "schema": {"openAPIV3Schema": schema}}]})
    }

    fn problems(spec: Value) -> Vec<String> {
        check_crd(&spec)
            .into_iter()
            .map(|c| format!("{}: {}", c.field, c.message))
            .collect()
    }

    #[test]
    fn the_real_servers_structural_errors() {
        assert_eq!(
            problems(json!({"versions": [{"name": "v1", "served": true, "storage": true}]})),
            ["spec.versions[0].schema.openAPIV3Schema: Required value: schemas are required"]
        );
        assert_eq!(
            problems(crd(json!({"type": "object", "properties": {"spec": {"properties": {"x": {"type": "string"}}}}}))),
            ["spec.validation.openAPIV3Schema.properties[spec].type: Required value: must not be empty for specified object fields"]
        );
        assert_eq!(
            problems(crd(json!({"properties": {"spec": {"type": "object"}}}))),
            ["spec.validation.openAPIV3Schema.type: Required value: must not be empty at the root"]
        );
        assert_eq!(
            problems(crd(json!({"type": "object", "properties": {"spec": {"type": "object",
                "properties": {"l": {"type": "array"}}}}}))),
            ["spec.validation.openAPIV3Schema.properties[spec].properties[l].items: Required value: must be specified"]
        );
        assert_eq!(
            problems(crd(json!({"type": "object", "properties": {"spec": {"type": "object",
                "properties": {"d": {"type": "integer", "default": "x"}}}}}))),
            ["spec.validation.openAPIV3Schema.properties[spec].properties[d].default: Invalid value: \"string\":  in body must be of type integer: \"string\""]
        );
        assert_eq!(
            problems(crd(json!({"type": "object", "properties": {"spec": {"type": "object",
                "properties": {"o": {"type": "object", "additionalProperties": false,
                                     "properties": {"a": {"type": "string"}}}}}}}))),
            ["spec.validation.openAPIV3Schema.properties[spec].properties[o].additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive"]
        );
    }

    #[test]
    fn versions_with_their_own_schemas_are_named_by_index() {
        let spec = json!({"versions": [
            {"name": "v1", "schema": {"openAPIV3Schema": {"type": "object"}}},
            {"name": "v2", "schema": {"openAPIV3Schema": {"properties": {}}}}]});
        assert_eq!(
            problems(spec),
            ["spec.versions[1].schema.openAPIV3Schema.type: Required value: must not be empty at the root"]
        );
        assert!(
            problems(json!({"preserveUnknownFields": true, "versions": [{"name": "v1"}]}))
                .is_empty()
        );
    }
}
