//! A custom resource checked against its version's `openAPIV3Schema`, as apiextensions-apiserver
//! 1.20's `ValidateCustomResource` does with go-openapi's schema validator: every problem of
//! the object is collected, each worded as that validator words it (`spec.replicas in body
//! should be greater than or equal to 1`). The order of the checks on one value follows
//! go-openapi's (type, allOf/anyOf/oneOf/not, string, format, number, array, enum, object);
//! array items are checked at the array's own path, as go-openapi names them.

use std::collections::HashMap;
use std::sync::LazyLock;

use kcache_core::StatusCause;
use parking_lot::Mutex;
use regex::Regex;
use serde_json::{Map, Value};

use crate::http::query::go_quote;

use super::causes::{child, invalid, not_supported, required};
use super::{formats, go_value};

/// Compiled `pattern`s (`None`: not a pattern the regex engine accepts; such a pattern checks
/// nothing, as CRD admission would have refused it on the real server).
static PATTERNS: LazyLock<Mutex<HashMap<String, Option<Regex>>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

/// The problems of `value` (at `path`, `""` for the root) against `schema`.
pub(crate) fn validate(schema: &Value, value: &Value, path: &str) -> Vec<StatusCause> {
    let mut out = Vec::new();
    check(schema, value, path, &mut out);
    out
}

/// JSON Schema's name for the type of a decoded value.
fn data_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_f64() => "number",
        Value::Number(_) => "integer",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn flag(schema: &Value, name: &str) -> bool {
    schema[name].as_bool() == Some(true)
}

fn check(schema: &Value, value: &Value, path: &str, out: &mut Vec<StatusCause>) {
    let Some(s) = schema.as_object() else {
        return;
    };
    if value.is_null() && flag(schema, "nullable") {
        return;
    }
    check_type(s, value, path, out);
    if value.is_null() {
        return;
    }
    check_composition(s, value, path, out);
    if let Value::String(text) = value {
        check_string(s, text, path, out);
    }
    if let Value::Number(n) = value {
        check_number(s, n, path, out);
    }
    if let Value::Array(items) = value {
        check_array(s, items, path, out);
    }
    if let Some(allowed) = s.get("enum").and_then(Value::as_array) {
        if !allowed.iter().any(|a| same(a, value)) {
            out.push(not_supported(path, value, allowed));
        }
    }
    if let Value::Object(fields) = value {
        check_object(s, fields, path, out);
    }
}

/// JSON equality with numbers compared by value (`1` equals `1.0`).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        _ => a == b,
    }
}

fn check_type(s: &Map<String, Value>, value: &Value, path: &str, out: &mut Vec<StatusCause>) {
    let actual = data_type(value);
    let (wanted, ok) = if s.get("x-kubernetes-int-or-string") == Some(&Value::Bool(true)) {
        ("integer,string", matches!(actual, "integer" | "string"))
    } else {
        match s.get("type").and_then(Value::as_str) {
            None | Some("") => return,
            Some(t) => (t, t == actual || (t == "number" && actual == "integer")),
        }
    };
    if !ok {
        let shown = go_quote(actual);
        out.push(invalid(
            path,
            &shown,
            &format!("{path} in body must be of type {wanted}: {shown}"),
        ));
    }
}

fn subschemas<'a>(s: &'a Map<String, Value>, key: &str) -> &'a [Value] {
    s.get(key)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// `allOf`, `anyOf`, `oneOf` and `not`; their own errors have no field (`<nil>`), as in
