//! What a client sees the cluster's controllers do to its objects: the garbage collector
//! (background, foreground and orphan deletion; owners partly gone), the namespace lifecycle
//! (Terminating, creates refused, content then namespace gone) and a deleted CRD's cleanup.
//! On a real server (`KCACHE_TEST_KUBECONFIG`) the GC and namespace cases need
//! kube-controller-manager; without it (envtest's lone kube-apiserver) they are skipped, said so.

use std::time::Duration;

use kcache_testing::TestCluster;
use serde_json::{json, Value};

use crate::common::{cluster, cms, skip};

const CRDS: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";

/// Polls `path` until `done` holds for its answer (status, body); panics after 30 s.
async fn wait_for(
    c: &TestCluster,
    path: &str,
    what: &str,
    done: impl Fn(u16, &Value) -> bool,
) -> Value {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let r = c.client().get(path).await.unwrap();
        if done(r.status.as_u16(), &r.body) {
            return r.body;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{path}: never {what}; last {} {}",
            r.status,
            r.body
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn gone(c: &TestCluster, path: &str) {
    wait_for(c, path, "gone", |s, _| s == 404).await;
}

/// Whether the namespace controller and garbage collector run: always on the embedded server;
/// on a real one, a probe namespace must go away (kube-controller-manager runs).
async fn controllers_run(c: &TestCluster, case: &str) -> bool {
    if !c.is_real() {
        return true;
    }
    let ns = c.create_namespace("kcache-probe").await.unwrap();
    c.client()
        .delete(&format!("/api/v1/namespaces/{ns}"))
        .await
        .unwrap();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while tokio::time::Instant::now() < deadline {
        if c.client()
            .get(&format!("/api/v1/namespaces/{ns}"))
            .await
            .unwrap()
            .status
            == 404
        {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    skip(
        case,
        "no kube-controller-manager here (a deleted namespace stays Terminating)",
    );
    false
}

async fn create(c: &TestCluster, path: &str, body: Value) -> Value {
    let r = c.client().post(path, &body).await.unwrap();
    assert_eq!(r.status, 201, "{}", r.body);
    r.body
}

fn owned_by(owner: &Value, block: bool) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "name": owner["metadata"]["name"],
           "uid": owner["metadata"]["uid"], "blockOwnerDeletion": block})
}

async fn dependent(c: &TestCluster, ns: &str, name: &str, owners: Vec<Value>) -> Value {
    create(
        c,
        &cms(ns),
        json!({"metadata": {"name": name, "ownerReferences": owners}}),
    )
    .await
}

async fn delete_with(c: &TestCluster, path: &str, policy: &str) -> Value {
    let r = c
        .client()
        .request(
            http::Method::DELETE,
            path,
            "application/json",
            serde_json::to_vec(&json!({"propagationPolicy": policy})).unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(r.status, 200, "{}", r.body);
    r.body
}

#[tokio::test]
async fn background_deletion_collects_dependents() {
    let c = cluster().await;
    if !controllers_run(&c, "background_deletion_collects_dependents").await {
        return;
    }
    let ns = c.create_namespace("gc-bg").await.unwrap();
    let owner = create(&c, &cms(&ns), json!({"metadata": {"name": "owner"}})).await;
    dependent(&c, &ns, "dep", vec![owned_by(&owner, false)]).await;
    delete_with(&c, &format!("{}/owner", cms(&ns)), "Background").await;
    gone(&c, &format!("{}/owner", cms(&ns))).await;
    gone(&c, &format!("{}/dep", cms(&ns))).await;
}

#[tokio::test]
async fn foreground_deletion_waits_for_blocking_dependents() {
    let c = cluster().await;
    if !controllers_run(&c, "foreground_deletion_waits_for_blocking_dependents").await {
        return;
    }
    let ns = c.create_namespace("gc-fg").await.unwrap();
    let owner = create(&c, &cms(&ns), json!({"metadata": {"name": "owner"}})).await;
    // A dependent held by a finalizer of its own keeps the owner waiting.
    create(
        &c,
        &cms(&ns),
        json!({"metadata": {"name": "dep", "finalizers": ["example.com/hold"],
                            "ownerReferences": [owned_by(&owner, true)]}}),
    )
    .await;
    let answer = delete_with(&c, &format!("{}/owner", cms(&ns)), "Foreground").await;
    assert!(
        answer["metadata"]["deletionTimestamp"].is_string(),
        "{answer}"
    );
    assert_eq!(
        answer["metadata"]["finalizers"],
        json!(["foregroundDeletion"])
    );
    let dep = wait_for(&c, &format!("{}/dep", cms(&ns)), "being deleted", |_, b| {
        b["metadata"]["deletionTimestamp"].is_string()
    })
    .await;
    let still = c
        .client()
        .get(&format!("{}/owner", cms(&ns)))
        .await
        .unwrap();
    assert_eq!(
        still.status, 200,
        "the owner waits for its blocking dependent"
    );
    assert_eq!(
        still.body["metadata"]["finalizers"],
        json!(["foregroundDeletion"])
    );
    let mut released = dep.clone();
    released["metadata"]["finalizers"] = json!([]);
    let r = c
        .client()
        .put(&format!("{}/dep", cms(&ns)), &released)
        .await
        .unwrap();
    assert_eq!(r.status, 200, "{}", r.body);
    gone(&c, &format!("{}/dep", cms(&ns))).await;
    gone(&c, &format!("{}/owner", cms(&ns))).await;
}

#[tokio::test]
async fn orphan_deletion_leaves_dependents_without_the_reference() {
    let c = cluster().await;
    if !controllers_run(
        &c,
        "orphan_deletion_leaves_dependents_without_the_reference",
    )
    .await
    {
        return;
    }
    let ns = c.create_namespace("gc-orphan").await.unwrap();
    let owner = create(&c, &cms(&ns), json!({"metadata": {"name": "owner"}})).await;
    dependent(&c, &ns, "dep", vec![owned_by(&owner, false)]).await;
    let answer = delete_with(&c, &format!("{}/owner", cms(&ns)), "Orphan").await;
    assert_eq!(answer["metadata"]["finalizers"], json!(["orphan"]));
    gone(&c, &format!("{}/owner", cms(&ns))).await;
    let dep = c.client().get(&format!("{}/dep", cms(&ns))).await.unwrap();
    assert_eq!(dep.status, 200, "{}", dep.body);
    assert!(
        dep.body["metadata"].get("ownerReferences").is_none(),
        "{}",
        dep.body
    );
}

#[tokio::test]
async fn a_dependent_with_a_surviving_owner_loses_only_the_gone_reference() {
    let c = cluster().await;
    if !controllers_run(
        &c,
        "a_dependent_with_a_surviving_owner_loses_only_the_gone_reference",
    )
    .await
    {
        return;
    }
    let ns = c.create_namespace("gc-two").await.unwrap();
    let first = create(&c, &cms(&ns), json!({"metadata": {"name": "first"}})).await;
    let second = create(&c, &cms(&ns), json!({"metadata": {"name": "second"}})).await;
    dependent(
        &c,
        &ns,
        "dep",
        vec![owned_by(&first, false), owned_by(&second, false)],
    )
    .await;
    delete_with(&c, &format!("{}/first", cms(&ns)), "Background").await;
    let dep = wait_for(
        &c,
        &format!("{}/dep", cms(&ns)),
        "left with one owner",
        |s, b| {
            s == 200
                && b["metadata"]["ownerReferences"]
                    .as_array()
                    .is_some_and(|r| r.len() == 1)
        },
    )
    .await;
    assert_eq!(
        dep["metadata"]["ownerReferences"][0]["uid"],
        second["metadata"]["uid"]
    );
}

#[tokio::test]
async fn a_deleted_namespace_terminates_refuses_creates_then_goes() {
    let c = cluster().await;
    if !controllers_run(
        &c,
        "a_deleted_namespace_terminates_refuses_creates_then_goes",
    )
    .await
    {
        return;
    }
    let ns = c.create_namespace("ns-life").await.unwrap();
    // A finalizer keeps one object, and so the namespace, until it is released.
    create(
        &c,
        &cms(&ns),
        json!({"metadata": {"name": "held", "finalizers": ["example.com/hold"]}}),
    )
    .await;
    create(&c, &cms(&ns), json!({"metadata": {"name": "plain"}})).await;
    let r = c
        .client()
        .delete(&format!("/api/v1/namespaces/{ns}"))
        .await
        .unwrap();
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["status"]["phase"], "Terminating");
    assert!(r.body["metadata"]["deletionTimestamp"].is_string());
    assert_eq!(r.body["spec"]["finalizers"], json!(["kubernetes"]));

    let refused = c
        .client()
        .post(&cms(&ns), &json!({"metadata": {"name": "late"}}))
        .await
        .unwrap();
    assert_eq!(refused.status, 403, "{}", refused.body);
    assert_eq!(refused.body["reason"], "Forbidden");
    assert_eq!(
        refused.body["message"],
        format!("configmaps \"late\" is forbidden: unable to create new content in namespace {ns} because it is being terminated")
    );
    assert_eq!(
        refused.body["details"]["causes"],
        json!([{"reason": "NamespaceTerminating", "message": format!("namespace {ns} is being terminated"),
                "field": "metadata.namespace"}])
    );

    gone(&c, &format!("{}/plain", cms(&ns))).await;
    let terminating = wait_for(
        &c,
        &format!("/api/v1/namespaces/{ns}"),
        "reporting what remains",
        |_, b| condition(b, "NamespaceFinalizersRemaining")["status"] == "True",
    )
    .await;
    assert_eq!(
        condition(&terminating, "NamespaceFinalizersRemaining")["message"],
        "Some content in the namespace has finalizers remaining: example.com/hold in 1 resource instances"
    );
    assert_eq!(
        condition(&terminating, "NamespaceContentRemaining")["message"],
        "Some resources are remaining: configmaps. has 1 resource instances"
    );
    assert_eq!(
        condition(&terminating, "NamespaceDeletionDiscoveryFailure")["reason"],
        "ResourcesDiscovered"
    );

    let held = c.client().get(&format!("{}/held", cms(&ns))).await.unwrap();
    let mut released = held.body.clone();
    released["metadata"]["finalizers"] = json!([]);
    let r = c
        .client()
        .put(&format!("{}/held", cms(&ns)), &released)
        .await
        .unwrap();
    assert_eq!(r.status, 200, "{}", r.body);
    gone(&c, &format!("/api/v1/namespaces/{ns}")).await;
}

fn condition<'a>(obj: &'a Value, type_: &str) -> &'a Value {
    obj["status"]["conditions"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["type"] == type_))
        .unwrap_or(&Value::Null)
}

