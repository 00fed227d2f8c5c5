//! The `k8s-openapi` feature: k8s-openapi types are `Object`s and `Resource`s.
#![cfg(feature = "k8s-openapi")]

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kcache_core::{Object, ObjectKey, Resource};

#[test]
fn typed_objects_have_keys_and_resources() {
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some("a".into());
    cm.metadata.namespace = Some("ns".into());
    cm.metadata.resource_version = Some("5".into());
    cm.metadata.labels = Some([("app".to_string(), "x".to_string())].into());
    assert_eq!(ObjectKey::of(&cm).as_str(), "ns/a");
    assert_eq!(cm.resource_version(), Some("5"));
    assert_eq!(cm.label("app"), Some("x"));
    assert_eq!(
        ConfigMap::api_resource().collection_path(Some("ns")),
        "/api/v1/namespaces/ns/configmaps"
    );
    assert!(ConfigMap::api_resource().namespaced);
    assert!(!Namespace::api_resource().namespaced);
    assert_eq!(
        Deployment::api_resource().collection_path(None),
        "/apis/apps/v1/deployments"
    );
    assert_eq!(Deployment::KIND, "Deployment");
}
