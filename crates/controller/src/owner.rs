//! Owner references, with controllerutil's rules (`SetControllerReference`,
//! `SetOwnerReference`, `RemoveOwnerReference`, `HasControllerReference`).
//!
//! Two references name the same owner when group, kind and name agree (controllerutil's
//! `referSameObject`: the version is not compared, so an owner read at another version is
//! still the same owner); setting a reference to an owner already named updates that entry in
//! place, keeping its position.

use kcache_core::{ApiResource, Object, ObjectMut, OwnerReference, Resource};

/// Why an owner reference could not be set or removed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OwnerError {
    /// The object already has another controller (controllerutil's `AlreadyOwnedError`).
    #[error("{object} is already owned by another {kind} controller {name}")]
    AlreadyOwned {
        /// `namespace/name` of the object.
        object: String,
        /// The kind of the existing controller.
        kind: String,
        /// The name of the existing controller.
        name: String,
    },
    /// A namespaced owner cannot own a cluster-scoped object (or one whose namespace is not set
    /// yet: set it before the owner reference).
    #[error("cluster-scoped resource must not have a namespace-scoped owner, owner's namespace {owner_namespace} (if the object is namespaced, set its namespace first)")]
    ClusterScopedWithNamespacedOwner {
        /// The owner's namespace.
        owner_namespace: String,
    },
    /// Owners are never in another namespace.
    #[error("cross-namespace owner references are disallowed, owner's namespace {owner_namespace}, obj's namespace {object_namespace}")]
    CrossNamespace {
        /// The owner's namespace.
        owner_namespace: String,
        /// The object's namespace.
        object_namespace: String,
    },
    /// The owner has no name or uid yet (not read back from the server): the API server refuses
    /// such a reference.
    #[error("the owner {kind} {name:?} has no {missing}: read it from the server first")]
    IncompleteOwner {
        /// The owner's kind.
        kind: String,
        /// The owner's name.
        name: String,
        /// `name` or `uid`.
        missing: &'static str,
    },
}

/// The owner reference to `owner` of kind `resource` (no controller / blockOwnerDeletion flags).
pub fn owner_reference(
    owner: &(impl Object + ?Sized),
    resource: &ApiResource,
) -> Result<OwnerReference, OwnerError> {
    let missing = |missing| OwnerError::IncompleteOwner {
        kind: resource.kind.clone(),
        name: owner.name().to_string(),
        missing,
    };
    if owner.name().is_empty() {
        return Err(missing("name"));
    }
    let uid = owner
        .uid()
        .filter(|u| !u.is_empty())
        .ok_or_else(|| missing("uid"))?;
    Ok(OwnerReference {
        api_version: resource.api_version(),
        kind: resource.kind.clone(),
        name: owner.name().to_string(),
        uid: uid.to_string(),
        controller: None,
        block_owner_deletion: None,
    })
}

/// Makes `owner` the managing controller of `object` (controllerutil's
/// `SetControllerReference`): `controller: true` and `blockOwnerDeletion: true`, so garbage
/// collection deletes `object` with its owner and a controller's `owns` watch maps it back.
///
/// Fails with [`OwnerError::AlreadyOwned`] when another owner is the controller (an object has
/// one controller); a reference to the same owner is updated in place.
pub fn set_controller_reference<O, T>(owner: &O, object: &mut T) -> Result<(), OwnerError>
where
    O: Resource + Object,
    T: ObjectMut + ?Sized,
{
    set_controller_reference_with(owner, &O::api_resource(), object)
}

/// [`set_controller_reference`] for an owner whose kind is known at runtime (a
/// `DynamicObject`).
pub fn set_controller_reference_with<T: ObjectMut + ?Sized>(
    owner: &(impl Object + ?Sized),
    resource: &ApiResource,
    object: &mut T,
) -> Result<(), OwnerError> {
    validate_owner(owner, object)?;
    let mut reference = owner_reference(owner, resource)?;
    reference.controller = Some(true);
    reference.block_owner_deletion = Some(true);
    if let Some(existing) = object.controller_owner() {
        if !same_owner(
            existing.api_version,
            existing.kind,
            existing.name,
            &reference,
        ) {
            return Err(OwnerError::AlreadyOwned {
                object: object_key(object),
                kind: existing.kind.to_string(),
                name: existing.name.to_string(),
            });
        }
    }
    upsert(object, reference);
    Ok(())
}

