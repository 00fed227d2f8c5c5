//! `Compact<K>` gives back the `K` that decoding the JSON gives, and refuses, naming the object,
//! what does not decode as `K`.

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Pod, Secret};
use kcache_compact::Compact;
use kcache_core::{Object, Resource};
use proptest::prelude::*;
use serde::de::DeserializeOwned;
use serde_json::{json, Value};

/// A pod as the API server sends it, plus a field no Pod type has.
fn realistic_pod(name: &str) -> Value {
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {
            "name": name, "namespace": "prod", "uid": "6f1c-11", "resourceVersion": "812",
            "generateName": "web-7d9c-", "creationTimestamp": "2024-03-01T10:00:00Z",
            "labels": {"app": "web", "pod-template-hash": "7d9c"},
            "annotations": {},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-7d9c",
                "uid": "aa-1", "controller": true, "blockOwnerDeletion": true}],
            "managedFields": [{"manager": "kube-controller-manager", "operation": "Update",
                "apiVersion": "v1", "time": "2024-03-01T10:00:00Z", "fieldsType": "FieldsV1",
                "fieldsV1": {"f:metadata": {"f:labels": {".": {}, "f:app": {}}}}}]
        },
        "spec": {
            "containers": [{
                "name": "web", "image": "nginx:1.25", "args": [],
                "ports": [{"containerPort": 8080, "protocol": "TCP"}],
                "resources": {"limits": {"cpu": "500m", "memory": "128Mi"}, "requests": {"cpu": 0.25}},
                "livenessProbe": {"httpGet": {"path": "/healthz", "port": "http"}, "periodSeconds": 10},
                "readinessProbe": {"tcpSocket": {"port": 8080}},
                "env": [{"name": "MODE", "value": ""}, {"name": "POD", "valueFrom":
                    {"fieldRef": {"fieldPath": "metadata.name", "apiVersion": "v1"}}}],
                "futureField": {"nested": [1, 2.5, null]}
            }],
            "nodeName": "node-3", "priority": 0, "terminationGracePeriodSeconds": 30,
            "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists",
                "effect": "NoExecute", "tolerationSeconds": 300}],
            "securityContext": {}
        },
        "status": {
            "phase": "Running", "podIP": "10.0.0.7", "startTime": "2024-03-01T10:00:01Z",
            "conditions": [{"type": "Ready", "status": "True",
                "lastTransitionTime": "2024-03-01T10:00:05Z", "lastProbeTime": null}],
            "containerStatuses": [{"name": "web", "ready": true, "restartCount": 0, "image": "nginx:1.25",
                "imageID": "", "started": true, "state": {"running": {"startedAt": "2024-03-01T10:00:02Z"}}}]
        }
    })
}

/// `Compact<K>` decoded from `json` materializes as `K` decoded from the same JSON.
fn same_as_typed<K>(json: &Value) -> K
where
    K: DeserializeOwned + PartialEq + std::fmt::Debug + 'static,
{
    let text = serde_json::to_string(json).unwrap();
    let plain: K = serde_json::from_str(&text).unwrap();
    let compact: Compact<K> = serde_json::from_str(&text).unwrap();
    let typed = compact.to_typed().unwrap();
    assert_eq!(typed, plain);
    typed
}

#[test]
fn a_realistic_pod_materializes_as_the_typed_decode_does() {
    let pod: Pod = same_as_typed(&realistic_pod("web-7d9c-x1"));
    // Empty stays empty, absent stays absent, numbers keep their kind.
    let c = &pod.spec.as_ref().unwrap().containers[0];
    assert_eq!(c.args.as_deref(), Some(&[][..]));
    assert_eq!(c.command, None);
    assert_eq!(pod.metadata.annotations.as_ref().map(|a| a.len()), Some(0));
    assert_eq!(pod.spec.as_ref().unwrap().priority, Some(0));
    let requests = c.resources.as_ref().unwrap().requests.as_ref().unwrap();
    assert_eq!(requests["cpu"].0, "0.25");
}

#[test]
fn other_kinds_materialize_as_their_typed_decode_does() {
    same_as_typed::<ConfigMap>(&json!({
        "metadata": {"name": "c", "namespace": "ns"},
        "data": {"a": "1", "empty": ""}, "binaryData": {"b": "aGVsbG8="}, "immutable": false
    }));
    same_as_typed::<Secret>(&json!({
        "metadata": {"name": "s"}, "type": "Opaque", "data": {"k": "c2VjcmV0"}, "stringData": null
    }));
    same_as_typed::<Deployment>(&json!({
        "metadata": {"name": "d", "namespace": "ns", "generation": 4},
        "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}},
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 0}},
            "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": []}}},
        "status": {"observedGeneration": 4, "replicas": 3}
    }));
}

#[test]
fn reads_metadata_and_paths_without_materializing() {
    let pod: Compact<Pod> = serde_json::from_value(realistic_pod("p")).unwrap();
    assert_eq!((pod.name(), pod.namespace()), ("p", Some("prod")));
    assert_eq!(pod.label("app"), Some("web"));
    let node = pod.get(&["spec", "nodeName"]).and_then(|v| v.as_str());
    assert_eq!(node, Some("node-3"));
    assert_eq!(<Compact<Pod> as Resource>::PLURAL, "pods");
    let bumped = pod.with_resource_version("900");
    assert_eq!(
        bumped
            .to_typed()
            .unwrap()
            .metadata
            .resource_version
            .as_deref(),
        Some("900")
    );
}

