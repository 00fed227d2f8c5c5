//! Type information used to build API paths.

use std::fmt::Write as _;

/// A resource's identity on the API server: enough to build every URL for it.
///
/// client-go gets this from a `RESTMapper`/scheme; kcache takes it from [`Resource`] for static
/// types and from the caller for dynamic ones.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ApiResource {
    /// API group; empty for the core group.
    pub group: String,
    /// API version, e.g. `v1`.
    pub version: String,
    /// Kind, e.g. `ConfigMap`.
    pub kind: String,
    /// Plural resource name used in URLs, e.g. `configmaps`.
    pub plural: String,
    /// Whether objects live in namespaces.
    pub namespaced: bool,
}

impl ApiResource {
    /// `group/version`, or `version` for the core group.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// The collection path: `/api/v1/namespaces/{ns}/configmaps`, or without the namespace segment
    /// for cluster-scoped resources and for lists across all namespaces (`namespace` = `None`).
    pub fn collection_path(&self, namespace: Option<&str>) -> String {
        let mut p = String::with_capacity(64);
        if self.group.is_empty() {
            let _ = write!(p, "/api/{}", self.version);
        } else {
            let _ = write!(p, "/apis/{}/{}", self.group, self.version);
        }
        if let Some(ns) = namespace.filter(|ns| self.namespaced && !ns.is_empty()) {
            let _ = write!(p, "/namespaces/{ns}");
        }
        p.push('/');
        p.push_str(&self.plural);
        p
    }

    /// The path of one object.
    pub fn object_path(&self, namespace: Option<&str>, name: &str) -> String {
        let mut p = self.collection_path(namespace);
        p.push('/');
        p.push_str(name);
        p
    }
}

/// Static type information of a Rust type that models a Kubernetes resource.
///
/// Implemented by hand for custom types, and behind the `k8s-openapi` feature for every
/// k8s-openapi resource type. `DynamicObject` has no static type: it is used with an
/// [`ApiResource`] given at runtime.
pub trait Resource {
    /// API group; empty for the core group.
    const GROUP: &'static str;
    /// API version.
    const VERSION: &'static str;
    /// Kind.
    const KIND: &'static str;
    /// Plural resource name used in URLs.
    const PLURAL: &'static str;
    /// Whether objects live in namespaces.
    const NAMESPACED: bool;

    /// The same information as an [`ApiResource`] value.
    fn api_resource() -> ApiResource {
        ApiResource {
            group: Self::GROUP.to_string(),
            version: Self::VERSION.to_string(),
            kind: Self::KIND.to_string(),
            plural: Self::PLURAL.to_string(),
            namespaced: Self::NAMESPACED,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cm() -> ApiResource {
        ApiResource {
            group: String::new(),
            version: "v1".into(),
            kind: "ConfigMap".into(),
            plural: "configmaps".into(),
            namespaced: true,
        }
    }

    #[test]
    fn builds_paths() {
        assert_eq!(cm().collection_path(None), "/api/v1/configmaps");
        assert_eq!(
            cm().collection_path(Some("a")),
            "/api/v1/namespaces/a/configmaps"
        );
        assert_eq!(
            cm().object_path(Some("a"), "x"),
            "/api/v1/namespaces/a/configmaps/x"
        );
        let d = ApiResource {
            group: "apps".into(),
            version: "v1".into(),
            kind: "Deployment".into(),
            plural: "deployments".into(),
            namespaced: true,
        };
        assert_eq!(d.api_version(), "apps/v1");
        assert_eq!(d.collection_path(Some("")), "/apis/apps/v1/deployments");
        let ns = ApiResource {
            namespaced: false,
            plural: "namespaces".into(),
            ..cm()
        };
        assert_eq!(
            ns.object_path(Some("ignored"), "kube-system"),
            "/api/v1/namespaces/kube-system"
        );
    }
}
