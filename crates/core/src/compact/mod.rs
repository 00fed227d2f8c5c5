//! Compact, structurally shared objects: [`CompactObject`] and [`CompactValue`].
//!
//! Why: a cache of N objects usually keeps N near-copies of the same JSON. client-go keeps
//! ≈ 8.4 KB per 4.3 KB-JSON pod (typed structs, one string per field, managedFields included) and
//! its decoded strings can pin whole list buffers (kubernetes/kubernetes#113305); kube-rs keeps
//! ≈ 24.5 KB. Here every string, array and object is hash-consed through process-wide, weakly
//! held tables while it is decoded: a subtree equal to one already alive is dropped as soon as it
//! is complete and the live one is shared. Identical subtrees across objects are stored once, and
//! each object keeps only what is unique to it (its root and metadata nodes, name, uid,
//! resourceVersion).
//!
//! How: children are interned before their parent, so a node is hashed and compared by its
//! children's addresses, in O(node) and not O(subtree). The tables hold `Weak`s and never keep a
//! value alive; entries of dropped values are pruned whenever a table shard would grow, which
//! bounds a shard to about twice its live entries. Values are immutable, so sharing is
//! invisible: a changed copy ([`CompactObject::with_resource_version`],
//! [`CompactValue::with_member`]) rebuilds only the path from the root to the change.

mod interner;
mod object;
mod serde_impls;
mod value;

#[cfg(test)]
mod tests;

pub use object::CompactObject;
pub use value::{CompactMap, CompactValue};
