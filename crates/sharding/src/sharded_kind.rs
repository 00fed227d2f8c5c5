//! [`ShardedKind`]: a kind the sharder places, as [`Sharding`](crate::Sharding) was given it.

use kcache_core::{ApiResource, DynamicObject, Object};

use crate::key::{kind_key, ShardKey};

/// One sharded kind: its resource, where to look and how its objects are keyed.
#[derive(Debug, Clone)]
pub(crate) struct ShardedKind {
    pub resource: ApiResource,
    pub namespace: Option<String>,
    pub key: ShardKey<DynamicObject>,
    /// A controlled kind ([`Sharding::controlled`](crate::Sharding::controlled)): its objects
    /// follow their controller owner's shard, without a drain.
    pub controlled: bool,
}

/// `group/Kind/namespace/name` of an object of `kind` itself (what a child's controller
/// ownerReference names).
pub(crate) fn own_key(kind: &ShardedKind, obj: &DynamicObject) -> String {
    kind_key(
        &kind.resource.group,
        &kind.resource.kind,
        obj.namespace().unwrap_or(""),
        obj.name(),
    )
}
