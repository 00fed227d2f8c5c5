//! `ListParams::shard_selector` reaches the server as `shardSelector`, and the list's
//! `metadata.shardInfo` tells whether the server applied it: the embedded server (a 1.36 server
//! with `ShardedListAndWatch` on) echoes it, kube-apiserver 1.20.2 ignores the parameter and says
//! nothing, so the caller knows it got every object.

use crate::support;

use k8s_openapi::api::core::v1::ConfigMap;
use kcache_core::selector::{ShardField, ShardRange, ShardSelector};
use kcache_core::{ListParams, Object};
use kcache_testing::TestCluster;
use kcache_transport::{Api, PostParams};
use support::client;

#[tokio::test]
async fn a_sharded_list_reports_the_applied_selector() {
    let cluster = TestCluster::start().await.unwrap();
    let ns = cluster.create_namespace("shard-list").await.unwrap();
    let api: Api<ConfigMap> = Api::namespaced(client(&cluster, |_| {}), &ns);
    let mut uids = Vec::new();
    for name in ["a", "b", "c", "d"] {
        let mut cm = ConfigMap::default();
        cm.metadata.name = Some(name.into());
        cm.metadata.labels = Some([("app".to_string(), "shard".to_string())].into());
        let made = api.create(&PostParams::default(), &cm).await.unwrap();
        uids.push(made.uid().unwrap().to_string());
    }
    // A lower range written loosely: the server answers with the canonical form.
    let loose = "shardRange(object.metadata.uid,'0x0','0X8000000000000000')";
    let canonical = ShardSelector::from(ShardRange::split(ShardField::Uid, 0, 2).unwrap());
    let list = api
        .list(&ListParams {
            label_selector: Some("app=shard".into()),
            shard_selector: Some(loose.into()),
            ..ListParams::default()
        })
        .await
        .unwrap();
    let unsharded = api
        .list(&ListParams {
            label_selector: Some("app=shard".into()),
            ..ListParams::default()
        })
        .await
        .unwrap();
    assert_eq!(unsharded.metadata.shard_info, None);
    assert_eq!(unsharded.items.len(), 4);
    if cluster.is_real() {
        assert_eq!(
            list.metadata.shard_info, None,
            "1.20.2 ignores shardSelector"
        );
        assert_eq!(list.items.len(), 4);
        return;
    }
    let info = list
        .metadata
        .shard_info
        .expect("the server echoes the selector");
    assert_eq!(info.selector, canonical.to_string());
    let want = uids
        .iter()
        .filter(|uid| {
            canonical.ranges()[0].contains(kcache_core::selector::fnv1a64(uid.as_bytes()))
        })
        .count();
    assert_eq!(list.items.len(), want);
    assert!(list.items.iter().all(|cm| canonical.matches(cm)));
}
