//! A CRD in `/openapi/v2`, as kube-apiserver 1.20.2 publishes it (asynchronously there, so
//! the test waits until the definitions appear): the paths of each served version with their
//! operation ids, tags and actions, the object definition from the schema made OpenAPI v2
//! (no `nullable`, `default`, `anyOf`…), the list definition, and the meta definitions the
//! server adds. Runs on both tiers; the CRD's group has a `-` to check the names the server
//! makes from it.

use std::time::Duration;

use kcache_testing::TestCluster;
use serde_json::{json, Value};

use crate::common::cluster;

pub(crate) const CRDS: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
const GROUP: &str = "open-api.kcache.dev";

/// The Sprocket CRD in `group`: two versions, the first with `/status`, `/scale` and a schema
/// of what OpenAPI v2 cannot say.
pub(crate) fn crd(group: &str) -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("sprockets.{group}")},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"kind": "Sprocket", "plural": "sprockets", "singular": "sprocket", "listKind": "SprocketList"},
            "versions": [
                {"name": "v1", "served": true, "storage": true,
                 "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"}},
                 "schema": {"openAPIV3Schema": {
                     "type": "object", "description": "A sprocket.",
                     "properties": {
                         "spec": {"type": "object", "required": ["replicas", "note"], "default": {"replicas": 1, "note": "n"},
                                  "properties": {
                                      "replicas": {"type": "integer", "format": "int32", "minimum": 1, "default": 1},
                                      "note": {"type": "string", "nullable": true, "maxLength": 10},
                                      "port": {"anyOf": [{"type": "integer"}, {"type": "string"}], "x-kubernetes-int-or-string": true},
                                      "raw": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                                  }},
                         "status": {"type": "object", "properties": {"replicas": {"type": "integer"}}},
                     }}}},
                {"name": "v1beta1", "served": true, "storage": false,
                 "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}},
            ],
        },
    })
}

