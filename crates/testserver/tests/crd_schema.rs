//! A CRD's `openAPIV3Schema` enforced on its custom resources: invalid writes (create, update,
//! every patch type, `/status`, `/scale`) refused with the real server's 422 `Invalid` Status,
//! unknown fields pruned, defaults applied, non-structural CRDs refused. Run on both servers:
//! the expected messages are kube-apiserver 1.20.2's, byte for byte.

use std::time::Duration;

use kcache_testing::TestCluster;
use serde_json::{json, Value};

use crate::common::{cluster, create_when_served};

const CRDS: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";

/// The sample-controller's Foo, with a few more rules.
fn foo_crd(group: &str) -> Value {
    json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("foos.{group}")},
        "spec": {"group": group, "scope": "Namespaced", "names": {"plural": "foos", "kind": "Foo"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas",
                                                          "statusReplicasPath": ".status.availableReplicas"}},
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "required": ["deploymentName"], "properties": {
                        "deploymentName": {"type": "string", "minLength": 2, "pattern": "^[a-z-]+$"},
                        "replicas": {"type": "integer", "minimum": 1, "maximum": 10},
                        "mode": {"type": "string", "enum": ["fast", "safe"], "default": "safe"},
                        "uid": {"type": "string", "format": "uuid"},
                        "ports": {"type": "array", "maxItems": 2, "x-kubernetes-list-type": "set",
                                  "items": {"type": "integer"}},
                        "limits": {"type": "object", "properties": {"cpu": {"x-kubernetes-int-or-string": true},
                                                                     "burst": {"type": "integer", "default": 2}}},
                        "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}},
                    "status": {"type": "object", "properties": {"availableReplicas": {"type": "integer", "minimum": 0}}}}}}}]}})
}

/// Creates the Foo CRD and waits until its resource is served; returns the Foos' URL.
async fn serve_foos(c: &TestCluster, ns: &str, group: &str) -> String {
    let r = c.client().post(CRDS, &foo_crd(group)).await.unwrap();
    assert_eq!(r.status, 201, "{}", r.body);
    let base = format!("/apis/{group}/v1/namespaces/{ns}/foos");
    for _ in 0..100 {
        if c.client().get(&base).await.unwrap().status == 200 {
            return base;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("foos.{group} is never served");
}

/// Deletes the Foo CRD (a real cluster keeps it otherwise).
async fn remove_foos(c: &TestCluster, group: &str) {
    let del = c
        .client()
        .delete(&format!("{CRDS}/foos.{group}"))
        .await
        .unwrap();
    assert_eq!(del.status, 200, "{}", del.body);
}

fn foo(group: &str, name: &str, spec: Value) -> Value {
    json!({"apiVersion": format!("{group}/v1"), "kind": "Foo", "metadata": {"name": name}, "spec": spec})
}

/// Asserts the 422 Status the real server answers for `causes` (`(field, message)`).
fn assert_invalid(
    r: &kcache_testing::RawResponse,
    group: &str,
    name: &str,
    causes: &[(&str, &str)],
) {
    assert_eq!(r.status, 422, "{}", r.body);
    let listed: Vec<String> = causes.iter().map(|(f, m)| format!("{f}: {m}")).collect();
    let joined = if listed.len() == 1 {
        listed[0].clone()
    } else {
        format!("[{}]", listed.join(", "))
    };
    let expected = json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": format!("Foo.{group} \"{name}\" is invalid: {joined}"), "reason": "Invalid",
        "details": {"name": name, "group": group, "kind": "Foo",
            "causes": causes.iter().map(|(f, m)| json!({
                "reason": if m.starts_with("Required") { "FieldValueRequired" }
                          else if m.starts_with("Unsupported") { "FieldValueNotSupported" }
                          else if m.starts_with("Duplicate") { "FieldValueDuplicate" }
                          else { "FieldValueInvalid" },
                "message": m, "field": f})).collect::<Vec<_>>()},
        "code": 422});
    assert_eq!(r.body, expected);
}

