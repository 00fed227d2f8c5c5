//! `Object` and `Resource` for every k8s-openapi type (feature `k8s-openapi`).

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::{Object, Resource};

impl<T> Object for T
where
    T: k8s_openapi::Metadata<Ty = ObjectMeta> + Send + Sync + 'static,
{
    fn name(&self) -> &str {
        self.metadata().name.as_deref().unwrap_or("")
    }
    fn namespace(&self) -> Option<&str> {
        self.metadata().namespace.as_deref()
    }
    fn resource_version(&self) -> Option<&str> {
        self.metadata().resource_version.as_deref()
    }
    fn uid(&self) -> Option<&str> {
        self.metadata().uid.as_deref()
    }
    fn labels(&self) -> Option<&BTreeMap<String, String>> {
        self.metadata().labels.as_ref()
    }
    fn annotations(&self) -> Option<&BTreeMap<String, String>> {
        self.metadata().annotations.as_ref()
    }
}

/// Whether a k8s-openapi scope type is namespaced.
pub trait ScopeNamespaced {
    /// `true` for `NamespaceResourceScope`.
    const NAMESPACED: bool;
}

impl ScopeNamespaced for k8s_openapi::NamespaceResourceScope {
    const NAMESPACED: bool = true;
}

impl ScopeNamespaced for k8s_openapi::ClusterResourceScope {
    const NAMESPACED: bool = false;
}

impl ScopeNamespaced for k8s_openapi::SubResourceScope {
    const NAMESPACED: bool = true;
}

impl<T> Resource for T
where
    T: k8s_openapi::Resource,
    T::Scope: ScopeNamespaced,
{
    const GROUP: &'static str = T::GROUP;
    const VERSION: &'static str = T::VERSION;
    const KIND: &'static str = T::KIND;
    const PLURAL: &'static str = T::URL_PATH_SEGMENT;
    const NAMESPACED: bool = <T::Scope as ScopeNamespaced>::NAMESPACED;
}
