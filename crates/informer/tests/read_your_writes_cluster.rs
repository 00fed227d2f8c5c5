//! Read your writes against the embedded server or the cluster of `KCACHE_TEST_KUBECONFIG`
//! (kube-apiserver 1.20.2 in the envtest tier, whose resourceVersions are etcd revisions): a
//! write's resourceVersion, waited for on the informer, means the cache holds that write.

use crate::support;

use std::time::Duration;

use kcache_core::{ApiResource, DynamicObject, Object};
use kcache_informer::{InformerOptions, SharedIndexInformer};
use kcache_reflector::ReflectorOptions;
use kcache_store::Indexers;
use kcache_testing::{RawResponse, TestCluster};
use kcache_transport::Api;
use serde_json::{json, Value};

/// Liveness guard for each wait; they normally end within milliseconds.
const LIMIT: Duration = Duration::from_secs(20);

fn configmaps() -> ApiResource {
    ApiResource {
        group: String::new(),
        version: "v1".into(),
        kind: "ConfigMap".into(),
        plural: "configmaps".into(),
        namespaced: true,
    }
}

fn rv_of(resp: &RawResponse) -> String {
    let rv = &resp.body["metadata"]["resourceVersion"];
    rv.as_str()
        .expect("the write returned a resourceVersion")
        .to_owned()
}

fn cm(name: &str, labelled: bool, value: &str) -> Value {
    let labels = if labelled {
        json!({"app": "ryw"})
    } else {
        json!({})
    };
    json!({"metadata": {"name": name, "labels": labels}, "data": {"k": value}})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn waiting_for_a_write_means_the_cache_holds_it() {
    let cluster = TestCluster::start().await.unwrap();
    let ns = cluster.create_namespace("ryw").await.unwrap();
    let path = format!("/api/v1/namespaces/{ns}/configmaps");
    let api =
        Api::<DynamicObject>::dynamic(support::cluster_client(&cluster), configmaps(), Some(&ns));
    let options = InformerOptions {
        reflector: ReflectorOptions {
            label_selector: Some("app=ryw".into()),
            ..ReflectorOptions::default()
        },
        ..InformerOptions::named("configmaps")
    };
    let informer = SharedIndexInformer::new(api, Indexers::new(), options);
    let (stop, task) = support::start(&informer);
    assert!(informer.wait_for_cache_sync().await);
    assert_ne!(informer.last_store_sync_resource_version(), "");
    let cached = |name: &str| {
        informer
            .indexer()
            .get_by_key(&format!("{ns}/{name}"))
            .map(|o| (o.resource_version().unwrap_or_default().to_owned(), o))
    };

    // A create, then an update: once the wait returns, the cache holds exactly that write.
    let created = cluster
        .client()
        .post(&path, &cm("a", true, "1"))
        .await
        .unwrap();
    assert_eq!(created.status, 201, "{}", created.body);
    let rv = rv_of(&created);
    informer
        .wait_for_resource_version_timeout(&rv, LIMIT)
        .await
        .unwrap();
    assert_eq!(cached("a").map(|(rv, _)| rv), Some(rv.clone()));
    let updated = cluster
        .client()
        .put(&format!("{path}/a"), &cm("a", true, "2"))
        .await
        .unwrap();
    assert_eq!(updated.status, 200, "{}", updated.body);
    let rv = rv_of(&updated);
    informer
        .wait_for_resource_version_timeout(&rv, LIMIT)
        .await
        .unwrap();
    let (cached_rv, obj) = cached("a").expect("a is cached");
    assert_eq!(cached_rv, rv);
    assert_eq!(obj.data["data"]["k"], "2");

    // A write outside the selector never reaches this watch: only a bookmark can move the cache
    // past it. The embedded server sends one on request; kube-apiserver on its own schedule.
    let outside = cluster
        .client()
        .post(&path, &cm("b", false, "1"))
        .await
        .unwrap();
    assert_eq!(outside.status, 201, "{}", outside.body);
    let rv = rv_of(&outside);
    let handle = informer.cache_resource_version();
    match cluster.server() {
        Some(server) => {
            assert_eq!(handle.has_reached(&rv), Ok(false));
            server.send_bookmarks();
            handle
                .wait_for_resource_version_timeout(&rv, LIMIT)
                .await
                .unwrap();
            assert!(cached("b").is_none(), "b is outside the selector");
        }
        None => println!(
            "kcache-skip: waiting_for_a_write_means_the_cache_holds_it: bookmarks on request \
             need the embedded server"
        ),
    }

    stop.cancel();
    task.await.unwrap();
    let err = handle
        .wait_for_resource_version(&format!("{rv}0"))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("stopped"), "{err}");
}
