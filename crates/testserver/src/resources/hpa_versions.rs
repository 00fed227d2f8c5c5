//! HorizontalPodAutoscalers are one collection served as `autoscaling/v1`, `v2beta1` and
//! `v2beta2`, as on kube-apiserver 1.20.2. They are kept in the `v2beta2` shape, which holds
//! everything every version can say (the real server's etcd holds v1 with annotations, which
//! no client sees).
//!
//! `v1` has one metric, `targetCPUUtilizationPercentage` (a Resource cpu Utilization
//! metric), and carries the others in annotations, in the `v2beta1` shape:
//! `autoscaling.alpha.kubernetes.io/metrics` (spec), `.../current-metrics` (status),
//! `.../conditions` and `.../behavior`; `currentCPUUtilizationPercentage` is the current cpu
//! utilization. `v2beta1` differs from `v2beta2` in the metrics' shape ([`super::hpa_metrics`])
//! and keeps `behavior` in the annotation. Every version defaults `minReplicas` to 1 and, with
//! no metric at all, a cpu utilization of 80%.

use serde_json::{json, Value};

use super::hpa_behavior;
use super::hpa_metrics::{to_v2beta1, to_v2beta2, Part};

const METRICS: &str = "autoscaling.alpha.kubernetes.io/metrics";
const CURRENT_METRICS: &str = "autoscaling.alpha.kubernetes.io/current-metrics";
const CONDITIONS: &str = "autoscaling.alpha.kubernetes.io/conditions";
const BEHAVIOR: &str = "autoscaling.alpha.kubernetes.io/behavior";

/// An incoming HorizontalPodAutoscaler written as `from` (`apiVersion`) in the stored shape.
pub(super) fn to_storage(from: &str, mut obj: Value) -> Value {
    if !obj["spec"].is_object() {
        return obj;
    }
    match from {
        "autoscaling/v1" => v1_to_v2beta2(&mut obj),
        "autoscaling/v2beta1" => v2beta1_to_v2beta2(&mut obj),
        _ => {}
    }
    if obj["spec"]["minReplicas"].is_null() {
        obj["spec"]["minReplicas"] = json!(1);
    }
    if obj["spec"]["metrics"].as_array().is_none_or(Vec::is_empty) {
        obj["spec"]["metrics"] = json!([cpu_utilization(json!(80))]);
    }
    if from == "autoscaling/v2beta2" {
        hpa_behavior::default(&mut obj["spec"]["behavior"]);
    }
    with_zero_status(obj)
}

/// The status fields the real server writes even when nobody set them: the counts as 0, the
/// lists as `null` (Go fields without `omitempty`), in the stored (v2beta2) shape; v1 shows
/// the counts only.
pub(crate) fn zero_status() -> Value {
    json!({"currentReplicas": 0, "desiredReplicas": 0, "currentMetrics": null, "conditions": null})
}

/// `obj` with [`zero_status`]'s fields where its status lacks them.
fn with_zero_status(mut obj: Value) -> Value {
    if !obj["status"].is_object() {
        obj["status"] = json!({});
    }
    let status = obj["status"].as_object_mut().expect("made an object above");
    if let Value::Object(zero) = zero_status() {
        for (field, value) in zero {
            status.entry(field).or_insert(value);
        }
    }
    obj
}

/// A stored HorizontalPodAutoscaler as `to` (`apiVersion`) serves it.
pub(super) fn from_storage(to: &str, mut obj: Value) -> Value {
    match to {
        "autoscaling/v1" => v2beta2_to_v1(&mut obj),
        "autoscaling/v2beta1" => v2beta2_to_v2beta1(&mut obj),
        _ => {}
    }
    obj
}

/// A v2beta2 Resource cpu Utilization metric.
fn cpu_utilization(percent: Value) -> Value {
    json!({"type": "Resource", "resource": {"name": "cpu",
           "target": {"type": "Utilization", "averageUtilization": percent}}})
}

/// The utilization of a v2beta2 cpu Resource metric (its `target` or `current`).
fn cpu_percent(m: &Value, slot: &str) -> Option<Value> {
    let r = &m["resource"];
    (m["type"] == "Resource" && r["name"] == "cpu")
        .then(|| r[slot]["averageUtilization"].clone())
        .filter(|u| !u.is_null())
}

/// Removes annotation `key` and parses its JSON (a list, object or nothing).
fn take_annotation(obj: &mut Value, key: &str) -> Option<Value> {
    let annotations = obj
        .get_mut("metadata")?
        .get_mut("annotations")?
        .as_object_mut()?;
    let text = annotations.remove(key)?;
    if annotations.is_empty() {
        obj["metadata"]
            .as_object_mut()
            .map(|m| m.remove("annotations"));
    }
    serde_json::from_str(text.as_str()?).ok()
}

