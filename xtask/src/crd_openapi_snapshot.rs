//! The part of `cargo xtask discovery-snapshot` that records how kube-apiserver publishes a
//! CustomResourceDefinition in `/openapi/v2`: it creates two CRDs (one namespaced, one
//! cluster-scoped, both with `/status` and `/scale`) under names found nowhere else in the
//! document, waits until the document shows them, and keeps their paths, their list definition,
//! the properties the server adds to every object definition and the `_v2` definitions the
//! server adds once any CRD is published — with the CRDs' names turned into placeholders
//! (`{group}`, `{Kind}`, …), so kcache-testserver can publish any CRD the same way.

use std::time::{Duration, Instant};

use serde_json::{json, Map, Value};

use crate::snapshot_kubectl::Kubectl;

const GROUP: &str = "snapshot.kcache.dev";
const VERSION: &str = "v7alpha3";

/// The placeholders, each with the snapshot's name it stands for, longest first so that no
/// replacement cuts into another.
const PLACEHOLDERS: &[(&str, &str)] = &[
    ("dev.kcache.snapshot", "{definitionGroup}"),
    ("snapshot.kcache.dev", "{group}"),
    ("SnapshotKcacheDev", "{GroupName}"),
    ("snapshotKcacheDev", "{groupName}"),
    ("V7alpha3", "{Version}"),
    ("v7alpha3", "{version}"),
    ("Gizmo", "{Kind}"),
    ("gizmos", "{plural}"),
    ("Doodad", "{Kind}"),
    ("doodads", "{plural}"),
];

fn crd(kind: &str, plural: &str, scope: &str) -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("{plural}.{GROUP}")},
        "spec": {
            "group": GROUP,
            "scope": scope,
            "names": {"kind": kind, "plural": plural, "singular": kind.to_lowercase(),
                      "listKind": format!("{kind}List")},
            "versions": [{
                "name": VERSION, "served": true, "storage": true,
                "subresources": {"status": {},
                                 "scale": {"specReplicasPath": ".spec.replicas",
                                           "statusReplicasPath": ".status.replicas"}},
                "schema": {"openAPIV3Schema": {"type": "object"}},
            }],
        },
    })
}

/// Replaces the snapshot's names by placeholders in every string and key.
fn placeholders(v: &Value) -> Value {
    let swap = |s: &str| {
        PLACEHOLDERS
            .iter()
            .fold(s.to_string(), |s, (from, to)| s.replace(from, to))
    };
    match v {
        Value::String(s) => Value::String(swap(s)),
        Value::Array(a) => Value::Array(a.iter().map(placeholders).collect()),
        Value::Object(m) => {
            Value::Object(m.iter().map(|(k, v)| (swap(k), placeholders(v))).collect())
        }
        other => other.clone(),
    }
}

/// The paths under one CRD's group/version.
fn paths_of(doc: &Value, plural: &str) -> Map<String, Value> {
    doc["paths"]
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(p, _)| p.starts_with(&format!("/apis/{GROUP}/{VERSION}/")) && p.contains(plural))
        .map(|(p, item)| (p.clone(), item.clone()))
        .collect()
}

/// Creates the two CRDs, waits for them in `/openapi/v2`, and returns the templates.
pub(crate) fn templates(kubectl: &Kubectl, dir: &std::path::Path) -> Result<Value, String> {
    let before = kubectl.json(&["get", "--raw", "/openapi/v2"])?;
    for (kind, plural, scope) in [
        ("Gizmo", "gizmos", "Namespaced"),
        ("Doodad", "doodads", "Cluster"),
    ] {
        let file = dir.join(format!("{plural}.json"));
        std::fs::write(&file, crd(kind, plural, scope).to_string())
            .map_err(|e| format!("cannot write {}: {e}", file.display()))?;
        kubectl.text(&["apply", "-f", &file.to_string_lossy()])?;
    }
    let started = Instant::now();
    let doc = loop {
        let doc = kubectl.json(&["get", "--raw", "/openapi/v2"])?;
        let defs = &doc["definitions"];
        if defs[format!("dev.kcache.snapshot.{VERSION}.Gizmo")].is_object()
            && defs[format!("dev.kcache.snapshot.{VERSION}.Doodad")].is_object()
        {
            break doc;
        }
        if started.elapsed() > Duration::from_secs(60) {
            return Err("the snapshot CRDs did not appear in /openapi/v2 within 60 s".into());
        }
        std::thread::sleep(Duration::from_millis(500));
    };
    let added: Map<String, Value> = doc["definitions"]
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(name, _)| before["definitions"].get(name.as_str()).is_none())
        .filter(|(name, _)| !name.starts_with("dev.kcache.snapshot."))
        .map(|(name, def)| (name.clone(), def.clone()))
        .collect();
    let object = &doc["definitions"][format!("dev.kcache.snapshot.{VERSION}.Gizmo")];
    let list = &doc["definitions"][format!("dev.kcache.snapshot.{VERSION}.GizmoList")];
    let added_properties: Map<String, Value> = ["apiVersion", "kind", "metadata"]
        .iter()
        .map(|p| (p.to_string(), object["properties"][p].clone()))
        .collect();
    Ok(json!({
        "definitions": added,
        "objectProperties": placeholders(&Value::Object(added_properties)),
        "list": placeholders(list),
        "namespaced": placeholders(&Value::Object(paths_of(&doc, "gizmos"))),
        "cluster": placeholders(&Value::Object(paths_of(&doc, "doodads"))),
    }))
}
