//! A new object made for an owner, its metadata filled in (feature `k8s-openapi`).

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kcache_core::{Object, ObjectMut, Resource};

use crate::owner::{set_controller_reference, OwnerError};

/// A new `T` named `name`, in `owner`'s namespace, with `owner` as its controller
/// ([`set_controller_reference`]): what a controller fills in for every object it makes for
/// its primary, before the fields it actually manages. A cluster-scoped owner gives a child
/// without a namespace (set one for a namespaced child).
///
/// ```
/// # use k8s_openapi::api::{apps::v1::Deployment, core::v1::ConfigMap};
/// # fn f(web: &Deployment) -> Result<(), kcache_controller::OwnerError> {
/// let mut config: ConfigMap = kcache_controller::controlled_child(web, "web-config")?;
/// config.data = Some([("replicas".to_string(), "3".to_string())].into());
/// # Ok(()) }
/// ```
pub fn controlled_child<T, O>(owner: &O, name: impl Into<String>) -> Result<T, OwnerError>
where
    T: k8s_openapi::Metadata<Ty = ObjectMeta> + ObjectMut + Default,
    O: Resource + Object,
{
    let mut child = T::default();
    let meta = child.metadata_mut();
    meta.name = Some(name.into());
    meta.namespace = owner.namespace().map(str::to_string);
    set_controller_reference(owner, &mut child)?;
    Ok(child)
}
