//! A HorizontalPodAutoscaler metric's two shapes: `autoscaling/v2beta2`'s (a `metric`
//! identifier and a `target`/`current` of a type) and `v2beta1`'s (flat `metricName`,
//! `targetValue`, `targetAverageValue`, ...), which `autoscaling/v1` also uses in its
//! annotations. Mapped field by field as Kubernetes' `autoscaling/v2beta1` conversion does.

use serde_json::{json, Map, Value};

/// Which kind of object a metric describes: its spec or its status.
#[derive(Clone, Copy)]
pub(super) enum Part {
    /// `spec.metrics[]`: targets.
    Spec,
    /// `status.currentMetrics[]`: current values.
    Status,
}

/// Moves `from[src]` into `to[dst]` when present.
fn put(to: &mut Map<String, Value>, dst: &str, from: &Value, src: &str) {
    if let Some(v) = from.get(src).filter(|v| !v.is_null()) {
        to.insert(dst.into(), v.clone());
    }
}

/// A v2beta1-shaped metric (spec or status) in the v2beta2 shape.
pub(super) fn to_v2beta2(m: &Value, part: Part) -> Value {
    let ty = m["type"].as_str().unwrap_or_default();
    let key = source_key(ty);
    let Some(key) = key else { return m.clone() };
    let src = &m[key];
    let mut out = Map::new();
    let mut metric = Map::new();
    let mut value = Map::new();
    match (key, part) {
        ("resource", Part::Spec) => {
            put(&mut out, "name", src, "name");
            put(
                &mut value,
                "averageUtilization",
                src,
                "targetAverageUtilization",
            );
            put(&mut value, "averageValue", src, "targetAverageValue");
            let t = if src["targetAverageUtilization"].is_null() {
                "AverageValue"
            } else {
                "Utilization"
            };
            value.insert("type".into(), json!(t));
        }
        ("resource", Part::Status) => {
            put(&mut out, "name", src, "name");
            put(
                &mut value,
                "averageUtilization",
                src,
                "currentAverageUtilization",
            );
            put(&mut value, "averageValue", src, "currentAverageValue");
        }
        ("object", _) => {
            put(&mut out, "describedObject", src, "target");
            put(&mut metric, "name", src, "metricName");
            put(&mut metric, "selector", src, "selector");
            put(&mut value, "averageValue", src, "averageValue");
            match part {
                Part::Spec => {
                    put(&mut value, "value", src, "targetValue");
                    let t = if src["averageValue"].is_null() {
                        "Value"
                    } else {
                        "AverageValue"
                    };
                    value.insert("type".into(), json!(t));
                }
                Part::Status => put(&mut value, "value", src, "currentValue"),
            }
        }
        ("pods", _) => {
            put(&mut metric, "name", src, "metricName");
            put(&mut metric, "selector", src, "selector");
            match part {
                Part::Spec => {
                    put(&mut value, "averageValue", src, "targetAverageValue");
                    value.insert("type".into(), json!("AverageValue"));
                }
                Part::Status => put(&mut value, "averageValue", src, "currentAverageValue"),
            }
        }
        _ => {
            put(&mut metric, "name", src, "metricName");
            put(&mut metric, "selector", src, "metricSelector");
            let (v, av) = match part {
                Part::Spec => ("targetValue", "targetAverageValue"),
                Part::Status => ("currentValue", "currentAverageValue"),
            };
            put(&mut value, "value", src, v);
            put(&mut value, "averageValue", src, av);
            if let Part::Spec = part {
                let t = if src[av].is_null() {
                    "Value"
                } else {
                    "AverageValue"
                };
                value.insert("type".into(), json!(t));
            }
        }
    }
    if key != "resource" {
        out.insert("metric".into(), Value::Object(metric));
    }
    let slot = match part {
        Part::Spec => "target",
        Part::Status => "current",
    };
    out.insert(slot.into(), Value::Object(value));
    json!({"type": ty, key: out})
}

/// A v2beta2-shaped metric (spec or status) in the v2beta1 shape.
pub(super) fn to_v2beta1(m: &Value, part: Part) -> Value {
    let ty = m["type"].as_str().unwrap_or_default();
    let Some(key) = source_key(ty) else {
        return m.clone();
    };
    let src = &m[key];
    let metric = &src["metric"];
    let value = match part {
        Part::Spec => &src["target"],
        Part::Status => &src["current"],
    };
    let mut out = Map::new();
    let (value_field, average_field) = match (key, part) {
        ("object", Part::Spec) => ("targetValue", "averageValue"),
        ("object", Part::Status) => ("currentValue", "averageValue"),
        (_, Part::Spec) => ("targetValue", "targetAverageValue"),
        (_, Part::Status) => ("currentValue", "currentAverageValue"),
    };
    match key {
        "resource" => {
            put(&mut out, "name", src, "name");
            let utilization = match part {
                Part::Spec => "targetAverageUtilization",
                Part::Status => "currentAverageUtilization",
            };
            put(&mut out, utilization, value, "averageUtilization");
        }
        "object" => {
            put(&mut out, "target", src, "describedObject");
            put(&mut out, "metricName", metric, "name");
            put(&mut out, "selector", metric, "selector");
            put(&mut out, value_field, value, "value");
        }
        "pods" => {
            put(&mut out, "metricName", metric, "name");
            put(&mut out, "selector", metric, "selector");
        }
        _ => {
            put(&mut out, "metricName", metric, "name");
            put(&mut out, "metricSelector", metric, "selector");
            put(&mut out, value_field, value, "value");
        }
    }
    put(&mut out, average_field, value, "averageValue");
    json!({"type": ty, key: out})
}

/// The field holding a metric of type `ty`.
fn source_key(ty: &str) -> Option<&'static str> {
    match ty {
        "Resource" => Some("resource"),
        "Object" => Some("object"),
        "Pods" => Some("pods"),
        "External" => Some("external"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_metric_type_round_trips_between_the_shapes() {
        let sel = json!({"matchLabels": {"a": "b"}});
        for m in [
            json!({"type": "Resource", "resource": {"name": "memory", "targetAverageValue": "1Gi"}}),
            json!({"type": "Resource", "resource": {"name": "cpu", "targetAverageUtilization": 50}}),
            json!({"type": "Pods", "pods": {"metricName": "qps", "targetAverageValue": "10", "selector": sel}}),
            json!({"type": "Object", "object": {"metricName": "hits", "targetValue": "5",
                "target": {"kind": "Service", "name": "s"}}}),
            json!({"type": "External", "external": {"metricName": "queue", "targetAverageValue": "3",
                "metricSelector": sel}}),
        ] {
            let v2 = to_v2beta2(&m, Part::Spec);
            assert_eq!(to_v2beta1(&v2, Part::Spec), m, "{v2}");
        }
        let v2 = to_v2beta2(
            &json!({"type": "Pods", "pods": {"metricName": "qps", "targetAverageValue": "10"}}),
            Part::Spec,
        );
        assert_eq!(
            v2,
            json!({"type": "Pods", "pods": {"metric": {"name": "qps"},
                   "target": {"type": "AverageValue", "averageValue": "10"}}})
        );
    }

    #[test]
    fn a_current_metric_round_trips_between_the_shapes() {
        let m = json!({"type": "Resource", "resource": {"name": "cpu",
                       "currentAverageUtilization": 40, "currentAverageValue": "100m"}});
        let v2 = to_v2beta2(&m, Part::Status);
        assert_eq!(
            v2["resource"]["current"],
            json!({"averageUtilization": 40, "averageValue": "100m"})
        );
        assert_eq!(to_v2beta1(&v2, Part::Status), m);
    }
}
