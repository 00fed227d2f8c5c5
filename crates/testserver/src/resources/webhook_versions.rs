//! Admission webhook configurations (`admissionregistration.k8s.io`) have the same schema in
//! v1 and v1beta1, but a webhook written as v1beta1 is defaulted as v1beta1 does before it is
//! stored: `failurePolicy: Ignore`, `matchPolicy: Exact`, `sideEffects: Unknown`,
//! `timeoutSeconds: 30`, `admissionReviewVersions: [v1beta1]` (v1 requires the last two and
//! defaults the others to `Fail`, `Equivalent` and 10). Reading it as v1 shows those values,
//! as on the real server.

use serde_json::{json, Value};

/// The v1beta1 default of a webhook's `field`, when it differs from v1's or v1 requires it.
fn v1beta1_default(field: &str) -> Value {
    match field {
        "failurePolicy" => json!("Ignore"),
        "matchPolicy" => json!("Exact"),
        "sideEffects" => json!("Unknown"),
        "timeoutSeconds" => json!(30),
        _ => json!(["v1beta1"]),
    }
}

/// The fields [`v1beta1_default`] fills.
const DEFAULTED: [&str; 5] = [
    "failurePolicy",
    "matchPolicy",
    "sideEffects",
    "timeoutSeconds",
    "admissionReviewVersions",
];

/// An incoming configuration written as `from` (`apiVersion`), defaulted as that version.
pub(super) fn to_storage(from: &str, mut obj: Value) -> Value {
    if !from.ends_with("/v1beta1") {
        return obj;
    }
    let Some(hooks) = obj["webhooks"].as_array_mut() else {
        return obj;
    };
    for hook in hooks.iter_mut().filter_map(Value::as_object_mut) {
        for field in DEFAULTED {
            if hook.get(field).is_none_or(Value::is_null) {
                hook.insert(field.into(), v1beta1_default(field));
            }
        }
    }
    obj
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_v1beta1_webhook_gets_v1beta1_defaults_and_a_v1_one_keeps_its_fields() {
        let hook = json!({"webhooks": [{"name": "w.example.com", "timeoutSeconds": 5}]});
        let b1 = to_storage("admissionregistration.k8s.io/v1beta1", hook.clone());
        assert_eq!(
            b1["webhooks"][0],
            json!({"name": "w.example.com", "timeoutSeconds": 5, "failurePolicy": "Ignore",
                   "matchPolicy": "Exact", "sideEffects": "Unknown",
                   "admissionReviewVersions": ["v1beta1"]})
        );
        assert_eq!(
            to_storage("admissionregistration.k8s.io/v1", hook.clone()),
            hook
        );
    }
}