/// Adds `owner` to `object`'s owners without making it the controller (controllerutil's
/// `SetOwnerReference`): garbage collection deletes `object` once every owner is gone. An
/// existing reference to the same owner is overwritten (its controller flag included, as
/// controllerutil does).
pub fn set_owner_reference<O, T>(owner: &O, object: &mut T) -> Result<(), OwnerError>
where
    O: Resource + Object,
    T: ObjectMut + ?Sized,
{
    set_owner_reference_with(owner, &O::api_resource(), object)
}

/// [`set_owner_reference`] for an owner whose kind is known at runtime.
pub fn set_owner_reference_with<T: ObjectMut + ?Sized>(
    owner: &(impl Object + ?Sized),
    resource: &ApiResource,
    object: &mut T,
) -> Result<(), OwnerError> {
    validate_owner(owner, object)?;
    upsert(object, owner_reference(owner, resource)?);
    Ok(())
}

/// Removes the reference to `owner` (controllerutil's `RemoveOwnerReference`); whether one was
/// there.
pub fn remove_owner_reference<O, T>(owner: &O, object: &mut T) -> bool
where
    O: Resource + Object,
    T: ObjectMut + ?Sized,
{
    let resource = O::api_resource();
    let mut refs = object.get_owner_references();
    let before = refs.len();
    refs.retain(|r| {
        !(group_of(&r.api_version) == resource.group
            && r.kind == resource.kind
            && r.name == owner.name())
    });
    let removed = refs.len() != before;
    if removed {
        object.set_owner_references(refs);
    }
    removed
}

/// Whether `object` has a controller reference to an owner of kind `O` (controllerutil's
/// `HasControllerReference` narrowed to a kind).
pub fn has_controller_reference<O: Resource>(object: &(impl Object + ?Sized)) -> bool {
    object
        .controller_owner()
        .is_some_and(|r| r.group() == O::GROUP && r.kind == O::KIND)
}

/// controllerutil's `validateOwner`: a cluster-scoped owner may own anything; a namespaced one
/// only objects of its namespace.
fn validate_owner(
    owner: &(impl Object + ?Sized),
    object: &(impl Object + ?Sized),
) -> Result<(), OwnerError> {
    let Some(owner_ns) = owner.namespace().filter(|n| !n.is_empty()) else {
        return Ok(());
    };
    match object.namespace().filter(|n| !n.is_empty()) {
        None => Err(OwnerError::ClusterScopedWithNamespacedOwner {
            owner_namespace: owner_ns.to_string(),
        }),
        Some(ns) if ns != owner_ns => Err(OwnerError::CrossNamespace {
            owner_namespace: owner_ns.to_string(),
            object_namespace: ns.to_string(),
        }),
        Some(_) => Ok(()),
    }
}

fn upsert<T: ObjectMut + ?Sized>(object: &mut T, reference: OwnerReference) {
    let mut refs = object.get_owner_references();
    match refs
        .iter()
        .position(|r| same_owner(&r.api_version, &r.kind, &r.name, &reference))
    {
        Some(i) => refs[i] = reference,
        None => refs.push(reference),
    }
    object.set_owner_references(refs);
}

/// controllerutil's `referSameObject`: group, kind and name.
fn same_owner(api_version: &str, kind: &str, name: &str, r: &OwnerReference) -> bool {
    group_of(api_version) == group_of(&r.api_version) && kind == r.kind && name == r.name
}

fn group_of(api_version: &str) -> &str {
    api_version.rsplit_once('/').map_or("", |(g, _)| g)
}

fn object_key(object: &(impl Object + ?Sized)) -> String {
    match object.namespace().filter(|n| !n.is_empty()) {
        Some(ns) => format!("{ns}/{}", object.name()),
        None => object.name().to_string(),
    }
}
