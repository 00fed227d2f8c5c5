//! One CRUD + watch body for every resource kube-apiserver 1.20.2 serves with the stored verbs,
//! generated from the checked-in discovery (`testdata/kube-apiserver-1.20.2/discovery.json`):
//! create, get, list, watch, update, merge patch and delete, with the watch seeing the writes.
//! It runs on the embedded server and, with `KCACHE_TEST_KUBECONFIG`, on a real cluster.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use crate::common::{cluster, read_until};

const REFERENCE: &str = include_str!("../testdata/kube-apiserver-1.20.2/discovery.json");

/// A PKCS#10 request (base64 of its PEM) the real server accepts in a CSR.
const CSR: &str = "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURSBSRVFVRVNULS0tLS0KTUlIUE1IZ0NBUUF3RmpFVU1CSUdBMVVFQXd3TGEyTmhZMmhsTFhSbGMzUXdXVEFUQmdjcWhrak9QUUlCQmdncQpoa2pPUFFNQkJ3TkNBQVNHR3VDWmdtVlV0NFV2alB6TDZnRGpSbmhWRHlNeTVDdWlMZkVlbzhnOWt5R0wzNVRlCmlZRmZBZjlTb1lBOFdTTjVaWnhkeEZrZngzSkpCYnU1ZWNkU29BQXdDZ1lJS29aSXpqMEVBd0lEUndBd1JBSWcKVkZLQ2J3OWVpZTZRaU9zcWd5WndKU0tIZlZFMVhkRVpTVk82bmtHd2Qya0NJQjBjdndFMi9sc2tqWlVuNHY2QwphSlNCTHF5QXVad0RqNzJLWWRla01oVE0KLS0tLS1FTkQgQ0VSVElGSUNBVEUgUkVRVUVTVC0tLS0tCg==";