#[tokio::test]
async fn an_immortal_namespace_may_not_be_deleted() {
    let c = cluster().await;
    let r = c
        .client()
        .delete("/api/v1/namespaces/kube-public")
        .await
        .unwrap();
    assert_eq!(r.status, 403, "{}", r.body);
    assert_eq!(
        r.body["message"],
        "namespaces \"kube-public\" is forbidden: this namespace may not be deleted"
    );
}

#[tokio::test]
async fn finalize_removes_the_namespace_finalizer() {
    let c = cluster().await;
    let ns = c.create_namespace("ns-fin").await.unwrap();
    let path = format!("/api/v1/namespaces/{ns}");
    let current = c.client().get(&path).await.unwrap().body;
    let mut body = current.clone();
    body["spec"]["finalizers"] = json!([]);
    let r = c
        .client()
        .put(&format!("{path}/finalize"), &body)
        .await
        .unwrap();
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(
        r.body["spec"]
            .get("finalizers")
            .is_none_or(|f| f == &json!([])),
        "{}",
        r.body
    );
    assert_eq!(r.body["status"]["phase"], "Active");
    // A plain update does not touch them.
    let mut plain = r.body.clone();
    plain["spec"]["finalizers"] = json!(["kubernetes"]);
    let u = c.client().put(&path, &plain).await.unwrap();
    assert_eq!(u.status, 200, "{}", u.body);
    assert!(
        u.body["spec"]
            .get("finalizers")
            .is_none_or(|f| f == &json!([])),
        "{}",
        u.body
    );
    // Even finalized, the first DELETE only marks it Terminating (nothing finalizes it again);
    // a second one finds no finalizer left and deletes it.
    let d = c.client().delete(&path).await.unwrap();
    assert_eq!(d.status, 200, "{}", d.body);
    assert_eq!(d.body["status"]["phase"], "Terminating");
    let again = c.client().delete(&path).await.unwrap();
    assert_eq!(again.status, 200, "{}", again.body);
    gone(&c, &path).await;
}

