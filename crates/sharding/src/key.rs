//! Where an object sits on the ring: its shard key.
//!
//! The default key is the object's own `group/Kind/namespace/name`, or, when it has a controller
//! ownerReference, its controller owner's (the owner's group and kind from the reference, the
//! dependent's namespace: owners never cross namespaces). Both are kind-qualified, so an owner
//! and the objects it controls hash to the same point and land on the same shard: the shard that
//! reconciles a Deployment-like owner also watches its children. A user with another grouping in
//! mind (a tenant label, a namespace) gives a closure instead.

use std::fmt;
use std::sync::Arc;

use kcache_core::{Object, Resource};

/// A user's key function: the string an object is placed on the ring by.
pub type KeyFn<K> = Arc<dyn Fn(&K) -> String + Send + Sync>;

/// `group/Kind/namespace/name`: the one spelling of a kind-qualified object key, so an owner's
/// own key and the key its children reach through their ownerReference always agree.
pub(crate) fn kind_key(group: &str, kind: &str, namespace: &str, name: &str) -> String {
    format!("{group}/{kind}/{namespace}/{name}")
}

/// `group/Kind/namespace/name` of `obj` (of kind `group`/`kind`), or of its controller owner.
/// A cluster-scoped object has an empty namespace segment.
pub fn object_key<K: Object + ?Sized>(group: &str, kind: &str, obj: &K) -> String {
    let namespace = obj.namespace().unwrap_or("");
    match obj.controller_owner() {
        Some(owner) => kind_key(owner.group(), owner.kind, namespace, owner.name),
        None => kind_key(group, kind, namespace, obj.name()),
    }
}

/// How objects of one kind are keyed: [`object_key`] by default, or a closure.
pub struct ShardKey<K> {
    key: KeyFn<K>,
}

impl<K> Clone for ShardKey<K> {
    fn clone(&self) -> Self {
        ShardKey {
            key: self.key.clone(),
        }
    }
}

impl<K> fmt::Debug for ShardKey<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ShardKey").finish_non_exhaustive()
    }
}

impl<K: Object> ShardKey<K> {
    /// The default key for objects of `K`'s static kind.
    pub fn of_resource() -> Self
    where
        K: Resource,
    {
        Self::of_kind(K::GROUP, K::KIND)
    }

    /// The default key for objects of kind `group`/`kind` (dynamic objects).
    pub fn of_kind(group: &str, kind: &str) -> Self {
        let (group, kind) = (group.to_string(), kind.to_string());
        ShardKey {
            key: Arc::new(move |obj: &K| object_key(&group, &kind, obj)),
        }
    }

    /// A key computed by `f`. Objects that must land together must get equal keys.
    pub fn custom(f: impl Fn(&K) -> String + Send + Sync + 'static) -> Self {
        ShardKey { key: Arc::new(f) }
    }

    /// The key of `obj`.
    pub fn key(&self, obj: &K) -> String {
        (self.key)(obj)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kcache_core::{DynamicObject, OwnerReference};

    fn owned(name: &str, owner_kind: &str, owner: &str, controller: bool) -> DynamicObject {
        let mut obj = DynamicObject::new(name).within("team-a");
        obj.metadata.owner_references = Some(vec![OwnerReference {
            api_version: "apps/v1".into(),
            kind: owner_kind.into(),
            name: owner.into(),
            uid: "u-1".into(),
            controller: Some(controller),
            block_owner_deletion: None,
        }]);
        obj
    }

    #[test]
    fn an_object_without_controller_is_keyed_by_itself() {
        let obj = DynamicObject::new("web").within("team-a");
        assert_eq!(
            object_key("apps", "Deployment", &obj),
            "apps/Deployment/team-a/web"
        );
        let cluster = DynamicObject::new("n1");
        assert_eq!(object_key("", "Node", &cluster), "/Node//n1");
        // A non-controller owner does not move the object.
        let weak = owned("web-1", "Deployment", "web", false);
        assert_eq!(
            object_key("apps", "ReplicaSet", &weak),
            "apps/ReplicaSet/team-a/web-1"
        );
    }

    #[test]
    fn a_controlled_object_follows_its_owner() {
        let owner = DynamicObject::new("web").within("team-a");
        let child = owned("web-7f9", "Deployment", "web", true);
        let key = ShardKey::<DynamicObject>::of_kind("apps", "ReplicaSet");
        let owner_key = ShardKey::<DynamicObject>::of_kind("apps", "Deployment");
        assert_eq!(key.key(&child), owner_key.key(&owner));
    }

    #[test]
    fn a_closure_replaces_the_default() {
        let by_namespace =
            ShardKey::<DynamicObject>::custom(|o| o.namespace().unwrap_or("").to_string());
        assert_eq!(by_namespace.key(&DynamicObject::new("x").within("t")), "t");
    }
}
