//! The resources every cluster has and clients touch, beyond the core few: workloads with
//! `/scale`, jobs, RBAC, service accounts, nodes, CSRs, and the special ones (token reviews,
//! component statuses, API services) that are not plain stored objects.

use super::{ResourceInfo, ScalePaths};

/// What a resource is when it is not a plain stored object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Special {
    /// Stored objects with every verb.
    None,
    /// `authentication.k8s.io/v1` TokenReview: create only, nothing stored.
    TokenReview,
    /// `v1` ComponentStatus: a read-only view of the control plane's health.
    ComponentStatus,
    /// `apiregistration.k8s.io/v1` APIService: a read-only view, one per served group/version.
    ApiService,
}

impl Special {
    /// The verbs discovery lists.
    pub(crate) fn verbs(self) -> &'static [&'static str] {
        match self {
            Special::None => &[
                "create",
                "delete",
                "deletecollection",
                "get",
                "list",
                "patch",
                "update",
                "watch",
            ],
            Special::TokenReview => &["create"],
            Special::ComponentStatus | Special::ApiService => &["get", "list"],
        }
    }
}

fn row(
    group: &str,
    version: &str,
    (kind, plural): (&str, &str),
    namespaced: bool,
    short: &[&str],
    status_generation: (bool, bool),
) -> ResourceInfo {
    let mut r = ResourceInfo::builtin(
        group,
        kind,
        plural,
        namespaced,
        short,
        status_generation,
        &[],
    );
    r.api.version = version.into();
    r
}

fn special(mut r: ResourceInfo, s: Special) -> ResourceInfo {
    r.special = s;
    r
}

/// The rows this module adds to the built-in table.
pub(super) fn builtins() -> Vec<ResourceInfo> {
    let mut nodes = row("", "v1", ("Node", "nodes"), false, &["no"], (true, false));
    nodes.fields = vec!["spec.unschedulable".into()];
    vec![
        nodes,
        row(
            "",
            "v1",
            ("ServiceAccount", "serviceaccounts"),
            true,
            &["sa"],
            (false, false),
        ),
        special(
            row(
                "",
                "v1",
                ("ComponentStatus", "componentstatuses"),
                false,
                &["cs"],
                (false, false),
            ),
            Special::ComponentStatus,
        ),
        row(
            "apps",
            "v1",
            ("ReplicaSet", "replicasets"),
            true,
            &["rs"],
            (true, true),
        ),
        row(
            "apps",
            "v1",
            ("StatefulSet", "statefulsets"),
            true,
            &["sts"],
            (true, true),
        ),
        row("batch", "v1", ("Job", "jobs"), true, &[], (true, false)),
        row(
            "batch",
            "v1",
            ("CronJob", "cronjobs"),
            true,
            &["cj"],
            (true, false),
        ),
        row(
            "batch",
            "v1beta1",
            ("CronJob", "cronjobs"),
            true,
            &["cj"],
            (true, false),
        ),
        special(
            row(
                "authentication.k8s.io",
                "v1",
                ("TokenReview", "tokenreviews"),
                false,
                &[],
                (false, false),
            ),
            Special::TokenReview,
        ),
        row(
            "rbac.authorization.k8s.io",
            "v1",
            ("Role", "roles"),
            true,
            &[],
            (false, false),
        ),
        row(
            "rbac.authorization.k8s.io",
            "v1",
            ("RoleBinding", "rolebindings"),
            true,
            &[],
            (false, false),
        ),
        row(
            "rbac.authorization.k8s.io",
            "v1",
            ("ClusterRole", "clusterroles"),
            false,
            &[],
            (false, false),
        ),
        row(
            "rbac.authorization.k8s.io",
            "v1",
            ("ClusterRoleBinding", "clusterrolebindings"),
            false,
            &[],
            (false, false),
        ),
        row(
            "certificates.k8s.io",
            "v1",
            ("CertificateSigningRequest", "certificatesigningrequests"),
            false,
            &["csr"],
            (true, false),
        ),
        special(
            row(
                "apiregistration.k8s.io",
                "v1",
                ("APIService", "apiservices"),
                false,
                &[],
                (true, false),
            ),
            Special::ApiService,
        ),
    ]
}

/// Gives the built-in workloads their `/scale` (`autoscaling/v1` Scale over `spec.replicas`,
/// `status.replicas` and the `spec.selector` label selector).
pub(super) fn with_scale(mut r: ResourceInfo) -> ResourceInfo {
    if r.api.group == "apps"
        && matches!(
            r.api.plural.as_str(),
            "deployments" | "replicasets" | "statefulsets"
        )
    {
        r.scale = Some(ScalePaths {
            spec_replicas: ".spec.replicas".into(),
            status_replicas: ".status.replicas".into(),
            label_selector: None,
            label_selector_object: Some(".spec.selector".into()),
        });
    }
    r
}
