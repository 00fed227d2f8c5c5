//! What one list or watch asks for: a namespace and label/field/shard selectors (kcache-core's).

use kcache_core::selector::{fnv1a64, FieldSelector, LabelSelector, ShardField, ShardSelector};

use super::object::Stored;

/// The predicate of a list or watch request.
#[derive(Debug, Clone, Default)]
pub(crate) struct Filter {
    /// Only objects of this namespace (a namespaced URL).
    pub namespace: Option<String>,
    /// `labelSelector`.
    pub labels: LabelSelector,
    /// `fieldSelector`.
    pub fields: FieldSelector,
    /// `shardSelector` (KEP-5866, as a 1.36 server with `ShardedListAndWatch` on).
    pub shards: ShardSelector,
    /// Selector paths of the URL's version that read another path of the stored object.
    pub renames: &'static [(&'static str, &'static str)],
}

impl Filter {
    /// Whether `obj` passes.
    pub(crate) fn matches(&self, obj: &Stored) -> bool {
        if let Some(ns) = &self.namespace {
            if obj.namespace.as_deref() != Some(ns.as_str()) {
                return false;
            }
        }
        self.labels.matches(obj.labels.as_ref())
            && self.fields.matches_with(|f| {
                let stored = self.renames.iter().find(|(asked, _)| *asked == f);
                obj.field(stored.map_or(f, |(_, path)| path))
            })
            && self.shards.matches_with(|f| match f {
                ShardField::Uid => obj.uid_hash,
                ShardField::Namespace => fnv1a64(obj.namespace.as_deref().unwrap_or("").as_bytes()),
            })
    }

    /// Whether only the namespace restricts (the real server then reports remainingItemCount).
    pub(crate) fn has_selectors(&self) -> bool {
        !self.labels.is_empty() || !self.fields.is_empty() || !self.shards.is_empty()
    }
}
