//! Metadata-only access (client-go's metadata client, kube-rs's `list_metadata`): get, list,
//! watch and patch return `PartialObjectMeta<K>` from the server's `PartialObjectMetadata`.

use crate::support;

use futures_util::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kcache_core::{ListParams, Object, PartialObjectMeta, WatchEvent, WatchParams};
use kcache_testing::{TestCluster, ROOT_CA_CONFIGMAP};
use kcache_transport::{Api, Patch, PatchParams, PostParams};
use support::client;

#[tokio::test]
async fn get_list_watch_and_patch_metadata_only() {
    let cluster = TestCluster::start().await.unwrap();
    let ns = cluster.create_namespace("meta").await.unwrap();
    let api: Api<ConfigMap> = Api::namespaced(client(&cluster, |_| {}), &ns);
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some("a".into());
    cm.metadata.labels = Some([("app".to_string(), "x".to_string())].into());
    cm.data = Some([("k".to_string(), "v".repeat(1000))].into());
    api.create(&PostParams::default(), &cm).await.unwrap();

    let one: PartialObjectMeta<ConfigMap> = api.get_metadata("a").await.unwrap();
    assert_eq!((one.name(), one.label("app")), ("a", Some("x")));
    assert_eq!(
        one.types.as_ref().unwrap().kind,
        "PartialObjectMetadata",
        "the server converted it"
    );

    let list = api
        .list_metadata(&ListParams {
            label_selector: Some("app".into()),
            ..ListParams::default()
        })
        .await
        .unwrap();
    assert_eq!(list.items.len(), 1, "the test's ConfigMap");
    assert!(!list.resource_version().is_empty());
    assert_eq!(
        list.items[0].types.as_ref().unwrap().api_version,
        "meta.k8s.io/v1"
    );

    let wp = WatchParams {
        resource_version: Some(list.resource_version().to_string()),
        timeout_seconds: Some(30),
        ..WatchParams::default()
    };
    let mut watch = api.watch_metadata(&wp).await.unwrap();
    let patched = api
        .patch_metadata(
            "a",
            &PatchParams::default(),
            &Patch::Merge(serde_json::json!({"metadata": {"labels": {"app": "y"}}})),
        )
        .await
        .unwrap();
    assert_eq!(patched.label("app"), Some("y"));
    match watch.next().await.unwrap().unwrap() {
        WatchEvent::Modified(m) => {
            assert_eq!(m.label("app"), Some("y"));
            assert_eq!(m.types.unwrap().kind, "PartialObjectMetadata");
        }
        other => panic!("expected MODIFIED, got {other:?}"),
    }

    // The same through an Api that is metadata-only on every verb.
    let meta = api.clone().into_metadata();
    let page = meta.list(&ListParams::default()).await.unwrap();
    assert_eq!(page.items[0].label("app"), Some("y"));
}

/// `Config::metadata_protobuf` asks for protobuf first; a server without protobuf (as the test
/// server) answers the JSON alternative, and the list decodes the same. (Against kube-apiserver
/// the protobuf answer is decoded by `decode::protobuf`, whose unit tests replay one it sent; it
/// is the default, so every metadata-only list of the envtest and kind tiers takes it.)
#[tokio::test]
async fn protobuf_first_lists_fall_back_to_json() {
    let cluster = TestCluster::start().await.unwrap();
    let ns = cluster.create_namespace("meta-pb").await.unwrap();
    let api: Api<ConfigMap> = Api::namespaced(
        client(&cluster, |config| config.metadata_protobuf = true),
        &ns,
    );
    for name in ["a", "b"] {
        let mut cm = ConfigMap::default();
        cm.metadata.name = Some(name.into());
        api.create(&PostParams::default(), &cm).await.unwrap();
    }
    let list = api.list_metadata(&ListParams::default()).await.unwrap();
    // A full cluster's root-CA publisher puts its ConfigMap into every namespace.
    let names: Vec<&str> = list.items.iter().map(|m| m.name()).collect();
    let ours: Vec<&str> = names
        .iter()
        .copied()
        .filter(|n| *n != ROOT_CA_CONFIGMAP)
        .collect();
    assert_eq!(ours, ["a", "b"]);
    assert!(list
        .items
        .iter()
        .all(|m| m.types.as_ref().unwrap().kind == "PartialObjectMetadata"));
}
