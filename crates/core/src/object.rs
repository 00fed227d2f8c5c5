//! What the machinery reads from an object.

use std::collections::BTreeMap;

/// What kcache needs to read from an object: its identity, version and labels.
///
/// Mirrors client-go's `meta.Accessor` (`metav1.Object`), reduced to what the store, DeltaFIFO,
/// reflector and informer read. Implemented for [`crate::DynamicObject`] and, behind the
/// `k8s-openapi` feature, for every k8s-openapi type whose metadata is an `ObjectMeta`.
pub trait Object: Send + Sync + 'static {
    /// `metadata.name`.
    fn name(&self) -> &str;
    /// `metadata.namespace`; `None` (or empty) for cluster-scoped objects.
    fn namespace(&self) -> Option<&str>;
    /// `metadata.resourceVersion`.
    fn resource_version(&self) -> Option<&str>;
    /// `metadata.uid`.
    fn uid(&self) -> Option<&str>;
    /// `metadata.labels`.
    fn labels(&self) -> Option<&BTreeMap<String, String>>;
    /// `metadata.annotations`.
    fn annotations(&self) -> Option<&BTreeMap<String, String>>;

    /// `metadata.generation`: bumped by the server on every spec change (predicates compare it).
    fn generation(&self) -> Option<i64> {
        None
    }
    /// Whether `metadata.deletionTimestamp` is set: deletion was requested and waits on
    /// finalizers.
    fn is_deleting(&self) -> bool {
        false
    }
    /// Whether `metadata.finalizers` holds `name`.
    fn has_finalizer(&self, name: &str) -> bool {
        let _ = name;
        false
    }
    /// `metadata.ownerReferences`, borrowed. Empty (no allocation) for an object without owners.
    fn owner_references(&self) -> Vec<OwnerRef<'_>> {
        Vec::new()
    }

    /// One label's value.
    fn label(&self, key: &str) -> Option<&str> {
        self.labels().and_then(|l| l.get(key)).map(String::as_str)
    }
    /// The owner reference with `controller: true`, if any (client-go's `metav1.GetControllerOf`).
    fn controller_owner(&self) -> Option<OwnerRef<'_>> {
        self.owner_references().into_iter().find(|r| r.controller)
    }
}

/// One `metadata.ownerReferences` entry, borrowed from whatever representation holds it, so
/// typed, dynamic and compact objects answer the same question the same way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct OwnerRef<'a> {
    /// The owner's `apiVersion` (`group/version`, or `version` for the core group).
    pub api_version: &'a str,
    /// The owner's kind.
    pub kind: &'a str,
    /// The owner's name (its namespace is the dependent's: owners are never cross-namespace).
    pub name: &'a str,
    /// The owner's uid.
    pub uid: &'a str,
    /// Whether the owner is the managing controller.
    pub controller: bool,
    /// Whether the owner's foreground deletion waits for this object.
    pub block_owner_deletion: bool,
}

impl OwnerRef<'_> {
    /// The group of `api_version` (`""` for the core group).
    pub fn group(&self) -> &str {
        self.api_version.rsplit_once('/').map_or("", |(g, _)| g)
    }
}

impl<'a> From<&'a crate::OwnerReference> for OwnerRef<'a> {
    fn from(r: &'a crate::OwnerReference) -> Self {
        OwnerRef {
            api_version: &r.api_version,
            kind: &r.kind,
            name: &r.name,
            uid: &r.uid,
            controller: r.controller == Some(true),
            block_owner_deletion: r.block_owner_deletion == Some(true),
        }
    }
}

/// The object metadata [`impl_object_for_metadata!`](crate::impl_object_for_metadata) reads:
/// kcache's [`ObjectMeta`](crate::ObjectMeta) and, behind the `k8s-openapi` feature,
/// k8s-openapi's `ObjectMeta` (what kube-derive's and k8s-openapi's types carry). The methods
/// are [`Object`]'s, read from the metadata alone.
pub trait ObjectMetaFields {
    /// `name`.
    fn name(&self) -> &str;
    /// `namespace`.
    fn namespace(&self) -> Option<&str>;
    /// `resourceVersion`.
    fn resource_version(&self) -> Option<&str>;
    /// `uid`.
    fn uid(&self) -> Option<&str>;
    /// `labels`.
    fn labels(&self) -> Option<&BTreeMap<String, String>>;
    /// `annotations`.
    fn annotations(&self) -> Option<&BTreeMap<String, String>>;
    /// `generation`.
    fn generation(&self) -> Option<i64>;
    /// Whether `deletionTimestamp` is set.
    fn is_deleting(&self) -> bool;
    /// Whether `finalizers` holds `name`.
    fn has_finalizer(&self, name: &str) -> bool;
    /// `ownerReferences`, borrowed.
    fn owner_references(&self) -> Vec<OwnerRef<'_>>;
    /// `ownerReferences`, as kcache's own type ([`ObjectMut`](crate::ObjectMut)'s view).
    fn get_owner_references(&self) -> Vec<crate::OwnerReference>;
    /// Replaces `ownerReferences` (none: the field is left unset).
    fn set_owner_references(&mut self, refs: Vec<crate::OwnerReference>);
    /// `finalizers`.
    fn finalizers(&self) -> &[String];
    /// `finalizers`, to change in place.
    fn finalizers_mut(&mut self) -> &mut Option<Vec<String>>;
}