/// Waits until `/openapi/v2` holds the v1 and v1beta1 definitions; returns the document.
async fn published(c: &TestCluster) -> Value {
    for _ in 0..300 {
        let doc = c.client().get("/openapi/v2").await.unwrap().body;
        let defs = &doc["definitions"];
        if defs["dev.kcache.open-api.v1.Sprocket"].is_object()
            && defs["dev.kcache.open-api.v1beta1.Sprocket"].is_object()
        {
            return doc;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the Sprocket CRD never appeared in /openapi/v2");
}

/// `(path, method, operationId, action)` of every operation under the group.
fn operations(doc: &Value) -> Vec<(String, String, String, String)> {
    let mut ops = Vec::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        if !path.starts_with(&format!("/apis/{GROUP}/")) {
            continue;
        }
        for (method, op) in item.as_object().unwrap() {
            if method == "parameters" {
                continue;
            }
            let tags = &op["tags"];
            let version = path.split('/').nth(3).unwrap();
            assert_eq!(
                tags,
                &json!([format!("openApiKcacheDev_{version}")]),
                "{path}"
            );
            let gvk = &op["x-kubernetes-group-version-kind"];
            assert_eq!(
                gvk,
                &json!({"group": GROUP, "kind": "Sprocket", "version": version})
            );
            ops.push((
                path.replace(&format!("/apis/{GROUP}"), ""),
                method.clone(),
                op["operationId"].as_str().unwrap().to_string(),
                op["x-kubernetes-action"].as_str().unwrap().to_string(),
            ));
        }
    }
    ops.sort();
    ops
}

#[tokio::test]
async fn a_crd_is_published_in_openapi_v2_as_the_real_server_publishes_it() {
    let c = cluster().await;
    let r = c.client().post(CRDS, &crd(GROUP)).await.unwrap();
    assert_eq!(r.status, 201, "{}", r.body);
    let doc = published(&c).await;

    let op = |path: &str, method: &str, id: &str, action: &str| {
        (
            path.to_string(),
            method.to_string(),
            id.to_string(),
            action.to_string(),
        )
    };
    let ns = "/namespaces/{namespace}/sprockets";
    let mut want = Vec::new();
    for (v, with_subresources) in [("v1", true), ("v1beta1", false)] {
        let gv = format!(
            "OpenApiKcacheDev{}",
            if v == "v1" { "V1" } else { "V1beta1" }
        );
        let coll = format!("/{v}{ns}");
        let item = format!("/{v}{ns}/{{name}}");
        want.extend([
            op(&coll, "get", &format!("list{gv}NamespacedSprocket"), "list"),
            op(
                &coll,
                "post",
                &format!("create{gv}NamespacedSprocket"),
                "post",
            ),
            op(
                &coll,
                "delete",
                &format!("delete{gv}CollectionNamespacedSprocket"),
                "deletecollection",
            ),
            op(&item, "get", &format!("read{gv}NamespacedSprocket"), "get"),
            op(
                &item,
                "put",
                &format!("replace{gv}NamespacedSprocket"),
                "put",
            ),
            op(
                &item,
                "patch",
                &format!("patch{gv}NamespacedSprocket"),
                "patch",
            ),
            op(
                &item,
                "delete",
                &format!("delete{gv}NamespacedSprocket"),
                "delete",
            ),
            op(
                &format!("/{v}/sprockets"),
                "get",
                &format!("list{gv}SprocketForAllNamespaces"),
                "list",
            ),
        ]);
        if with_subresources {
            for (sub, suffix) in [("status", "Status"), ("scale", "Scale")] {
                let path = format!("{item}/{sub}");
                want.extend([
                    op(
                        &path,
                        "get",
                        &format!("read{gv}NamespacedSprocket{suffix}"),
                        "get",
                    ),
                    op(
                        &path,
                        "put",
                        &format!("replace{gv}NamespacedSprocket{suffix}"),
                        "put",
                    ),
                    op(
                        &path,
                        "patch",
                        &format!("patch{gv}NamespacedSprocket{suffix}"),
                        "patch",
                    ),
                ]);
            }
        }
    }
    want.sort();
    assert_eq!(operations(&doc), want);

    let paths = &doc["paths"];
    let read = &paths[format!("/apis/{GROUP}/v1{ns}/{{name}}")]["get"];
    assert_eq!(read["description"], "read the specified Sprocket");
    assert_eq!(
        read["responses"]["200"]["schema"]["$ref"],
        "#/definitions/dev.kcache.open-api.v1.Sprocket"
    );
    let scale = &paths[format!("/apis/{GROUP}/v1{ns}/{{name}}/scale")]["get"];
    assert_eq!(
        scale["responses"]["200"]["schema"]["$ref"],
        "#/definitions/io.k8s.api.autoscaling.v1.Scale_v2"
    );

    let defs = &doc["definitions"];
    let mut sprocket = defs["dev.kcache.open-api.v1.Sprocket"].clone();
    let props = sprocket["properties"].as_object_mut().unwrap();
    for added in ["apiVersion", "kind"] {
        assert_eq!(props.remove(added).unwrap()["type"], "string", "{added}");
    }
    assert_eq!(
        props.remove("metadata").unwrap()["$ref"],
        "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta_v2"
    );
    assert_eq!(
        sprocket,
        json!({
            "type": "object", "description": "A sprocket.",
            "properties": {
                "spec": {"type": "object", "required": ["replicas"], "properties": {
                    "replicas": {"type": "integer", "format": "int32", "minimum": 1},
                    "note": {"maxLength": 10},
                    "port": {"x-kubernetes-int-or-string": true},
                    "raw": {"x-kubernetes-preserve-unknown-fields": true},
                }},
                "status": {"type": "object", "properties": {"replicas": {"type": "integer"}}},
            },
            "x-kubernetes-group-version-kind": [{"group": GROUP, "kind": "Sprocket", "version": "v1"}],
        })
    );
    // Unknown fields kept at the root: no properties, or kubectl would refuse the others.
    assert_eq!(
        defs["dev.kcache.open-api.v1beta1.Sprocket"],
        json!({"type": "object", "x-kubernetes-group-version-kind": [{"group": GROUP, "kind": "Sprocket", "version": "v1beta1"}]})
    );
    let list = &defs["dev.kcache.open-api.v1.SprocketList"];
    assert_eq!(list["description"], "SprocketList is a list of Sprocket");
    assert_eq!(list["required"], json!(["items"]));
    assert_eq!(
        list["properties"]["items"]["items"]["$ref"],
        "#/definitions/dev.kcache.open-api.v1.Sprocket"
    );
    assert_eq!(
        list["x-kubernetes-group-version-kind"],
        json!([{"group": GROUP, "kind": "SprocketList", "version": "v1"}])
    );
    for shared in [
        "meta.v1.ObjectMeta_v2",
        "meta.v1.Status_v2",
        "meta.v1.DeleteOptions_v2",
    ] {
        let name = format!("io.k8s.apimachinery.pkg.apis.{shared}");
        assert!(defs[&name].is_object(), "{name}");
    }

    let del = c
        .client()
        .delete(&format!("{CRDS}/sprockets.{GROUP}"))
        .await
        .unwrap();
    assert_eq!(del.status, 200, "{}", del.body);
}
