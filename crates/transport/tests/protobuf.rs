//! Lists of the built-in kinds kcache reads from protobuf (`Config::protobuf`, on by default):
//! the same objects as the JSON list. Against kube-apiserver (the envtest and kind tiers) the
//! list comes in protobuf and decodes through `decode::protobuf_kinds`, whose unit tests replay
//! lists it sent; a server without protobuf (the test server) answers the JSON alternative.

use crate::support;

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use k8s_openapi::ByteString;
use kcache_core::ListParams;
use kcache_testing::TestCluster;
use kcache_transport::{Api, PostParams};
use serde::de::DeserializeOwned;
use support::client;

/// The objects named `ours-*` in the list of `K` in `ns`, with `protobuf` on or off.
async fn list<K: DeserializeOwned + kcache_core::Resource + kcache_core::Object>(
    cluster: &TestCluster,
    ns: &str,
    protobuf: bool,
) -> Vec<K> {
    let api: Api<K> = Api::namespaced(client(cluster, |c| c.protobuf = protobuf), ns);
    let list = api.list(&ListParams::default()).await.unwrap();
    // A full cluster's controllers add a root CA ConfigMap and token Secrets to every namespace.
    list.items
        .into_iter()
        .filter(|o| o.name().starts_with("ours-"))
        .collect()
}

#[tokio::test]
async fn config_maps_and_secrets_list_the_same_in_protobuf_and_json() {
    let cluster = TestCluster::start().await.unwrap();
    let ns = cluster.create_namespace("protobuf").await.unwrap();
    let c = client(&cluster, |_| {});
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some("ours-full".into());
    cm.metadata.labels = Some([("app".to_string(), "web".to_string())].into());
    cm.data = Some(BTreeMap::from([
        ("config.yaml".to_string(), "a: 1\n".to_string()),
        ("empty".to_string(), String::new()),
        ("unicode".to_string(), "héllo ✓".to_string()),
    ]));
    cm.binary_data = Some([("blob".to_string(), ByteString(vec![0, 1, 2, 0xff]))].into());
    cm.immutable = Some(true);
    let configmaps: Api<ConfigMap> = Api::namespaced(c.clone(), &ns);
    configmaps
        .create(&PostParams::default(), &cm)
        .await
        .unwrap();
    let mut bare = ConfigMap::default();
    bare.metadata.name = Some("ours-bare".into());
    configmaps
        .create(&PostParams::default(), &bare)
        .await
        .unwrap();

    let mut secret = Secret::default();
    secret.metadata.name = Some("ours-tls".into());
    secret.type_ = Some("kubernetes.io/tls".into());
    secret.data = Some(BTreeMap::from([
        ("tls.crt".to_string(), ByteString(b"cert".to_vec())),
        ("tls.key".to_string(), ByteString(vec![0, 0xfe, 0xff])),
    ]));
    let secrets: Api<Secret> = Api::namespaced(c, &ns);
    secrets
        .create(&PostParams::default(), &secret)
        .await
        .unwrap();

    let from_protobuf: Vec<ConfigMap> = list(&cluster, &ns, true).await;
    assert_eq!(from_protobuf, list::<ConfigMap>(&cluster, &ns, false).await);
    assert_eq!(from_protobuf.len(), 2);
    let full = &from_protobuf[1];
    assert_eq!(
        (full.binary_data.as_ref(), full.immutable),
        (cm.binary_data.as_ref(), Some(true))
    );
    assert_eq!(full.data, cm.data);

    let from_protobuf: Vec<Secret> = list(&cluster, &ns, true).await;
    assert_eq!(from_protobuf, list::<Secret>(&cluster, &ns, false).await);
    assert_eq!(from_protobuf.len(), 1);
    assert_eq!(from_protobuf[0].data, secret.data);
    assert_eq!(from_protobuf[0].type_.as_deref(), Some("kubernetes.io/tls"));
}
