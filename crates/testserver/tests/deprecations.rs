//! Deprecation warnings: every request to a deprecated version of a resource — a list, a get
//! that fails, a watch — carries the `Warning: 299 - "..."` header kube-apiserver 1.20.2 sends,
//! worded as it words it (`testdata/kube-apiserver-1.20.2/deprecations.json` for the built-in
//! resources; a CRD version's `deprecationWarning`, or the default naming the version to use).
//! And a CRD's versions in discovery in the server's priority order.

use std::collections::BTreeMap;
use std::time::Duration;

use http::Method;
use serde_json::{json, Value};

use crate::common::cluster;

const TABLE: &str = include_str!("../testdata/kube-apiserver-1.20.2/deprecations.json");

async fn warning(c: &kcache_testing::TestCluster, path: &str) -> (u16, Option<String>) {
    let resp = c
        .client()
        .request_with_headers(Method::GET, path, &[], "", "")
        .await
        .unwrap();
    let w = resp
        .headers()
        .get("warning")
        .map(|w| w.to_str().unwrap().to_string());
    (resp.status().as_u16(), w)
}

fn list_path(key: &str) -> String {
    match key.split('/').collect::<Vec<_>>()[..] {
        [version, plural] => format!("/api/{version}/{plural}?limit=1"),
        [group, version, plural] => format!("/apis/{group}/{version}/{plural}?limit=1"),
        _ => panic!("{key}"),
    }
}

#[tokio::test]
async fn every_deprecated_built_in_version_warns_as_the_real_server() {
    let c = cluster().await;
    let table: BTreeMap<String, String> = serde_json::from_str(TABLE).unwrap();
    assert!(table.len() > 20, "{}", table.len());
    for (key, message) in &table {
        let (status, got) = warning(&c, &list_path(key)).await;
        assert_eq!(status, 200, "{key}");
        assert_eq!(got, Some(format!("299 - \"{message}\"")), "{key}");
    }
    assert_eq!(warning(&c, "/api/v1/pods?limit=1").await, (200, None));
    assert_eq!(
        warning(&c, "/apis/networking.k8s.io/v1/ingresses").await.1,
        None
    );
    let ingress = "extensions/v1beta1/ingresses";
    let want = Some(format!("299 - \"{}\"", table[ingress]));
    let missing = "/apis/extensions/v1beta1/namespaces/default/ingresses/not-there";
    assert_eq!(warning(&c, missing).await, (404, want.clone()));
    let watch = "/apis/extensions/v1beta1/ingresses?watch=1&timeoutSeconds=1";
    assert_eq!(warning(&c, watch).await, (200, want));
}

fn gear_crd(group: &str) -> Value {
    let version = |name: &str, storage: bool, extra: Value| {
        let mut v = json!({"name": name, "served": true, "storage": storage,
                           "schema": {"openAPIV3Schema": {"type": "object"}}});
        v.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        v
    };
    json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": format!("gears.{group}")},
    "spec": {"group": group, "scope": "Namespaced",
             "names": {"kind": "Gear", "plural": "gears", "singular": "gear", "listKind": "GearList"},
             "versions": [
                 version("v1alpha1", false, json!({"deprecated": true})),
                 version("v1beta1", false, json!({"deprecated": true, "deprecationWarning": "gears \"v1beta1\" go away"})),
                 version("v2alpha1", false, json!({})),
                 version("v1", true, json!({})),
             ]}})
}

#[tokio::test]
async fn a_deprecated_crd_version_warns_and_discovery_orders_versions_by_priority() {
    let c = cluster().await;
    let group = "deprecated.kcache.dev";
    let crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
    let r = c.client().post(crds, &gear_crd(group)).await.unwrap();
    assert_eq!(r.status, 201, "{}", r.body);
    let list = |v: &str| format!("/apis/{group}/{v}/namespaces/default/gears");
    for _ in 0..100 {
        if c.client().get(&list("v1alpha1")).await.unwrap().status == 200 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let alpha = Some(format!(
        "299 - \"{group}/v1alpha1 Gear is deprecated; use {group}/v1 Gear\""
    ));
    assert_eq!(warning(&c, &list("v1alpha1")).await, (200, alpha.clone()));
    let missing = format!("{}/nope", list("v1alpha1"));
    assert_eq!(warning(&c, &missing).await, (404, alpha));
    let beta = Some(r#"299 - "gears \"v1beta1\" go away""#.to_string());
    assert_eq!(warning(&c, &list("v1beta1")).await, (200, beta));
    assert_eq!(warning(&c, &list("v2alpha1")).await, (200, None));
    assert_eq!(warning(&c, &list("v1")).await, (200, None));

    let doc = c
        .client()
        .get(&format!("/apis/{group}"))
        .await
        .unwrap()
        .body;
    let versions: Vec<&str> = doc["versions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["version"].as_str().unwrap())
        .collect();
    assert_eq!(versions, ["v1", "v1beta1", "v2alpha1", "v1alpha1"]);
    assert_eq!(doc["preferredVersion"]["version"], "v1");

    let del = c
        .client()
        .delete(&format!("{crds}/gears.{group}"))
        .await
        .unwrap();
    assert_eq!(del.status, 200, "{}", del.body);
}
