//! What discovery does not say about a built-in resource: whether it keeps
//! `metadata.generation`, the fields its field selectors accept (each registry's
//! `GetAttrs`/`ToSelectableFields`), and whether it is a plain stored object.

use super::Special;

/// A built-in resource's behaviour beyond its discovery entry.
#[derive(Debug, Clone, Copy)]
pub(super) struct Behaviour {
    /// DELETE answers the deleted object rather than a `Status`.
    pub returns_deleted_object: bool,
    /// `metadata.generation` is set to 1 on create and bumped on changes outside status.
    pub generation: bool,
    /// Field paths a field selector may use besides `metadata.name`/`metadata.namespace`.
    pub fields: &'static [&'static str],
    /// What it is when not a plain stored object.
    pub special: Special,
}

/// Resources whose strategies keep a generation (their `PrepareForCreate` sets it to 1).
const WITH_GENERATION: &[(&str, &str)] = &[
    ("apps", "daemonsets"),
    ("apps", "deployments"),
    ("apps", "replicasets"),
    ("apps", "statefulsets"),
    ("", "replicationcontrollers"),
    ("batch", "jobs"),
    ("batch", "cronjobs"),
    ("apiextensions.k8s.io", "customresourcedefinitions"),
    (
        "admissionregistration.k8s.io",
        "mutatingwebhookconfigurations",
    ),
    (
        "admissionregistration.k8s.io",
        "validatingwebhookconfigurations",
    ),
    ("networking.k8s.io", "ingresses"),
    ("networking.k8s.io", "ingressclasses"),
    ("networking.k8s.io", "networkpolicies"),
    ("extensions", "ingresses"),
    ("policy", "poddisruptionbudgets"),
    ("scheduling.k8s.io", "priorityclasses"),
    ("flowcontrol.apiserver.k8s.io", "flowschemas"),
    (
        "flowcontrol.apiserver.k8s.io",
        "prioritylevelconfigurations",
    ),
];

/// Resources whose registries answer DELETE with the deleted object (`ReturnDeletedObject`,
/// or their own delete), as kube-apiserver 1.20.2 does; the others answer a `Status`.
const RETURNS_DELETED_OBJECT: &[(&str, &str)] = &[
    ("", "namespaces"),
    ("", "pods"),
    ("", "podtemplates"),
    ("", "persistentvolumes"),
    ("", "persistentvolumeclaims"),
    ("", "replicationcontrollers"),
    ("", "resourcequotas"),
    ("", "serviceaccounts"),
    ("batch", "jobs"),
    ("batch", "cronjobs"),
    ("policy", "podsecuritypolicies"),
    ("storage.k8s.io", "storageclasses"),
    ("storage.k8s.io", "csidrivers"),
    ("storage.k8s.io", "csinodes"),
    ("storage.k8s.io", "volumeattachments"),
    ("apiextensions.k8s.io", "customresourcedefinitions"),
];

const POD_FIELDS: &[&str] = &[
    "spec.nodeName",
    "spec.restartPolicy",
    "spec.schedulerName",
    "spec.serviceAccountName",
    "status.phase",
    "status.podIP",
    "status.nominatedNodeName",
];

const CORE_EVENT_FIELDS: &[&str] = &[
    "involvedObject.kind",
    "involvedObject.namespace",
    "involvedObject.name",
    "involvedObject.uid",
    "involvedObject.apiVersion",
    "involvedObject.resourceVersion",
    "involvedObject.fieldPath",
    "reason",
    "type",
];

const EVENTS_API_FIELDS: &[&str] = &[
    "regarding.kind",
    "regarding.namespace",
    "regarding.name",
    "regarding.uid",
    "regarding.apiVersion",
    "regarding.resourceVersion",
    "regarding.fieldPath",
    "reportingController",
    "reason",
    "type",
];

/// The field selectors a resource supports beyond name and namespace.
fn fields(group: &str, plural: &str) -> &'static [&'static str] {
    match (group, plural) {
        ("", "pods") => POD_FIELDS,
        ("", "events") => CORE_EVENT_FIELDS,
        ("events.k8s.io", "events") => EVENTS_API_FIELDS,
        ("", "namespaces") => &["status.phase"],
        ("", "secrets") => &["type"],
        ("", "nodes") => &["spec.unschedulable"],
        ("", "replicationcontrollers") => &["status.replicas"],
        ("apps", "replicasets") => &["status.replicas"],
        ("batch", "jobs") => &["status.successful"],
        ("certificates.k8s.io", "certificatesigningrequests") => &["spec.signerName"],
        _ => &[],
    }
}

/// What the server does with `group/plural` beyond storing it.
fn special(group: &str, plural: &str) -> Special {
    match (group, plural) {
        ("authentication.k8s.io", "tokenreviews") => Special::TokenReview,
        (
            "authorization.k8s.io",
            "subjectaccessreviews"
            | "selfsubjectaccessreviews"
            | "localsubjectaccessreviews"
            | "selfsubjectrulesreviews",
        ) => Special::AccessReview,
        ("", "bindings") => Special::Binding,
        ("", "componentstatuses") => Special::ComponentStatus,
        _ => Special::None,
    }
}

/// The behaviour of the built-in `group/plural` (any version).
pub(super) fn behaviour(group: &str, plural: &str) -> Behaviour {
    Behaviour {
        returns_deleted_object: RETURNS_DELETED_OBJECT.contains(&(group, plural)),
        generation: WITH_GENERATION.contains(&(group, plural)),
        fields: fields(group, plural),
        special: special(group, plural),
    }
}
