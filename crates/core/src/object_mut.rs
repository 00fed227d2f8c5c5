//! What controllers write into an object's metadata.

use crate::{Object, OwnerReference};

/// The metadata setters controller helpers need (client-go's `metav1.Object` setters, reduced
/// to owner references and finalizers, with the ordered finalizer list a JSON patch indexes), so `set_controller_reference` or a finalizer helper
/// works on typed, dynamic and custom objects alike.
///
/// Implemented for [`crate::DynamicObject`], for types using [`crate::impl_object_for_metadata`]
/// and, behind the `k8s-openapi` feature, for every k8s-openapi type whose metadata is an
/// `ObjectMeta`. Lives here, next to [`Object`], so one crate owns both blanket impls.
pub trait ObjectMut: Object {
    /// `metadata.ownerReferences` as owned values (client-go's `GetOwnerReferences`), every
    /// field kept as sent, to be changed and handed back to
    /// [`set_owner_references`](Self::set_owner_references).
    fn get_owner_references(&self) -> Vec<OwnerReference>;
    /// Replaces `metadata.ownerReferences` (`None` when `refs` is empty, as the server omits it).
    fn set_owner_references(&mut self, refs: Vec<OwnerReference>);
    /// `metadata.finalizers` in order (empty when absent).
    fn finalizers(&self) -> &[String];
    /// `metadata.finalizers`, to add or remove entries in place.
    fn finalizers_mut(&mut self) -> &mut Option<Vec<String>>;
}
