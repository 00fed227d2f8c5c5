//! Server-side apply's field ownership (`metadata.managedFields`), as kube-apiserver 1.20's
//! field manager keeps it; run against the embedded server on every `cargo test` and against a
//! real kube-apiserver by `cargo xtask integration --envtest`.

use crate::common;

use common::*;
use kcache_testing::{RawResponse, TestCluster};
use serde_json::{json, Value};

const APPLY: &str = "application/apply-patch+yaml";

/// (manager, operation, fieldsV1) of each managedFields entry, in order.
fn owners(obj: &Value) -> Vec<(String, String, Value)> {
    obj["metadata"]["managedFields"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|e| {
                    (
                        e["manager"].as_str().unwrap_or_default().to_string(),
                        e["operation"].as_str().unwrap_or_default().to_string(),
                        e["fieldsV1"].clone(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

fn owner(m: &str, op: &str, fields: Value) -> (String, String, Value) {
    (m.into(), op.into(), fields)
}

async fn apply(c: &TestCluster, url: &str, body: &Value) -> RawResponse {
    c.client()
        .request(http::Method::PATCH, url, APPLY, body.to_string())
        .await
        .unwrap()
}

fn cm_config(ns: &str, data: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "owned", "namespace": ns}, "data": data})
}

#[tokio::test]
async fn writes_record_their_managers() {
    let c = cluster().await;
    let ns = c.create_namespace("apply-update").await.unwrap();
    let body = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "owned"}, "data": {"k": "v"}});
    let created = c
        .client()
        .post(&format!("{}?fieldManager=creator", cms(&ns)), &body)
        .await
        .unwrap();
    assert_eq!(created.status, 201, "{}", created.body);
    assert_eq!(
        owners(&created.body),
        [owner(
            "creator",
            "Update",
            json!({"f:data": {".": {}, "f:k": {}}})
        )]
    );
    let entry = &created.body["metadata"]["managedFields"][0];
    assert_eq!(entry["apiVersion"], "v1");
    assert_eq!(entry["fieldsType"], "FieldsV1");
    assert!(entry["time"].as_str().is_some_and(|t| t.ends_with('Z')));

    let url = format!("{}/owned", cms(&ns));
    let edited = c
        .client()
        .patch(
            &format!("{url}?fieldManager=editor"),
            "application/merge-patch+json",
            &json!({"data": {"k": "changed", "e": "1"}}),
        )
        .await
        .unwrap();
    assert_eq!(
        owners(&edited.body),
        [
            owner("creator", "Update", json!({"f:data": {}})),
            owner(
                "editor",
                "Update",
                json!({"f:data": {"f:e": {}, "f:k": {}}})
            ),
        ]
    );
    // On a built-in type an empty list strips them...
    let stripped = c
        .client()
        .patch(
            &format!("{url}?fieldManager=editor"),
            "application/merge-patch+json",
            &json!({"metadata": {"managedFields": []}}),
        )
        .await
        .unwrap();
    assert_eq!(stripped.status, 200, "{}", stripped.body);
    assert_eq!(owners(&stripped.body), []);
    // An object without entries gets none from updates, only from an apply.
    let again = c
        .client()
        .patch(
            &format!("{url}?fieldManager=editor"),
            "application/merge-patch+json",
            &json!({"data": {"r": "1"}}),
        )
        .await
        .unwrap();
    assert_eq!(owners(&again.body), []);
    let applied = apply(
        &c,
        &format!("{url}?fieldManager=ssa"),
        &json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "owned", "namespace": ns}, "data": {"n": "1"}}),
    )
    .await;
    assert_eq!(applied.status, 200, "{}", applied.body);
    assert_eq!(
        owners(&applied.body),
        [
            owner("ssa", "Apply", json!({"f:data": {"f:n": {}}})),
            owner(
                "before-first-apply",
                "Update",
                json!({"f:data": {".": {}, "f:e": {}, "f:k": {}, "f:r": {}}})
            ),
        ]
    );
    // ...and so does a list holding one empty entry, this write's fields included.
    let reset = c
        .client()
        .patch(
            &format!("{url}?fieldManager=editor"),
            "application/merge-patch+json",
            &json!({"metadata": {"managedFields": [{}]}, "data": {"s": "1"}}),
        )
        .await
        .unwrap();
    assert_eq!(reset.status, 200, "{}", reset.body);
    assert!(
        reset.body["metadata"].get("managedFields").is_none(),
        "{}",
        reset.body
    );
}