/// A body the real server accepts for `group/version/plural`, beside `metadata`.
fn sample(group: &str, version: &str, plural: &str, ns: &str) -> Option<Value> {
    let containers = json!([{"name": "c", "image": "busybox"}]);
    let template = json!({"metadata": {"labels": {"a": "b"}}, "spec": {"containers": containers}});
    let selector = json!({"matchLabels": {"a": "b"}});
    let crd_group = format!("{ns}.example.com");
    Some(match (group, version, plural) {
        ("", _, "configmaps") => json!({"data": {"a": "b"}}),
        ("", _, "secrets") => json!({"type": "Opaque", "data": {}}),
        ("", _, "endpoints" | "serviceaccounts" | "nodes" | "namespaces") => json!({}),
        ("", _, "events") => {
            json!({"involvedObject": {"kind": "Pod", "name": "p", "namespace": ns}})
        }
        ("", _, "limitranges") => {
            json!({"spec": {"limits": [{"type": "Container", "max": {"cpu": "1"}}]}})
        }
        ("", _, "persistentvolumeclaims") => json!({"spec": {"accessModes": ["ReadWriteOnce"],
            "resources": {"requests": {"storage": "1Gi"}}}}),
        ("", _, "persistentvolumes") => json!({"spec": {"capacity": {"storage": "1Gi"},
            "accessModes": ["ReadWriteOnce"], "hostPath": {"path": "/tmp"}}}),
        ("", _, "pods") => json!({"spec": {"containers": containers}}),
        ("", _, "podtemplates") => json!({"template": template}),
        ("", _, "replicationcontrollers") => {
            json!({"spec": {"selector": {"a": "b"}, "template": template}})
        }
        ("", _, "resourcequotas") => json!({"spec": {"hard": {"pods": "1"}}}),
        ("", _, "services") => json!({"spec": {"ports": [{"port": 80}]}}),
        ("admissionregistration.k8s.io", _, _) => json!({}),
        ("apiextensions.k8s.io", "v1", _) => {
            json!({"spec": {"group": crd_group, "scope": "Namespaced",
            "names": {"plural": "widgets", "kind": "Widget"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                          "schema": {"openAPIV3Schema": {"type": "object"}}}]}})
        }
        ("apiextensions.k8s.io", _, _) => {
            json!({"spec": {"group": crd_group, "scope": "Namespaced",
            "names": {"plural": "widgets", "kind": "Widget"}, "version": "v1",
            "versions": [{"name": "v1", "served": true, "storage": true}]}})
        }
        ("apiregistration.k8s.io", _, _) => {
            json!({"spec": {"group": crd_group, "version": "v1alpha1", "groupPriorityMinimum": 1000,
            "versionPriority": 15, "service": {"name": "api", "namespace": ns}}})
        }
        ("apps", _, "controllerrevisions") => json!({"data": {}, "revision": 1}),
        ("apps", _, "daemonsets" | "deployments" | "replicasets") => {
            json!({"spec": {"selector": selector, "template": template}})
        }
        ("apps", _, "statefulsets") => {
            json!({"spec": {"selector": selector, "serviceName": "s", "template": template}})
        }
        ("autoscaling", _, _) => json!({"spec": {"maxReplicas": 2,
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "d"}}}),
        ("batch", _, "jobs") => {
            json!({"spec": {"template": {"spec": {"restartPolicy": "Never", "containers": containers}}}})
        }
        ("batch", _, "cronjobs") => {
            json!({"spec": {"schedule": "*/5 * * * *", "jobTemplate": {"spec": {"template":
            {"spec": {"restartPolicy": "Never", "containers": containers}}}}}})
        }
        ("certificates.k8s.io", _, _) => {
            json!({"spec": {"request": CSR, "signerName": "example.com/signer",
            "usages": ["digital signature"]}})
        }
        ("coordination.k8s.io", _, _) => json!({}),
        ("discovery.k8s.io", _, _) => json!({"addressType": "IPv4", "endpoints": []}),
        ("events.k8s.io", _, _) => {
            json!({"eventTime": "2021-01-13T13:20:00.000000Z", "reportingController": "kcache/test",
            "reportingInstance": "i", "action": "Test", "reason": "Test", "type": "Normal",
            "regarding": {"kind": "Pod", "name": "p", "namespace": ns}})
        }
        ("extensions" | "networking.k8s.io", "v1beta1", "ingresses") => {
            json!({"spec": {"backend": {"serviceName": "s", "servicePort": 80}}})
        }
        ("networking.k8s.io", _, "ingresses") => {
            json!({"spec": {"defaultBackend": {"service": {"name": "s", "port": {"number": 80}}}}})
        }
        ("networking.k8s.io", _, "ingressclasses") => {
            json!({"spec": {"controller": "example.com/c"}})
        }
        ("networking.k8s.io", _, "networkpolicies") => json!({"spec": {"podSelector": {}}}),
        ("flowcontrol.apiserver.k8s.io", _, "flowschemas") => {
            json!({"spec": {"matchingPrecedence": 5000,
            "priorityLevelConfiguration": {"name": "global-default"}}})
        }
        ("flowcontrol.apiserver.k8s.io", _, _) => json!({"spec": {"type": "Limited",
            "limited": {"assuredConcurrencyShares": 1, "limitResponse": {"type": "Reject"}}}}),
        ("node.k8s.io", _, _) => json!({"handler": "h"}),
        ("policy", _, "poddisruptionbudgets") => json!({"spec": {"minAvailable": 1}}),
        ("policy", _, "podsecuritypolicies") => json!({"spec": {"seLinux": {"rule": "RunAsAny"},
            "runAsUser": {"rule": "RunAsAny"}, "supplementalGroups": {"rule": "RunAsAny"}, "fsGroup": {"rule": "RunAsAny"}}}),
        ("rbac.authorization.k8s.io", _, "roles" | "clusterroles") => json!({"rules": []}),
        ("rbac.authorization.k8s.io", _, _) => {
            json!({"roleRef": {"apiGroup": "rbac.authorization.k8s.io",
            "kind": "ClusterRole", "name": "view"}})
        }
        ("scheduling.k8s.io", _, _) => json!({"value": 100}),
        ("storage.k8s.io", _, "csidrivers") => json!({"spec": {}}),
        ("storage.k8s.io", _, "csinodes") => json!({"spec": {"drivers": []}}),
        ("storage.k8s.io", _, "storageclasses") => json!({"provisioner": "example.com/p"}),
        ("storage.k8s.io", _, "volumeattachments") => {
            json!({"spec": {"attacher": "a", "nodeName": "n",
            "source": {"persistentVolumeName": "p"}}})
        }
        _ => return None,
    })
}