/// go-openapi.
fn check_composition(
    s: &Map<String, Value>,
    value: &Value,
    path: &str,
    out: &mut Vec<StatusCause>,
) {
    let composite = |what: &str| invalid("<nil>", "\"\"", &format!("\"{path}\" {what}"));
    let all = subschemas(s, "allOf");
    if !all.is_empty() {
        let before = out.len();
        for sub in all {
            check(sub, value, path, out);
        }
        if out.len() > before {
            out.push(composite("must validate all the schemas (allOf)"));
        }
    }
    let any = subschemas(s, "anyOf");
    if !any.is_empty() {
        let results: Vec<Vec<StatusCause>> =
            any.iter().map(|sub| validate(sub, value, path)).collect();
        if results.iter().all(|r| !r.is_empty()) {
            out.push(composite("must validate at least one schema (anyOf)"));
            out.extend(results.into_iter().next().unwrap_or_default());
        }
    }
    let one = subschemas(s, "oneOf");
    if !one.is_empty() {
        let results: Vec<Vec<StatusCause>> =
            one.iter().map(|sub| validate(sub, value, path)).collect();
        match results.iter().filter(|r| r.is_empty()).count() {
            1 => {}
            0 => {
                out.push(composite("must validate one and only one schema (oneOf)"));
                out.extend(results.into_iter().next().unwrap_or_default());
            }
            n => out.push(composite(&format!(
                "must validate one and only one schema (oneOf). Found {n} valid alternatives"
            ))),
        }
    }
    if let Some(not) = s.get("not") {
        if validate(not, value, path).is_empty() {
            out.push(composite("must not validate the schema (not)"));
        }
    }
}

fn limit(s: &Map<String, Value>, key: &str) -> Option<u64> {
    s.get(key).and_then(Value::as_u64)
}

fn check_string(s: &Map<String, Value>, text: &str, path: &str, out: &mut Vec<StatusCause>) {
    let shown = go_quote(text);
    let len = text.chars().count() as u64;
    if let Some(min) = limit(s, "minLength").filter(|m| len < *m) {
        let detail = format!("{path} in body should be at least {min} chars long");
        out.push(invalid(path, &shown, &detail));
    }
    if let Some(max) = limit(s, "maxLength").filter(|m| len > *m) {
        let detail = format!("{path} in body should be at most {max} chars long");
        out.push(invalid(path, &shown, &detail));
    }
    if let Some(pattern) = s.get("pattern").and_then(Value::as_str) {
        let mut cache = PATTERNS.lock();
        let re = cache
            .entry(pattern.to_string())
            .or_insert_with(|| Regex::new(pattern).ok());
        if re.as_ref().is_some_and(|re| !re.is_match(text)) {
            let detail = format!("{path} in body should match '{pattern}'");
            out.push(invalid(path, &shown, &detail));
        }
    }
    if let Some(format) = s.get("format").and_then(Value::as_str) {
        if !formats::valid(format, text) {
            let detail = format!("{path} in body must be of type {format}: {shown}");
            out.push(invalid(path, &shown, &detail));
        }
    }
}

fn check_number(
    s: &Map<String, Value>,
    n: &serde_json::Number,
    path: &str,
    out: &mut Vec<StatusCause>,
) {
    let shown = go_value::number(n);
    let x = n.as_f64().unwrap_or_default();
    let bound = |key: &str| s.get(key).and_then(Value::as_f64);
    if let Some(max) = bound("maximum") {
        let exclusive = s.get("exclusiveMaximum") == Some(&Value::Bool(true));
        if (exclusive && x >= max) || x > max {
            let words = if exclusive {
                "less than"
            } else {
                "less than or equal to"
            };
            let detail = format!("{path} in body should be {words} {}", go_value::float(max));
            out.push(invalid(path, &shown, &detail));
        }
    }
    if let Some(min) = bound("minimum") {
        let exclusive = s.get("exclusiveMinimum") == Some(&Value::Bool(true));
        if (exclusive && x <= min) || x < min {
            let words = if exclusive {
                "greater than"
            } else {
                "greater than or equal to"
            };
            let detail = format!("{path} in body should be {words} {}", go_value::float(min));
            out.push(invalid(path, &shown, &detail));
        }
    }
    if let Some(factor) = bound("multipleOf").filter(|f| *f > 0.0) {
        // go-openapi checks an integer against the factor truncated to an integer.
        let (fails, factor_shown) = match n.as_i64() {
            Some(i) => {
                let f = factor.trunc() as i64;
                (f != 0 && i % f != 0, f.to_string())
            }
            None => {
                let q = x / factor;
                ((q - q.round()).abs() > 1e-9, go_value::float(factor))
            }
        };
        if fails {
            let detail = format!("{path} in body should be a multiple of {factor_shown}");
            out.push(invalid(path, &shown, &detail));
        }
    }
}

