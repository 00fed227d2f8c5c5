//! The Event objects written to the API server: `events.k8s.io/v1` [`Event`] and its
//! `core/v1` form [`CoreEvent`] (the fallback), with the [`ObjectReference`] both point with.
//!
//! Own serde types rather than k8s-openapi's, so that a library using this crate does not have to
//! pick a k8s-openapi version feature. Timestamps are RFC 3339 strings as the server sends them.

use kcache_core::{ApiResource, Object, ObjectMeta, Resource};
use serde::{Deserialize, Serialize};

/// A reference to the object an event is about (`core/v1 ObjectReference`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ObjectReference {
    /// `group/version` of the referent, `v1` for the core group.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub api_version: String,
    /// Kind of the referent.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kind: String,
    /// Namespace of the referent; empty for cluster-scoped objects.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub namespace: String,
    /// Name of the referent.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// UID of the referent.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub uid: String,
    /// The referent's resourceVersion when the event was made.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub resource_version: String,
    /// A part of the object, e.g. `spec.containers{nginx}`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub field_path: String,
}

impl ObjectReference {
    /// A reference to a typed object (client-go's `reference.GetReference`, with the type
    /// information from [`Resource`] instead of a scheme).
    pub fn of<K: Resource + Object>(obj: &K) -> Self {
        Self::from_object(obj, &K::api_resource())
    }

    /// A reference to any object whose resource is known at runtime (e.g. a `DynamicObject`).
    pub fn from_object(obj: &(impl Object + ?Sized), resource: &ApiResource) -> Self {
        ObjectReference {
            api_version: resource.api_version(),
            kind: resource.kind.clone(),
            namespace: obj.namespace().unwrap_or_default().to_string(),
            name: obj.name().to_string(),
            uid: obj.uid().unwrap_or_default().to_string(),
            resource_version: obj.resource_version().unwrap_or_default().to_string(),
            field_path: String::new(),
        }
    }

    /// The same reference narrowed to a part of the object (builder style).
    pub fn with_field_path(mut self, field_path: &str) -> Self {
        self.field_path = field_path.to_string();
        self
    }
}

/// The two event types the API server accepts (`Normal`, `Warning`): an enum, so an
/// unsupported type (which client-go logs and drops) cannot be written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EventType {
    /// Nothing is wrong (`Normal`).
    Normal,
    /// Something may need attention (`Warning`).
    Warning,
}

impl EventType {
    /// `Normal` or `Warning`.
    pub fn as_str(self) -> &'static str {
        match self {
            EventType::Normal => "Normal",
            EventType::Warning => "Warning",
        }
    }
}

impl std::fmt::Display for EventType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `events.k8s.io/v1 EventSeries`: how often an isomorphic event was seen, and when last.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EventSeries {
    /// Occurrences so far (2 when the series starts).
    pub count: i32,
    /// The last occurrence, RFC 3339 with microseconds.
    pub last_observed_time: String,
}

/// An `events.k8s.io/v1` Event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Event {
    /// `events.k8s.io/v1`.
    #[serde(default)]
    pub api_version: String,
    /// `Event`.
    #[serde(default)]
    pub kind: String,
    /// Name (`{regarding.name}.{unix nanos in hex}`) and namespace (the regarding object's, or
    /// `kube-system` for a cluster-scoped one, which every server version accepts).
    pub metadata: ObjectMeta,
    /// When the event was first observed, RFC 3339 with microseconds.
    #[serde(default)]
    pub event_time: String,
    /// Set once an isomorphic event repeats.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub series: Option<EventSeries>,
    /// The controller that emitted the event, e.g. `sample-controller`.
    #[serde(default)]
    pub reporting_controller: String,
    /// Its instance, e.g. `sample-controller-host1`.
    #[serde(default)]
    pub reporting_instance: String,
    /// What was done (or failed), e.g. `Reconcile`.
    #[serde(default)]
    pub action: String,
    /// Why, in UpperCamelCase, e.g. `Synced`.
    #[serde(default)]
    pub reason: String,
    /// The object this event is about.
    #[serde(default)]
    pub regarding: ObjectReference,
    /// A second object involved, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub related: Option<ObjectReference>,
    /// A human-readable description (at most 1 KiB).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub note: String,
    /// `Normal` or `Warning`.
    #[serde(default, rename = "type")]
    pub type_: String,
}

impl Resource for Event {
    const GROUP: &'static str = "events.k8s.io";
    const VERSION: &'static str = "v1";
    const KIND: &'static str = "Event";
    const PLURAL: &'static str = "events";
    const NAMESPACED: bool = true;
}

kcache_core::impl_object_for_metadata!(Event);

