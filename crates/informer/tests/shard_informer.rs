//! Two factories over complementary KEP-5866 uid ranges (`FactoryOptions::shard_selector`) cache
//! exactly their halves of a namespace, from the list and from the watch. Against the embedded
//! server (a 1.36 server with `ShardedListAndWatch` on) or the cluster of
//! `KCACHE_TEST_KUBECONFIG`, whose kube-apiserver 1.20.2 ignores the parameter: there each
//! informer caches everything, which is why a caller must not assume the filtering happened.

use crate::support;

use std::collections::BTreeSet;
use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use kcache_core::selector::{ShardField, ShardRange, ShardSelector};
use kcache_core::Object;
use kcache_informer::{FactoryOptions, ResourceEventHandlerFuncs, SharedInformerFactory};
use kcache_testing::TestCluster;
use serde_json::json;

#[tokio::test]
async fn informers_over_complementary_ranges_cache_exactly_their_part() {
    let cluster = TestCluster::start().await.unwrap();
    let ns = cluster.create_namespace("shard-inf").await.unwrap();
    let path = format!("/api/v1/namespaces/{ns}/configmaps");
    let mut uids = Vec::new();
    let create = |name: String| {
        let body = json!({"metadata": {"name": name, "labels": {"app": "sharded"}}});
        let (client, path) = (cluster.client(), path.clone());
        async move {
            let r = client.post(&path, &body).await.unwrap();
            assert_eq!(r.status, 201, "{}", r.body);
            (
                name,
                r.body["metadata"]["uid"].as_str().unwrap().to_string(),
            )
        }
    };
    for i in 0..10 {
        uids.push(create(format!("listed-{i}")).await);
    }
    let halves: [ShardSelector; 2] =
        [0, 1].map(|i| ShardRange::split(ShardField::Uid, i, 2).unwrap().into());
    let (tx, mut added) = tokio::sync::mpsc::unbounded_channel();
    let mut shards = Vec::new();
    for sel in &halves {
        let factory = SharedInformerFactory::new(
            support::cluster_client(&cluster),
            FactoryOptions {
                namespace: Some(ns.clone()),
                // The test's ConfigMaps only (a full cluster adds its root CA bundle).
                label_selector: Some("app=sharded".into()),
                shard_selector: Some(sel.to_string()),
                ..FactoryOptions::default()
            },
        );
        let informer = factory.informer::<ConfigMap>();
        let tx = tx.clone();
        informer
            .add_event_handler(ResourceEventHandlerFuncs::new().on_add(
                move |_: &std::sync::Arc<ConfigMap>, _| {
                    let _ = tx.send(());
                },
            ))
            .unwrap();
        factory.start();
        assert!(factory.wait_for_cache_sync().await.values().all(|s| *s));
        shards.push((factory, informer));
    }
    for i in 0..10 {
        uids.push(create(format!("watched-{i}")).await);
    }
    // Every object reaches one informer, or both when the server does not filter.
    let copies = if cluster.is_real() { 2 } else { 1 };
    tokio::time::timeout(Duration::from_secs(15), async {
        for _ in 0..uids.len() * copies {
            added.recv().await.expect("handlers live");
        }
    })
    .await
    .expect("every object reaches its shard's cache");

    let all: BTreeSet<String> = uids.iter().map(|(n, _)| n.clone()).collect();
    let mut cached = Vec::new();
    for ((_, informer), sel) in shards.iter().zip(&halves) {
        let got: BTreeSet<String> = informer
            .indexer()
            .list()
            .iter()
            .map(|cm| cm.name().to_string())
            .collect();
        let want: BTreeSet<String> = if cluster.is_real() {
            all.clone()
        } else {
            uids.iter()
                .filter(|(_, uid)| {
                    sel.matches_with(|_| kcache_core::selector::fnv1a64(uid.as_bytes()))
                })
                .map(|(n, _)| n.clone())
                .collect()
        };
        assert_eq!(got, want);
        cached.push(got);
    }
    if !cluster.is_real() {
        assert!(cached[0].is_disjoint(&cached[1]));
        assert_eq!(&cached[0] | &cached[1], all);
    }
    for (factory, _) in shards {
        factory.shutdown().await;
    }
}
