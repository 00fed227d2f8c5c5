//! The raw client built from a kubeconfig (as `TestCluster` builds it for a real cluster:
//! kcache-transport resolves the credentials) still shows the wire as sent.

use kcache_testing::{RawClient, TestCluster};
use serde_json::json;

/// Any status comes back as a response, and the body uncompressed because it never asks for
/// gzip.
#[tokio::test]
async fn raw_client_from_a_kubeconfig_shows_the_wire_as_sent() {
    let c = TestCluster::start().await.unwrap();
    let ns = c.create_namespace("wire-raw").await.unwrap();
    let config = kcache_transport::Config::from_kubeconfig_file(c.kubeconfig_path()).unwrap();
    let raw = RawClient::from_config(config).unwrap();
    let cms = format!("/api/v1/namespaces/{ns}/configmaps");
    let missing = raw.get(&format!("{cms}/none")).await.unwrap();
    assert_eq!(missing.status, 404);
    assert_eq!(missing.body["reason"], "NotFound");
    // Big enough that kube-apiserver would gzip it for a client that asked (over 128 KiB).
    let big = "x".repeat(200 * 1024);
    let made = raw
        .post(
            &cms,
            &json!({"metadata": {"name": "big"}, "data": {"k": big}}),
        )
        .await
        .unwrap();
    assert_eq!(made.status, 201, "{}", made.body);
    let list = raw.get(&cms).await.unwrap();
    assert_eq!(list.status, 200);
    assert!(list.headers.get(http::header::CONTENT_ENCODING).is_none());
    let names: Vec<&str> = list.body["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|i| i["metadata"]["name"].as_str())
        .filter(|n| *n != kcache_testing::ROOT_CA_CONFIGMAP)
        .collect();
    assert_eq!(names, ["big"]);
}
