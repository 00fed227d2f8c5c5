//! Admission webhook configurations (`admissionregistration.k8s.io`) have the same schema in
//! v1 and v1beta1, and every webhook is defaulted as the version it is written in before it is
//! stored, as kube-apiserver 1.20.2 does:
//! - both versions: `namespaceSelector: {}`, `objectSelector: {}`, each rule's `scope: "*"`, a
//!   service's `port: 443`, and a mutating webhook's `reinvocationPolicy: Never`;
//! - v1: `failurePolicy: Fail`, `matchPolicy: Equivalent`, `timeoutSeconds: 10` (it requires
//!   `sideEffects` and `admissionReviewVersions`);
//! - v1beta1: `failurePolicy: Ignore`, `matchPolicy: Exact`, `sideEffects: Unknown`,
//!   `timeoutSeconds: 30`, `admissionReviewVersions: [v1beta1]`.
//!
//! Reading it through the other version shows the values it was stored with, as on the real
//! server.

use serde_json::{json, Value};

use super::set_default::set_default;

/// The version's own defaults of a webhook's fields.
fn version_defaults(v1beta1: bool) -> [(&'static str, Value); 5] {
    if v1beta1 {
        [
            ("failurePolicy", json!("Ignore")),
            ("matchPolicy", json!("Exact")),
            ("sideEffects", json!("Unknown")),
            ("timeoutSeconds", json!(30)),
            ("admissionReviewVersions", json!(["v1beta1"])),
        ]
    } else {
        [
            ("failurePolicy", json!("Fail")),
            ("matchPolicy", json!("Equivalent")),
            ("timeoutSeconds", json!(10)),
            // v1 requires these two: left for validation to refuse.
            ("sideEffects", Value::Null),
            ("admissionReviewVersions", Value::Null),
        ]
    }
}

/// An incoming configuration written as `from` (`apiVersion`), defaulted as that version.
pub(super) fn to_storage(from: &str, mutating: bool, mut obj: Value) -> Value {
    let v1beta1 = from.ends_with("/v1beta1");
    let Some(hooks) = obj["webhooks"].as_array_mut() else {
        return obj;
    };
    for hook in hooks.iter_mut().filter_map(Value::as_object_mut) {
        for (field, value) in version_defaults(v1beta1) {
            set_default(hook, field, value);
        }
        set_default(hook, "namespaceSelector", json!({}));
        set_default(hook, "objectSelector", json!({}));
        if mutating {
            set_default(hook, "reinvocationPolicy", json!("Never"));
        }
        for rule in hook
            .get_mut("rules")
            .and_then(Value::as_array_mut)
            .into_iter()
            .flatten()
            .filter_map(Value::as_object_mut)
        {
            set_default(rule, "scope", json!("*"));
        }
        if let Some(service) = hook
            .get_mut("clientConfig")
            .and_then(|c| c.get_mut("service"))
            .and_then(Value::as_object_mut)
        {
            set_default(service, "port", json!(443));
        }
    }
    obj
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hook() -> Value {
        json!({"webhooks": [{"name": "w.example.com", "timeoutSeconds": 5,
                             "clientConfig": {"service": {"namespace": "default", "name": "s"}},
                             "rules": [{"operations": ["CREATE"], "resources": ["pods"]}]}]})
    }

    #[test]
    fn a_v1beta1_webhook_gets_v1beta1_defaults_and_the_shared_ones() {
        let b1 = to_storage("admissionregistration.k8s.io/v1beta1", true, hook());
        assert_eq!(
            b1["webhooks"][0],
            json!({"name": "w.example.com", "timeoutSeconds": 5, "failurePolicy": "Ignore",
                   "matchPolicy": "Exact", "sideEffects": "Unknown",
                   "admissionReviewVersions": ["v1beta1"], "namespaceSelector": {},
                   "objectSelector": {}, "reinvocationPolicy": "Never",
                   "clientConfig": {"service": {"namespace": "default", "name": "s", "port": 443}},
                   "rules": [{"operations": ["CREATE"], "resources": ["pods"], "scope": "*"}]})
        );
    }

    #[test]
    fn a_v1_webhook_gets_v1_defaults_and_a_validating_one_no_reinvocation_policy() {
        let v1 = to_storage("admissionregistration.k8s.io/v1", false, hook());
        assert_eq!(
            v1["webhooks"][0],
            json!({"name": "w.example.com", "timeoutSeconds": 5, "failurePolicy": "Fail",
                   "matchPolicy": "Equivalent", "namespaceSelector": {}, "objectSelector": {},
                   "clientConfig": {"service": {"namespace": "default", "name": "s", "port": 443}},
                   "rules": [{"operations": ["CREATE"], "resources": ["pods"], "scope": "*"}]})
        );
    }
}
