//! The metadata-only informer (client-go's `metadatainformer`) against the embedded server or
//! the cluster of `KCACHE_TEST_KUBECONFIG`: it syncs, caches only metadata, and follows changes.

use crate::support;

use std::time::Duration;

use kcache_core::{ApiResource, Object, PartialObjectMeta};
use kcache_informer::{FactoryOptions, ResourceEventHandlerFuncs, SharedInformerFactory};
use kcache_testing::TestCluster;
use serde_json::json;

fn configmaps() -> ApiResource {
    ApiResource {
        group: String::new(),
        version: "v1".into(),
        kind: "ConfigMap".into(),
        plural: "configmaps".into(),
        namespaced: true,
    }
}

#[tokio::test]
async fn caches_metadata_and_follows_changes() {
    let cluster = TestCluster::start().await.unwrap();
    let ns = cluster.create_namespace("meta-inf").await.unwrap();
    let path = format!("/api/v1/namespaces/{ns}/configmaps");
    for name in ["a", "b"] {
        let body = json!({"metadata": {"name": name, "labels": {"app": name}}, "data": {"k": "v"}});
        assert_eq!(
            cluster.client().post(&path, &body).await.unwrap().status,
            201
        );
    }
    let factory = SharedInformerFactory::new(
        support::cluster_client(&cluster),
        FactoryOptions {
            namespace: Some(ns.clone()),
            // The test's ConfigMaps only (a full cluster adds its root CA bundle to each
            // namespace).
            label_selector: Some("app".into()),
            ..FactoryOptions::default()
        },
    );
    let informer = factory.metadata_informer_for(&configmaps());
    let (tx, mut updates) = tokio::sync::mpsc::unbounded_channel();
    informer
        .add_event_handler(ResourceEventHandlerFuncs::new().on_update(
            move |_, new: &std::sync::Arc<PartialObjectMeta>| {
                let _ = tx.send(new.clone());
            },
        ))
        .unwrap();
    factory.start();
    assert!(factory.wait_for_cache_sync().await.values().all(|s| *s));
    let a = informer
        .indexer()
        .get_by_key(&format!("{ns}/a"))
        .expect("a is cached");
    assert_eq!(a.label("app"), Some("a"));
    assert_eq!(
        a.types.as_ref().map(|t| t.kind.as_str()),
        Some("PartialObjectMetadata")
    );
    assert_eq!(informer.indexer().len(), 2);

    let patch = cluster
        .client()
        .patch(
            &format!("{path}/b"),
            "application/merge-patch+json",
            &json!({"metadata": {"labels": {"app": "changed"}}}),
        )
        .await
        .unwrap();
    assert_eq!(patch.status, 200);
    let updated = tokio::time::timeout(Duration::from_secs(15), updates.recv())
        .await
        .expect("the label change reaches the metadata informer")
        .unwrap();
    assert_eq!(
        (updated.name(), updated.label("app")),
        ("b", Some("changed"))
    );
    let cached = informer.indexer().get_by_key(&format!("{ns}/b")).unwrap();
    assert_eq!(cached.label("app"), Some("changed"));
    factory.shutdown().await;
}