#[test]
fn round_trips_through_a_typed_object() {
    let plain: Pod = serde_json::from_value(realistic_pod("p")).unwrap();
    let compact = Compact::from_typed(&plain).unwrap();
    assert_eq!(compact.to_typed().unwrap(), plain);
}

#[test]
fn an_object_that_is_not_a_k_is_refused_with_its_name() {
    let mut bad = realistic_pod("broken-1");
    bad["spec"]["containers"] = json!("not a list");
    let err = serde_json::from_value::<Compact<Pod>>(bad)
        .unwrap_err()
        .to_string();
    assert!(err.contains(r#"Pod "prod/broken-1""#), "{err}");
    assert!(err.contains("invalid type"), "{err}");
    let err = serde_json::from_value::<Compact<ConfigMap>>(
        json!({"metadata": {"name": "c"}, "data": {"a": 1}}),
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains(r#"ConfigMap "c""#), "{err}");
}

fn config_map() -> impl Strategy<Value = Value> {
    let text = "\\PC{0,8}";
    (
        "[a-z]{1,8}",
        proptest::option::of(prop::collection::btree_map("[a-z.]{1,6}", text, 0..4)),
        proptest::option::of(prop::collection::btree_map(
            "[a-z]{1,6}",
            "[A-Za-z0-9]{0,3}",
            0..3,
        )),
        proptest::option::of(any::<bool>()),
        proptest::option::of(prop::collection::btree_map("[a-z]{1,6}", text, 0..3)),
        any::<i64>(),
    )
        .prop_map(|(name, data, labels, immutable, unknown, generation)| {
            let mut v =
                json!({"metadata": {"name": name, "namespace": "ns", "generation": generation}});
            if let Some(d) = data {
                v["data"] = json!(d);
            }
            if let Some(l) = labels {
                v["metadata"]["labels"] = json!(l);
            }
            if let Some(i) = immutable {
                v["immutable"] = json!(i);
            }
            if let Some(u) = unknown {
                v["unknownField"] = json!(u);
            }
            v
        })
}

proptest! {
    #[test]
    fn any_config_map_materializes_as_its_typed_decode(cm in config_map()) {
        same_as_typed::<ConfigMap>(&cm);
    }
}

/// Typed, dynamic and compact objects read owner references, generation, deletion and
/// finalizers the same way from the same JSON (what predicates and `owns` rely on).
#[test]
fn every_representation_reads_owners_generation_and_finalizers_alike() {
    use kcache_core::{DynamicObject, Object, OwnerRef};
    let json = serde_json::json!({
        "apiVersion": "apps/v1", "kind": "ReplicaSet",
        "metadata": {
            "name": "rs", "namespace": "ns", "generation": 3,
            "deletionTimestamp": "2026-01-01T00:00:00Z",
            "finalizers": ["example.com/cleanup"],
            "ownerReferences": [
                {"apiVersion": "apps/v1", "kind": "Deployment", "name": "d", "uid": "u1",
                 "controller": true, "blockOwnerDeletion": true},
                {"apiVersion": "v1", "kind": "ConfigMap", "name": "c", "uid": "u2"}
            ]
        }
    });
    let typed: k8s_openapi::api::apps::v1::ReplicaSet =
        serde_json::from_value(json.clone()).unwrap();
    let dynamic: DynamicObject = serde_json::from_value(json.clone()).unwrap();
    let compact = kcache_compact::CompactObject::from_json(&json).unwrap();
    let deployment = OwnerRef {
        api_version: "apps/v1",
        kind: "Deployment",
        name: "d",
        uid: "u1",
        controller: true,
        block_owner_deletion: true,
    };
    let expected = vec![
        deployment,
        OwnerRef {
            api_version: "v1",
            kind: "ConfigMap",
            name: "c",
            uid: "u2",
            controller: false,
            block_owner_deletion: false,
        },
    ];
    let objects: [&dyn Object; 3] = [&typed, &dynamic, &compact];
    for o in objects {
        assert_eq!(o.owner_references(), expected);
        assert_eq!(o.controller_owner(), Some(deployment));
        assert_eq!(o.controller_owner().unwrap().group(), "apps");
        assert_eq!(expected[1].group(), "");
        assert_eq!(o.generation(), Some(3));
        assert!(o.is_deleting());
        assert!(o.has_finalizer("example.com/cleanup"));
        assert!(!o.has_finalizer("other"));
    }
    let bare: DynamicObject =
        serde_json::from_value(serde_json::json!({"metadata": {"name": "x"}})).unwrap();
    let bare_compact =
        kcache_compact::CompactObject::from_json(&serde_json::json!({"metadata": {"name": "x"}}))
            .unwrap();
    for o in [&bare as &dyn Object, &bare_compact] {
        assert!(o.owner_references().is_empty());
        assert_eq!(o.controller_owner(), None);
        assert_eq!(o.generation(), None);
        assert!(!o.is_deleting());
        assert!(!o.has_finalizer("example.com/cleanup"));
    }
}
