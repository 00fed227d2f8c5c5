//! The server's discovery against kube-apiserver 1.20.2's, checked in under
//! `testdata/kube-apiserver-1.20.2/discovery.json`: every group, version, resource, verb and
//! subresource, with the same kind, scope, short names, categories and storage version hash.
//! Groups CRDs add (other tests create some) are left aside.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::common::cluster;

const REFERENCE: &str = include_str!("../testdata/kube-apiserver-1.20.2/discovery.json");

pub(crate) fn reference() -> BTreeMap<String, Value> {
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
