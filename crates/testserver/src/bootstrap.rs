//! What a fresh kube-apiserver 1.20.2 holds: the objects it creates at start (the four
//! namespaces, the default RBAC roles and bindings, the system PriorityClasses, the default
//! FlowSchemas and PriorityLevelConfigurations, `default/kubernetes`, ...), read from the
//! checked-in `bootstrap.json` (made by `cargo xtask discovery-snapshot`). Each is created like
//! any object, so it gets a fresh uid, resourceVersion and creationTimestamp.

use serde_json::{json, Value};

const BOOTSTRAP_JSON: &str = include_str!("../testdata/kube-apiserver-1.20.2/bootstrap.json");

/// The bootstrap objects, namespaces first; the `default/kubernetes` Service targets `port`
/// at the first address of envtest's service range, as kube-apiserver's own Service does.
pub(crate) fn objects(port: u16) -> Vec<Value> {
    let mut objects: Vec<Value> =
        serde_json::from_str(BOOTSTRAP_JSON).expect("the embedded bootstrap.json is valid JSON");
    for o in &mut objects {
        if let Some(m) = o["metadata"].as_object_mut() {
            m.remove("generation");
        }
        if o["kind"] == "Service" && o["metadata"]["name"] == "kubernetes" {
            o["spec"]["ports"][0]["targetPort"] = json!(port);
            o["spec"]["clusterIP"] = json!("10.0.0.1");
            o["spec"]["clusterIPs"] = json!(["10.0.0.1"]);
        }
    }
    objects.sort_by_key(|o| o["kind"] != "Namespace");
    objects
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn namespaces_come_first_and_cluster_admin_is_there() {
        let objs = objects(6443);
        assert!(objs[..4].iter().all(|o| o["kind"] == "Namespace"));
        assert!(objs
            .iter()
            .any(|o| o["kind"] == "ClusterRole" && o["metadata"]["name"] == "cluster-admin"));
    }
}
