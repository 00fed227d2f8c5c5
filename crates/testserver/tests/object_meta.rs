//! ObjectMeta validation: labels, annotations, owner references and finalizers checked on every
//! write as kube-apiserver 1.20.2 checks them, with its messages, for a built-in kind and for
//! an embedded resource of a custom resource (`x-kubernetes-embedded-resource`: any name, a
//! namespace that is a DNS label, no standard-finalizer rule). Several errors of one map come
//! in Go's map order on the real server, so causes are compared as sets.

use std::collections::BTreeSet;
use std::time::Duration;

use serde_json::{json, Value};

use crate::common::cluster;

/// The causes of a 422, as `field: message` lines.
fn causes(body: &Value) -> BTreeSet<String> {
    body["details"]["causes"]
        .as_array()
        .unwrap_or_else(|| panic!("no causes: {body}"))
        .iter()
        .map(|c| {
            format!(
                "{}: {}",
                c["field"].as_str().unwrap(),
                c["message"].as_str().unwrap()
            )
        })
        .collect()
}

const NAME_PART: &str = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const QUALIFIED: &str = "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')";

#[tokio::test]
async fn a_config_maps_metadata_is_validated_as_the_real_server_does() {
    let c = cluster().await;
    let ns = c.create_namespace("object-meta").await.unwrap();
    let long = "a".repeat(64);
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "m", "labels": {"a b": "c", "ok": long, "/n": "v", "good": "bad value"},
                     "annotations": {"A B": "x", "Upper/ok": "x"},
                     "finalizers": ["a", "kubernetes.io/x/y", "orphan", "foregroundDeletion"],
                     "ownerReferences": [{"apiVersion": "", "kind": "", "name": "", "uid": ""}]}});
    let r = c
        .client()
        .post(&format!("/api/v1/namespaces/{ns}/configmaps"), &cm)
        .await
        .unwrap();
    assert_eq!(r.status, 422, "{}", r.body);
    let want: BTreeSet<String> = [
        format!("metadata.labels: Invalid value: \"a b\": {NAME_PART}"),
        format!("metadata.labels: Invalid value: \"{long}\": must be no more than 63 characters"),
        "metadata.labels: Invalid value: \"/n\": prefix part must be non-empty".to_string(),
        "metadata.labels: Invalid value: \"bad value\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')".to_string(),
        format!("metadata.annotations: Invalid value: \"A B\": {NAME_PART}"),
        "metadata.ownerReferences.apiVersion: Invalid value: \"\": version must not be empty".to_string(),
        "metadata.ownerReferences.kind: Invalid value: \"\": kind must not be empty".to_string(),
        "metadata.ownerReferences.name: Invalid value: \"\": name must not be empty".to_string(),
        "metadata.ownerReferences.uid: Invalid value: \"\": uid must not be empty".to_string(),
        format!("metadata.finalizers: Invalid value: \"kubernetes.io/x/y\": {QUALIFIED}"),
        "metadata.finalizers: Invalid value: []string{\"a\", \"kubernetes.io/x/y\", \"orphan\", \"foregroundDeletion\"}: finalizer orphan and foregroundDeletion cannot be both set".to_string(),
        "metadata.finalizers[0]: Invalid value: \"a\": name is neither a standard finalizer name nor is it fully qualified".to_string(),
    ]
    .into_iter()
    .collect();
    assert_eq!(causes(&r.body), want);

    let fine = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "fine", "labels": {"app.kubernetes.io/name": "x", "empty": ""},
                     "annotations": {"Upper/ok": "x"}, "finalizers": ["example.com/f", "kubernetes"]}});
    let r = c
        .client()
        .post(&format!("/api/v1/namespaces/{ns}/configmaps"), &fine)
        .await
        .unwrap();
    assert_eq!(r.status, 201, "{}", r.body);
    let path = format!("/api/v1/namespaces/{ns}/configmaps/fine");
    let patch = json!({"metadata": {"finalizers": null}});
    let r = c
        .client()
        .patch(&path, "application/merge-patch+json", &patch)
        .await
        .unwrap();
    assert_eq!(r.status, 200, "{}", r.body);
}

#[tokio::test]
async fn an_embedded_resources_metadata_is_validated_as_the_real_server_does() {
    let c = cluster().await;
    let ns = c.create_namespace("embedded-meta").await.unwrap();
    let group = "embedded-meta.kcache.dev";
    let crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
    let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("boxes.{group}")},
        "spec": {"group": group, "scope": "Namespaced",
                 "names": {"kind": "Box", "plural": "boxes", "singular": "box", "listKind": "BoxList"},
                 "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {
                     "type": "object", "properties": {"spec": {"type": "object", "properties": {
                         "template": {"type": "object", "x-kubernetes-embedded-resource": true,
                                      "x-kubernetes-preserve-unknown-fields": true}}}}}}}]}});
    let r = c.client().post(crds, &crd).await.unwrap();
    assert_eq!(r.status, 201, "{}", r.body);
    let boxes = format!("/apis/{group}/v1/namespaces/{ns}/boxes");
    for _ in 0..100 {
        if c.client().get(&boxes).await.unwrap().status == 200 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let b = |name: &str, template: Value| {
        json!({"apiVersion": format!("{group}/v1"), "kind": "Box", "metadata": {"name": name},
               "spec": {"template": template}})
    };
    let bad = b(
        "bad",
        json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "Any_Name", "namespace": "NS!", "labels": {"a b": "c"},
                     "finalizers": ["a", "kubernetes.io/x/y"]}}),
    );
    let r = c.client().post(&boxes, &bad).await.unwrap();
    assert_eq!(r.status, 422, "{}", r.body);
    let want: BTreeSet<String> = [
        "spec.template.metadata.namespace: Invalid value: \"NS!\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')".to_string(),
        format!("spec.template.metadata.labels: Invalid value: \"a b\": {NAME_PART}"),
        format!("spec.template.metadata.finalizers: Invalid value: \"kubernetes.io/x/y\": {QUALIFIED}"),
    ]
    .into_iter()
    .collect();
    assert_eq!(causes(&r.body), want);
    let fine = b(
        "fine",
        json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "Any_Name", "finalizers": ["a"]}}),
    );
    let r = c.client().post(&boxes, &fine).await.unwrap();
    assert_eq!(r.status, 201, "{}", r.body);

    let del = c
        .client()
        .delete(&format!("{crds}/boxes.{group}"))
        .await
        .unwrap();
    assert_eq!(del.status, 200, "{}", del.body);
}
