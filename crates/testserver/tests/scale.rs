//! `/scale` (`autoscaling/v1` Scale) of the built-in workloads and of custom resources whose
//! CRD enables `subresources.scale`; run against both servers like every conformance suite.

use crate::common;

use common::*;
use kcache_testing::TestCluster;
use serde_json::{json, Value};

fn workload(kind: &str, name: &str, replicas: i64) -> Value {
    let mut spec = json!({"replicas": replicas, "selector": {"matchLabels": {"app": name}},
        "template": {"metadata": {"labels": {"app": name}}, "spec": {"containers": [{"name": "c", "image": "busybox"}]}}});
    if kind == "StatefulSet" {
        spec["serviceName"] = json!(name);
    }
    json!({"apiVersion": "apps/v1", "kind": kind, "metadata": {"name": name}, "spec": spec})
}

async fn check_workload_scale(c: &TestCluster, ns: &str, kind: &str, plural: &str) {
    let base = format!("/apis/apps/v1/namespaces/{ns}/{plural}");
    let created = c
        .client()
        .post(&base, &workload(kind, "w", 2))
        .await
        .unwrap();
    assert_eq!(created.status, 201, "{}", created.body);
    let url = format!("{base}/w/scale");
    let scale = c.client().get(&url).await.unwrap();
    assert_eq!(scale.status, 200, "{}", scale.body);
    assert_eq!(scale.body["kind"], "Scale");
    assert_eq!(scale.body["apiVersion"], "autoscaling/v1");
    assert_eq!(scale.body["metadata"]["name"], "w");
    assert_eq!(
        scale.body["metadata"]["uid"],
        created.body["metadata"]["uid"]
    );
    assert_eq!(scale.body["spec"]["replicas"], 2);
    // A full cluster's workload controllers write status (and so the resourceVersion) at will.
    let controllers = c.runs_controllers().await.unwrap();
    if !controllers {
        assert_eq!(scale.body["status"]["replicas"], 0);
    }
    assert_eq!(scale.body["status"]["selector"], "app=w");

    let mut put = scale.body.clone();
    put["spec"]["replicas"] = json!(5);
    let mut updated = c.client().put(&url, &put).await.unwrap();
    // Read, modify, write again after a controller's status write, as a client would.
    for _ in 0..10 {
        if !(controllers && updated.status == 409) {
            break;
        }
        put = c.client().get(&url).await.unwrap().body;
        put["spec"]["replicas"] = json!(5);
        updated = c.client().put(&url, &put).await.unwrap();
    }
    assert_eq!(updated.status, 200, "{}", updated.body);
    assert_eq!(updated.body["spec"]["replicas"], 5);
    let obj = c.client().get(&format!("{base}/w")).await.unwrap().body;
    assert_eq!(obj["spec"]["replicas"], 5);
    assert_eq!(obj["metadata"]["generation"], 2);
    // A stale resourceVersion in the Scale is a conflict.
    let stale = c.client().put(&url, &put).await.unwrap();
    assert_eq!(stale.status, 409, "{}", stale.body);

    let patched = c
        .client()
        .patch(
            &url,
            "application/merge-patch+json",
            &json!({"spec": {"replicas": 3}}),
        )
        .await
        .unwrap();
    assert_eq!(patched.status, 200, "{}", patched.body);
    assert_eq!(patched.body["spec"]["replicas"], 3);

    let negative = c
        .client()
        .patch(
            &url,
            "application/merge-patch+json",
            &json!({"spec": {"replicas": -1}}),
        )
        .await
        .unwrap();
    assert_eq!(negative.status, 422, "{}", negative.body);
    assert_eq!(
        negative.body["details"]["causes"][0]["field"],
        "spec.replicas"
    );
    assert_eq!(negative.body["details"]["kind"], "Scale");
    assert_eq!(negative.body["details"]["group"], "autoscaling");
    let message = negative.body["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with("Scale.autoscaling \"")
            && message.ends_with(
                "is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0"
            ),
        "{message}"
    );

    let missing = c.client().get(&format!("{base}/nope/scale")).await.unwrap();
    assert_eq!(missing.status, 404);
    // As kube-apiserver 1.20 words it: statefulsets name the resource, the others the scale.
    let scale_storage = if plural == "statefulsets" {
        plural.to_string()
    } else {
        format!("{plural}/scale")
    };
    assert_eq!(
        missing.body["message"],
        format!("{scale_storage}.apps \"nope\" not found")
    );
}

#[tokio::test]
async fn builtin_workloads_scale() {
    let c = cluster().await;
    let ns = c.create_namespace("scale-builtin").await.unwrap();
    for (kind, plural) in [
        ("Deployment", "deployments"),
        ("ReplicaSet", "replicasets"),
        ("StatefulSet", "statefulsets"),
    ] {
        check_workload_scale(&c, &ns, kind, plural).await;
    }
    let disc = c.client().get("/apis/apps/v1").await.unwrap().body;
    let scale = disc["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "deployments/scale")
        .cloned()
        .expect("deployments/scale in discovery");
    assert_eq!(
        (&scale["group"], &scale["version"], &scale["kind"]),
        (&json!("autoscaling"), &json!("v1"), &json!("Scale"))
    );
}

#[tokio::test]
async fn custom_resources_scale_by_their_paths() {
    let c = cluster().await;
    let ns = c.create_namespace("scale-crd").await.unwrap();
    let group = format!("{ns}.kcache.test");
    let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("pools.{group}")},
        "spec": {"group": group, "scope": "Namespaced",
                 "names": {"plural": "pools", "singular": "pool", "kind": "Pool", "listKind": "PoolList"},
                 "versions": [{"name": "v1", "served": true, "storage": true,
                               "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.size",
                                   "statusReplicasPath": ".status.ready", "labelSelectorPath": ".status.selector"}},
                               "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]}});
    let r = c
        .client()
        .post(
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
            &crd,
        )
        .await
        .unwrap();
    assert_eq!(r.status, 201, "{}", r.body);
    let base = format!("/apis/{group}/v1/namespaces/{ns}/pools");
    let pool = json!({"apiVersion": format!("{group}/v1"), "kind": "Pool", "metadata": {"name": "p"}, "spec": {"size": 2}});
    let mut created = false;
    for _ in 0..100 {
        if c.client().post(&base, &pool).await.unwrap().status == 201 {
            created = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(created, "the CRD's resource gets served");
    let st = c
        .client()
        .patch(
            &format!("{base}/p/status"),
            "application/merge-patch+json",
            &json!({"status": {"ready": 1, "selector": "app=p"}}),
        )
        .await
        .unwrap();
    assert_eq!(st.status, 200, "{}", st.body);
    let url = format!("{base}/p/scale");
    let scale = c.client().get(&url).await.unwrap();
    assert_eq!(scale.status, 200, "{}", scale.body);
    assert_eq!(scale.body["apiVersion"], "autoscaling/v1");
    assert_eq!(scale.body["spec"]["replicas"], 2);
    assert_eq!(
        scale.body["status"],
        json!({"replicas": 1, "selector": "app=p"})
    );
    let patched = c
        .client()
        .patch(
            &url,
            "application/merge-patch+json",
            &json!({"spec": {"replicas": 4}}),
        )
        .await
        .unwrap();
    assert_eq!(patched.status, 200, "{}", patched.body);
    let obj = c.client().get(&format!("{base}/p")).await.unwrap().body;
    assert_eq!(obj["spec"]["size"], 4);
    let del = c
        .client()
        .delete(&format!(
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/pools.{group}"
        ))
        .await
        .unwrap();
    assert_eq!(del.status, 200);
}
