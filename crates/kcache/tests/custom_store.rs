//! Runs `examples/custom-store.rs` against the embedded server (or the cluster named by
//! KCACHE_TEST_KUBECONFIG): an informer over a cache that is not kcache-store's `Indexer`.

#[allow(dead_code)]
#[path = "../examples/custom-store.rs"]
mod example;

use k8s_openapi::api::core::v1::ConfigMap;
use kcache::core::{CacheReader, StoreError};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn custom_store_converges_to_the_servers_list() {
    let outcome = example::demo().await.expect("the cache converges");
    let deleted = example::CHURN.div_ceil(4);
    assert_eq!(outcome.objects, example::SEED + example::CHURN - deleted);
    assert_eq!(outcome.cache.len(), outcome.objects);
    assert!(outcome.cache.values().all(|rv| !rv.is_empty()));
    assert_eq!(
        outcome.by_app.values().sum::<usize>(),
        outcome.objects,
        "every object is in its app's index set: {:?}",
        outcome.by_app
    );
    assert_eq!(
        outcome.by_app.len(),
        4,
        "app-0..app-3: {:?}",
        outcome.by_app
    );
    assert!(outcome.deletes <= deleted);
}

#[test]
fn an_unknown_index_is_an_error_naming_it() {
    let store = example::BTreeStore::<ConfigMap>::default();
    assert_eq!(
        store.by_index("byOwner", "x").unwrap_err(),
        StoreError::IndexNotFound("byOwner".into())
    );
    assert!(store.list_index_func_values("byOwner").is_empty());
    assert!(store
        .index_keys(example::APP_INDEX, "app-0")
        .unwrap()
        .is_empty());
}
