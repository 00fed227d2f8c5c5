//! KEP-5866 `shardSelector` on list and watch: two complementary uid ranges partition a
//! namespace's objects exactly, the list echoes the applied selector in `shardInfo`, and a
//! malformed selector is a 400. kube-apiserver 1.20.2 (the real-cluster tier) predates the
//! feature and ignores the parameter: there the test checks that it answers everything and no
//! `shardInfo`, which is how a client detects an unsharded answer.

use std::collections::BTreeSet;

use kcache_core::encode_query;
use kcache_core::selector::{fnv1a64, ShardField, ShardRange, ShardSelector};
use kcache_testing::RawResponse;
use serde_json::{json, Value};

use crate::common::{cluster, cms, create_cm, names, read_until, summary};

fn halves() -> [ShardSelector; 2] {
    [0, 1].map(|i| ShardRange::split(ShardField::Uid, i, 2).unwrap().into())
}

fn query(sel: &ShardSelector) -> String {
    encode_query(&[("shardSelector", sel.to_string())])
}

/// The ConfigMaps of `ns` listed with `sel`, answered 200.
async fn list(c: &kcache_testing::TestCluster, ns: &str, sel: &ShardSelector) -> RawResponse {
    let r = c
        .client()
        .get(&format!("{}?{}", cms(ns), query(sel)))
        .await
        .unwrap();
    assert_eq!(r.status, 200, "{}", r.body);
    r
}

fn in_range(sel: &ShardSelector, obj: &Value) -> bool {
    let uid = obj["metadata"]["uid"].as_str().unwrap();
    sel.matches_with(|_| fnv1a64(uid.as_bytes()))
}

#[tokio::test]
async fn complementary_ranges_partition_lists_and_watches() {
    let c = cluster().await;
    let ns = c.create_namespace("shards").await.unwrap();
    let start = c.client().get(&cms(&ns)).await.unwrap();
    let start_rv = start.body["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_string();
    let halves = halves();
    let mut watches = Vec::new();
    for sel in &halves {
        let path = format!(
            "{}?watch=true&resourceVersion={start_rv}&{}",
            cms(&ns),
            query(sel)
        );
        watches.push(c.client().watch(&path).await.unwrap().expect("watch opens"));
    }
    let mut created = Vec::new();
    for i in 0..24 {
        created.push(create_cm(&c, &ns, &format!("cm-{i:02}"), json!({})).await);
    }
    let all: BTreeSet<String> = created
        .iter()
        .map(|o| o["metadata"]["name"].as_str().unwrap().to_string())
        .collect();
    let expected = |sel: &ShardSelector| -> BTreeSet<String> {
        created
            .iter()
            .filter(|o| in_range(sel, o))
            .map(|o| o["metadata"]["name"].as_str().unwrap().to_string())
            .collect()
    };

    let mut listed = Vec::new();
    for sel in &halves {
        let r = list(&c, &ns, sel).await;
        let got: BTreeSet<String> = names(&r.body).into_iter().collect();
        if c.is_real() {
            // An old server ignores the parameter: everything, and nothing saying it filtered.
            assert_eq!(got, all);
            assert!(r.body["metadata"].get("shardInfo").is_none(), "{}", r.body);
            continue;
        }
        assert_eq!(got, expected(sel));
        assert_eq!(
            r.body["metadata"]["shardInfo"]["selector"],
            sel.to_string(),
            "the applied selector is echoed"
        );
        listed.push(got);
    }
    if c.is_real() {
        return;
    }
    assert!(listed[0].is_disjoint(&listed[1]));
    assert_eq!(
        &listed[0] | &listed[1],
        all,
        "the halves cover every object"
    );
    assert!(
        !listed[0].is_empty() && !listed[1].is_empty(),
        "24 uids land on both sides"
    );

    // Each watch sees exactly its half's ADDs, in order.
    for (sel, w) in halves.iter().zip(watches.iter_mut()) {
        let want = expected(sel);
        let events = read_until(w, |got| got.len() == want.len()).await;
        let got: BTreeSet<String> = summary(&events)
            .into_iter()
            .map(|(ty, name)| {
                assert_eq!(ty, "ADDED");
                name
            })
            .collect();
        assert_eq!(got, want);
    }
    // Deleting an object of the first half reaches only the first watch: the second one's next
    // event is the later update of one of its own objects.
    let (first, second): (Vec<&Value>, Vec<&Value>) =
        created.iter().partition(|o| in_range(&halves[0], o));
    let gone = first[0]["metadata"]["name"].as_str().unwrap();
    let kept = second[0]["metadata"]["name"].as_str().unwrap();
    let del = c
        .client()
        .delete(&format!("{}/{gone}", cms(&ns)))
        .await
        .unwrap();
    assert_eq!(del.status, 200, "{}", del.body);
    let patch = c
        .client()
        .patch(
            &format!("{}/{kept}", cms(&ns)),
            "application/merge-patch+json",
            &json!({"data": {"k": "changed"}}),
        )
        .await
        .unwrap();
    assert_eq!(patch.status, 200, "{}", patch.body);
    let a = read_until(&mut watches[0], |got| !got.is_empty()).await;
    assert_eq!(summary(&a), [("DELETED".to_string(), gone.to_string())]);
    let b = read_until(&mut watches[1], |got| !got.is_empty()).await;
    assert_eq!(summary(&b), [("MODIFIED".to_string(), kept.to_string())]);
}

#[tokio::test]
async fn a_malformed_shard_selector_is_a_bad_request() {
    let c = cluster().await;
    if c.is_real() {
        crate::common::skip(
            "a_malformed_shard_selector_is_a_bad_request",
            "kube-apiserver 1.20.2 ignores shardSelector",
        );
        return;
    }
    let bad = encode_query(&[(
        "shardSelector",
        "shardRange(object.metadata.name, '0x0', '0x8')".to_string(),
    )]);
    for path in [
        format!("/api/v1/configmaps?{bad}"),
        format!("/api/v1/configmaps?watch=true&{bad}"),
    ] {
        let r = c.client().get(&path).await.unwrap();
        assert_eq!(r.status, 400, "{path}: {}", r.body);
        assert_eq!(r.body["reason"], "BadRequest");
        let msg = r.body["message"].as_str().unwrap();
        assert!(
            msg.contains("unsupported field \"object.metadata.name\""),
            "{msg}"
        );
    }
}

/// With `ShardedListAndWatch` off the embedded server behaves as a server before 1.36: the
/// parameter is ignored, every object is listed and nothing is echoed.
#[tokio::test]
async fn with_the_gate_off_the_selector_is_ignored_and_not_echoed() {
    let config = kcache_testserver::ServerConfig {
        sharded_list_and_watch: false,
        ..kcache_testserver::ServerConfig::default()
    };
    let c = kcache_testing::TestCluster::start_with(config)
        .await
        .unwrap();
    if c.is_real() {
        return;
    }
    let ns = c.create_namespace("shards-off").await.unwrap();
    for i in 0..8 {
        create_cm(&c, &ns, &format!("cm-{i}"), json!({})).await;
    }
    let r = list(&c, &ns, &halves()[0]).await;
    assert_eq!(names(&r.body).len(), 8, "unfiltered");
    assert!(r.body["metadata"].get("shardInfo").is_none(), "{}", r.body);
}
