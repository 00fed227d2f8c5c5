//! The checks kube-apiserver 1.20.2 makes on every Event it stores, whichever version (`v1`,
//! `events.k8s.io/v1` or `v1beta1`) the write came in (its `legacyValidateEvent`): the event's
//! namespace must agree with the involved object's, and an event with an `eventTime` (the
//! `events.k8s.io` kind) must name its reporter, action and reason. Fields are named as the
//! server's internal Event names them (`involvedObject`, `reportingController`) in every version.
//!
//! An `eventTime` event about a cluster-scoped object must live in `kube-system` (one about a
//! namespaced object may live anywhere): 1.20 rejects the `default` namespace that client-go's
//! and kube-rs's event recorders pick (later releases accept it), so a test server that accepted
//! it would pass what the real one refuses.

use kcache_core::StatusCause;
use serde_json::Value;

use crate::http::query::go_quote;
use crate::resources::crd_schema::causes::{invalid, required};
use crate::resources::object_meta::qualified_name_problems;
use crate::resources::ResourceInfo;

/// The longest `reportingInstance`, `action`, `reason` and `message` (in bytes) the server takes.
const LIMITS: [(&str, &str, usize); 4] = [
    // The server's own spelling of the first field's path.
    ("reportingInstance", "repotingIntance", 128),
    ("action", "action", 128),
    ("reason", "reason", 128),
    ("message", "message", 1024),
];

/// Whether `res` is one of the Event resources (core `v1` or `events.k8s.io`).
pub(super) fn is_event(res: &ResourceInfo) -> bool {
    res.api.plural == "events" && matches!(res.api.group.as_str(), "" | "events.k8s.io")
}

/// The group a 422 about an object of `res` names: the real server validates every Event as
/// its internal core `Event`, so an `events.k8s.io` write is refused as `Event "x" is invalid`.
pub(super) fn invalid_group(res: &ResourceInfo) -> &str {
    if is_event(res) {
        ""
    } else {
        &res.api.group
    }
}

/// The problems with `event`, a core-shaped (stored) Event (empty: valid).
pub(super) fn validate_event(event: &Value) -> Vec<StatusCause> {
    let text = |f: &str| event[f].as_str().unwrap_or_default();
    let namespace = event["metadata"]["namespace"].as_str().unwrap_or_default();
    let involved = event["involvedObject"]["namespace"]
        .as_str()
        .unwrap_or_default();
    let has_event_time = !text("eventTime").is_empty();
    let mut causes = Vec::new();
    let namespace_ok = match (has_event_time, involved) {
        // An old-style event about a cluster-scoped object: no namespace, or `default`.
        (false, "") => namespace.is_empty() || namespace == "default",
        (false, involved) => namespace == involved,
        (true, "") => namespace == "kube-system",
        // The server compares nothing more for an `eventTime` event.
        (true, _) => true,
    };
    if !namespace_ok {
        causes.push(invalid(
            "involvedObject.namespace",
            &go_quote(involved),
            "does not match event.namespace",
        ));
    }
    if !has_event_time {
        return causes;
    }
    let controller = text("reportingComponent");
    if controller.is_empty() {
        causes.push(required("reportingController", ""));
    }
    for why in qualified_name_problems(controller) {
        causes.push(invalid("reportingController", &go_quote(controller), &why));
    }
    for (field, path, limit) in LIMITS {
        if field != "message" && text(field).is_empty() {
            causes.push(required(field, ""));
        }
        if text(field).len() > limit {
            causes.push(invalid(
                path,
                "\"\"",
                &format!("can have at most {limit} characters"),
            ));
        }
    }
    causes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::object_meta::NAME_PART_MSG;
    use serde_json::json;

    fn fields(event: Value) -> Vec<String> {
        validate_event(&event)
            .into_iter()
            .map(|c| format!("{} {}", c.field, c.message))
            .collect()
    }

    #[test]
    fn an_old_style_event_about_a_cluster_scoped_object_may_live_in_default() {
        let node = json!({"kind": "Node", "name": "n"});
        for ns in ["", "default"] {
            let e = json!({"metadata": {"namespace": ns}, "involvedObject": node});
            assert!(fields(e).is_empty(), "{ns}");
        }
        let e = json!({"metadata": {"namespace": "kube-public"}, "involvedObject": node});
        assert_eq!(
            fields(e),
            ["involvedObject.namespace Invalid value: \"\": does not match event.namespace"]
        );
        let pod = json!({"kind": "Pod", "name": "p", "namespace": "a"});
        let e = json!({"metadata": {"namespace": "b"}, "involvedObject": pod});
        assert_eq!(
            fields(e),
            ["involvedObject.namespace Invalid value: \"a\": does not match event.namespace"]
        );
    }

    #[test]
    fn an_event_with_an_event_time_names_its_reporter_and_lives_in_kube_system_for_a_node() {
        let e = json!({"metadata": {"namespace": "default"},
            "involvedObject": {"kind": "Node", "name": "n"}, "eventTime": "2021-01-01T00:00:00.000000Z"});
        assert_eq!(
            fields(e),
            [
                "involvedObject.namespace Invalid value: \"\": does not match event.namespace",
                "reportingController Required value",
                "reportingController Invalid value: \"\": name part must be non-empty",
                &format!("reportingController Invalid value: \"\": {NAME_PART_MSG}"),
                "reportingInstance Required value",
                "action Required value",
                "reason Required value",
            ]
        );
        let e = json!({"metadata": {"namespace": "kube-system"},
            "involvedObject": {"kind": "Node", "name": "n"}, "eventTime": "2021-01-01T00:00:00.000000Z",
            "reportingComponent": "example.com/ctl", "reportingInstance": "i", "action": "A",
            "reason": "R", "message": "m"});
        let mut elsewhere = e.clone();
        assert!(fields(e).is_empty());
        elsewhere["involvedObject"] = json!({"kind": "Pod", "name": "p", "namespace": "other"});
        assert!(fields(elsewhere).is_empty());
    }
}
