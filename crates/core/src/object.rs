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

    /// One label's value.
    fn label(&self, key: &str) -> Option<&str> {
        self.labels().and_then(|l| l.get(key)).map(String::as_str)
    }
}

/// Implements [`Object`] for a struct whose `metadata` field is a kcache
/// [`ObjectMeta`](crate::ObjectMeta) — the usual shape of a custom resource type (k8s-openapi
/// types get `Object` from the `k8s-openapi` feature instead).
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
                &self.metadata.name
            }
            fn namespace(&self) -> Option<&str> {
                self.metadata.namespace.as_deref()
            }
            fn resource_version(&self) -> Option<&str> {
                self.metadata.resource_version.as_deref()
            }
            fn uid(&self) -> Option<&str> {
                self.metadata.uid.as_deref()
            }
            fn labels(&self) -> Option<&::std::collections::BTreeMap<String, String>> {
                self.metadata.labels.as_ref()
            }
            fn annotations(&self) -> Option<&::std::collections::BTreeMap<String, String>> {
                self.metadata.annotations.as_ref()
            }
        }
    };
}
