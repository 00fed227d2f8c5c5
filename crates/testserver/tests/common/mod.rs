//! Shared helpers of the integration tests: the cluster (embedded or `KCACHE_TEST_KUBECONFIG`),
//! object builders and a bounded watch reader.

#![allow(dead_code)]

use std::time::Duration;

use kcache_testing::{TestCluster, WatchReader, ROOT_CA_CONFIGMAP};
use kcache_testserver::ServerConfig;
use serde_json::{json, Value};

/// A cluster whose embedded server behaves like kube-apiserver's defaults where tests can see
/// it: a 100-event watch window (the watch cache's default size), bookmarks every second.
pub async fn cluster() -> TestCluster {
    let config = ServerConfig {
        history_window: 100,
        bookmark_interval: Duration::from_secs(1),
        too_large_rv_wait: Duration::from_millis(300),
        ..ServerConfig::default()
    };
    TestCluster::start_with(config)
        .await
        .expect("test cluster starts")
}

/// Prints the marker the envtest tier collects: this case did not run here, and why.
pub fn skip(case: &str, reason: &str) {
    println!("kcache-skip: {case}: {reason}");
}

/// [`skip`] for a case whose prerequisite CI provides: under `CI=true` its absence fails the
/// test, so the check cannot silently vanish from CI.
#[track_caller]
pub fn skip_unless_ci(case: &str, reason: &str) {
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("{case} cannot run under CI=true: {reason}");
    }
    skip(case, reason);
}

/// A ConfigMap body.
pub fn cm(name: &str, labels: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "labels": labels}, "data": {"k": "v"}})
}

/// `/api/v1/namespaces/{ns}/configmaps`.
pub fn cms(ns: &str) -> String {
    format!("/api/v1/namespaces/{ns}/configmaps")
}

/// Creates a ConfigMap and returns it.
pub async fn create_cm(c: &TestCluster, ns: &str, name: &str, labels: Value) -> Value {
    let r = c.client().post(&cms(ns), &cm(name, labels)).await.unwrap();
    assert_eq!(r.status, 201, "{}", r.body);
    r.body
}

/// `metadata.resourceVersion` as a number.
pub fn rv(obj: &Value) -> u64 {
    obj["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap()
}

/// Whether a full cluster's controllers made `obj` (see [`ROOT_CA_CONFIGMAP`]): tests assert on
/// the objects they created, which never have that name.
pub fn made_by_cluster(obj: &Value) -> bool {
    obj["metadata"]["name"] == ROOT_CA_CONFIGMAP
}

/// Reads events until `done` holds for what was read (or the stream ends), leaving out events
/// about objects the cluster made; a 15 s guard turns a missing event into a test failure
/// instead of a hang.
pub async fn read_until(w: &mut WatchReader, mut done: impl FnMut(&[Value]) -> bool) -> Vec<Value> {
    let mut got = Vec::new();
    tokio::time::timeout(Duration::from_secs(15), async {
        while !done(&got) {
            match w.next().await {
                Some(Ok(ev)) if made_by_cluster(&ev["object"]) => {}
                Some(Ok(ev)) => got.push(ev),
                Some(Err(e)) => panic!("watch failed: {e}"),
                None => break,
            }
        }
    })
    .await
    .unwrap_or_else(|_| panic!("timed out; events so far: {got:?}"));
    got
}

/// Event types and object names, for compact assertions.
pub fn summary(events: &[Value]) -> Vec<(String, String)> {
    events
        .iter()
        .map(|e| {
            (
                e["type"].as_str().unwrap_or_default().to_string(),
                e["object"]["metadata"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
            )
        })
        .collect()
}

/// The names of a list's items, leaving out the objects the cluster made.
pub fn names(list: &Value) -> Vec<String> {
    list["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| !made_by_cluster(i))
        .map(|i| i["metadata"]["name"].as_str().unwrap().to_string())
        .collect()
}

/// How many of a list's items the cluster made.
pub fn made_by_cluster_count(list: &Value) -> usize {
    list["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| made_by_cluster(i))
        .count()
}

/// Creates `obj` at `path`, a custom resource collection, retrying while its CRD is not yet
/// served (the real server serves it once the CRD is established); the created object.
pub async fn create_when_served(c: &TestCluster, path: &str, obj: &Value) -> Value {
    for _ in 0..100 {
        let r = c.client().post(path, obj).await.unwrap();
        if r.status == 201 {
            return r.body;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("{path} is never served");
}
