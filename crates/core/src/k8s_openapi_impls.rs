//! `Object` and `Resource` for every k8s-openapi type (feature `k8s-openapi`).

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};

use crate::{Object, ObjectMetaFields, ObjectMut, OwnerRef, Resource};

impl ObjectMetaFields for ObjectMeta {
    fn name(&self) -> &str {
        self.name.as_deref().unwrap_or("")
    }
    fn namespace(&self) -> Option<&str> {
        self.namespace.as_deref()
    }
    fn resource_version(&self) -> Option<&str> {
        self.resource_version.as_deref()
    }
    fn uid(&self) -> Option<&str> {
        self.uid.as_deref()
    }
    fn labels(&self) -> Option<&BTreeMap<String, String>> {
        self.labels.as_ref()
    }
    fn annotations(&self) -> Option<&BTreeMap<String, String>> {
        self.annotations.as_ref()
    }
    fn generation(&self) -> Option<i64> {
        self.generation
    }
    fn is_deleting(&self) -> bool {
        self.deletion_timestamp.is_some()
    }
    fn has_finalizer(&self, name: &str) -> bool {
        self.finalizers
            .as_ref()
            .is_some_and(|f| f.iter().any(|x| x == name))
    }
    fn owner_references(&self) -> Vec<OwnerRef<'_>> {
        self.owner_references
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
    fn get_owner_references(&self) -> Vec<crate::OwnerReference> {
        self.owner_references
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
        self.owner_references = (!refs.is_empty()).then_some(refs);
    }
    fn finalizers(&self) -> &[String] {
        self.finalizers.as_deref().unwrap_or_default()
    }
    fn finalizers_mut(&mut self) -> &mut Option<Vec<String>> {
        &mut self.finalizers
    }
}

impl<T> Object for T
where
    T: k8s_openapi::Metadata<Ty = ObjectMeta> + Send + Sync + 'static,
{
    fn name(&self) -> &str {
        self.metadata().name()
    }
    fn namespace(&self) -> Option<&str> {
        self.metadata().namespace()
    }
    fn resource_version(&self) -> Option<&str> {
        ObjectMetaFields::resource_version(self.metadata())
    }
    fn uid(&self) -> Option<&str> {
        ObjectMetaFields::uid(self.metadata())
    }
    fn labels(&self) -> Option<&BTreeMap<String, String>> {
        ObjectMetaFields::labels(self.metadata())
    }
    fn annotations(&self) -> Option<&BTreeMap<String, String>> {
        ObjectMetaFields::annotations(self.metadata())
    }
    fn generation(&self) -> Option<i64> {
        ObjectMetaFields::generation(self.metadata())
    }
    fn is_deleting(&self) -> bool {
        ObjectMetaFields::is_deleting(self.metadata())
    }
    fn has_finalizer(&self, name: &str) -> bool {
        ObjectMetaFields::has_finalizer(self.metadata(), name)
    }
    fn owner_references(&self) -> Vec<OwnerRef<'_>> {
        ObjectMetaFields::owner_references(self.metadata())
    }
}

impl<T> ObjectMut for T
where
    T: k8s_openapi::Metadata<Ty = ObjectMeta> + Send + Sync + 'static,
{
    fn get_owner_references(&self) -> Vec<crate::OwnerReference> {
        ObjectMetaFields::get_owner_references(self.metadata())
    }
    fn set_owner_references(&mut self, refs: Vec<crate::OwnerReference>) {
        ObjectMetaFields::set_owner_references(self.metadata_mut(), refs)
    }
    fn finalizers(&self) -> &[String] {
        ObjectMetaFields::finalizers(self.metadata())
    }
    fn finalizers_mut(&mut self) -> &mut Option<Vec<String>> {
        ObjectMetaFields::finalizers_mut(self.metadata_mut())
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
