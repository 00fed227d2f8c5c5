//! A CRD's schemas as 1.20.2 stores them: decoded into its typed `JSONSchemaProps` and encoded
//! back, so a field that release does not know (`x-kubernetes-validations`, Kubernetes 1.25's
//! CEL rules, as newer generators write them) is dropped, and a bound written `0.0` comes back
//! `0`, as Go writes an integral `float64`.

use serde_json::{Number, Value};

/// The fields of 1.20.2's `apiextensions/v1.JSONSchemaProps`.
const KNOWN: &[&str] = &[
    "id",
    "$schema",
    "$ref",
    "description",
    "type",
    "format",
    "title",
    "default",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "maxLength",
    "minLength",
    "pattern",
    "maxItems",
    "minItems",
    "uniqueItems",
    "multipleOf",
    "enum",
    "maxProperties",
    "minProperties",
    "required",
    "items",
    "allOf",
    "oneOf",
    "anyOf",
    "not",
    "properties",
    "additionalProperties",
    "patternProperties",
    "dependencies",
    "additionalItems",
    "definitions",
    "externalDocs",
    "example",
    "nullable",
    "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-embedded-resource",
    "x-kubernetes-int-or-string",
    "x-kubernetes-list-map-keys",
    "x-kubernetes-list-type",
    "x-kubernetes-map-type",
];

/// The `float64` fields: the others holding numbers are integers, or raw JSON kept as sent.
const FLOATS: &[&str] = &["maximum", "minimum", "multipleOf"];

/// Rewrites every `openAPIV3Schema` of a stored (v1) CRD as 1.20.2 stores it.
pub(crate) fn store_crd_schemas(crd: &mut Value) {
    let Some(versions) = crd["spec"]
        .get_mut("versions")
        .and_then(Value::as_array_mut)
    else {
        return;
    };
    for v in versions {
        if let Some(root) = v
            .get_mut("schema")
            .and_then(|s| s.get_mut("openAPIV3Schema"))
        {
            typed(root);
        }
    }
}

/// One schema through the typed decode: unknown fields dropped, float bounds re-encoded, the
/// nested schemas likewise.
fn typed(schema: &mut Value) {
    let Some(m) = schema.as_object_mut() else {
        return;
    };
    m.retain(|k, _| KNOWN.contains(&k.as_str()));
    for f in FLOATS {
        if let Some(n) = m.get_mut(*f) {
            go_float(n);
        }
    }
    for f in ["not", "additionalProperties", "additionalItems"] {
        if let Some(s) = m.get_mut(f) {
            typed(s); // a bool (`additionalProperties: false`) is left as is
        }
    }
    match m.get_mut("items") {
        Some(Value::Array(all)) => all.iter_mut().for_each(typed),
        Some(one) => typed(one),
        None => {}
    }
    for f in ["allOf", "oneOf", "anyOf"] {
        if let Some(Value::Array(all)) = m.get_mut(f) {
            all.iter_mut().for_each(typed);
        }
    }
    for f in [
        "properties",
        "patternProperties",
        "definitions",
        "dependencies",
    ] {
        if let Some(Value::Object(named)) = m.get_mut(f) {
            // A dependency may be a list of property names: `typed` leaves it as is.
            named.values_mut().for_each(typed);
        }
    }
}

/// A `float64` as Go's `encoding/json` writes it: an integral value without a fraction.
fn go_float(n: &mut Value) {
    let Some(f) = n.as_f64().filter(|_| n.is_f64()) else {
        return;
    };
    // Integral floats below 2^53 are exact as integers; Go switches to exponents at 1e21.
    if f.fract() == 0.0 && f.abs() < 9_007_199_254_740_992.0 {
        *n = Value::Number(Number::from(f as i64));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn crd(schema: Value) -> Value {
        json!({"spec": {"versions": [{"name": "v1", "schema": {"openAPIV3Schema": schema}}]}})
    }

    #[test]
    fn unknown_fields_go_at_every_depth() {
        let mut c = crd(
            json!({"type": "object", "x-kubernetes-validations": [{"rule": "true"}],
            "properties": {"a": {"type": "string", "x-kubernetes-validations": [], "x-foo": 1},
                           "l": {"type": "array", "items": {"type": "integer", "bogus": true}}},
            "additionalProperties": false}),
        );
        store_crd_schemas(&mut c);
        assert_eq!(
            c["spec"]["versions"][0]["schema"]["openAPIV3Schema"],
            json!({"type": "object",
                "properties": {"a": {"type": "string"}, "l": {"type": "array", "items": {"type": "integer"}}},
                "additionalProperties": false})
        );
    }

    #[test]
    fn integral_float_bounds_lose_their_fraction() {
        let mut c = crd(
            json!({"type": "integer", "minimum": 0.0, "maximum": 2.5, "multipleOf": 3,
            "default": 1.0}),
        );
        store_crd_schemas(&mut c);
        let s = &c["spec"]["versions"][0]["schema"]["openAPIV3Schema"];
        let written = |f: &str| s[f].to_string();
        assert_eq!(written("minimum"), "0");
        assert_eq!(written("maximum"), "2.5");
        assert_eq!(written("multipleOf"), "3");
        // `default` is raw JSON in the typed struct: kept as sent.
        assert_eq!(written("default"), "1.0");
    }

    #[test]
    fn a_crd_without_schemas_is_left_alone() {
        let mut c = json!({"spec": {"versions": [{"name": "v1"}]}});
        let before = c.clone();
        store_crd_schemas(&mut c);
        assert_eq!(c, before);
    }
}