/// `core/v1 EventSource`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EventSource {
    /// The component that emitted the event.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub component: String,
    /// The node it runs on (empty for controllers, as client-go's adapter leaves it).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub host: String,
}

/// A `core/v1` Event: what is written where `events.k8s.io/v1` is not served, with
/// `tools/record`'s counting fields (`count`, `firstTimestamp`, `lastTimestamp`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CoreEvent {
    /// `v1`.
    #[serde(default)]
    pub api_version: String,
    /// `Event`.
    #[serde(default)]
    pub kind: String,
    /// Name and namespace, chosen as for [`Event`].
    pub metadata: ObjectMeta,
    /// The object this event is about (`regarding` in `events.k8s.io/v1`).
    #[serde(default)]
    pub involved_object: ObjectReference,
    /// Why, e.g. `Synced`.
    #[serde(default)]
    pub reason: String,
    /// The description (`note` in `events.k8s.io/v1`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
    /// The emitting component.
    #[serde(default)]
    pub source: EventSource,
    /// First occurrence, RFC 3339 (seconds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_timestamp: Option<String>,
    /// Latest occurrence, RFC 3339 (seconds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_timestamp: Option<String>,
    /// Occurrences so far.
    #[serde(default)]
    pub count: i32,
    /// `Normal` or `Warning`.
    #[serde(default, rename = "type")]
    pub type_: String,
    /// What was done.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub action: String,
    /// A second object involved, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub related: Option<ObjectReference>,
    /// The emitting controller (`reportingController` in `events.k8s.io/v1`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reporting_component: String,
    /// Its instance.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reporting_instance: String,
}

impl Resource for CoreEvent {
    const GROUP: &'static str = "";
    const VERSION: &'static str = "v1";
    const KIND: &'static str = "Event";
    const PLURAL: &'static str = "events";
    const NAMESPACED: bool = true;
}

kcache_core::impl_object_for_metadata!(CoreEvent);

impl CoreEvent {
    /// The `core/v1` form of a freshly recorded event, as client-go's `tools/record` makes it:
    /// count 1, first = last timestamp = now, the source named after the reporting controller,
    /// and no `eventTime` (so the server applies the legacy rules every version accepts: an
    /// event about a cluster-scoped object in `default`).
    pub(crate) fn from_event(e: &Event, now_seconds: String) -> CoreEvent {
        let namespace = match e.regarding.namespace.as_str() {
            "" => Some("default".to_string()),
            _ => e.metadata.namespace.clone(),
        };
        CoreEvent {
            api_version: "v1".into(),
            kind: "Event".into(),
            metadata: ObjectMeta {
                name: e.metadata.name.clone(),
                namespace,
                ..ObjectMeta::default()
            },
            involved_object: e.regarding.clone(),
            reason: e.reason.clone(),
            message: e.note.clone(),
            source: EventSource {
                component: e.reporting_controller.clone(),
                host: String::new(),
            },
            first_timestamp: Some(now_seconds.clone()),
            last_timestamp: Some(now_seconds),
            count: 1,
            type_: e.type_.clone(),
            action: e.action.clone(),
            related: e.related.clone(),
            reporting_component: e.reporting_controller.clone(),
            reporting_instance: e.reporting_instance.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kcache_core::DynamicObject;

    #[test]
    fn references_a_typed_and_a_dynamic_object() {
        let mut cm = k8s_openapi::api::core::v1::ConfigMap::default();
        cm.metadata.name = Some("a".into());
        cm.metadata.namespace = Some("ns".into());
        cm.metadata.uid = Some("u1".into());
        cm.metadata.resource_version = Some("7".into());
        let r = ObjectReference::of(&cm);
        assert_eq!(
            (r.api_version.as_str(), r.kind.as_str(), r.name.as_str()),
            ("v1", "ConfigMap", "a")
        );
        assert_eq!((r.namespace.as_str(), r.uid.as_str()), ("ns", "u1"));
        assert_eq!(r.resource_version, "7");

        let foo = DynamicObject::new("f").within("ns");
        let res = ApiResource {
            group: "samplecontroller.k8s.io".into(),
            version: "v1alpha1".into(),
            kind: "Foo".into(),
            plural: "foos".into(),
            namespaced: true,
        };
        let r = ObjectReference::from_object(&foo, &res).with_field_path("spec");
        assert_eq!(r.api_version, "samplecontroller.k8s.io/v1alpha1");
        assert_eq!((r.kind.as_str(), r.field_path.as_str()), ("Foo", "spec"));
        assert_eq!(
            serde_json::to_value(&r).unwrap(),
            serde_json::json!({"apiVersion": "samplecontroller.k8s.io/v1alpha1", "kind": "Foo",
                "namespace": "ns", "name": "f", "fieldPath": "spec"})
        );
    }
}
