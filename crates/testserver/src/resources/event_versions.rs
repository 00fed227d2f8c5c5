//! Events are one collection served as core `v1` Events and as `events.k8s.io/v1` and
//! `v1beta1` Events, as on kube-apiserver 1.20.2: stored in the core shape, with the
//! `events.k8s.io` names of the same fields renamed on the way in and out (`note` is
//! `message`, `regarding` is `involvedObject`, `deprecatedSource` is `source`, ...), and its
//! field selectors (`regarding.name`, `reportingController`) read from the core fields.

use serde_json::Value;

/// Each field's core name and its `events.k8s.io` name.
const RENAMES: [(&str, &str); 7] = [
    ("message", "note"),
    ("involvedObject", "regarding"),
    ("source", "deprecatedSource"),
    ("firstTimestamp", "deprecatedFirstTimestamp"),
    ("lastTimestamp", "deprecatedLastTimestamp"),
    ("count", "deprecatedCount"),
    ("reportingComponent", "reportingController"),
];

/// The `events.k8s.io` field selectors and the core fields they read.
pub(super) const SELECTORS: &[(&str, &str)] = &[
    ("regarding.kind", "involvedObject.kind"),
    ("regarding.namespace", "involvedObject.namespace"),
    ("regarding.name", "involvedObject.name"),
    ("regarding.uid", "involvedObject.uid"),
    ("regarding.apiVersion", "involvedObject.apiVersion"),
    (
        "regarding.resourceVersion",
        "involvedObject.resourceVersion",
    ),
    ("regarding.fieldPath", "involvedObject.fieldPath"),
    ("reportingController", "reportingComponent"),
];

/// Whether `api_version` is an `events.k8s.io` version.
pub(super) fn is_events_api(api_version: &str) -> bool {
    api_version.starts_with("events.k8s.io/")
}

/// An incoming Event written as `from` (`apiVersion`) in the core shape.
pub(super) fn to_storage(from: &str, obj: Value) -> Value {
    if !is_events_api(from) {
        return obj;
    }
    rename(obj, true)
}

/// A stored (core) Event as `to` (`apiVersion`) serves it.
pub(super) fn from_storage(to: &str, obj: Value) -> Value {
    if !is_events_api(to) {
        return obj;
    }
    rename(obj, false)
}

/// Renames each field of [`RENAMES`] to its core name (`to_core`) or its `events.k8s.io` one.
fn rename(mut obj: Value, to_core: bool) -> Value {
    let Some(map) = obj.as_object_mut() else {
        return obj;
    };
    for (core, events) in RENAMES {
        let (from, to) = if to_core {
            (events, core)
        } else {
            (core, events)
        };
        if let Some(v) = map.remove(from) {
            map.insert(to.into(), v);
        }
    }
    obj
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_events_api_event_is_a_core_event_with_renamed_fields() {
        let events = json!({"note": "n", "regarding": {"kind": "Pod", "name": "p"},
            "reportingController": "c", "reportingInstance": "i", "action": "A",
            "deprecatedCount": 2, "reason": "R"});
        let core = to_storage("events.k8s.io/v1", events.clone());
        assert_eq!(
            core,
            json!({"message": "n", "involvedObject": {"kind": "Pod", "name": "p"},
                   "reportingComponent": "c", "reportingInstance": "i", "action": "A",
                   "count": 2, "reason": "R"})
        );
        assert_eq!(from_storage("events.k8s.io/v1beta1", core.clone()), events);
        assert_eq!(from_storage("v1", core.clone()), core);
    }
}