/// Sets annotation `key` to `value`'s JSON.
fn set_annotation(obj: &mut Value, key: &str, value: &Value) {
    set_annotation_text(obj, key, value.to_string());
}

/// Sets annotation `key` to `text`.
fn set_annotation_text(obj: &mut Value, key: &str, text: String) {
    if !obj["metadata"]["annotations"].is_object() {
        obj["metadata"]["annotations"] = json!({});
    }
    obj["metadata"]["annotations"][key] = json!(text);
}

/// Maps each metric of `list` with `f`.
fn map_metrics(list: &Value, f: impl Fn(&Value) -> Value) -> Option<Value> {
    list.as_array()
        .map(|l| Value::Array(l.iter().map(f).collect()))
}

fn v1_to_v2beta2(obj: &mut Value) {
    let others = take_annotation(obj, METRICS).unwrap_or(json!([]));
    let current = take_annotation(obj, CURRENT_METRICS).unwrap_or(json!([]));
    let conditions = take_annotation(obj, CONDITIONS);
    let behavior = take_annotation(obj, BEHAVIOR).map(|b| hpa_behavior::from_annotation(&b));
    let spec = obj["spec"].as_object_mut().expect("checked by to_storage");
    let mut metrics: Vec<Value> = others
        .as_array()
        .into_iter()
        .flatten()
        .map(|m| to_v2beta2(m, Part::Spec))
        .collect();
    if let Some(cpu) = spec.remove("targetCPUUtilizationPercentage") {
        metrics.push(cpu_utilization(cpu));
    }
    spec.insert("metrics".into(), Value::Array(metrics));
    if let Some(b) = behavior {
        spec.insert("behavior".into(), b);
    }
    let Some(status) = obj["status"].as_object_mut() else {
        return;
    };
    let mut currents: Vec<Value> = current
        .as_array()
        .into_iter()
        .flatten()
        .map(|m| to_v2beta2(m, Part::Status))
        .collect();
    if let Some(cpu) = status.remove("currentCPUUtilizationPercentage") {
        currents.push(json!({"type": "Resource", "resource": {"name": "cpu",
                              "current": {"averageUtilization": cpu}}}));
    }
    if !currents.is_empty() {
        status.insert("currentMetrics".into(), Value::Array(currents));
    }
    if let Some(c) = conditions {
        status.insert("conditions".into(), c);
    }
}

fn v2beta2_to_v1(obj: &mut Value) {
    let spec = obj["spec"].as_object_mut().map(std::mem::take);
    let mut spec = spec.unwrap_or_default();
    let metrics = spec.remove("metrics").unwrap_or(json!([]));
    let behavior = spec.remove("behavior");
    let (cpu, others) = split_cpu(&metrics, "target");
    if let Some(cpu) = cpu {
        spec.insert("targetCPUUtilizationPercentage".into(), cpu);
    }
    obj["spec"] = Value::Object(spec);
    if !others.is_empty() {
        let v1: Vec<Value> = others.iter().map(|m| to_v2beta1(m, Part::Spec)).collect();
        set_annotation(obj, METRICS, &Value::Array(v1));
    }
    if let Some(b) = behavior.filter(|b| !b.is_null()) {
        set_annotation_text(obj, BEHAVIOR, hpa_behavior::to_annotation(&b));
    }
    let Some(status) = obj["status"].as_object_mut() else {
        return;
    };
    let current = status.remove("currentMetrics").unwrap_or(json!([]));
    let conditions = status.remove("conditions");
    let (cpu, others) = split_cpu(&current, "current");
    if let Some(cpu) = cpu {
        status.insert("currentCPUUtilizationPercentage".into(), cpu);
    }
    if !others.is_empty() {
        let v1: Vec<Value> = others.iter().map(|m| to_v2beta1(m, Part::Status)).collect();
        set_annotation(obj, CURRENT_METRICS, &Value::Array(v1));
    }
    if let Some(c) = conditions.filter(|c| !c.is_null()) {
        set_annotation(obj, CONDITIONS, &c);
    }
}

/// The first cpu utilization among `metrics` (v1's own field) and the others.
fn split_cpu(metrics: &Value, slot: &str) -> (Option<Value>, Vec<Value>) {
    let mut cpu = None;
    let mut others = Vec::new();
    for m in metrics.as_array().into_iter().flatten() {
        match cpu_percent(m, slot) {
            Some(p) if cpu.is_none() => cpu = Some(p),
            _ => others.push(m.clone()),
        }
    }
    (cpu, others)
}

