//! `Object` and `Resource` for every k8s-openapi type (feature `k8s-openapi`).

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};

use crate::{Object, ObjectMut, OwnerRef, Resource};

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
    fn generation(&self) -> Option<i64> {
        self.metadata().generation
    }
    fn is_deleting(&self) -> bool {
        self.metadata().deletion_timestamp.is_some()
    }
    fn has_finalizer(&self, name: &str) -> bool {
        self.metadata()
            .finalizers
            .as_ref()
            .is_some_and(|f| f.iter().any(|x| x == name))
    }
    fn owner_references(&self) -> Vec<OwnerRef<'_>> {
        self.metadata()
            .owner_references
            .iter()
            .flatten()
            .map(|r| OwnerRef {
                api_version: &r.api_version,
                kind: &r.kind,
                name: &r.name,
                uid: &r.uid,
                controller: r.controller == Some(true),
                block_owner_deletion: r.block_owner_deletion == Some(true),
            })
            .collect()
    }
}

impl<T> ObjectMut for T
where
    T: k8s_openapi::Metadata<Ty = ObjectMeta> + Send + Sync + 'static,
{
    fn get_owner_references(&self) -> Vec<crate::OwnerReference> {
        self.metadata()
            .owner_references
            .iter()
            .flatten()
            .map(|r| crate::OwnerReference {
                api_version: r.api_version.clone(),
                kind: r.kind.clone(),
                name: r.name.clone(),
                uid: r.uid.clone(),
                controller: r.controller,
                block_owner_deletion: r.block_owner_deletion,
            })
            .collect()
    }
    fn set_owner_references(&mut self, refs: Vec<crate::OwnerReference>) {
        let refs: Vec<OwnerReference> = refs
            .into_iter()
            .map(|r| OwnerReference {
                api_version: r.api_version,
                kind: r.kind,
                name: r.name,
                uid: r.uid,
                controller: r.controller,
                block_owner_deletion: r.block_owner_deletion,
            })
            .collect();
        self.metadata_mut().owner_references = (!refs.is_empty()).then_some(refs);
    }
    fn finalizers(&self) -> &[String] {
        self.metadata().finalizers.as_deref().unwrap_or_default()
    }
    fn finalizers_mut(&mut self) -> &mut Option<Vec<String>> {
        &mut self.metadata_mut().finalizers
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
