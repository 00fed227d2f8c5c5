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