fn v2beta1_to_v2beta2(obj: &mut Value) {
    let behavior = take_annotation(obj, BEHAVIOR).map(|b| hpa_behavior::from_annotation(&b));
    convert_lists(obj, to_v2beta2);
    if let Some(b) = behavior {
        obj["spec"]["behavior"] = b;
    }
}

fn v2beta2_to_v2beta1(obj: &mut Value) {
    let behavior = obj["spec"]
        .as_object_mut()
        .and_then(|s| s.remove("behavior"));
    convert_lists(obj, to_v2beta1);
    if let Some(b) = behavior.filter(|b| !b.is_null()) {
        set_annotation_text(obj, BEHAVIOR, hpa_behavior::to_annotation(&b));
    }
}

/// Converts `spec.metrics` and `status.currentMetrics` with `f`.
fn convert_lists(obj: &mut Value, f: fn(&Value, Part) -> Value) {
    for (parent, field, part) in [
        ("spec", "metrics", Part::Spec),
        ("status", "currentMetrics", Part::Status),
    ] {
        if let Some(list) = map_metrics(&obj[parent][field], |m| f(m, part)) {
            if let Some(p) = obj[parent].as_object_mut() {
                p.insert(field.into(), list);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_v1_autoscaler_keeps_its_other_metrics_through_the_annotation() {
        let others = r#"[{"type":"Pods","pods":{"metricName":"qps","targetAverageValue":"10"}}]"#;
        let v1 = json!({"metadata": {"name": "h", "annotations": {METRICS: others}},
            "spec": {"maxReplicas": 3, "targetCPUUtilizationPercentage": 50,
                     "scaleTargetRef": {"kind": "Deployment", "name": "d"}},
            "status": {"currentReplicas": 1, "desiredReplicas": 1,
                       "currentCPUUtilizationPercentage": 20}});
        let stored = to_storage("autoscaling/v1", v1);
        assert!(stored["metadata"].get("annotations").is_none(), "{stored}");
        assert_eq!(stored["spec"]["minReplicas"], 1);
        assert_eq!(
            stored["spec"]["metrics"],
            json!([{"type": "Pods", "pods": {"metric": {"name": "qps"},
                     "target": {"type": "AverageValue", "averageValue": "10"}}},
                   cpu_utilization(json!(50))])
        );
        assert_eq!(
            stored["status"]["currentMetrics"][0]["resource"]["current"]["averageUtilization"],
            20
        );
        let back = from_storage("autoscaling/v1", stored.clone());
        assert_eq!(back["spec"]["targetCPUUtilizationPercentage"], 50);
        assert_eq!(back["status"]["currentCPUUtilizationPercentage"], 20);
        let annotated: Value =
            serde_json::from_str(back["metadata"]["annotations"][METRICS].as_str().unwrap())
                .unwrap();
        assert_eq!(annotated, serde_json::from_str::<Value>(others).unwrap());
        let b1 = from_storage("autoscaling/v2beta1", stored);
        assert_eq!(
            b1["spec"]["metrics"][1],
            json!({"type": "Resource", "resource": {"name": "cpu", "targetAverageUtilization": 50}})
        );
    }

    #[test]
    fn an_autoscaler_without_metrics_targets_80_percent_cpu() {
        let v2 = json!({"spec": {"maxReplicas": 3}});
        let stored = to_storage("autoscaling/v2beta2", v2);
        assert_eq!(
            stored["spec"]["metrics"],
            json!([cpu_utilization(json!(80))])
        );
        let v1 = from_storage("autoscaling/v1", stored);
        assert_eq!(v1["spec"]["targetCPUUtilizationPercentage"], 80);
        assert!(v1["metadata"].get("annotations").is_none(), "{v1}");
    }

    #[test]
    fn v2beta1_keeps_the_defaulted_behavior_in_the_annotation() {
        let behavior = json!({"scaleDown": {"stabilizationWindowSeconds": 60}});
        let stored = to_storage(
            "autoscaling/v2beta2",
            json!({"spec": {"maxReplicas": 3, "behavior": behavior}}),
        );
        let defaulted = stored["spec"]["behavior"].clone();
        assert_eq!(defaulted["scaleDown"]["stabilizationWindowSeconds"], 60);
        assert_eq!(defaulted["scaleUp"]["selectPolicy"], "Max");
        let b1 = from_storage("autoscaling/v2beta1", stored);
        assert!(b1["spec"].get("behavior").is_none());
        let text = b1["metadata"]["annotations"][BEHAVIOR].as_str().unwrap();
        assert!(
            text.starts_with(r#"{"ScaleUp":{"StabilizationWindowSeconds":0,"#),
            "{text}"
        );
        let back = to_storage("autoscaling/v2beta1", b1);
        assert_eq!(back["spec"]["behavior"], defaulted);
    }
}