/// A resource of the reference discovery that serves the stored verbs.
struct Served {
    group: String,
    version: String,
    plural: String,
    kind: String,
    namespaced: bool,
}

impl Served {
    fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    fn collection(&self, ns: &str) -> String {
        let prefix = if self.group.is_empty() {
            format!("/api/{}", self.version)
        } else {
            format!("/apis/{}", self.api_version())
        };
        if self.namespaced {
            format!("{prefix}/namespaces/{ns}/{}", self.plural)
        } else {
            format!("{prefix}/{}", self.plural)
        }
    }
}

/// Whether `other` is another version of `r`'s resource, served over the same stored object:
/// the versions of a group, and the groups the real server serves over one storage.
fn shares_storage(r: &Served, other: &Served) -> bool {
    let groups = [r.group.as_str(), other.group.as_str()];
    let same_storage = groups[0] == groups[1]
        || [["", "events.k8s.io"], ["extensions", "networking.k8s.io"]]
            .iter()
            .any(|pair| pair.contains(&groups[0]) && pair.contains(&groups[1]));
    same_storage && other.plural == r.plural && other.api_version() != r.api_version()
}

fn served() -> Vec<Served> {
    let docs: BTreeMap<String, Value> = serde_json::from_str(REFERENCE).unwrap();
    let mut out = Vec::new();
    for doc in docs.values().filter(|d| d["kind"] == "APIResourceList") {
        let gv = doc["groupVersion"].as_str().unwrap();
        let (group, version) = gv.rsplit_once('/').unwrap_or(("", gv));
        for r in doc["resources"].as_array().unwrap() {
            let verbs = r["verbs"].as_array().unwrap();
            let all = [
                "create", "get", "list", "watch", "update", "patch", "delete",
            ];
            let name = r["name"].as_str().unwrap();
            if name.contains('/') || !all.iter().all(|v| verbs.iter().any(|x| x == v)) {
                continue;
            }
            out.push(Served {
                group: group.into(),
                version: version.into(),
                plural: name.into(),
                kind: r["kind"].as_str().unwrap().into(),
                namespaced: r["namespaced"].as_bool().unwrap(),
            });
        }
    }
    out
}