#[tokio::test]
async fn a_deleted_crd_terminates_removes_its_instances_then_goes() {
    let c = cluster().await;
    let ns = c.create_namespace("crd-clean").await.unwrap();
    let group = format!("{ns}.cleanup.example.com");
    let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("bars.{group}")},
        "spec": {"group": group, "scope": "Namespaced",
                 "names": {"plural": "bars", "singular": "bar", "kind": "Bar", "listKind": "BarList"},
                 "versions": [{"name": "v1", "served": true, "storage": true,
                               "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]}});
    create(&c, CRDS, crd).await;
    let bars = format!("/apis/{group}/v1/namespaces/{ns}/bars");
    wait_for(&c, &bars, "served", |s, _| s == 200).await;
    let bar = json!({"apiVersion": format!("{group}/v1"), "kind": "Bar"});
    let mut held = bar.clone();
    held["metadata"] = json!({"name": "held", "finalizers": ["example.com/hold"]});
    create(&c, &bars, held).await;
    let mut plain = bar.clone();
    plain["metadata"] = json!({"name": "plain"});
    create(&c, &bars, plain).await;

    let crd_path = format!("{CRDS}/bars.{group}");
    let r = c.client().delete(&crd_path).await.unwrap();
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(
        r.body["metadata"]["deletionTimestamp"].is_string(),
        "{}",
        r.body
    );
    assert_eq!(
        r.body["metadata"]["finalizers"],
        json!(["customresourcecleanup.apiextensions.k8s.io"])
    );
    assert_eq!(condition(&r.body, "Terminating")["status"], "True");

    gone(&c, &format!("{bars}/plain")).await;
    let terminating = wait_for(&c, &crd_path, "cleaning up", |_, b| {
        condition(b, "Terminating")["reason"] == "InstanceDeletionInProgress"
    })
    .await;
    assert_eq!(
        condition(&terminating, "Terminating")["message"],
        "CustomResource deletion is in progress"
    );
    let mut late = bar.clone();
    late["metadata"] = json!({"name": "late"});
    let refused = c.client().post(&bars, &late).await.unwrap();
    assert_eq!(refused.status, 405, "{}", refused.body);
    assert_eq!(
        refused.body["message"],
        "create not allowed while custom resource definition is terminating"
    );

    let current = c.client().get(&format!("{bars}/held")).await.unwrap().body;
    let mut released = current.clone();
    released["metadata"]["finalizers"] = json!([]);
    let u = c
        .client()
        .put(&format!("{bars}/held"), &released)
        .await
        .unwrap();
    assert_eq!(u.status, 200, "{}", u.body);
    gone(&c, &crd_path).await;
    wait_for(&c, &bars, "no longer served", |s, _| s == 404).await;
}

#[tokio::test]
async fn watchers_see_a_foreground_deletion_as_a_cluster_shows_it() {
    let c = cluster().await;
    if !controllers_run(
        &c,
        "watchers_see_a_foreground_deletion_as_a_cluster_shows_it",
    )
    .await
    {
        return;
    }
    let ns = c.create_namespace("gc-watch").await.unwrap();
    let owner = create(&c, &cms(&ns), json!({"metadata": {"name": "owner"}})).await;
    let dep = dependent(&c, &ns, "dep", vec![owned_by(&owner, true)]).await;
    let from = crate::common::rv(&dep);
    let mut w = c
        .client()
        .watch(&format!("{}?watch=1&resourceVersion={from}", cms(&ns)))
        .await
        .unwrap()
        .expect("the watch starts");
    delete_with(&c, &format!("{}/owner", cms(&ns)), "Foreground").await;
    let events = crate::common::read_until(&mut w, |got| {
        got.iter()
            .any(|e| e["type"] == "DELETED" && e["object"]["metadata"]["name"] == "owner")
    })
    .await;
    let seen: Vec<(String, String)> = crate::common::summary(&events);
    let pair = |t: &str, n: &str| (t.to_string(), n.to_string());
    assert_eq!(
        seen,
        vec![
            pair("MODIFIED", "owner"),
            pair("DELETED", "dep"),
            pair("DELETED", "owner")
        ]
    );
    assert!(events[0]["object"]["metadata"]["deletionTimestamp"].is_string());
    assert_eq!(
        events[0]["object"]["metadata"]["finalizers"],
        json!(["foregroundDeletion"])
    );
    let rvs: Vec<u64> = events
        .iter()
        .map(|e| crate::common::rv(&e["object"]))
        .collect();
    assert!(rvs.windows(2).all(|p| p[0] < p[1]), "{rvs:?}");
}

/// With `kube_controller_manager: false` the embedded server is envtest's lone kube-apiserver:
/// owners' dependents stay and a deleted namespace stays Terminating with its content. The
/// CRD finalizer still runs, in the same task, after every earlier write: once a CRD deleted
/// after them is gone, the controllers have seen them all.
#[tokio::test]
async fn without_kube_controller_manager_nothing_collects_or_terminates() {
    let config = kcache_testserver::ServerConfig {
        kube_controller_manager: false,
        ..kcache_testserver::ServerConfig::default()
    };
    let c = TestCluster::start_with(config).await.unwrap();
    if c.is_real() {
        skip(
            "without_kube_controller_manager_nothing_collects_or_terminates",
            "a switch of the embedded server",
        );
        return;
    }
    let ns = c.create_namespace("no-kcm").await.unwrap();
    let owner = create(&c, &cms(&ns), json!({"metadata": {"name": "owner"}})).await;
    dependent(&c, &ns, "dep", vec![owned_by(&owner, false)]).await;
    delete_with(&c, &format!("{}/owner", cms(&ns)), "Background").await;
    let r = c
        .client()
        .delete(&format!("/api/v1/namespaces/{ns}"))
        .await
        .unwrap();
    assert_eq!(r.body["status"]["phase"], "Terminating", "{}", r.body);

    let group = format!("{ns}.barrier.example.com");
    let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("bars.{group}")},
        "spec": {"group": group, "scope": "Cluster",
                 "names": {"plural": "bars", "singular": "bar", "kind": "Bar", "listKind": "BarList"},
                 "versions": [{"name": "v1", "served": true, "storage": true,
                               "schema": {"openAPIV3Schema": {"type": "object"}}}]}});
    create(&c, CRDS, crd).await;
    let crd_path = format!("{CRDS}/bars.{group}");
    c.client().delete(&crd_path).await.unwrap();
    gone(&c, &crd_path).await;

    let dep = c.client().get(&format!("{}/dep", cms(&ns))).await.unwrap();
    assert_eq!(dep.status, 200, "no garbage collector: {}", dep.body);
    let namespace = c
        .client()
        .get(&format!("/api/v1/namespaces/{ns}"))
        .await
        .unwrap();
    assert_eq!(namespace.body["status"]["phase"], "Terminating");
    assert!(
        namespace.body["status"].get("conditions").is_none(),
        "{}",
        namespace.body
    );
}
