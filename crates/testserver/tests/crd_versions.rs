//! CustomResourceDefinitions written as `apiextensions.k8s.io/v1beta1` (as clients of 1.20.2
//! still do: the Python client's dynamic tests) and read as v1 and v1beta1: one object, each
//! version's shape and defaults, its custom resources served (and deleted with a `Status`);
//! a custom resource read, listed and watched in the version asked. Run on both servers.

use serde_json::{json, Value};

use crate::common::{cluster, create_when_served, names, read_until};

const V1: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
const V1BETA1: &str = "/apis/apiextensions.k8s.io/v1beta1/customresourcedefinitions";

#[tokio::test]
async fn a_v1beta1_crd_is_read_as_v1_and_serves_its_resources() {
    let c = cluster().await;
    let ns = c.create_namespace("crd-versions").await.unwrap();
    let group = format!("{ns}.example.com");
    let name = format!("gizmos.{group}");
    let crd = json!({"apiVersion": "apiextensions.k8s.io/v1beta1", "kind": "CustomResourceDefinition",
        "metadata": {"name": name},
        "spec": {"group": group, "scope": "Namespaced", "version": "v1",
                 "names": {"plural": "gizmos", "kind": "Gizmo"},
                 "validation": {"openAPIV3Schema": {"type": "object"}},
                 "additionalPrinterColumns": [{"name": "Size", "type": "integer", "JSONPath": ".spec.size"}],
                 "subresources": {"status": {}}}});
    let r = c.client().post(V1BETA1, &crd).await.unwrap();
    assert_eq!(r.status, 201, "{}", r.body);
    let spec = &r.body["spec"];
    assert_eq!(r.body["apiVersion"], "apiextensions.k8s.io/v1beta1");
    // v1beta1's defaults, and what every version shares kept at the top.
    assert_eq!(spec["version"], "v1");
    assert_eq!(
        spec["versions"],
        json!([{"name": "v1", "served": true, "storage": true}])
    );
    assert_eq!(spec["preserveUnknownFields"], true);
    assert_eq!(spec["conversion"], json!({"strategy": "None"}));
    assert_eq!(spec["names"]["listKind"], "GizmoList");
    assert_eq!(spec["names"]["singular"], "gizmo");
    assert_eq!(spec["subresources"], json!({"status": {}}));
    assert_eq!(
        spec["additionalPrinterColumns"][0]["JSONPath"],
        ".spec.size"
    );
    assert_eq!(r.body["status"]["storedVersions"], json!(["v1"]));

    // The same object as v1: everything per version.
    let v1 = c.client().get(&format!("{V1}/{name}")).await.unwrap();
    assert_eq!(v1.status, 200, "{}", v1.body);
    assert_eq!(v1.body["apiVersion"], "apiextensions.k8s.io/v1");
    assert_eq!(v1.body["metadata"]["uid"], r.body["metadata"]["uid"]);
    let version: &Value = &v1.body["spec"]["versions"][0];
    assert_eq!(
        version["schema"],
        json!({"openAPIV3Schema": {"type": "object"}})
    );
    assert_eq!(version["subresources"], json!({"status": {}}));
    assert_eq!(
        version["additionalPrinterColumns"],
        json!([{"name": "Size", "type": "integer", "jsonPath": ".spec.size"}])
    );
    assert!(v1.body["spec"].get("version").is_none(), "{}", v1.body);
    let listed = c.client().get(V1BETA1).await.unwrap();
    assert!(names(&listed.body).contains(&name), "{}", listed.body);
    let item = listed.body["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["metadata"]["name"] == name.as_str())
        .unwrap();
    assert_eq!(item["spec"]["version"], "v1", "{item}");

    // Its custom resources (the real server serves them once the CRD is established).
    let base = format!("/apis/{group}/v1/namespaces/{ns}/gizmos");
    let gizmo = json!({"apiVersion": format!("{group}/v1"), "kind": "Gizmo", "metadata": {"name": "g"}, "spec": {}});
    let created = create_when_served(&c, &base, &gizmo).await;
    let st = c
        .client()
        .patch(
            &format!("{base}/g/status"),
            "application/merge-patch+json",
            &json!({"status": {"ready": true}}),
        )
        .await
        .unwrap();
    assert_eq!(st.status, 200, "{}", st.body);
    assert_eq!(st.body["status"]["ready"], true);
    // Deleting one answers a `Status`, as 1.20.2's custom resource storage does (kube-rs's
    // crd_api example would fail on an answer with the object).
    let gone = c.client().delete(&format!("{base}/g")).await.unwrap();
    assert_eq!(gone.status, 200, "{}", gone.body);
    let uid = created["metadata"]["uid"].clone();
    assert_eq!(
        (
            &gone.body["kind"],
            &gone.body["status"],
            &gone.body["details"]
        ),
        (
            &json!("Status"),
            &json!("Success"),
            &json!({"name": "g", "group": group, "kind": "gizmos", "uid": uid})
        )
    );
    // Deleting the collection answers the list as it was, whatever one DELETE answers.
    let mut h = gizmo.clone();
    h["metadata"]["name"] = json!("h");
    assert_eq!(c.client().post(&base, &h).await.unwrap().status, 201);
    let gone = c.client().delete(&base).await.unwrap();
    assert_eq!(gone.status, 200, "{}", gone.body);
    assert_eq!(gone.body["kind"], "GizmoList");
    assert_eq!(names(&gone.body), ["h"]);
    assert_eq!(gone.body["items"][0]["kind"], "Gizmo");

    // An update through v1beta1 lands in the one object, seen through v1.
    let mut update = c
        .client()
        .get(&format!("{V1BETA1}/{name}"))
        .await
        .unwrap()
        .body;
    update["spec"]["additionalPrinterColumns"][0]["name"] = json!("Count");
    let mut put = c
        .client()
        .put(&format!("{V1BETA1}/{name}"), &update)
        .await
        .unwrap();
    while put.status == 409 {
        // A real cluster's controller wrote the status meanwhile: read again.
        let mut fresh = c
            .client()
            .get(&format!("{V1BETA1}/{name}"))
            .await
            .unwrap()
            .body;
        fresh["spec"]["additionalPrinterColumns"][0]["name"] = json!("Count");
        put = c
            .client()
            .put(&format!("{V1BETA1}/{name}"), &fresh)
            .await
            .unwrap();
    }
    assert_eq!(put.status, 200, "{}", put.body);
    assert_eq!(put.body["apiVersion"], "apiextensions.k8s.io/v1beta1");
    let v1 = c.client().get(&format!("{V1}/{name}")).await.unwrap().body;
    assert_eq!(
        v1["spec"]["versions"][0]["additionalPrinterColumns"][0]["name"],
        "Count"
    );

    let del = c
        .client()
        .delete(&format!("{V1BETA1}/{name}"))
        .await
        .unwrap();
    assert_eq!(del.status, 200, "{}", del.body);
    assert_eq!(del.body["apiVersion"], "apiextensions.k8s.io/v1beta1");
}

#[tokio::test]
async fn a_v1_crd_whose_versions_differ_reads_as_v1beta1() {
    let c = cluster().await;
    let ns = c.create_namespace("crd-v1").await.unwrap();
    let group = format!("{ns}.example.com");
    let name = format!("gadgets.{group}");
    let schema = json!({"openAPIV3Schema": {"type": "object"}});
    let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": name},
        "spec": {"group": group, "scope": "Cluster", "names": {"plural": "gadgets", "kind": "Gadget"},
                 "versions": [
                     {"name": "v2", "served": true, "storage": true, "schema": schema, "subresources": {"status": {}}},
                     {"name": "v1", "served": true, "storage": false, "schema": schema}]}});
    let r = c.client().post(V1, &crd).await.unwrap();
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(r.body["spec"]["conversion"], json!({"strategy": "None"}));
    assert!(r.body["spec"].get("preserveUnknownFields").is_none());
    let b1 = c.client().get(&format!("{V1BETA1}/{name}")).await.unwrap();
    assert_eq!(b1.status, 200, "{}", b1.body);
    let spec = &b1.body["spec"];
    assert_eq!(spec["version"], "v2");
    assert_eq!(spec["validation"], schema);
    assert_eq!(spec["preserveUnknownFields"], false);
    assert!(spec.get("subresources").is_none(), "{spec}");
    assert_eq!(spec["versions"][0]["subresources"], json!({"status": {}}));
    assert!(spec["versions"][0].get("schema").is_none(), "{spec}");
    let del = c.client().delete(&format!("{V1}/{name}")).await.unwrap();
    assert_eq!(del.status, 200, "{}", del.body);
}

