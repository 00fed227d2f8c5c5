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

use super::validation::{invalid, is_subdomain, SUBDOMAIN_MSG};
use crate::resources::crd_schema::causes::required;
use crate::resources::ResourceInfo;

const QUALIFIED_NAME_MSG: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";

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
            involved,
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
        causes.push(invalid("reportingController", controller, &why));
    }
    for (field, path, limit) in LIMITS {
        if field != "message" && text(field).is_empty() {
            causes.push(required(field, ""));
        }
        if text(field).len() > limit {
            causes.push(invalid(
                path,
                "",
                &format!("can have at most {limit} characters"),
            ));
        }
    }
    causes
}

/// Why `value` is not a qualified name (`[prefix/]name`), worded as `IsQualifiedName` does.
fn qualified_name_problems(value: &str) -> Vec<String> {
    let mut problems = Vec::new();
    let parts: Vec<&str> = value.split('/').collect();
    let name = match parts[..] {
        [name] => name,
        [prefix, name] => {
            if prefix.is_empty() {
                problems.push("prefix part must be non-empty".to_string());
            } else if !is_subdomain(prefix) {
                problems.push(format!("prefix part {SUBDOMAIN_MSG}"));
            }
            name
        }
        _ => {
            return vec![format!(
                "a qualified name {QUALIFIED_NAME_MSG} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
            )]
        }
    };
    if name.is_empty() {
        problems.push("name part must be non-empty".to_string());
    } else if name.len() > 63 {
        problems.push("name part must be no more than 63 characters".to_string());
    }
    let b = name.as_bytes();
    let inner_ok = b
        .iter()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'));
    let ends_ok = b.first().is_some_and(u8::is_ascii_alphanumeric)
        && b.last().is_some_and(u8::is_ascii_alphanumeric);
    if !(inner_ok && ends_ok) {
        problems.push(format!("name part {QUALIFIED_NAME_MSG}"));
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;
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
                &format!("reportingController Invalid value: \"\": name part {QUALIFIED_NAME_MSG}"),
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

    #[test]
    fn qualified_names_are_checked_part_by_part() {
        assert!(qualified_name_problems("example.com/My_Name.1").is_empty());
        assert_eq!(
            qualified_name_problems("/x"),
            ["prefix part must be non-empty"]
        );
        assert_eq!(
            qualified_name_problems("-x"),
            [format!("name part {QUALIFIED_NAME_MSG}")]
        );
        assert_eq!(qualified_name_problems("a/b/c").len(), 1);
        assert_eq!(
            qualified_name_problems(&"x".repeat(64)),
            ["name part must be no more than 63 characters"]
        );
    }
}
