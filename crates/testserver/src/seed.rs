//! Seeding a server with many objects at once, for benchmarks at scale: realistic pods, the same
//! deployment-style pod client-go's benchmark (`cgbench -scenario podlist`) generates — ~4.3 KB
//! of JSON each, managedFields included — so both sides of a comparison list the same bytes.
//!
//! Seeded objects go straight into the store: the JSON is serialized once, there, and no other
//! copy is kept (the [`Value`] of each pod is dropped as soon as it is stored).

use serde_json::{json, Value};

use crate::storage::{object_key, Expect};
use crate::test_server::TestServer;
use crate::Error;

/// Namespaces the realistic pods are spread over (`ns-0` … `ns-99`).
pub const POD_NAMESPACES: usize = 100;

const T0: &str = "2023-11-14T22:13:20Z";
const OWNER_UID: &str = "3b1f2c1e-8a4b-4f7e-9c55-1234567890ab";

/// The `i`th realistic pod: pod `i` of the `cgbench -scenario podlist` fixture (its `MakePod`),
/// without a resourceVersion (the server assigns one).
pub fn realistic_pod(i: usize) -> Value {
    let app = format!("app-{}", i % 1000);
    let rs = format!("{app}-7d9f8c6b5");
    let image = format!("registry.example.com/team/{app}:v1.2.3");
    let toleration = |key: &str| json!({"key": key, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300});
    let condition = |ty: &str| json!({"type": ty, "status": "True", "lastProbeTime": null, "lastTransitionTime": T0});
    json!({
        "kind": "Pod",
        "apiVersion": "v1",
        "metadata": {
            "name": format!("{rs}-{i:05x}"),
            "generateName": format!("{rs}-"),
            "namespace": format!("ns-{}", i % POD_NAMESPACES),
            "uid": format!("a1b2c3d4-0000-4000-8000-{i:012}"),
            "creationTimestamp": T0,
            "labels": {"app": app, "pod-template-hash": "7d9f8c6b5", "tier": "backend"},
            "annotations": {"kubernetes.io/psp": "restricted", "prometheus.io/scrape": "true"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": rs,
                                 "uid": OWNER_UID, "controller": true, "blockOwnerDeletion": true}],
            "managedFields": managed_fields(),
        },
        "spec": {
            "volumes": [{"name": "default-token-abcde", "secret": {"secretName": "default-token-abcde"}}],
            "containers": [{
                "name": "main",
                "image": image,
                "ports": [{"name": "http", "containerPort": 8080, "protocol": "TCP"}],
                "env": [{"name": "LOG_LEVEL", "value": "info"},
                        {"name": "POD_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}}],
                "resources": {"limits": {"cpu": "500m", "memory": "256Mi"},
                              "requests": {"cpu": "100m", "memory": "128Mi"}},
                "volumeMounts": [{"name": "default-token-abcde", "readOnly": true,
                                  "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"}],
                "readinessProbe": {"httpGet": {"path": "/healthz", "port": 8080, "scheme": "HTTP"},
                                   "timeoutSeconds": 1, "periodSeconds": 10,
                                   "successThreshold": 1, "failureThreshold": 3},
                "terminationMessagePath": "/dev/termination-log",
                "terminationMessagePolicy": "File",
                "imagePullPolicy": "IfNotPresent",
            }],
            "restartPolicy": "Always",
            "terminationGracePeriodSeconds": 30,
            "dnsPolicy": "ClusterFirst",
            "serviceAccountName": "default",
            "serviceAccount": "default",
            "nodeName": format!("node-{}", i % 5000),
            "securityContext": {},
            "schedulerName": "default-scheduler",
            "tolerations": [toleration("node.kubernetes.io/not-ready"),
                            toleration("node.kubernetes.io/unreachable")],
            "priority": 0,
            "enableServiceLinks": true,
            "preemptionPolicy": "PreemptLowerPriority",
        },
        "status": {
            "phase": "Running",
            "conditions": [condition("Initialized"), condition("Ready"),
                           condition("ContainersReady"), condition("PodScheduled")],
            "hostIP": "10.0.0.1",
            "podIP": "10.1.2.3",
            "podIPs": [{"ip": "10.1.2.3"}],
            "startTime": T0,
            "containerStatuses": [{
                "name": "main",
                "state": {"running": {"startedAt": T0}},
                "lastState": {},
                "ready": true,
                "restartCount": 0,
                "image": image,
                "imageID": "docker-pullable://registry.example.com/team/app@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
                "containerID": "containerd://0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
                "started": true,
            }],
            "qosClass": "Burstable",
        },
    })
}

/// The two managedFields entries every realistic pod carries (the controller manager's and
/// the kubelet's).
fn managed_fields() -> Value {
    let entry = |manager: &str, fields: Value| {
        json!({"manager": manager, "operation": "Update", "apiVersion": "v1", "time": T0,
               "fieldsType": "FieldsV1", "fieldsV1": fields})
    };
    let probe = json!({".": {}, "f:lastProbeTime": {}, "f:lastTransitionTime": {}, "f:status": {}, "f:type": {}});
    json!([
        entry(
            "kube-controller-manager",
            json!({
                "f:metadata": {
                    "f:generateName": {},
                    "f:labels": {".": {}, "f:app": {}, "f:pod-template-hash": {}, "f:tier": {}},
                    "f:ownerReferences": {".": {}, format!("k:{{\"uid\":\"{OWNER_UID}\"}}"): {}},
                },
                "f:spec": {
                    "f:containers": {"k:{\"name\":\"main\"}": {
                        ".": {}, "f:env": {}, "f:image": {}, "f:imagePullPolicy": {}, "f:name": {},
                        "f:ports": {}, "f:readinessProbe": {}, "f:resources": {}}},
                    "f:dnsPolicy": {}, "f:restartPolicy": {}, "f:schedulerName": {},
                    "f:securityContext": {}, "f:terminationGracePeriodSeconds": {},
                },
            })
        ),
        entry(
            "kubelet",
            json!({
                "f:status": {
                    "f:conditions": {
                        "k:{\"type\":\"ContainersReady\"}": probe,
                        "k:{\"type\":\"Initialized\"}": probe,
                        "k:{\"type\":\"Ready\"}": probe,
                    },
                    "f:containerStatuses": {}, "f:hostIP": {}, "f:phase": {}, "f:podIP": {},
                    "f:podIPs": {".": {}, "k:{\"ip\":\"10.1.2.3\"}": {".": {}, "f:ip": {}}},
                    "f:startTime": {},
                },
            })
        ),
    ])
}

impl TestServer {
    /// Stores `count` realistic pods ([`realistic_pod`] `0..count`) and their namespaces,
    /// straight into the store: no admission, no managedFields bookkeeping (the pods carry
    /// their own), one serialization each. A benchmark's way to hold a million pods. The pods'
    /// ReplicaSets are not seeded, so start the server with
    /// [`ServerConfig::kube_controller_manager`](crate::ServerConfig) off: a cluster's garbage
    /// collector would delete pods whose owner is gone.
    pub fn seed_realistic_pods(&self, count: usize) -> Result<(), Error> {
        let seed_error = |message: String| Error::Option {
            option: format!("pods={count}"),
            message,
        };
        let namespaces = crate::test_server::namespaces();
        for ns in 0..POD_NAMESPACES.min(count) {
            let obj = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": format!("ns-{ns}")}});
            match self.create(&namespaces, obj) {
                Ok(_) => {}
                Err(s) if s.code == 409 => {}
                Err(s) => return Err(seed_error(s.message)),
            }
        }
        let pods = self
            .state
            .resources
            .get("", "v1", "pods")
            .ok_or_else(|| seed_error("pods are not served".into()))?;
        for i in 0..count {
            let pod = realistic_pod(i);
            let key = object_key(
                pod["metadata"]["namespace"].as_str(),
                pod["metadata"]["name"].as_str().unwrap_or_default(),
            );
            // An existing pod of the same name is overwritten: seeding twice is idempotent.
            let expect = match self.state.storage.get(&pods, &key) {
                Some(old) => Expect::Rv(old.rv),
                None => Expect::Absent,
            };
            self.state
                .storage
                .put(&pods, &key, expect, pod)
                .map_err(|e| seed_error(format!("pod {key}: {e:?}")))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pods_are_spread_like_the_fixture() {
        let p = realistic_pod(1234);
        assert_eq!(p["metadata"]["name"], "app-234-7d9f8c6b5-004d2");
        assert_eq!(p["metadata"]["namespace"], "ns-34");
        assert_eq!(p["spec"]["nodeName"], "node-1234");
        assert_eq!(p["metadata"]["uid"], "a1b2c3d4-0000-4000-8000-000000001234");
    }
}
