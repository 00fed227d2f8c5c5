//! Ingresses are one collection served as `networking.k8s.io/v1`, `networking.k8s.io/v1beta1`
//! and `extensions/v1beta1`, stored in the v1 shape, as on kube-apiserver 1.20.2.
//!
//! The v1beta1 shape (both groups) names the default backend `backend` instead of
//! `defaultBackend`, and a backend's Service as `serviceName` and `servicePort` (a number or a
//! port name) instead of `service: {name, port: {number | name}}`; v1beta1 defaults a path's
//! `pathType` to `ImplementationSpecific`, which v1 requires.

use serde_json::{json, Map, Value};

/// An incoming Ingress written as `from` (`apiVersion`) in the v1 shape.
pub(super) fn to_storage(from: &str, mut obj: Value) -> Value {
    if from == "networking.k8s.io/v1" {
        return obj;
    }
    let Some(spec) = obj["spec"].as_object_mut() else {
        return obj;
    };
    if let Some(backend) = spec.remove("backend") {
        spec.insert("defaultBackend".into(), backend_to_v1(backend));
    }
    for path in paths(spec) {
        if let Some(backend) = path.remove("backend") {
            path.insert("backend".into(), backend_to_v1(backend));
        }
        if path.get("pathType").is_none_or(Value::is_null) {
            path.insert("pathType".into(), json!("ImplementationSpecific"));
        }
    }
    obj
}

/// A stored (v1) Ingress in the v1beta1 shape.
pub(super) fn from_storage(mut obj: Value) -> Value {
    let Some(spec) = obj["spec"].as_object_mut() else {
        return obj;
    };
    if let Some(backend) = spec.remove("defaultBackend") {
        spec.insert("backend".into(), backend_to_v1beta1(backend));
    }
    for path in paths(spec) {
        if let Some(backend) = path.remove("backend") {
            path.insert("backend".into(), backend_to_v1beta1(backend));
        }
    }
    obj
}

/// Every `rules[].http.paths[]` of a spec.
fn paths(spec: &mut Map<String, Value>) -> impl Iterator<Item = &mut Map<String, Value>> {
    spec.get_mut("rules")
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
        .filter_map(|rule| rule["http"]["paths"].as_array_mut())
        .flatten()
        .filter_map(Value::as_object_mut)
}

/// `{serviceName, servicePort, resource}` → `{service: {name, port}, resource}`.
fn backend_to_v1(mut backend: Value) -> Value {
    let Some(b) = backend.as_object_mut() else {
        return backend;
    };
    let name = b.remove("serviceName");
    let port = b.remove("servicePort");
    if name.is_some() || port.is_some() {
        let mut service = json!({"name": name.unwrap_or(json!(""))});
        match port {
            Some(Value::String(p)) => service["port"] = json!({"name": p}),
            Some(p @ Value::Number(_)) => service["port"] = json!({"number": p}),
            _ => {}
        }
        b.insert("service".into(), service);
    }
    backend
}

/// `{service: {name, port}, resource}` → `{serviceName, servicePort, resource}`.
fn backend_to_v1beta1(mut backend: Value) -> Value {
    let Some(b) = backend.as_object_mut() else {
        return backend;
    };
    if let Some(service) = b.remove("service") {
        b.insert("serviceName".into(), service["name"].clone());
        let port = &service["port"];
        if let Some(n) = port.get("number").filter(|n| !n.is_null()) {
            b.insert("servicePort".into(), n.clone());
        } else if let Some(n) = port.get("name").filter(|n| !n.is_null()) {
            b.insert("servicePort".into(), n.clone());
        }
    }
    backend
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_v1beta1_ingress_is_stored_as_v1_and_read_back_the_same() {
        let b1 = json!({"spec": {"backend": {"serviceName": "s", "servicePort": 80},
            "rules": [{"host": "a.example.com", "http": {"paths": [
                {"path": "/", "backend": {"serviceName": "t", "servicePort": "http"}}]}}]}});
        let v1 = to_storage("extensions/v1beta1", b1.clone());
        assert_eq!(
            v1["spec"]["defaultBackend"],
            json!({"service": {"name": "s", "port": {"number": 80}}})
        );
        assert_eq!(
            v1["spec"]["rules"][0]["http"]["paths"][0],
            json!({"path": "/", "pathType": "ImplementationSpecific",
                   "backend": {"service": {"name": "t", "port": {"name": "http"}}}})
        );
        let mut expected = b1;
        expected["spec"]["rules"][0]["http"]["paths"][0]["pathType"] =
            json!("ImplementationSpecific");
        assert_eq!(from_storage(v1), expected);
    }

    #[test]
    fn a_resource_backend_is_the_same_in_both_shapes() {
        let backend = json!({"resource": {"apiGroup": "example.com", "kind": "B", "name": "b"}});
        let v1 = to_storage(
            "networking.k8s.io/v1beta1",
            json!({"spec": {"backend": backend.clone()}}),
        );
        assert_eq!(v1["spec"]["defaultBackend"], backend);
        assert_eq!(from_storage(v1)["spec"]["backend"], backend);
    }
}