fn check_array(s: &Map<String, Value>, items: &[Value], path: &str, out: &mut Vec<StatusCause>) {
    let len = items.len() as u64;
    if let Some(min) = limit(s, "minItems").filter(|m| len < *m) {
        let detail = format!("{path} in body should have at least {min} items");
        out.push(invalid(path, &len.to_string(), &detail));
    }
    if let Some(max) = limit(s, "maxItems").filter(|m| len > *m) {
        let detail = format!("{path} in body should have at most {max} items");
        out.push(invalid(path, &len.to_string(), &detail));
    }
    if s.get("uniqueItems") == Some(&Value::Bool(true))
        && items
            .iter()
            .enumerate()
            .any(|(i, a)| items[..i].iter().any(|b| same(a, b)))
    {
        let detail = format!("{path} in body shouldn't contain duplicates");
        out.push(invalid(path, "\"\"", &detail));
    }
    if let Some(item_schema) = s.get("items").filter(|i| i.is_object()) {
        for item in items {
            check(item_schema, item, path, out);
        }
    }
}

fn check_object(
    s: &Map<String, Value>,
    fields: &Map<String, Value>,
    path: &str,
    out: &mut Vec<StatusCause>,
) {
    let count = fields.len() as u64;
    // go-openapi reports the limit, not the count, as the bad value of these two.
    if let Some(max) = limit(s, "maxProperties").filter(|m| count > *m) {
        let detail = format!("{path} in body should have at most {max} properties");
        out.push(invalid(path, &max.to_string(), &detail));
    }
    if let Some(min) = limit(s, "minProperties").filter(|m| count < *m) {
        let detail = format!("{path} in body should have at least {min} properties");
        out.push(invalid(path, &min.to_string(), &detail));
    }
    for name in subschemas(s, "required").iter().filter_map(Value::as_str) {
        if !fields.contains_key(name) {
            out.push(required(&child(path, name), ""));
        }
    }
    let properties = s.get("properties").and_then(Value::as_object);
    for (name, value) in fields {
        match properties.and_then(|p| p.get(name)) {
            Some(prop) => check(prop, value, &child(path, name), out),
            None => {
                if let Some(extra) = s.get("additionalProperties").filter(|a| a.is_object()) {
                    check(extra, value, &child(path, name), out);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn messages(schema: Value, value: Value) -> Vec<String> {
        validate(&schema, &value, "")
            .into_iter()
            .map(|c| format!("{}: {}", c.field, c.message))
            .collect()
    }

    fn spec(props: Value, spec: Value) -> Vec<String> {
        messages(
            json!({"type": "object", "properties": {"spec": {"type": "object", "properties": props}}}),
            json!({"spec": spec}),
        )
    }

    #[test]
    fn minimum_and_maximum_as_the_real_server_words_them() {
        let p = json!({"replicas": {"type": "integer", "minimum": 1, "maximum": 10}});
        assert_eq!(
            spec(p.clone(), json!({"replicas": 0})),
            ["spec.replicas: Invalid value: 0: spec.replicas in body should be greater than or equal to 1"]
        );
        assert_eq!(
            spec(p.clone(), json!({"replicas": 11})),
            ["spec.replicas: Invalid value: 11: spec.replicas in body should be less than or equal to 10"]
        );
        assert!(spec(p, json!({"replicas": 5})).is_empty());
        let e = json!({"x": {"type": "integer", "minimum": 1, "exclusiveMinimum": true,
                              "maximum": 5, "exclusiveMaximum": true}});
        assert_eq!(
            spec(e.clone(), json!({"x": 1})),
            ["spec.x: Invalid value: 1: spec.x in body should be greater than 1"]
        );
        assert_eq!(
            spec(e, json!({"x": 5})),
            ["spec.x: Invalid value: 5: spec.x in body should be less than 5"]
        );
    }

    #[test]
    fn a_wrong_type_is_reported_and_the_other_checks_still_run() {
        let p = json!({"replicas": {"type": "integer", "minimum": 1}});
        assert_eq!(
            spec(p.clone(), json!({"replicas": "x"})),
            ["spec.replicas: Invalid value: \"string\": spec.replicas in body must be of type integer: \"string\""]
        );
        assert_eq!(
            spec(p, json!({"replicas": 0.5})),
            [
                "spec.replicas: Invalid value: \"number\": spec.replicas in body must be of type integer: \"number\"",
                "spec.replicas: Invalid value: 0.5: spec.replicas in body should be greater than or equal to 1"
            ]
        );
        let n = json!({"n": {"type": "number"}, "b": {"type": "boolean"}, "o": {"type": "object"}});
        assert!(spec(n.clone(), json!({"n": 3})).is_empty());
        assert_eq!(
            spec(n, json!({"b": "yes", "o": []})),
            [
                "spec.b: Invalid value: \"string\": spec.b in body must be of type boolean: \"string\"",
                "spec.o: Invalid value: \"array\": spec.o in body must be of type object: \"array\""
            ]
        );
    }

    #[test]
    fn nullable_allows_null_and_int_or_string_allows_both() {
        let p = json!({"s": {"type": "string", "nullable": true},
                       "ios": {"x-kubernetes-int-or-string": true}});
        assert!(spec(p.clone(), json!({"s": null, "ios": 1})).is_empty());
        assert!(spec(p.clone(), json!({"ios": "50%"})).is_empty());
        assert_eq!(
            spec(p, json!({"ios": 1.5})),
            ["spec.ios: Invalid value: \"number\": spec.ios in body must be of type integer,string: \"number\""]
        );
    }

    #[test]
    fn strings_lengths_patterns_formats_and_enums() {
        let p = json!({"name": {"type": "string", "minLength": 2, "maxLength": 4, "pattern": "^[a-z]+$"},
                       "color": {"type": "string", "enum": ["red", "green"]},
                       "num": {"type": "integer", "enum": [1, 2]},
                       "dt": {"type": "string", "format": "date-time"}});
        assert_eq!(
            spec(p.clone(), json!({"name": "a"})),
            ["spec.name: Invalid value: \"a\": spec.name in body should be at least 2 chars long"]
        );
        assert_eq!(
            spec(p.clone(), json!({"name": "abcde"})),
            ["spec.name: Invalid value: \"abcde\": spec.name in body should be at most 4 chars long"]
        );
        assert_eq!(
            spec(p.clone(), json!({"name": "AB"})),
            ["spec.name: Invalid value: \"AB\": spec.name in body should match '^[a-z]+$'"]
        );
        assert_eq!(
            spec(p.clone(), json!({"color": "blue"})),
            ["spec.color: Unsupported value: \"blue\": supported values: \"red\", \"green\""]
        );
        assert_eq!(
            spec(p.clone(), json!({"num": 3})),
            ["spec.num: Unsupported value: 3: supported values: \"1\", \"2\""]
        );
        assert_eq!(
            spec(p, json!({"dt": "yesterday"})),
            ["spec.dt: Invalid value: \"yesterday\": spec.dt in body must be of type date-time: \"yesterday\""]
        );
    }

    #[test]
    fn multiple_of_truncates_the_factor_for_integers() {
        let p = json!({"m": {"type": "number", "multipleOf": 2.5}});
        assert_eq!(
            spec(p.clone(), json!({"m": 3})),
            ["spec.m: Invalid value: 3: spec.m in body should be a multiple of 2"]
        );
        assert_eq!(
            spec(p.clone(), json!({"m": 3.5})),
            ["spec.m: Invalid value: 3.5: spec.m in body should be a multiple of 2.5"]
        );
        assert!(spec(p, json!({"m": 7.5})).is_empty());
    }

    #[test]
    fn arrays_are_checked_with_their_items_at_the_array_path() {
        let p = json!({"list": {"type": "array", "minItems": 1, "maxItems": 2, "items": {"type": "string"}},
                       "objs": {"type": "array", "items": {"type": "object", "required": ["k"],
                                "properties": {"k": {"type": "string"}}}}});
        assert_eq!(
            spec(p.clone(), json!({"list": []})),
            ["spec.list: Invalid value: 0: spec.list in body should have at least 1 items"]
        );
        assert_eq!(
            spec(p.clone(), json!({"list": ["a", "b", "c"]})),
            ["spec.list: Invalid value: 3: spec.list in body should have at most 2 items"]
        );
        assert_eq!(
            spec(p.clone(), json!({"list": [1]})),
            ["spec.list: Invalid value: \"integer\": spec.list in body must be of type string: \"integer\""]
        );
        assert_eq!(
            spec(p, json!({"objs": [{"v": "x"}]})),
            ["spec.objs.k: Required value"]
        );
    }

    #[test]
    fn objects_required_and_property_counts() {
        let p = json!({"props": {"type": "object", "minProperties": 1, "maxProperties": 2,
                                 "additionalProperties": {"type": "integer"}}});
        assert_eq!(
            spec(p.clone(), json!({"props": {}})),
            ["spec.props: Invalid value: 1: spec.props in body should have at least 1 properties"]
        );
        assert_eq!(
            spec(p.clone(), json!({"props": {"a": 1, "b": 2, "c": 3}})),
            ["spec.props: Invalid value: 2: spec.props in body should have at most 2 properties"]
        );
        assert_eq!(
            spec(p, json!({"props": {"a": "s"}})),
            ["spec.props.a: Invalid value: \"string\": spec.props.a in body must be of type integer: \"string\""]
        );
        let r = json!({"type": "object", "properties": {"spec": {"type": "object", "required": ["replicas"]}}});
        assert_eq!(
            messages(r, json!({"spec": {}})),
            ["spec.replicas: Required value"]
        );
    }

    #[test]
    fn compositions_report_without_a_field() {
        let p = json!({"any": {"type": "string", "anyOf": [{"minLength": 3}, {"pattern": "^x"}]},
                       "one": {"type": "integer", "oneOf": [{"minimum": 5}, {"maximum": 7}]},
                       "all": {"type": "integer", "allOf": [{"minimum": 5}, {"maximum": 7}]},
                       "notx": {"type": "string", "not": {"enum": ["bad"]}}});
        assert_eq!(
            spec(p.clone(), json!({"any": "yy"})),
            [
                "<nil>: Invalid value: \"\": \"spec.any\" must validate at least one schema (anyOf)",
                "spec.any: Invalid value: \"yy\": spec.any in body should be at least 3 chars long"
            ]
        );
        assert_eq!(
            spec(p.clone(), json!({"one": 6})),
            ["<nil>: Invalid value: \"\": \"spec.one\" must validate one and only one schema (oneOf). Found 2 valid alternatives"]
        );
        assert!(spec(p.clone(), json!({"one": 20})).is_empty());
        assert_eq!(
            spec(p.clone(), json!({"all": 8})),
            [
                "spec.all: Invalid value: 8: spec.all in body should be less than or equal to 7",
                "<nil>: Invalid value: \"\": \"spec.all\" must validate all the schemas (allOf)"
            ]
        );
        assert_eq!(
            spec(p, json!({"notx": "bad"})),
            ["<nil>: Invalid value: \"\": \"spec.notx\" must not validate the schema (not)"]
        );
    }
}