#[tokio::test]
async fn custom_resources_are_validated_against_their_schema() {
    let c = cluster().await;
    let ns = c.create_namespace("crd-schema").await.unwrap();
    let group = format!("{ns}.example.com");
    let base = serve_foos(&c, &ns, &group).await;
    let cases: &[(Value, &[(&str, &str)])] = &[
        (json!({"deploymentName": "web", "replicas": 0}),
         &[("spec.replicas", "Invalid value: 0: spec.replicas in body should be greater than or equal to 1")]),
        (json!({"deploymentName": "web", "replicas": 11}),
         &[("spec.replicas", "Invalid value: 11: spec.replicas in body should be less than or equal to 10")]),
        (json!({"replicas": 1}), &[("spec.deploymentName", "Required value")]),
        (json!({"deploymentName": "Web"}),
         &[("spec.deploymentName", "Invalid value: \"Web\": spec.deploymentName in body should match '^[a-z-]+$'")]),
        (json!({"deploymentName": "w"}),
         &[("spec.deploymentName", "Invalid value: \"w\": spec.deploymentName in body should be at least 2 chars long")]),
        (json!({"deploymentName": "web", "mode": "slow"}),
         &[("spec.mode", "Unsupported value: \"slow\": supported values: \"fast\", \"safe\"")]),
        (json!({"deploymentName": "web", "uid": "nope"}),
         &[("spec.uid", "Invalid value: \"nope\": spec.uid in body must be of type uuid: \"nope\"")]),
        (json!({"deploymentName": "web", "ports": [1, 2, 3]}),
         &[("spec.ports", "Invalid value: 3: spec.ports in body should have at most 2 items")]),
        (json!({"deploymentName": "web", "ports": [80, 80]}),
         &[("spec.ports[1]", "Duplicate value: 80")]),
        (json!({"deploymentName": "web", "limits": {"cpu": true}}),
         &[("spec.limits.cpu", "Invalid value: \"boolean\": spec.limits.cpu in body must be of type integer,string: \"boolean\"")]),
        (json!({"deploymentName": "web", "replicas": "two"}),
         &[("spec.replicas", "Invalid value: \"string\": spec.replicas in body must be of type integer: \"string\""),
           (".spec.replicas", "Invalid value: 0: .spec.replicas accessor error: two is of the type string, expected int64")]),
    ];
    for (spec, causes) in cases {
        let r = c
            .client()
            .post(&base, &foo(&group, "example-foo", spec.clone()))
            .await
            .unwrap();
        assert_invalid(&r, &group, "example-foo", causes);
    }
    let ok = c
        .client()
        .post(
            &base,
            &foo(
                &group,
                "example-foo",
                json!({"deploymentName": "web", "replicas": 1, "limits": {"cpu": "500m"}}),
            ),
        )
        .await
        .unwrap();
    assert_eq!(ok.status, 201, "{}", ok.body);
    remove_foos(&c, &group).await;
}

#[tokio::test]
async fn every_write_path_is_validated() {
    let c = cluster().await;
    let ns = c.create_namespace("crd-writes").await.unwrap();
    let group = format!("{ns}.example.com");
    let base = serve_foos(&c, &ns, &group).await;
    let created = c
        .client()
        .post(
            &base,
            &foo(&group, "f", json!({"deploymentName": "web", "replicas": 2})),
        )
        .await
        .unwrap();
    assert_eq!(created.status, 201, "{}", created.body);
    let zero = [(
        "spec.replicas",
        "Invalid value: 0: spec.replicas in body should be greater than or equal to 1",
    )];
    let url = format!("{base}/f");
    let mut put = created.body.clone();
    put["spec"]["replicas"] = json!(0);
    assert_invalid(
        &c.client().put(&url, &put).await.unwrap(),
        &group,
        "f",
        &zero,
    );
    let merge = json!({"spec": {"replicas": 0}});
    for (kind, body) in [
        ("application/merge-patch+json", merge.clone()),
        (
            "application/json-patch+json",
            json!([{"op": "replace", "path": "/spec/replicas", "value": 0}]),
        ),
    ] {
        assert_invalid(
            &c.client().patch(&url, kind, &body).await.unwrap(),
            &group,
            "f",
            &zero,
        );
    }
    let apply = foo(&group, "f", json!({"deploymentName": "web", "replicas": 0}));
    let r = c
        .client()
        .patch(
            &format!("{url}?fieldManager=t&force=true"),
            "application/apply-patch+yaml",
            &apply,
        )
        .await
        .unwrap();
    assert_invalid(&r, &group, "f", &zero);
    let r = c
        .client()
        .patch(
            &format!("{url}/scale"),
            "application/merge-patch+json",
            &merge,
        )
        .await
        .unwrap();
    assert_invalid(&r, &group, "f", &zero);
    let r = c
        .client()
        .patch(
            &format!("{url}/status"),
            "application/merge-patch+json",
            &json!({"status": {"availableReplicas": -1}}),
        )
        .await
        .unwrap();
    assert_invalid(&r, &group, "f", &[
        ("status.availableReplicas", "Invalid value: -1: status.availableReplicas in body should be greater than or equal to 0"),
        (".status.availableReplicas", "Invalid value: -1: should be a non-negative integer"),
    ]);
    remove_foos(&c, &group).await;
}

