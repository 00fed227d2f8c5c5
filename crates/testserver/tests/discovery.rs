//! The server's discovery against kube-apiserver 1.20.2's, checked in under
//! `testdata/kube-apiserver-1.20.2/discovery.json`: every group, version, resource, verb and
//! subresource, with the same kind, scope, short names, categories and storage version hash.
//! Groups CRDs add (other tests create some) are left aside.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::common::cluster;

const REFERENCE: &str = include_str!("../testdata/kube-apiserver-1.20.2/discovery.json");

fn reference() -> BTreeMap<String, Value> {
    serde_json::from_str(REFERENCE).unwrap()
}

/// The entries of a resource list, by name.
fn by_name(doc: &Value) -> BTreeMap<String, Value> {
    doc["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["name"].as_str().unwrap().to_string(), r.clone()))
        .collect()
}

#[tokio::test]
async fn every_resource_list_is_the_real_servers() {
    let c = cluster().await;
    let mut compared = 0;
    for (path, want) in reference()
        .iter()
        .filter(|(_, d)| d["kind"] == "APIResourceList")
    {
        let got = c.client().get(path).await.unwrap();
        assert_eq!(got.status, 200, "{path}: {}", got.body);
        assert_eq!(got.body["groupVersion"], want["groupVersion"], "{path}");
        let (got, want) = (by_name(&got.body), by_name(want));
        assert_eq!(
            got.keys().collect::<Vec<_>>(),
            want.keys().collect::<Vec<_>>(),
            "{path}: resources and subresources"
        );
        for (name, w) in &want {
            assert_eq!(&got[name], w, "{path}: {name}");
            compared += 1;
        }
    }
    // 56 resources in 37 group-versions, 82 rows with their versions, plus subresources.
    assert!(compared > 82, "{compared}");
}

#[tokio::test]
async fn the_group_list_is_the_real_servers() {
    let c = cluster().await;
    let reference = reference();
    let want = reference["/apis"]["groups"].as_array().unwrap();
    let got = c.client().get("/apis").await.unwrap().body;
    let got: Vec<&Value> = got["groups"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|g| want.iter().any(|w| w["name"] == g["name"]))
        .collect();
    assert_eq!(got, want.iter().collect::<Vec<_>>());
    for g in want {
        let name = g["name"].as_str().unwrap();
        let one = c.client().get(&format!("/apis/{name}")).await.unwrap().body;
        assert_eq!(one["kind"], "APIGroup", "{name}");
        assert_eq!(one["versions"], g["versions"], "{name}");
        assert_eq!(one["preferredVersion"], g["preferredVersion"], "{name}");
    }
    let core = c.client().get("/api").await.unwrap().body;
    assert_eq!(core["versions"], reference["/api"]["versions"]);
}

const OPENAPI_INDEX: &str = include_str!("../testdata/kube-apiserver-1.20.2/openapi-v2-index.json");

/// Whether `path` is under a group the reference does not serve (a CRD's, from other tests).
fn is_custom(path: &str, reference: &BTreeMap<String, Value>) -> bool {
    let group = path
        .strip_prefix("/apis/")
        .and_then(|p| p.split('/').next());
    group.is_some_and(|g| {
        !reference["/apis"]["groups"]
            .as_array()
            .unwrap()
            .iter()
            .any(|x| x["name"] == g)
    })
}

#[tokio::test]
async fn the_openapi_v2_document_indexes_as_the_real_servers() {
    let c = cluster().await;
    let got = c.client().get("/openapi/v2").await.unwrap();
    assert_eq!(got.status, 200);
    let (doc, want) = (
        &got.body,
        serde_json::from_str::<Value>(OPENAPI_INDEX).unwrap(),
    );
    assert_eq!(doc["swagger"], "2.0");
    let want_paths = want["paths"].as_object().unwrap();
    for (path, ops) in want_paths {
        let item = doc["paths"][path]
            .as_object()
            .unwrap_or_else(|| panic!("{path}"));
        let methods: Vec<&str> = ops
            .as_array()
            .unwrap()
            .iter()
            .map(|op| op["method"].as_str().unwrap())
            .collect();
        let served: Vec<&str> = item.keys().map(String::as_str).collect();
        assert_eq!(
            served.iter().filter(|m| **m != "parameters").count(),
            methods.len(),
            "{path}: {served:?}"
        );
        for op in ops.as_array().unwrap() {
            let o = &item[op["method"].as_str().unwrap()];
            assert_eq!(o["operationId"], op["operationId"], "{path}");
            assert_eq!(o["x-kubernetes-action"], op["action"], "{path}");
        }
    }
    let reference = reference();
    for path in doc["paths"].as_object().unwrap().keys() {
        assert!(
            want_paths.contains_key(path) || is_custom(path, &reference),
            "a path 1.20.2 does not have: {path}"
        );
    }
    for (name, gvk) in want["definitions"].as_object().unwrap() {
        let def = &doc["definitions"][name];
        assert!(def.is_object(), "{name}");
        let got_gvk = def.get("x-kubernetes-group-version-kind");
        assert_eq!(got_gvk.unwrap_or(&Value::Null), gvk, "{name}");
    }
}

#[tokio::test]
async fn the_openapi_v2_document_is_json_or_not_acceptable() {
    let c = cluster().await;
    let get = |accept: &'static str| {
        let client = c.client();
        async move {
            client
                .request_with_headers(
                    http::Method::GET,
                    "/openapi/v2",
                    &[("accept", accept)],
                    "",
                    "",
                )
                .await
                .unwrap()
        }
    };
    for accept in ["application/json", "*/*", "application/json, */*"] {
        let resp = get(accept).await;
        assert_eq!(resp.status(), 200, "{accept}");
        let doc: Value = serde_json::from_slice(resp.body()).unwrap();
        assert_eq!(doc["swagger"], "2.0", "{accept}");
    }
    for accept in ["application/yaml", "application/vnd.kubernetes.protobuf"] {
        assert_eq!(get(accept).await.status(), 406, "{accept}");
    }
    // The real server also sends the document in protobuf; this one does not.
    let proto = get("application/com.github.proto-openapi.spec.v2@v1.0+protobuf").await;
    assert_eq!(proto.status(), if c.is_real() { 200 } else { 406 });
}