#[tokio::test]
async fn every_stored_resource_creates_reads_watches_updates_patches_and_deletes() {
    let c = cluster().await;
    let ns = c.create_namespace("every").await.unwrap();
    let served = served();
    assert!(served.len() > 60, "{}", served.len());
    let mut ran = 0;
    for r in &served {
        let what = format!("{}/{} {}", r.group, r.version, r.plural);
        let api_version = r.api_version();
        let collection = r.collection(&ns);
        // One name for every version: the real server keeps one object for all of them.
        let name = match r.plural.as_str() {
            "customresourcedefinitions" => format!("widgets.{ns}.example.com"),
            "apiservices" => format!("v1alpha1.{ns}.example.com"),
            _ if r.namespaced => "x".to_string(),
            _ => format!("{ns}-x"),
        };
        let mut body = sample(&r.group, &r.version, &r.plural, &ns)
            .unwrap_or_else(|| panic!("no sample for {what}"));
        body["apiVersion"] = json!(api_version);
        body["kind"] = json!(r.kind);
        body["metadata"] = json!({"name": name});
        let client = c.client();
        let created = client.post(&collection, &body).await.unwrap();
        assert_eq!(created.status, 201, "create {what}: {}", created.body);
        let item = format!("{collection}/{name}");
        let got = client.get(&item).await.unwrap();
        assert_eq!(got.status, 200, "get {what}: {}", got.body);
        assert_eq!(got.body["kind"], r.kind.as_str(), "{what}");
        let list = client.get(&collection).await.unwrap();
        assert_eq!(list.status, 200, "list {what}: {}", list.body);
        assert!(
            list.body["items"]
                .as_array()
                .unwrap()
                .iter()
                .any(|i| i["metadata"]["name"] == name.as_str()),
            "list {what}"
        );
        let rv = list.body["metadata"]["resourceVersion"]
            .as_str()
            .unwrap()
            .to_string();
        let mut watch = client
            .watch(&format!(
                "{collection}?watch=1&resourceVersion={rv}&fieldSelector=metadata.name%3D{name}"
            ))
            .await
            .unwrap()
            .unwrap_or_else(|r| panic!("watch {what}: {}", r.body));
        // A real cluster's controllers may write it meanwhile (a CRD's conditions): read again.
        let mut current = got.body;
        let put = loop {
            let mut update = current.clone();
            update["metadata"]["labels"] = json!({"updated": "yes"});
            let put = client.put(&item, &update).await.unwrap();
            if put.status != 409 {
                break put;
            }
            current = client.get(&item).await.unwrap().body;
        };
        assert_eq!(put.status, 200, "update {what}: {}", put.body);
        assert_eq!(put.body["metadata"]["labels"]["updated"], "yes", "{what}");
        let patch = json!({"metadata": {"annotations": {"patched": "yes"}}});
        let patched = client
            .patch(&item, "application/merge-patch+json", &patch)
            .await
            .unwrap();
        assert_eq!(patched.status, 200, "patch {what}: {}", patched.body);
        assert_eq!(
            patched.body["metadata"]["labels"]["updated"], "yes",
            "{what}"
        );
        assert_eq!(
            patched.body["metadata"]["annotations"]["patched"], "yes",
            "{what}"
        );
        for other in served.iter().filter(|o| shares_storage(r, o)) {
            let what = format!("{what} read as {}", other.version);
            let item = format!("{}/{name}", other.collection(&ns));
            let got = client.get(&item).await.unwrap();
            assert_eq!(got.status, 200, "get {what}: {}", got.body);
            assert_eq!(got.body["apiVersion"], other.api_version(), "{what}");
            assert_eq!(got.body["metadata"]["labels"]["updated"], "yes", "{what}");
            assert_eq!(
                got.body["metadata"]["resourceVersion"],
                patched.body["metadata"]["resourceVersion"],
                "{what}"
            );
            let mut again = sample(&other.group, &other.version, &other.plural, &ns).unwrap();
            again["apiVersion"] = json!(other.api_version());
            again["kind"] = json!(other.kind);
            again["metadata"] = json!({"name": name});
            let exists = client.post(&other.collection(&ns), &again).await.unwrap();
            assert_eq!(exists.status, 409, "create {what}: {}", exists.body);
            assert_eq!(exists.body["reason"], "AlreadyExists", "{what}");
        }
        let deleted = client.delete(&item).await.unwrap();
        assert_eq!(deleted.status, 200, "delete {what}: {}", deleted.body);
        // Gone, or held by a finalizer (namespaces, volumes' protection) with its deletionTimestamp.
        let after = client.get(&item).await.unwrap();
        let held = after.status == 200 && after.body["metadata"]["deletionTimestamp"].is_string();
        assert!(
            after.status == 404 || held,
            "after delete {what}: {} {}",
            after.status,
            after.body
        );
        // The next version creates the same name: wait until this one is gone (a CRD's
        // finalizer is removed by the server itself).
        let next_version = served.iter().any(|o| shares_storage(r, o));
        let events = read_until(&mut watch, |evs| {
            evs.iter().any(|e| {
                e["type"] == "DELETED"
                    || (!next_version && e["object"]["metadata"]["deletionTimestamp"].is_string())
            })
        })
        .await;
        let types: Vec<&str> = events.iter().filter_map(|e| e["type"].as_str()).collect();
        let modified = types.iter().filter(|t| **t == "MODIFIED").count();
        assert!(
            modified >= 2 && !types.contains(&"ADDED"),
            "watch {what}: {types:?}"
        );
        ran += 1;
    }
    assert_eq!(ran, served.len(), "every stored resource ran");
}