#[tokio::test]
async fn unknown_fields_are_pruned_and_defaults_applied() {
    let c = cluster().await;
    let ns = c.create_namespace("crd-prune").await.unwrap();
    let group = format!("{ns}.example.com");
    let base = serve_foos(&c, &ns, &group).await;
    let mut body = foo(
        &group,
        "f",
        json!({"deploymentName": "web", "unknown": 1, "uid": null,
        "limits": {}, "extra": {"kept": {"deep": true}}}),
    );
    body["topLevel"] = json!("dropped");
    body["metadata"]["bogus"] = json!("dropped");
    let r = c.client().post(&base, &body).await.unwrap();
    assert_eq!(r.status, 201, "{}", r.body);
    let want = json!({"deploymentName": "web", "mode": "safe", "limits": {"burst": 2},
                      "extra": {"kept": {"deep": true}}});
    assert_eq!(r.body["spec"], want);
    assert!(r.body.get("topLevel").is_none(), "{}", r.body);
    assert!(r.body["metadata"].get("bogus").is_none(), "{}", r.body);
    let read = c.client().get(&format!("{base}/f")).await.unwrap();
    assert_eq!(read.body["spec"], want);
    remove_foos(&c, &group).await;
}

#[tokio::test]
async fn crds_without_structural_schemas_are_refused() {
    let c = cluster().await;
    let ns = c.create_namespace("crd-structural").await.unwrap();
    let group = format!("{ns}.example.com");
    let name = format!("bars.{group}");
    let crd = |schema: Option<Value>| {
        let mut version = json!({"name": "v1", "served": true, "storage": true});
        if let Some(s) = schema {
            version["schema"] = json!({"openAPIV3Schema": s});
        }
        json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": name}, "spec": {"group": group, "scope": "Namespaced",
            "names": {"plural": "bars", "kind": "Bar"}, "versions": [version]}})
    };
    let cases = [
        (
            None,
            "spec.versions[0].schema.openAPIV3Schema",
            "FieldValueRequired",
            "Required value: schemas are required",
        ),
        (
            Some(json!({"properties": {"spec": {"type": "object"}}})),
            "spec.validation.openAPIV3Schema.type",
            "FieldValueRequired",
            "Required value: must not be empty at the root",
        ),
        (
            Some(
                json!({"type": "object", "properties": {"spec": {"properties": {"x": {"type": "string"}}}}}),
            ),
            "spec.validation.openAPIV3Schema.properties[spec].type",
            "FieldValueRequired",
            "Required value: must not be empty for specified object fields",
        ),
        (
            Some(json!({"type": "object", "properties": {"l": {"type": "array"}}})),
            "spec.validation.openAPIV3Schema.properties[l].items",
            "FieldValueRequired",
            "Required value: must be specified",
        ),
        (
            Some(
                json!({"type": "object", "properties": {"d": {"type": "integer", "default": "x"}}}),
            ),
            "spec.validation.openAPIV3Schema.properties[d].default",
            "FieldValueInvalid",
            "Invalid value: \"string\":  in body must be of type integer: \"string\"",
        ),
    ];
    for (schema, field, reason, message) in cases {
        let r = c.client().post(CRDS, &crd(schema)).await.unwrap();
        assert_eq!(r.status, 422, "{}", r.body);
        assert_eq!(r.body["reason"], "Invalid");
        assert_eq!(
            r.body["message"],
            format!("CustomResourceDefinition.apiextensions.k8s.io \"{name}\" is invalid: {field}: {message}")
        );
        assert_eq!(
            r.body["details"]["causes"],
            json!([{"reason": reason, "message": message, "field": field}])
        );
    }
}