/// A custom resource is stored in its CRD's storage version and served in the version of the
/// URL (conversion strategy `None`: only `apiVersion` changes), whichever version wrote it.
#[tokio::test]
async fn a_custom_resource_is_served_in_the_version_asked() {
    let c = cluster().await;
    let ns = c.create_namespace("cr-versions").await.unwrap();
    let group = format!("{ns}.example.com");
    let name = format!("gadgets.{group}");
    let schema = json!({"openAPIV3Schema": {"type": "object",
        "x-kubernetes-preserve-unknown-fields": true}});
    let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": name},
        "spec": {"group": group, "scope": "Namespaced", "names": {"plural": "gadgets", "kind": "Gadget"},
            "versions": [
                {"name": "v1", "served": true, "storage": false, "schema": schema},
                {"name": "v2", "served": true, "storage": true, "schema": schema}]}});
    let r = c.client().post(V1, &crd).await.unwrap();
    assert_eq!(r.status, 201, "{}", r.body);
    let path = |v: &str| format!("/apis/{group}/{v}/namespaces/{ns}/gadgets");
    let gadget = |v: &str, n: &str| {
        json!({"apiVersion": format!("{group}/{v}"), "kind": "Gadget", "metadata": {"name": n},
               "spec": {"size": 1}})
    };
    let a = create_when_served(&c, &path("v1"), &gadget("v1", "a")).await;
    assert_eq!(a["apiVersion"], format!("{group}/v1"));
    let b = c
        .client()
        .post(&path("v2"), &gadget("v2", "b"))
        .await
        .unwrap();
    assert_eq!(b.status, 201, "{}", b.body);
    let mut w = c
        .client()
        .watch(&format!("{}?watch=true&timeoutSeconds=2", path("v1")))
        .await
        .unwrap()
        .unwrap();
    for v in ["v1", "v2"] {
        let got = c.client().get(&format!("{}/a", path(v))).await.unwrap();
        assert_eq!(got.body["apiVersion"], format!("{group}/{v}"), "a as {v}");
        let list = c.client().get(&path(v)).await.unwrap().body;
        assert_eq!(names(&list), ["a", "b"]);
        for item in list["items"].as_array().unwrap() {
            assert_eq!(item["apiVersion"], format!("{group}/{v}"), "listed as {v}");
        }
    }
    let seen = read_until(&mut w, |e| e.len() == 2).await;
    for e in &seen {
        assert_eq!(e["object"]["apiVersion"], format!("{group}/v1"), "{e}");
    }
    let del = c.client().delete(&format!("{V1}/{name}")).await.unwrap();
    assert_eq!(del.status, 200, "{}", del.body);
}