#[tokio::test]
async fn apply_owns_fields_conflicts_and_forces() {
    let c = cluster().await;
    let ns = c.create_namespace("apply-own").await.unwrap();
    let body = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "owned"}, "data": {"k": "v"}});
    let created = c
        .client()
        .post(&format!("{}?fieldManager=creator", cms(&ns)), &body)
        .await
        .unwrap();
    assert_eq!(created.status, 201, "{}", created.body);
    let url = format!("{}/owned?fieldManager=ssa", cms(&ns));

    let conflict = apply(&c, &url, &cm_config(&ns, json!({"k": "other"}))).await;
    assert_eq!(conflict.status, 409, "{}", conflict.body);
    assert_eq!(conflict.body["reason"], "Conflict");
    assert_eq!(
        conflict.body["message"],
        "Apply failed with 1 conflict: conflict with \"creator\" using v1: .data.k"
    );
    assert_eq!(
        conflict.body["details"]["causes"],
        json!([{"reason": "FieldManagerConflict", "message": "conflict with \"creator\" using v1", "field": ".data.k"}])
    );

    // Applying the value already there is no conflict: both managers own it.
    let shared = apply(&c, &url, &cm_config(&ns, json!({"k": "v", "a": "1"}))).await;
    assert_eq!(shared.status, 200, "{}", shared.body);
    assert_eq!(
        owners(&shared.body),
        [
            owner("ssa", "Apply", json!({"f:data": {"f:a": {}, "f:k": {}}})),
            owner("creator", "Update", json!({"f:data": {".": {}, "f:k": {}}})),
        ]
    );

    // Fields the applier stops applying go, unless another manager owns them.
    let dropped = apply(
        &c,
        &url,
        &json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "owned", "namespace": ns}}),
    )
    .await;
    assert_eq!(dropped.status, 200, "{}", dropped.body);
    assert_eq!(dropped.body["data"], json!({"k": "v"}));

    let forced = apply(
        &c,
        &format!("{url}&force=true"),
        &cm_config(&ns, json!({"k": "forced"})),
    )
    .await;
    assert_eq!(forced.status, 200, "{}", forced.body);
    assert_eq!(forced.body["data"], json!({"k": "forced"}));
    assert_eq!(
        owners(&forced.body),
        [
            owner("ssa", "Apply", json!({"f:data": {"f:k": {}}})),
            owner("creator", "Update", json!({"f:data": {}})),
        ]
    );
}

#[tokio::test]
async fn apply_merges_lists_by_key() {
    let c = cluster().await;
    let ns = c.create_namespace("apply-lists").await.unwrap();
    let url = |m: &str| format!("/api/v1/namespaces/{ns}/pods/p?fieldManager={m}");
    let pod = |containers: Value| {
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": ns},
               "spec": {"containers": containers}})
    };
    let first = apply(
        &c,
        &url("one"),
        &pod(json!([{"name": "a", "image": "busybox", "ports": [{"containerPort": 80}]}])),
    )
    .await;
    assert_eq!(first.status, 201, "{}", first.body);
    let fields = &owners(&first.body)[0];
    assert_eq!((fields.0.as_str(), fields.1.as_str()), ("one", "Apply"));
    assert_eq!(
        fields.2["f:spec"]["f:containers"]["k:{\"name\":\"a\"}"],
        json!({".": {}, "f:image": {}, "f:name": {},
               // A container port's protocol key defaults to TCP.
               "f:ports": {"k:{\"containerPort\":80,\"protocol\":\"TCP\"}": {".": {}, "f:containerPort": {}}}})
    );
    // The same container from another applier conflicts on the image only.
    let clash = apply(
        &c,
        &url("two"),
        &pod(json!([{"name": "a", "image": "nginx", "ports": [{"containerPort": 80}]}])),
    )
    .await;
    assert_eq!(clash.status, 409, "{}", clash.body);
    assert_eq!(
        clash.body["details"]["causes"][0]["field"],
        ".spec.containers[name=\"a\"].image"
    );
    assert!(clash.body["message"]
        .as_str()
        .unwrap()
        .starts_with("Apply failed with 1 conflict: conflict with \"one\""));
}

#[tokio::test]
async fn apply_checks_list_keys() {
    let c = cluster().await;
    let ns = c.create_namespace("apply-keys").await.unwrap();
    let url = format!("/api/v1/namespaces/{ns}/services/s?fieldManager=m");
    let svc = |ports: Value| {
        json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s", "namespace": ns},
               "spec": {"ports": ports}})
    };
    // A service port's protocol has no default: the key is incomplete.
    let missing = apply(&c, &url, &svc(json!([{"port": 80}]))).await;
    assert_eq!(missing.status, 500, "{}", missing.body);
    assert_eq!(
        missing.body["message"],
        "failed to create typed patch object: .spec.ports: element 0: associative list with keys has an element that omits key field \"protocol\" (and doesn't have default value)"
    );
    let twice = json!([{"port": 80, "protocol": "TCP"}, {"port": 80, "protocol": "TCP"}]);
    let dup = apply(&c, &url, &svc(twice)).await;
    assert_eq!(dup.status, 500, "{}", dup.body);
    assert_eq!(
        dup.body["message"],
        "failed to create typed patch object: .spec.ports: duplicate entries for key [port=80,protocol=\"TCP\"]"
    );
}

#[tokio::test]
async fn apply_checks_its_input() {
    let c = cluster().await;
    let ns = c.create_namespace("apply-input").await.unwrap();
    let mut with_fields = cm_config(&ns, json!({}));
    with_fields["metadata"]["managedFields"] = json!([{"manager": "x", "operation": "Apply"}]);
    let r = apply(
        &c,
        &format!("{}/owned?fieldManager=m", cms(&ns)),
        &with_fields,
    )
    .await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert_eq!(r.body["message"], "metadata.managedFields must be nil");
    let no_manager = apply(
        &c,
        &format!("{}/owned", cms(&ns)),
        &cm_config(&ns, json!({})),
    )
    .await;
    assert_eq!(no_manager.status, 422, "{}", no_manager.body);
}
