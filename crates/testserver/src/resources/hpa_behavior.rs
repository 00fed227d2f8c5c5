//! A HorizontalPodAutoscaler's `spec.behavior` as kube-apiserver 1.20.2 keeps it: defaulted
//! when written as `autoscaling/v2beta2` (each of `scaleUp` and `scaleDown` gets the fields it
//! lacks from the default rules: scale up by 4 pods or 100% per 15 s, no stabilization window;
//! scale down by 100% per 15 s, no window of its own), and carried through `v1` and `v2beta1`
//! in the `autoscaling.alpha.kubernetes.io/behavior` annotation, which the real server writes
//! with Go's field names (`ScaleUp`, `StabilizationWindowSeconds`, ...) in field order, absent
//! values as `null`, because the conversion marshals its internal struct, which has no JSON
//! tags.

use serde_json::{json, Map, Value};

use super::set_default::set_default;

/// The default rules of `direction` (`scaleUp` / `scaleDown`), field by field.
fn default_rules(direction: &str) -> [(&'static str, Value); 3] {
    if direction == "scaleUp" {
        [
            ("stabilizationWindowSeconds", json!(0)),
            ("selectPolicy", json!("Max")),
            (
                "policies",
                json!([{"type": "Pods", "value": 4, "periodSeconds": 15},
                       {"type": "Percent", "value": 100, "periodSeconds": 15}]),
            ),
        ]
    } else {
        [
            ("stabilizationWindowSeconds", Value::Null),
            ("selectPolicy", json!("Max")),
            (
                "policies",
                json!([{"type": "Percent", "value": 100, "periodSeconds": 15}]),
            ),
        ]
    }
}

/// Fills what `behavior` (a v2beta2 `spec.behavior`) lacks with the defaults.
pub(super) fn default(behavior: &mut Value) {
    let Some(b) = behavior.as_object_mut() else {
        return;
    };
    for direction in ["scaleUp", "scaleDown"] {
        let rules = b
            .entry(direction)
            .or_insert_with(|| json!({}))
            .as_object_mut();
        let Some(rules) = rules else { continue };
        for (field, value) in default_rules(direction) {
            set_default(rules, field, value);
        }
    }
}

/// (JSON name, Go name) of the rules' fields, in the Go struct's order.
const RULES: [(&str, &str); 3] = [
    ("stabilizationWindowSeconds", "StabilizationWindowSeconds"),
    ("selectPolicy", "SelectPolicy"),
    ("policies", "Policies"),
];
const POLICY: [(&str, &str); 3] = [
    ("type", "Type"),
    ("value", "Value"),
    ("periodSeconds", "PeriodSeconds"),
];
const DIRECTIONS: [(&str, &str); 2] = [("scaleUp", "ScaleUp"), ("scaleDown", "ScaleDown")];

/// `fields` of `obj` as a Go struct marshals: every field in order, by its Go name.
fn go_struct(
    obj: &Value,
    fields: &[(&str, &str)],
    value: impl Fn(&str, &Value) -> String,
) -> String {
    let members: Vec<String> = fields
        .iter()
        .map(|(json, go)| format!("\"{go}\":{}", value(json, &obj[*json])))
        .collect();
    format!("{{{}}}", members.join(","))
}

/// The annotation's text for a v2beta2 `behavior`.
pub(super) fn to_annotation(behavior: &Value) -> String {
    go_struct(behavior, &DIRECTIONS, |_, rules| {
        if !rules.is_object() {
            return "null".into();
        }
        go_struct(rules, &RULES, |field, v| match (field, v) {
            ("policies", Value::Array(policies)) => {
                let each: Vec<String> = policies
                    .iter()
                    .map(|p| go_struct(p, &POLICY, |_, v| v.to_string()))
                    .collect();
                format!("[{}]", each.join(","))
            }
            _ => v.to_string(),
        })
    })
}

/// A v2beta2 `behavior` from the annotation's JSON (Go's names, or the JSON names).
pub(super) fn from_annotation(annotation: &Value) -> Value {
    fn rename(v: &Value, fields: &[(&str, &str)], inner: &dyn Fn(&str, &Value) -> Value) -> Value {
        let Some(m) = v.as_object() else {
            return v.clone();
        };
        let mut out = Map::new();
        for (json, go) in fields {
            match m.get(*go).or_else(|| m.get(*json)) {
                None | Some(Value::Null) => {}
                Some(x) => {
                    out.insert(json.to_string(), inner(json, x));
                }
            }
        }
        Value::Object(out)
    }
    rename(annotation, &DIRECTIONS, &|_, rules| {
        rename(rules, &RULES, &|field, v| match (field, v) {
            ("policies", Value::Array(p)) => Value::Array(
                p.iter()
                    .map(|p| rename(p, &POLICY, &|_, v| v.clone()))
                    .collect(),
            ),
            _ => v.clone(),
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_fields_get_the_default_rules() {
        let mut b = json!({"scaleUp": {"selectPolicy": "Min"}});
        default(&mut b);
        assert_eq!(
            b,
            json!({"scaleUp": {"selectPolicy": "Min", "stabilizationWindowSeconds": 0,
                               "policies": [{"type": "Pods", "value": 4, "periodSeconds": 15},
                                            {"type": "Percent", "value": 100, "periodSeconds": 15}]},
                   "scaleDown": {"selectPolicy": "Max",
                                 "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}]}})
        );
    }

    #[test]
    fn the_annotation_has_go_names_in_field_order_and_reads_back() {
        let mut b = json!({"scaleUp": {"selectPolicy": "Min"}});
        default(&mut b);
        let text = to_annotation(&b);
        assert_eq!(
            text,
            r#"{"ScaleUp":{"StabilizationWindowSeconds":0,"SelectPolicy":"Min","Policies":[{"Type":"Pods","Value":4,"PeriodSeconds":15},{"Type":"Percent","Value":100,"PeriodSeconds":15}]},"ScaleDown":{"StabilizationWindowSeconds":null,"SelectPolicy":"Max","Policies":[{"Type":"Percent","Value":100,"PeriodSeconds":15}]}}"#
        );
        assert_eq!(from_annotation(&serde_json::from_str(&text).unwrap()), b);
        let json_names = json!({"scaleDown": {"selectPolicy": "Min"}});
        assert_eq!(from_annotation(&json_names), json_names);
    }
}
