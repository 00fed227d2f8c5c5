//! Which built-in resources are one stored collection served in several versions (or
//! groups), as on kube-apiserver 1.20.2, the version each is stored in, and how its versions
//! convert ([`Family`]). A resource not listed here is served in one version only and stored
//! as it is written.

use std::sync::Arc;

/// How the versions of one stored resource convert into the stored one and back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Family {
    /// The same schema in every version: only `apiVersion` changes.
    Same,
    /// Admission webhook configurations: the same schema, but v1beta1 defaults its webhooks
    /// differently (`failurePolicy`, `matchPolicy`, `sideEffects`, `timeoutSeconds`,
    /// `admissionReviewVersions`).
    Webhooks,
    /// CustomResourceDefinitions ([`super::crd_versions`]).
    Crd,
    /// Events: core `v1` against `events.k8s.io` ([`super::event_versions`]).
    Event,
    /// HorizontalPodAutoscalers: `autoscaling/v1`, `v2beta1` and `v2beta2`
    /// ([`super::hpa_versions`]).
    Autoscaler,
    /// Ingresses: `networking.k8s.io/v1` against the v1beta1 shapes of
    /// `networking.k8s.io` and `extensions` ([`super::ingress_versions`]).
    Ingress,
}

/// Where a multi-version resource is stored.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Storage {
    /// The `apiVersion` stored objects carry (the real server's storage version).
    pub(crate) api_version: &'static str,
    /// How its versions convert.
    pub(crate) family: Family,
}

/// `(group, plural)` → storage `apiVersion` and family.
const TABLE: &[(&str, &str, &str, Family)] = &[
    (
        "admissionregistration.k8s.io",
        "mutatingwebhookconfigurations",
        "admissionregistration.k8s.io/v1",
        Family::Webhooks,
    ),
    (
        "admissionregistration.k8s.io",
        "validatingwebhookconfigurations",
        "admissionregistration.k8s.io/v1",
        Family::Webhooks,
    ),
    (
        "apiextensions.k8s.io",
        "customresourcedefinitions",
        "apiextensions.k8s.io/v1",
        Family::Crd,
    ),
    (
        "apiregistration.k8s.io",
        "apiservices",
        "apiregistration.k8s.io/v1",
        Family::Same,
    ),
    // Kept in the v2beta2 shape, which says everything the others can (the real server's
    // etcd holds v1 plus annotations, which no client sees).
    (
        "autoscaling",
        "horizontalpodautoscalers",
        "autoscaling/v2beta2",
        Family::Autoscaler,
    ),
    (
        "certificates.k8s.io",
        "certificatesigningrequests",
        "certificates.k8s.io/v1",
        Family::Same,
    ),
    (
        "coordination.k8s.io",
        "leases",
        "coordination.k8s.io/v1",
        Family::Same,
    ),
    ("", "events", "v1", Family::Event),
    ("events.k8s.io", "events", "v1", Family::Event),
    (
        "networking.k8s.io",
        "ingressclasses",
        "networking.k8s.io/v1",
        Family::Same,
    ),
    (
        "networking.k8s.io",
        "ingresses",
        "networking.k8s.io/v1",
        Family::Ingress,
    ),
    (
        "extensions",
        "ingresses",
        "networking.k8s.io/v1",
        Family::Ingress,
    ),
    (
        "node.k8s.io",
        "runtimeclasses",
        "node.k8s.io/v1",
        Family::Same,
    ),
    (
        "rbac.authorization.k8s.io",
        "clusterrolebindings",
        "rbac.authorization.k8s.io/v1",
        Family::Same,
    ),
    (
        "rbac.authorization.k8s.io",
        "clusterroles",
        "rbac.authorization.k8s.io/v1",
        Family::Same,
    ),
    (
        "rbac.authorization.k8s.io",
        "rolebindings",
        "rbac.authorization.k8s.io/v1",
        Family::Same,
    ),
    (
        "rbac.authorization.k8s.io",
        "roles",
        "rbac.authorization.k8s.io/v1",
        Family::Same,
    ),
    (
        "scheduling.k8s.io",
        "priorityclasses",
        "scheduling.k8s.io/v1",
        Family::Same,
    ),
    (
        "storage.k8s.io",
        "csidrivers",
        "storage.k8s.io/v1",
        Family::Same,
    ),
    (
        "storage.k8s.io",
        "csinodes",
        "storage.k8s.io/v1",
        Family::Same,
    ),
    (
        "storage.k8s.io",
        "storageclasses",
        "storage.k8s.io/v1",
        Family::Same,
    ),
    (
        "storage.k8s.io",
        "volumeattachments",
        "storage.k8s.io/v1",
        Family::Same,
    ),
];

/// Where `group/plural` is stored, when it is served in several versions.
pub(crate) fn storage(group: &str, plural: &str) -> Option<Storage> {
    TABLE
        .iter()
        .find(|(g, p, _, _)| *g == group && *p == plural)
        .map(|&(_, _, api_version, family)| Storage {
            api_version,
            family,
        })
}

/// The collection `group/version/plural` is stored in: one for every version (and group) of
/// a resource in the table, else one for the version alone.
pub(crate) fn storage_id(group: &str, version: &str, plural: &str) -> Arc<str> {
    match storage(group, plural) {
        Some(s) => {
            let stored_group = s.api_version.rsplit_once('/').map_or("", |(g, _)| g);
            format!("{stored_group}/{plural}").into()
        }
        None => format!("{group}/{version}/{plural}").into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_version_and_group_of_a_listed_resource_shares_one_collection() {
        assert_eq!(
            storage_id("extensions", "v1beta1", "ingresses"),
            storage_id("networking.k8s.io", "v1", "ingresses")
        );
        assert_eq!(
            storage_id("rbac.authorization.k8s.io", "v1beta1", "roles"),
            storage_id("rbac.authorization.k8s.io", "v1", "roles")
        );
        assert_eq!(
            storage_id("events.k8s.io", "v1beta1", "events"),
            storage_id("", "v1", "events")
        );
        assert_ne!(
            storage_id("batch", "v1", "jobs"),
            storage_id("batch", "v1beta1", "jobs")
        );
    }
}
