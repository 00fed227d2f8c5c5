//! The factory's plain typed informer caches exact copies (kcache-transport's
//! `Api::with_exact_copies`): every `Vec` of a cached object at its exact length, whether it came
//! from the list (or the embedded server's watch-list) or from a later watch event. Against the
//! embedded server or the cluster of `KCACHE_TEST_KUBECONFIG`.

use crate::support;

use k8s_openapi::api::core::v1::ConfigMap;
use kcache_informer::{FactoryOptions, ResourceEventHandlerFuncs, SharedInformerFactory};
use kcache_testing::TestCluster;
use serde_json::json;

/// Whether the object's `managedFields` (which the server sets on every create) is present and
/// held at its exact length; serde's decoding alone leaves one entry in room for four.
fn exact(cm: &ConfigMap) -> bool {
    let managed = cm
        .metadata
        .managed_fields
        .as_ref()
        .expect("the server records the creating manager");
    !managed.is_empty() && managed.capacity() == managed.len()
}

#[tokio::test]
async fn cached_objects_are_exact_copies_from_lists_and_watches() {
    let cluster = TestCluster::start().await.unwrap();
    let ns = cluster.create_namespace("exact-copies").await.unwrap();
    let path = format!("/api/v1/namespaces/{ns}/configmaps");
    let create = |name: &'static str| {
        let body =
            json!({"metadata": {"name": name, "labels": {"app": "exact"}}, "data": {"k": "v"}});
        let (client, path) = (cluster.client(), path.clone());
        async move { assert_eq!(client.post(&path, &body).await.unwrap().status, 201) }
    };
    create("listed-a").await;
    create("listed-b").await;
    let factory = SharedInformerFactory::new(
        support::cluster_client(&cluster),
        FactoryOptions {
            namespace: Some(ns.clone()),
            label_selector: Some("app=exact".into()),
            ..FactoryOptions::default()
        },
    );
    let informer = factory.informer::<ConfigMap>();
    let (tx, mut added) = tokio::sync::mpsc::unbounded_channel();
    informer
        .add_event_handler(ResourceEventHandlerFuncs::new().on_add(
            move |cm: &std::sync::Arc<ConfigMap>, _| {
                let _ = tx.send(cm.clone());
            },
        ))
        .unwrap();
    factory.start();
    assert!(factory.wait_for_cache_sync().await.values().all(|s| *s));
    let listed = informer.indexer().list();
    assert_eq!(listed.len(), 2);
    assert!(listed.iter().all(|cm| exact(cm)), "{listed:?}");

    create("watched").await;
    let watched = support::named(&mut added, "watched").await;
    assert!(exact(&watched), "{watched:?}");
    let cached = informer.indexer().get_by_key(&format!("{ns}/watched"));
    assert!(cached.is_some_and(|cm| std::sync::Arc::ptr_eq(&cm, &watched)));
    factory.shutdown().await;
}