/// A custom resource written through a version other than the storage version is validated in
/// that version and then pruned against the storage version's schema, as 1.20.2 stores it: a
/// field only the written version knows is gone from the answer (kube-rs's crd_derive_multi
/// example relies on it), also after a CRD update moves the storage version.
#[tokio::test]
async fn a_write_through_another_version_is_pruned_to_the_storage_schema() {
    let c = cluster().await;
    let ns = c.create_namespace("crd-storage-prune").await.unwrap();
    let group = format!("{ns}.example.com");
    let spec_with = |field: &str| {
        json!({"openAPIV3Schema": {"type": "object", "properties": {"spec": {"type": "object",
            "required": [field],
            "properties": {"name": {"type": "string"}, field: {"type": "integer"}}}}}})
    };
    let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("widgets.{group}")},
        "spec": {"group": group, "scope": "Namespaced", "names": {"plural": "widgets", "kind": "Widget"},
            "versions": [
                {"name": "v1", "served": true, "storage": false, "schema": spec_with("old")},
                {"name": "v2", "served": true, "storage": true, "schema": spec_with("new")}]}});
    let r = c.client().post(CRDS, &crd).await.unwrap();
    assert_eq!(r.status, 201, "{}", r.body);
    let base = format!("/apis/{group}/v1/namespaces/{ns}/widgets");
    let widget = json!({"apiVersion": format!("{group}/v1"), "kind": "Widget",
        "metadata": {"name": "w"}, "spec": {"name": "n", "old": 1, "new": 2}});
    let created = create_when_served(&c, &base, &widget).await;
    // `new` is unknown to v1 and `old` to the storage version v2: only `name` is kept (the
    // object is validated in v1, which requires `old`, before it is pruned for storage).
    assert_eq!(created["spec"], json!({"name": "n"}), "{created}");

    // Once v1 is the storage version (a CRD update), a write through v2 loses `new`.
    let crd_path = format!("{CRDS}/widgets.{group}");
    let mut put = None;
    for _ in 0..20 {
        let mut cur = c.client().get(&crd_path).await.unwrap().body;
        cur["spec"]["versions"][0]["storage"] = json!(true);
        cur["spec"]["versions"][1]["storage"] = json!(false);
        let r = c.client().put(&crd_path, &cur).await.unwrap();
        // A real cluster's controller may write the status meanwhile: read again.
        if r.status != 409 {
            put = Some(r);
            break;
        }
    }
    let put = put.expect("the CRD update lands");
    assert_eq!(put.status, 200, "{}", put.body);
    let v2 = format!("/apis/{group}/v2/namespaces/{ns}/widgets");
    let mut second = widget.clone();
    second["apiVersion"] = json!(format!("{group}/v2"));
    // The real server serves the updated CRD a moment later: one new object per try.
    let mut spec = Value::Null;
    for i in 0..50 {
        second["metadata"]["name"] = json!(format!("w{i}"));
        let r = c.client().post(&v2, &second).await.unwrap();
        assert_eq!(r.status, 201, "{}", r.body);
        spec = r.body["spec"].clone();
        if spec == json!({"name": "n"}) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(spec, json!({"name": "n"}));
    let del = c.client().delete(&crd_path).await.unwrap();
    assert_eq!(del.status, 200, "{}", del.body);
}

/// 1.20.2 decodes a CRD into its typed `JSONSchemaProps`: a field it does not know (1.25's
/// `x-kubernetes-validations`, as newer generators write it) is dropped at every depth, and a
/// float bound written `0.0` is written back `0`.
#[tokio::test]
async fn crd_schemas_are_stored_as_the_typed_decode_leaves_them() {
    let c = cluster().await;
    let group = "typed.kcache.dev";
    let mut crd = foo_crd(group);
    let root = &mut crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"];
    root["x-kubernetes-validations"] = json!([{"rule": "self.metadata.name != 'x'"}]);
    root["properties"]["spec"]["properties"]["ratio"] = json!({"type": "number",
        "minimum": 0.0, "maximum": 2.5,
        "x-kubernetes-validations": [{"rule": "self < 2.0"}], "x-unknown": true});
    let r = c.client().post(CRDS, &crd).await.unwrap();
    assert_eq!(r.status, 201, "{}", r.body);
    let got = c
        .client()
        .get(&format!("{CRDS}/foos.{group}"))
        .await
        .unwrap();
    assert_eq!(got.status, 200, "{}", got.body);
    let root = &got.body["spec"]["versions"][0]["schema"]["openAPIV3Schema"];
    assert!(root.get("x-kubernetes-validations").is_none(), "{root}");
    let ratio = &root["properties"]["spec"]["properties"]["ratio"];
    assert_eq!(ratio.as_object().map(|m| m.len()), Some(3), "{ratio}");
    assert_eq!(ratio["type"], "number");
    assert_eq!(ratio["minimum"].to_string(), "0", "{ratio}");
    assert_eq!(ratio["maximum"].to_string(), "2.5", "{ratio}");
    // An update goes through the same decode. A real server's CRD controllers write the CRD's
    // status meanwhile, so a conflict means: read it again and retry (client-go's
    // `RetryOnConflict`).
    let mut current = got.body;
    let mut conflicts = 0;
    let put = loop {
        let mut next = current.clone();
        next["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
            ["x-kubernetes-validations"] = json!([{"rule": "true"}]);
        let put = c
            .client()
            .put(&format!("{CRDS}/foos.{group}"), &next)
            .await
            .unwrap();
        if put.status != 409 {
            break put;
        }
        conflicts += 1;
        assert!(conflicts < 10, "{}", put.body);
        let again = c.client().get(&format!("{CRDS}/foos.{group}")).await;
        current = again.unwrap().body;
    };
    assert_eq!(put.status, 200, "{}", put.body);
    let spec = &put.body["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"];
    assert!(spec.get("x-kubernetes-validations").is_none(), "{spec}");
    remove_foos(&c, group).await;
}