impl ObjectMetaFields for crate::ObjectMeta {
    fn name(&self) -> &str {
        &self.name
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
            .map(OwnerRef::from)
            .collect()
    }
    fn get_owner_references(&self) -> Vec<crate::OwnerReference> {
        self.owner_references.clone().unwrap_or_default()
    }
    fn set_owner_references(&mut self, refs: Vec<crate::OwnerReference>) {
        self.owner_references = (!refs.is_empty()).then_some(refs);
    }
    fn finalizers(&self) -> &[String] {
        self.finalizers.as_deref().unwrap_or_default()
    }
    fn finalizers_mut(&mut self) -> &mut Option<Vec<String>> {
        &mut self.finalizers
    }
}

/// Implements [`Object`] and [`ObjectMut`](crate::ObjectMut) for a struct whose `metadata` field is an [`ObjectMetaFields`]: kcache's
/// [`ObjectMeta`](crate::ObjectMeta), or k8s-openapi's `ObjectMeta` (feature `k8s-openapi`) —
/// the usual shape of a custom resource type. A type that implements k8s-openapi's `Metadata`
/// (k8s-openapi's own types, kube-derive's `CustomResource`) gets `Object` from the
/// `k8s-openapi` feature instead.
///
/// ```
/// struct Foo {
///     metadata: kcache_core::ObjectMeta,
/// }
/// kcache_core::impl_object_for_metadata!(Foo);
/// # use kcache_core::Object;
/// # let foo = Foo { metadata: kcache_core::ObjectMeta { name: "a".into(), ..Default::default() } };
/// assert_eq!(foo.name(), "a");
/// ```
#[macro_export]
macro_rules! impl_object_for_metadata {
    ($t:ty) => {
        impl $crate::Object for $t {
            fn name(&self) -> &str {
                $crate::ObjectMetaFields::name(&self.metadata)
            }
            fn namespace(&self) -> Option<&str> {
                $crate::ObjectMetaFields::namespace(&self.metadata)
            }
            fn resource_version(&self) -> Option<&str> {
                $crate::ObjectMetaFields::resource_version(&self.metadata)
            }
            fn uid(&self) -> Option<&str> {
                $crate::ObjectMetaFields::uid(&self.metadata)
            }
            fn labels(&self) -> Option<&::std::collections::BTreeMap<String, String>> {
                $crate::ObjectMetaFields::labels(&self.metadata)
            }
            fn annotations(&self) -> Option<&::std::collections::BTreeMap<String, String>> {
                $crate::ObjectMetaFields::annotations(&self.metadata)
            }
            fn generation(&self) -> Option<i64> {
                $crate::ObjectMetaFields::generation(&self.metadata)
            }
            fn is_deleting(&self) -> bool {
                $crate::ObjectMetaFields::is_deleting(&self.metadata)
            }
            fn has_finalizer(&self, name: &str) -> bool {
                $crate::ObjectMetaFields::has_finalizer(&self.metadata, name)
            }
            fn owner_references(&self) -> Vec<$crate::OwnerRef<'_>> {
                $crate::ObjectMetaFields::owner_references(&self.metadata)
            }
        }

        impl $crate::ObjectMut for $t {
            fn get_owner_references(&self) -> Vec<$crate::OwnerReference> {
                $crate::ObjectMetaFields::get_owner_references(&self.metadata)
            }
            fn set_owner_references(&mut self, refs: Vec<$crate::OwnerReference>) {
                $crate::ObjectMetaFields::set_owner_references(&mut self.metadata, refs)
            }
            fn finalizers(&self) -> &[String] {
                $crate::ObjectMetaFields::finalizers(&self.metadata)
            }
            fn finalizers_mut(&mut self) -> &mut Option<Vec<String>> {
                $crate::ObjectMetaFields::finalizers_mut(&mut self.metadata)
            }
        }
    };
}
